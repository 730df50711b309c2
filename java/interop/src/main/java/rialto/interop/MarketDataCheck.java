package rialto.interop;

import static rialto.interop.Fix.BUY;
import static rialto.interop.Fix.SELL;
import static rialto.interop.Fix.field;

import java.io.PrintStream;
import java.math.BigDecimal;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import quickfix.FieldNotFound;
import quickfix.Group;
import quickfix.Message;
import rialto.interop.Fix.Msg;
import rialto.interop.FixClients.Client;

/**
 * The market-data interop check: QuickFIX/J subscribes at Rialto's market-data port while two
 * firms enter orders at the order-entry port, and every MarketDataSnapshotFullRefresh (W) and
 * MarketDataIncrementalRefresh (X) is checked entry by entry against what those orders imply,
 * in FIX 4.2, FIX 4.4 or FIX 5.0SP2 over FIXT.1.1.
 *
 * <p>Sessions: one at the market-data port and two (a maker and a taker firm: a firm's order
 * that meets its own is canceled by self-trade prevention, so a trade needs two) at the
 * order-entry port, none of them the scenario's or the latency client's. All three use a
 * QuickFIX/J MemoryStore and ResetSeqNumFlag(141)=Y on Logon: market-data sessions are kept in
 * the server's memory only, and the order sessions need no state between runs either. Received
 * messages are validated against the version's standard dictionary with every validation
 * setting on ({@link #STRICT}); a Reject (35=3) or BusinessMessageReject QuickFIX/J sends, or an
 * error event of its log, fails the step.
 *
 * <p>The book: the check trades CRNK between 29.98 and 30.10. The W at subscription is the
 * baseline (empty after the scenario, which cleans CRNK up); other firms' orders may rest there
 * but not at or inside that band. The check cancels everything it rests, so a second run finds
 * the same book; after a failed step it cancels what it left (and mass-cancels both firms where
 * the version has OrderMassCancelRequest, which also cleans up at the start).
 *
 * <p>Expected entries come from a model of the own orders ({@link Orders}): a resting order or a
 * cancel is one level entry (279=0 new, 1 change, 2 delete) with the level's total size and
 * NumberOfOrders; each fill is a trade entry (269=2, MDEntryID 278; TradeID 1003 in 5.0SP2)
 * followed by the maker level's change or delete. The book rebuilt from W and X alone must equal
 * the model's after every step. RptSeq (83): on every W and X entry in FIX 5.0SP2 (one more per
 * entry from the W's, an empty W being one EmptyBook entry 269=J), never in FIX 4.2 and 4.4.
 */
public final class MarketDataCheck {

    /** The symbol traded; the scenario leaves it empty. */
    public static final String SYMBOL = "CRNK";
    /** The check's prices lie in [LOW, HIGH]; other firms' bids must be below, offers above. */
    static final BigDecimal LOW = new BigDecimal("29.98");
    static final BigDecimal HIGH = new BigDecimal("30.10");

    /** QuickFIX/J's validation settings, spelled out: nothing loosened (the scenario's defaults). */
    static final Map<String, String> STRICT = Map.of(
            "ValidateIncomingMessage", "Y",
            "ValidateFieldsOutOfOrder", "Y",
            "ValidateFieldsHaveValues", "Y",
            "ValidateUserDefinedFields", "Y",
            "ValidateUnorderedGroupFields", "Y",
            "ValidateSequenceNumbers", "Y",
            "AllowUnknownMsgFields", "N",
            "RejectInvalidMessage", "Y");

    /** The market-data session by default (java/interop/rialto-versions.toml; CLIENT6 in the default config). */
    public static String defaultMdSender(FixVersion v) {
        return switch (v) {
            case FIX42 -> "FIX42C5";
            case FIX44 -> "CLIENT6";
            case FIX50SP2 -> "FIX50C5";
        };
    }

    /** The maker and taker order sessions by default. */
    public static List<String> defaultOrderSenders(FixVersion v) {
        return switch (v) {
            case FIX42 -> List.of("FIX42C4", "FIX42C6");
            case FIX44 -> List.of("CLIENT5", "CLIENT7");
            case FIX50SP2 -> List.of("FIX50C4", "FIX50C6");
        };
    }

    private interface Step {
        void run();
    }

    private final FixVersion v;
    private final Client md;
    private final Client maker;
    private final Client taker;
    private final List<Client> all;
    private final long timeoutMs;
    private final PrintStream out;
    private final String prefix;
    private int next;
    private final List<String> stepNames = new ArrayList<>();
    private final List<Step> steps = new ArrayList<>();
    private final List<String> notes = new ArrayList<>();
    private final Map<Client, Integer> faultsSeen = new HashMap<>();
    private final Map<Client, Integer> errorsSeen = new HashMap<>();
    private final Map<Client, Integer> errorsAtStart = new HashMap<>();

    /** The MDReqID of the subscription (updates); null when none. */
    private String subscription;
    /** X entries received and not yet checked, in order. */
    private final ArrayDeque<Entry> received = new ArrayDeque<>();
    /** The book as W and X say it is. */
    private Book rebuilt;
    /** The own orders on top of the baseline. */
    private Orders model;
    /** RptSeq of the last W or X entry (FIX 5.0SP2); -1 before the first W. */
    private long rptSeq = -1;
    private long lastTradeId = -1;
    private int entriesChecked;

    /** The check on the market-data client {@code md} and the two order clients. */
    public MarketDataCheck(Client md, Client maker, Client taker, long timeoutMs, PrintStream out) {
        this.md = md;
        this.maker = maker;
        this.taker = taker;
        this.v = md.version;
        this.all = List.of(md, maker, taker);
        this.timeoutMs = timeoutMs;
        this.out = out;
        this.prefix = "M" + Long.toString(System.currentTimeMillis(), 36).toUpperCase() + "-";
        // Error events before the check (a refused connection before the server listened) are not
        // about the messages under test.
        for (Client c : all) {
            errorsSeen.put(c, c.engineErrors().size());
            errorsAtStart.put(c, c.engineErrors().size());
        }
    }

    public String prefix() {
        return prefix;
    }

    public List<String> notes() {
        return notes;
    }

    public int size() {
        return steps.size();
    }

    private String id() {
        return prefix + (++next);
    }


    private static String type(Message m) {
        return FixClients.type(m);
    }

    /** MDEntryType (269) of a side: 0 bid for a buy, 1 offer for a sell. */
    static char entryType(char side) {
        return side == BUY ? '0' : '1';
    }

    private static BigDecimal px(String p) {
        return new BigDecimal(p).stripTrailingZeros();
    }

    // ---------------------------------------------------------------- the book and the model

    /** A price level: total size and number of orders. */
    record Level(long size, long orders) {
        @Override
        public String toString() {
            return size + " (" + orders + (orders == 1 ? " order)" : " orders)");
        }
    }

    /** A book by price level; prices compare numerically (30.0 = 30.00). */
    static final class Book {
        final TreeMap<BigDecimal, Level> bids = new TreeMap<>(Comparator.reverseOrder());
        final TreeMap<BigDecimal, Level> offers = new TreeMap<>();

        TreeMap<BigDecimal, Level> side(char entryType) {
            return entryType == '0' ? bids : offers;
        }

        Book copy() {
            Book b = new Book();
            b.bids.putAll(bids);
            b.offers.putAll(offers);
            return b;
        }

        boolean same(Book o) {
            return bids.equals(o.bids) && offers.equals(o.offers);
        }

        @Override
        public String toString() {
            return "bids " + text(bids) + " | offers " + text(offers);
        }

        private static String text(TreeMap<BigDecimal, Level> levels) {
            if (levels.isEmpty()) {
                return "(none)";
            }
            StringBuilder sb = new StringBuilder();
            for (Map.Entry<BigDecimal, Level> e : levels.entrySet()) {
                sb.append(sb.length() > 0 ? ", " : "").append(e.getKey().toPlainString()).append(" x ")
                        .append(e.getValue());
            }
            return sb.toString();
        }
    }

    /**
     * The check's own resting orders, in price-time order per level, on top of a baseline book
     * (other firms' levels, outside the check's band): the book they imply, and what a fill or
     * a cancel does to it.
     */
    static final class Orders {
        /** One own resting order. */
        static final class Own {
            final String clOrdId;
            final char entryType;
            final BigDecimal price;
            long qty;

            Own(String clOrdId, char entryType, BigDecimal price, long qty) {
                this.clOrdId = clOrdId;
                this.entryType = entryType;
                this.price = price;
                this.qty = qty;
            }
        }

        private final Book baseline;
        /** Per MDEntryType (0 bids, 1 offers), per price, the own orders oldest first. */
        private final Map<Character, TreeMap<BigDecimal, ArrayDeque<Own>>> queues = new HashMap<>();
        private final Map<String, Own> byId = new HashMap<>();

        Orders(Book baseline) {
            this.baseline = baseline.copy();
            queues.put('0', new TreeMap<>());
            queues.put('1', new TreeMap<>());
        }

        /** The level at a price as the orders imply it; null if none. */
        Level level(char entryType, BigDecimal price) {
            Level b = baseline.side(entryType).get(price);
            long size = b == null ? 0 : b.size();
            long orders = b == null ? 0 : b.orders();
            for (Own o : queues.get(entryType).getOrDefault(price, new ArrayDeque<>())) {
                size += o.qty;
                orders++;
            }
            return orders == 0 ? null : new Level(size, orders);
        }

        Book book() {
            Book b = baseline.copy();
            for (char t : new char[] {'0', '1'}) {
                for (BigDecimal p : queues.get(t).keySet()) {
                    b.side(t).put(p, level(t, p));
                }
            }
            return b;
        }

        void rest(String clOrdId, char entryType, BigDecimal price, long qty) {
            Own o = new Own(clOrdId, entryType, price, qty);
            queues.get(entryType).computeIfAbsent(price, p -> new ArrayDeque<>()).addLast(o);
            byId.put(clOrdId, o);
        }

        /** A fill of qty of the oldest own order at price on that side (price-time priority). */
        void fill(char entryType, BigDecimal price, long qty) {
            ArrayDeque<Own> q = queues.get(entryType).get(price);
            if (q == null || q.peekFirst().qty < qty) {
                throw new IllegalStateException("no own order of " + qty + " at " + price + " to fill");
            }
            Own o = q.peekFirst();
            o.qty -= qty;
            if (o.qty == 0) {
                remove(o);
            }
        }

        /** The resting order with this ClOrdID. */
        Own get(String clOrdId) {
            Own o = byId.get(clOrdId);
            if (o == null) {
                throw new IllegalStateException("no own resting order " + clOrdId);
            }
            return o;
        }

        /** Removes a resting order (canceled). */
        void cancel(String clOrdId) {
            remove(get(clOrdId));
        }

        private void remove(Own o) {
            byId.remove(o.clOrdId);
            ArrayDeque<Own> q = queues.get(o.entryType).get(o.price);
            q.remove(o);
            if (q.isEmpty()) {
                queues.get(o.entryType).remove(o.price);
            }
        }

        /** ClOrdIDs of the orders still resting. */
        List<String> resting() {
            return List.copyOf(byId.keySet());
        }
    }

    /** One entry of a W or X as received (fields null when absent). */
    record Entry(String action, String type, String symbol, String price, String size, String orders, String entryId,
            String tradeId, String rptSeq, String mdReqId, Message msg) {

        static Entry of(Group g, String symbol, String mdReqId, Message msg) {
            return new Entry(get(g, 279), get(g, 269), symbol != null ? symbol : get(g, 55), get(g, 270),
                    get(g, 271), get(g, 346), get(g, 278), get(g, 1003), get(g, 83), mdReqId, msg);
        }

        private static String get(Group g, int tag) {
            try {
                return g.isSetField(tag) ? g.getString(tag) : null;
            } catch (FieldNotFound e) {
                return null;
            }
        }

        String text() {
            StringBuilder sb = new StringBuilder();
            String[] names = {"279", "269", "278", "55", "270", "271", "1003", "346", "83"};
            String[] vals = {action, type, entryId, symbol, price, size, tradeId, orders, rptSeq};
            for (int i = 0; i < names.length; i++) {
                if (vals[i] != null) {
                    sb.append(sb.length() > 0 ? "|" : "").append(names[i]).append('=').append(vals[i]);
                }
            }
            return sb.toString();
        }

        AssertionError fail(String detail) {
            return new AssertionError("entry " + text() + ": " + detail + "\n    in " + FixClients.dump(msg));
        }
    }

    /** An expected X entry: a level (orders non-null) or a trade (type 2). */
    record Want(char action, char type, BigDecimal price, long size, Long orders) {
        @Override
        public String toString() {
            String a = switch (action) {
                case '0' -> "new";
                case '1' -> "change";
                default -> "delete";
            };
            String t = switch (type) {
                case '0' -> "bid";
                case '1' -> "offer";
                default -> "trade";
            };
            return type == '2' ? "trade " + size + " @ " + price.toPlainString()
                    : a + " " + t + " " + price.toPlainString() + " x " + size + " (" + orders + ")";
        }
    }

    // ---------------------------------------------------------------- market-data expectations

    /** The next application message of the market-data session of this type and MDReqID (or request id). */
    private Msg mdAwait(String what, String msgType, int idTag, String id) {
        Message m = md.await(what, x -> msgType.equals(type(x)) && id.equals(field(x, idTag)), timeoutMs);
        return new Msg(m, md.name + " " + what);
    }

    /** Reads a W: checks its fields and returns the book it carries (and sets rptSeq in 5.0SP2). */
    private Book snapshot(String mdReqId, String what) {
        Msg w = mdAwait(what + " (MarketDataSnapshotFullRefresh W with MDReqID " + mdReqId + ")", "W", 262, mdReqId);
        w.is(55, SYMBOL).has(268);
        List<Group> groups = w.m.getGroups(268);
        if (groups.size() != Integer.parseInt(w.get(268))) {
            throw w.fail("NoMDEntries(268) is " + w.get(268) + ", the message has " + groups.size());
        }
        Book b = new Book();
        String rpt = null;
        for (Group g : groups) {
            Entry e = Entry.of(g, SYMBOL, mdReqId, w.m);
            if (v == FixVersion.FIX50SP2) {
                if (e.rptSeq() == null) {
                    throw e.fail("RptSeq(83) missing: FIX 5.0SP2 entries carry it");
                }
                if (rpt != null && !rpt.equals(e.rptSeq())) {
                    throw e.fail("RptSeq(83) differs between the entries of one W (" + rpt + ")");
                }
                rpt = e.rptSeq();
            } else if (e.rptSeq() != null) {
                throw e.fail("RptSeq(83) present: not a field of " + v.label() + "'s W");
            }
            if ("J".equals(e.type())) {
                if (v != FixVersion.FIX50SP2 || groups.size() != 1) {
                    throw e.fail("EmptyBook (269=J) is FIX 5.0SP2's whole W of an empty book");
                }
                continue;
            }
            if (!"0".equals(e.type()) && !"1".equals(e.type())) {
                throw e.fail("MDEntryType(269) " + e.type() + " in a W of bids and offers");
            }
            if (e.price() == null || e.size() == null || e.orders() == null) {
                throw e.fail("a level needs MDEntryPx(270), MDEntrySize(271) and NumberOfOrders(346)");
            }
            if (e.entryId() != null || e.tradeId() != null) {
                throw e.fail("a level with MDEntryID(278) or TradeID(1003)");
            }
            char t = e.type().charAt(0);
            if (b.side(t).put(px(e.price()), new Level(Long.parseLong(e.size()), Long.parseLong(e.orders()))) != null) {
                throw e.fail("a second entry for the price " + e.price());
            }
        }
        if (v == FixVersion.FIX50SP2) {
            if (groups.isEmpty()) {
                throw w.fail("FIX 5.0SP2: an empty book is one EmptyBook entry (269=J) with RptSeq(83), not 268=0");
            }
            rptSeq = Long.parseLong(rpt);
        } else if (groups.isEmpty() != (b.bids.isEmpty() && b.offers.isEmpty())) {
            throw w.fail("NoMDEntries does not match the levels");
        }
        return b;
    }

    /**
     * Waits (bounded) until n X entries of the subscription are at hand, checking each X's
     * MDReqID and each entry's RptSeq on arrival.
     */
    private void receive(int n, String what) {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        while (received.size() < n) {
            long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
            Message m;
            try {
                m = md.await("X entries for " + what + " (" + received.size() + " of " + n + " received)",
                        x -> "X".equals(type(x)), Math.max(0, left));
            } catch (AssertionError e) {
                StringBuilder sb = new StringBuilder(e.getMessage());
                for (Entry x : received) {
                    sb.append("\n    received ").append(x.text());
                }
                throw new AssertionError(sb.toString());
            }
            Msg x = new Msg(m, md.name + " MarketDataIncrementalRefresh");
            x.is(262, subscription).has(268);
            List<Group> groups = m.getGroups(268);
            if (groups.isEmpty() || groups.size() != Integer.parseInt(x.get(268))) {
                throw x.fail("NoMDEntries(268) is " + x.get(268) + ", the message has " + groups.size());
            }
            for (Group g : groups) {
                Entry e = Entry.of(g, null, subscription, m);
                if (v == FixVersion.FIX50SP2) {
                    if (e.rptSeq() == null) {
                        throw e.fail("RptSeq(83) missing: FIX 5.0SP2 entries carry it");
                    }
                    if (Long.parseLong(e.rptSeq()) != rptSeq + 1) {
                        throw e.fail("RptSeq(83) " + e.rptSeq() + " does not follow " + rptSeq
                                + " (a full-depth subscriber sees every entry of the symbol)");
                    }
                    rptSeq++;
                } else if (e.rptSeq() != null) {
                    throw e.fail("RptSeq(83) present: not a field of " + v.label() + "'s X");
                }
                received.addLast(e);
            }
        }
    }

    /**
     * Takes the next entries, which must be exactly {@code wants} in order, and applies each to
     * the rebuilt book (a new level must be new, a change or delete must find its level).
     */
    private void expect(String what, List<Want> wants) {
        receive(wants.size(), what);
        for (Want w : wants) {
            Entry e = received.removeFirst();
            entriesChecked++;
            if (!SYMBOL.equals(e.symbol())) {
                throw e.fail("Symbol(55) is " + e.symbol() + ", expected " + SYMBOL);
            }
            // A delete may leave out MDEntrySize and NumberOfOrders; if present they are 0.
            boolean delete = w.action() == '2';
            String size = e.size() == null && delete ? "0" : e.size();
            String orders = e.orders() == null && delete ? "0" : e.orders();
            if (!String.valueOf(w.action()).equals(e.action()) || !String.valueOf(w.type()).equals(e.type())
                    || e.price() == null || px(e.price()).compareTo(w.price()) != 0 || size == null
                    || Long.parseLong(size) != w.size()) {
                throw e.fail("expected " + w + " (279=" + w.action() + " 269=" + w.type() + " 270="
                        + w.price().toPlainString() + " 271=" + w.size() + ") for " + what);
            }
            if (w.type() == '2') {
                if (e.entryId() == null) {
                    throw e.fail("a trade entry without MDEntryID(278) (the trade id)");
                }
                long tid = Long.parseLong(e.entryId());
                if (tid <= lastTradeId) {
                    throw e.fail("trade id " + tid + " not above the previous trade's " + lastTradeId);
                }
                lastTradeId = tid;
                if (v == FixVersion.FIX50SP2 && !e.entryId().equals(e.tradeId())) {
                    throw e.fail("FIX 5.0SP2: TradeID(1003) must be the trade id, as MDEntryID(278)");
                }
                if (e.orders() != null) {
                    throw e.fail("NumberOfOrders(346) on a trade");
                }
                continue;
            }
            if (e.entryId() != null || e.tradeId() != null) {
                throw e.fail("a level with MDEntryID(278) or TradeID(1003)");
            }
            if (orders == null || Long.parseLong(orders) != w.orders()) {
                throw e.fail("NumberOfOrders(346) is " + e.orders() + ", expected " + w.orders() + " for " + what);
            }
            TreeMap<BigDecimal, Level> side = rebuilt.side(w.type());
            boolean had = side.containsKey(w.price());
            if (w.action() == '0' && had || w.action() != '0' && !had) {
                throw e.fail("does not fit the book rebuilt from W and X: " + rebuilt);
            }
            if (delete) {
                side.remove(w.price());
            } else {
                side.put(w.price(), new Level(w.size(), w.orders()));
            }
        }
    }

    /** The book rebuilt from W and X is the one the orders imply. */
    private void sameBook(String when) {
        Book want = model.book();
        if (!rebuilt.same(want)) {
            throw new AssertionError("the book rebuilt from W and X " + when + " is\n    " + rebuilt
                    + "\n  the orders imply\n    " + want);
        }
    }

    /** The level entry the model's change at (type, price) makes: new, change or delete. */
    private Want levelWant(boolean existedBefore, char type, BigDecimal price) {
        Level now = model.level(type, price);
        if (now == null) {
            return new Want('2', type, price, 0, 0L);
        }
        return new Want(existedBefore ? '1' : '0', type, price, now.size(), now.orders());
    }

    // ---------------------------------------------------------------- order-entry expectations

    private Msg er(Client c, String clOrdId, String what) {
        Message m = c.await(what + " (ExecutionReport with ClOrdID " + clOrdId + ")",
                x -> "8".equals(type(x)) && clOrdId.equals(field(x, 11)), timeoutMs);
        return new Msg(m, c.name + " " + what);
    }

    /** Sends a limit order that rests, checks its acknowledgement and the level entry it makes; returns its ClOrdID. */
    private String rest(Client c, char side, long qty, String price) {
        String id = id();
        BigDecimal p = px(price);
        char t = entryType(side);
        boolean existed = model.level(t, p) != null;
        c.send(Fix.limit(id, SYMBOL, side, qty, price));
        model.rest(id, t, p, qty);
        restingIds.add(new String[] {id, c == maker ? "maker" : "taker", String.valueOf(side)});
        er(c, id, "acknowledgement").is(150, '0').is(39, '0').num(151, qty);
        expect("a " + (side == BUY ? "buy " : "sell ") + qty + " @ " + price, List.of(levelWant(existed, t, p)));
        return id;
    }

    /**
     * Sends an aggressive limit order that fills completely against own resting orders of the
     * other firm, best price first: the taker's fills (after an optional acknowledgement), each
     * maker's fill, and per fill a trade entry then the maker level's entry.
     */
    private void take(Client taker, Client makerFirm, char side, long qty, String limit, List<String[]> fills) {
        String id = id();
        char makerType = side == BUY ? '1' : '0';
        taker.send(Fix.limit(id, SYMBOL, side, qty, limit));
        long left = qty;
        List<Want> wants = new ArrayList<>();
        for (String[] f : fills) { // {maker ClOrdID, price, quantity, maker leaves}
            long q = Long.parseLong(f[2]);
            left -= q;
            Msg e = er(taker, id, "taker fill of " + q + " @ " + f[1]);
            if ("0".equals(e.get(150)) && left + q == qty) {
                e = er(taker, id, "taker fill of " + q + " @ " + f[1]);
            }
            e.is(150, v.fillExecType(left)).num(31, f[1]).num(32, q).num(151, left);
            er(makerFirm, f[0], "maker fill of " + q + " @ " + f[1]).is(150, v.fillExecType(Long.parseLong(f[3])))
                    .num(31, f[1]).num(32, q).num(151, Long.parseLong(f[3]));
            BigDecimal p = px(f[1]);
            wants.add(new Want('0', '2', p, q, null));
            model.fill(makerType, p, q);
            wants.add(levelWant(true, makerType, p));
        }
        if (left != 0) {
            throw new IllegalStateException("the fills do not add up to the order");
        }
        expect("a " + (side == BUY ? "buy " : "sell ") + qty + " @ " + limit + " (" + fills.size() + " fills)", wants);
    }

    /** Cancels an own resting order (ExecType 4) and, while subscribed, checks its level entry. */
    private void cancel(Client c, String orig, boolean subscribed) {
        Orders.Own o = model.get(orig);
        char t = o.entryType;
        BigDecimal p = o.price;
        String id = id();
        c.send(Fix.cancel(id, orig, SYMBOL, t == '0' ? BUY : SELL));
        er(c, id, "cancel of " + orig).is(150, '4').is(39, '4');
        model.cancel(orig);
        if (subscribed) {
            expect("the cancel of " + orig, List.of(levelWant(true, t, p)));
        }
    }

    /** Every order the check rested: {ClOrdID, "maker" or "taker", Side}, for the cleanup after a failure. */
    private final List<String[]> restingIds = new ArrayList<>();

    // ---------------------------------------------------------------- state between steps

    /**
     * Fails if any session received something no step asked for, any X entry is left over, or
     * QuickFIX/J sent a Reject or BusinessMessageReject, refused to send, or logged an error
     * since the last step.
     */
    private void quiet(long settleMs) {
        if (settleMs > 0) {
            try {
                Thread.sleep(settleMs);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        StringBuilder sb = new StringBuilder();
        for (Entry e : received) {
            sb.append("\n    ").append(md.name).append(" X entry left over: ").append(e.text());
        }
        received.clear();
        for (Client c : all) {
            for (Message m : c.drain()) {
                sb.append("\n    ").append(c.name).append(" got ").append(FixClients.dump(m));
            }
            List<String> f = new ArrayList<>(c.faults());
            for (String x : f.subList(Math.min(faultsSeen.getOrDefault(c, 0), f.size()), f.size())) {
                sb.append("\n    ").append(c.name).append(" session problem (QuickFIX/J): ").append(x);
            }
            faultsSeen.put(c, f.size());
            List<String> errs = new ArrayList<>(c.engineErrors());
            for (String x : errs.subList(Math.min(errorsSeen.getOrDefault(c, 0), errs.size()), errs.size())) {
                sb.append("\n    ").append(c.name).append(" ").append(x);
            }
            errorsSeen.put(c, errs.size());
        }
        if (sb.length() > 0) {
            throw new AssertionError("unexpected:" + sb);
        }
    }

    private void sync(String what) {
        String s = id();
        md.send(Fix.securityStatusRequest(s, SYMBOL));
        mdAwait("SecurityStatus after " + what, "f", 324, s);
    }

    /** Mass-cancels (530=7) both order firms' leftovers, consuming one ExecType 4 per order. */
    private void cancelLeftovers() {
        for (Client c : List.of(maker, taker)) {
            String q = id();
            c.send(Fix.massCancel(q, '7', null));
            Message m = c.await("OrderMassCancelReport for " + q,
                    x -> "r".equals(type(x)) && q.equals(field(x, 11)), timeoutMs);
            Msg r = new Msg(m, c.name + " setup mass cancel");
            r.is(530, '7').is(531, '7').has(533);
            long n = Long.parseLong(r.get(533));
            for (long k = 0; k < n; k++) {
                c.await("ExecType 4 of a leftover order (" + (k + 1) + " of " + n + ")",
                        x -> "8".equals(type(x)) && "4".equals(field(x, 150)), timeoutMs);
            }
            if (n > 0) {
                notes.add(c.name + " had " + n + " resting order(s) from an earlier run");
            }
        }
    }

    /** After a failed step: cancel what the check left resting (and mass-cancel both firms where possible). */
    private void recover() {
        for (String[] r : restingIds) {
            if (model != null && model.resting().contains(r[0])) {
                Client c = r[1].equals("maker") ? maker : taker;
                try {
                    c.send(Fix.cancel(id(), r[0], SYMBOL, r[2].charAt(0)));
                } catch (AssertionError e) {
                    out.println("      (recovery: " + e.getMessage() + ")");
                }
            }
        }
        if (v.hasMassCancel()) {
            for (Client c : List.of(maker, taker)) {
                try {
                    c.send(Fix.massCancel(id(), '7', null));
                } catch (AssertionError e) {
                    out.println("      (recovery: " + e.getMessage() + ")");
                }
            }
        }
        try {
            Thread.sleep(500);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        for (Client c : all) {
            c.drain();
        }
    }

    // ---------------------------------------------------------------- the script

    private void step(String name, Step s) {
        stepNames.add(name);
        steps.add(s);
    }

    /**
     * Runs every step in order and stops at the first failure (the steps build on each other),
     * then cancels what is left. Returns the number of steps passed.
     */
    public int run() {
        build();
        int passed = 0;
        for (int i = 0; i < steps.size(); i++) {
            String name = stepNames.get(i);
            try {
                steps.get(i).run();
                quiet(0);
                out.println("ok    " + name);
                passed++;
            } catch (AssertionError | RuntimeException e) {
                out.println("FAIL  " + name);
                out.println("      " + (e instanceof AssertionError ? e.getMessage() : e.toString()));
                recover();
                return passed;
            }
        }
        return passed;
    }

    private void build() {
        if (v.hasMassCancel()) {
            step("setup: mass cancel (530=7) of both order firms' leftovers from earlier runs", this::cancelLeftovers);
        }

        if (v.fix42()) {
            step("FIX 4.2 has no SecurityListRequest (x): one gets BusinessMessageReject 372=x 380=3", () -> {
                String s = id();
                md.sendNonstandard(Fix.securityListRequest(s, null));
                Message m = md.await("BusinessMessageReject (j) of the SecurityListRequest",
                        x -> "j".equals(type(x)) && "x".equals(field(x, 372)), timeoutMs);
                new Msg(m, md.name + " reject of x on FIX 4.2").has(45).is(380, "3");
            });
        } else {
            step("SecurityList (y): every instrument (559=4) and one (559=0), RoundLot 1"
                    + (v == FixVersion.FIX50SP2 ? ", MinPriceIncrement 0.01" : ", no MinPriceIncrement (969)"), () -> {
                String s = id();
                md.send(Fix.securityListRequest(s, null));
                securityList(mdAwait("SecurityList (y) of every instrument", "y", 320, s),
                        List.of("ACME", "BOLT", "CRNK"));
                String s2 = id();
                md.send(Fix.securityListRequest(s2, SYMBOL));
                securityList(mdAwait("SecurityList (y) of " + SYMBOL, "y", 320, s2), List.of(SYMBOL));
            });
        }

        step("SecurityStatus (f) of " + SYMBOL + ": UnsolicitedIndicator N, SecurityTradingStatus 17 (ready to trade)",
                () -> {
                    String s = id();
                    md.send(Fix.securityStatusRequest(s, SYMBOL));
                    mdAwait("SecurityStatus (f)", "f", 324, s).is(55, SYMBOL).is(325, "N").is(326, "17");
                });

        step("MarketDataRequestReject (Y) with Text: unknown symbol (281=0), MarketDepth 1000 (281=5),"
                + " MDEntryType 4 (281=8)", () -> {
                    String a = id();
                    md.send(Fix.marketDataRequest(a, '1', 0, "012", "ZZZZ"));
                    mdAwait("Y for an unknown symbol", "Y", 262, a).is(281, "0").has(58);
                    String b = id();
                    md.send(Fix.marketDataRequest(b, '1', 1000, "01", SYMBOL));
                    mdAwait("Y for MarketDepth 1000", "Y", 262, b).is(281, "5").has(58);
                    String c = id();
                    md.send(Fix.marketDataRequest(c, '1', 0, "4", SYMBOL));
                    mdAwait("Y for MDEntryType 4", "Y", 262, c).is(281, "8").has(58);
                });

        step("subscribe to " + SYMBOL + " (263=1, full depth, bids offers trades): one W"
                + (v == FixVersion.FIX50SP2 ? " with RptSeq on every entry" : " without RptSeq")
                + "; the same MDReqID again gets Y 281=1", () -> {
                    subscription = id();
                    md.send(Fix.marketDataRequest(subscription, '1', 0, "012", SYMBOL));
                    Book base = snapshot(subscription, "subscription");
                    BigDecimal topBid = base.bids.isEmpty() ? null : base.bids.firstKey();
                    BigDecimal lowOffer = base.offers.isEmpty() ? null : base.offers.firstKey();
                    if (topBid != null && topBid.compareTo(LOW) >= 0 || lowOffer != null && lowOffer.compareTo(HIGH) <= 0) {
                        throw new AssertionError(SYMBOL + " has other orders in the check's band (bids must be below "
                                + LOW + ", offers above " + HIGH + "): " + base
                                + " (leftovers of a FIX 4.2 run that was killed? cancel them or use a fresh data dir)");
                    }
                    if (!base.bids.isEmpty() || !base.offers.isEmpty()) {
                        notes.add(SYMBOL + " had other firms' orders at the start: " + base);
                    }
                    rebuilt = base;
                    model = new Orders(base);
                    md.send(Fix.marketDataRequest(subscription, '1', 0, "012", SYMBOL));
                    mdAwait("Y for a duplicate MDReqID", "Y", 262, subscription).is(281, "1").has(58);
                });

        List<String> ids = new ArrayList<>();
        step("resting orders of two firms: one X entry each (279=0 new level, 1 change) with MDEntryPx,"
                + " MDEntrySize and NumberOfOrders; book rebuilt from W+X = the orders'", () -> {
                    ids.add(rest(maker, BUY, 10, "30.00"));
                    ids.add(rest(maker, BUY, 5, "30.00"));
                    ids.add(rest(taker, BUY, 3, "29.98"));
                    ids.add(rest(maker, SELL, 4, "30.05"));
                    ids.add(rest(maker, SELL, 6, "30.05"));
                    ids.add(rest(maker, SELL, 2, "30.10"));
                    sameBook("after the resting orders");
                });

        step("a sell sweeps the 30.00 bid level: per fill a trade entry (269=2, MDEntryID"
                + (v == FixVersion.FIX50SP2 ? ", TradeID" : "") + ") then the level's change, then its delete", () -> {
                    take(taker, maker, SELL, 15, "29.99", List.of(
                            new String[] {ids.get(0), "30.00", "10", "0"},
                            new String[] {ids.get(1), "30.00", "5", "0"}));
                    sameBook("after the sweep");
                });

        step("a buy takes part of the 30.05 offer level: trades, then size and NumberOfOrders go down", () -> {
            take(taker, maker, BUY, 7, "30.05", List.of(
                    new String[] {ids.get(3), "30.05", "4", "0"},
                    new String[] {ids.get(4), "30.05", "3", "3"}));
            sameBook("after the partial take");
        });

        step("cancels: a delete entry (279=2) for each level emptied", () -> {
            cancel(taker, ids.get(2), true);
            cancel(maker, ids.get(5), true);
            sameBook("after the cancels");
        });

        step("unsubscribe (263=2): no X after it (a cancel, then 500 ms quiet)", () -> {
            md.send(Fix.marketDataRequest(subscription, '2', 0, "012", SYMBOL));
            sync("the unsubscribe");
            cancel(maker, ids.get(4), false);
            quiet(500);
            subscription = null;
            if (v == FixVersion.FIX50SP2) {
                rptSeq++; // the cancel's level entry, not sent
            }
        });

        step("snapshot request (263=0): one W, the book the check found"
                + (v == FixVersion.FIX50SP2 ? ", RptSeq counting the entry not sent" : "") + "; no updates after it",
                () -> {
                    String s = id();
                    long before = rptSeq;
                    md.send(Fix.marketDataRequest(s, '0', 0, "012", SYMBOL));
                    subscription = s;
                    rptSeq = -1;
                    Book b = snapshot(s, "snapshot");
                    if (v == FixVersion.FIX50SP2 && rptSeq != before) {
                        throw new AssertionError("the snapshot's RptSeq is " + rptSeq + ", expected " + before
                                + " (the last entry seen plus the one cancel after the unsubscribe)");
                    }
                    if (!b.same(model.book())) {
                        throw new AssertionError("the snapshot is\n    " + b + "\n  the orders imply\n    "
                                + model.book());
                    }
                    if (!model.resting().isEmpty()) {
                        throw new AssertionError("own orders still resting: " + model.resting());
                    }
                    // A snapshot request leaves no subscription: an order and its cancel send nothing.
                    String t = id();
                    maker.send(Fix.limit(t, SYMBOL, BUY, 1, "29.98"));
                    model.rest(t, '0', px("29.98"), 1);
                    restingIds.add(new String[] {t, "maker", String.valueOf(BUY)});
                    er(maker, t, "acknowledgement").is(150, '0');
                    cancel(maker, t, false);
                    quiet(500);
                });

        step("no Reject (35=3) or BusinessMessageReject sent by QuickFIX/J, no QuickFIX/J error event, in the"
                + " whole check; nothing unexpected (300 ms)", () -> {
                    quiet(300);
                    for (Client c : all) {
                        List<String> errs = c.engineErrors();
                        if (!c.faults().isEmpty() || errs.size() > errorsAtStart.get(c)) {
                            throw new AssertionError(c.name + ": " + c.faults() + " "
                                    + errs.subList(errorsAtStart.get(c), errs.size()));
                        }
                    }
                    notes.add(entriesChecked + " X entries checked");
                });
    }

    private void securityList(Msg y, List<String> symbols) {
        y.has(322).is(560, "0").num(393, symbols.size()).num(146, symbols.size());
        List<Group> groups = y.m.getGroups(146);
        if (groups.size() != symbols.size()) {
            throw y.fail("NoRelatedSym(146) has " + groups.size() + " entries, expected " + symbols.size());
        }
        Iterator<String> it = symbols.iterator();
        for (Group g : groups) {
            String want = it.next();
            Msg e = new Msg(y.m, y.what + " entry " + want);
            String sym = Entry.get(g, 55);
            String lot = Entry.get(g, 561);
            String tick = Entry.get(g, 969);
            if (!want.equals(sym)) {
                throw e.fail("Symbol(55) is " + sym + ", expected " + want);
            }
            if (lot == null || new BigDecimal(lot).compareTo(BigDecimal.ONE) != 0) {
                throw e.fail("RoundLot(561) is " + lot + ", expected 1");
            }
            if (v == FixVersion.FIX50SP2) {
                if (tick == null || new BigDecimal(tick).compareTo(new BigDecimal("0.01")) != 0) {
                    throw e.fail("MinPriceIncrement(969) is " + tick + ", expected 0.01");
                }
            } else if (tick != null) {
                throw e.fail("MinPriceIncrement(969) present: not a field of " + v.label() + "'s SecurityList");
            }
        }
    }
}
