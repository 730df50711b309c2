package rialto.interop;

import static rialto.interop.Fix.BUY;
import static rialto.interop.Fix.FOK;
import static rialto.interop.Fix.IOC;
import static rialto.interop.Fix.LIMIT;
import static rialto.interop.Fix.MARKET;
import static rialto.interop.Fix.SELL;
import static rialto.interop.Fix.DAY;
import static rialto.interop.Fix.field;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import quickfix.Message;
import rialto.interop.Fix.Msg;
import rialto.interop.FixClients.Client;

/**
 * The scripted order-entry scenario, the same script for FIX 4.2, FIX 4.4 and FIX 5.0SP2 over
 * FIXT.1.1: the first two firms (CLIENT1 and CLIENT2 in FIX 4.4) trade with each other, the third
 * is another firm that must not reach their orders. Every answer is checked field by field, in
 * the version's codes ({@link FixVersion}: FIX 4.2 fills are ExecType 1/2 with ExecTransType 0,
 * status answers ExecTransType 3 with ExecType = OrdStatus); every wait is bounded; a missing or
 * wrong answer, or a session Reject in either direction, fails the step with the messages shown.
 *
 * <p>State: the server keeps its book across runs, so the scenario starts with a mass cancel
 * (all symbols) for each of its three firms, uses ClOrdIDs with a per-run prefix, and assumes no
 * other firm rests orders on ACME, BOLT or CRNK (true on a fresh data dir). FIX 4.2 has no
 * OrderMassCancelRequest: there the scenario cancels order by order, and after a failed step it
 * cancels every order it sent (it cannot see an earlier run's leftovers).
 *
 * <p>Where FIX allows two behaviours, both are accepted and named: an aggressor may or may not
 * get an ExecType 0 acknowledgement before its fills or its cancel; the ExecutionReports of a
 * mass cancel may carry the order's ClOrdID in ClOrdID(11) or OrigClOrdID(41); an unknown symbol
 * may get an ExecutionReport reject or a BusinessMessageReject.
 */
public final class Scenario {

    /** One named step of the scenario. */
    private interface Step {
        void run();
    }

    private final FixVersion v;
    private final Client c1;
    private final Client c2;
    private final Client c3;
    private final List<Client> all;
    private final long timeoutMs;
    private final String prefix;
    private final PrintStream out;
    private int next;
    private final Map<String, String> orderIdOf = new HashMap<>();
    private final Set<String> execIds = new HashSet<>();
    private final List<String> notes = new ArrayList<>();

    /** The scenario on the first three sessions of {@code fix}, in its FIX version. */
    public Scenario(FixClients fix, long timeoutMs, PrintStream out) {
        List<Client> cs = fix.clients();
        if (cs.size() < 3) {
            throw new IllegalArgumentException("the scenario needs three sessions, got " + cs.size());
        }
        this.c1 = cs.get(0);
        this.c2 = cs.get(1);
        this.c3 = cs.get(2);
        this.v = c1.version;
        this.all = List.of(c1, c2, c3);
        this.timeoutMs = timeoutMs;
        this.out = out;
        this.prefix = "I" + Long.toString(System.currentTimeMillis(), 36).toUpperCase() + "-";
    }

    public String prefix() {
        return prefix;
    }

    public List<String> notes() {
        return notes;
    }

    private String id() {
        return prefix + (++next);
    }

    // ---------------------------------------------------------------- expectations


    /**
     * The next ExecutionReport whose ClOrdID is clOrdId, with the fields every ER must have; not
     * an answer to OrderStatusRequest (FIX 4.2: ExecTransType 0).
     */
    private Msg er(Client c, String clOrdId, String what) {
        return newTrans(erAny(c, clOrdId, what));
    }

    private Msg erAny(Client c, String clOrdId, String what) {
        Message m = c.await(what + " (ExecutionReport with ClOrdID " + clOrdId + ")",
                x -> "8".equals(FixClients.type(x)) && clOrdId.equals(field(x, 11)), timeoutMs);
        return checked(new Msg(m, c.name + " " + what));
    }

    /** FIX 4.2: ExecTransType(20) 0 (New); later versions have no ExecTransType. */
    private Msg newTrans(Msg e) {
        if (v.fix42()) {
            e.is(20, '0');
        }
        return e;
    }

    private Msg checked(Msg e) {
        e.has(37).has(17).has(150).has(39).has(55).has(54).has(151).has(14).has(6);
        if (v.fix42()) {
            e.oneOf(20, Set.of("0", "3"));
        } else {
            e.absent(20);
        }
        boolean statusAnswer = v.fix42() ? "3".equals(e.get(20)) : "I".equals(e.get(150));
        if (!statusAnswer && !execIds.add(e.get(17))) {
            throw e.fail("ExecID(17) " + e.get(17) + " was already used by another ExecutionReport");
        }
        return e;
    }

    private void sameOrder(Msg e, String key) {
        String known = orderIdOf.get(key);
        if (known == null) {
            orderIdOf.put(key, e.get(37));
        } else {
            e.is(37, known);
        }
    }

    private Msg ack(Client c, String id, String symbol, char side, long qty, String price) {
        Msg e = er(c, id, "acknowledgement");
        checkAck(e, id, symbol, side, qty, price);
        return e;
    }

    private void checkAck(Msg e, String id, String symbol, char side, long qty, String price) {
        e.is(150, '0').is(39, '0').is(55, symbol).is(54, side).num(38, qty).num(151, qty).num(14, 0).num(6, 0);
        if (price != null) {
            e.num(44, price);
        }
        sameOrder(e, id);
    }

    /** The first ER of an aggressive order after its optional ExecType 0 acknowledgement. */
    private Msg afterOptionalAck(Client c, String id, String symbol, char side, long qty, String price, String what) {
        Msg e = er(c, id, what);
        if ("0".equals(e.get(150))) {
            checkAck(e, id, symbol, side, qty, price);
            e = er(c, id, what);
        }
        return e;
    }

    private Msg fill(Msg e, String id, String lastPx, long lastQty, long cum, long leaves, String avgPx) {
        e.is(150, v.fillExecType(leaves)).is(39, leaves == 0 ? '2' : '1').num(31, lastPx).num(32, lastQty)
                .num(14, cum)
                .num(151, leaves).num(6, avgPx);
        sameOrder(e, id);
        return e;
    }

    private Msg canceled(Msg e, String orderKey, long cum, String avgPx) {
        e.is(150, '4').is(39, '4').num(151, 0).num(14, cum).num(6, avgPx);
        sameOrder(e, orderKey);
        return e;
    }

    private Msg cancelReject(Client c, String id, String orig, char responseTo, Set<String> reasons, String what) {
        Message m = c.await(what + " (OrderCancelReject with ClOrdID " + id + ")",
                x -> "9".equals(FixClients.type(x)) && id.equals(field(x, 11)), timeoutMs);
        Msg r = new Msg(m, c.name + " " + what);
        r.has(37).is(41, orig).has(39).is(434, responseTo).oneOf(102, reasons);
        return r;
    }

    private Msg massCancelReport(Client c, String id, char type, long affected, String what) {
        Message m = c.await(what + " (OrderMassCancelReport with ClOrdID " + id + ")",
                x -> "r".equals(FixClients.type(x)) && id.equals(field(x, 11)), timeoutMs);
        Msg r = new Msg(m, c.name + " " + what);
        r.has(37).is(530, type).is(531, type).num(533, affected);
        if (v == FixVersion.FIX50SP2) {
            r.has(1369); // MassActionReportID, required since FIX 5.0
        }
        return r;
    }

    private Msg massCanceled(Client c, String orderId, long cum, String what) {
        Message m = c.await(what + " (ExecType 4 for " + orderId + ")",
                x -> "8".equals(FixClients.type(x)) && "4".equals(field(x, 150))
                        && (orderId.equals(field(x, 11)) || orderId.equals(field(x, 41))),
                timeoutMs);
        Msg e = checked(new Msg(m, c.name + " " + what));
        return canceled(e, orderId, cum, cum == 0 ? "0" : e.get(6));
    }

    private Msg status(Client c, String id, String symbol, char side, char ordStatus, long cum, long leaves) {
        c.send(Fix.status(id, symbol, side));
        Msg e = erAny(c, id, "order status");
        if (v.fix42()) {
            e.is(20, '3');
        }
        e.is(150, v.statusExecType(ordStatus)).is(39, ordStatus).num(14, cum).num(151, leaves).is(55, symbol)
                .is(54, side);
        sameOrder(e, id);
        return e;
    }

    private Msg reject(Client c, String id, String what) {
        Msg e = er(c, id, what);
        e.is(150, '8').is(39, '8').num(151, 0).num(14, 0).hasReason();
        return e;
    }

    /** Cancels one order (OrderCancelRequest) and checks the ExecType 4. */
    private void cancelOne(Client c, String orig, String symbol, char side, long cum, String avgPx) {
        String x = id();
        c.send(Fix.cancel(x, orig, symbol, side));
        canceled(er(c, x, "cancel of " + orig).is(41, orig), orig, cum, avgPx);
    }

    private final Map<Client, Integer> problemsSeen = new HashMap<>();

    /**
     * Fails if any session received something no step asked for, or sent a Reject (QuickFIX/J
     * found a received message invalid) or refused to send an invalid message since the last step.
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
        for (Client c : all) {
            for (Message m : c.drain()) {
                sb.append("\n    ").append(c.name).append(" got ").append(FixClients.dump(m));
            }
            List<String> p = new ArrayList<>(c.faults());
            int seen = problemsSeen.getOrDefault(c, 0);
            for (String x : p.subList(Math.min(seen, p.size()), p.size())) {
                sb.append("\n    ").append(c.name).append(" session problem (QuickFIX/J): ").append(x);
            }
            problemsSeen.put(c, p.size());
        }
        if (sb.length() > 0) {
            throw new AssertionError("unexpected message(s):" + sb);
        }
    }

    // ---------------------------------------------------------------- the script

    private final List<String> stepNames = new ArrayList<>();
    private final List<Step> steps = new ArrayList<>();

    private void step(String name, Step s) {
        stepNames.add(name);
        steps.add(s);
    }

    /**
     * Runs every step in order. Stops at the first failure unless keepGoing, in which case each
     * firm's orders are mass-canceled and the next step runs (later steps that build on the failed
     * one may then fail too). Returns the number of steps passed.
     */
    public int run(boolean keepGoing) {
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
                if (!keepGoing) {
                    if (!v.hasMassCancel()) {
                        recover(); // the next run cannot find this run's orders without a mass cancel
                    }
                    return passed;
                }
                recover();
            }
        }
        return passed;
    }

    /** After a failed step: cancel everything the three firms have resting and forget the inboxes. */
    private void recover() {
        for (Client c : all) {
            try {
                if (v.hasMassCancel()) {
                    c.send(Fix.massCancel(id(), '7', null));
                } else {
                    for (String[] o : c.sentOrders()) {
                        c.send(Fix.cancel(id(), o[0], o[1], o[2].charAt(0)));
                    }
                }
            } catch (AssertionError e) {
                out.println("      (recovery: " + e.getMessage() + ")");
            }
        }
        try {
            Thread.sleep(500);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        for (Client c : all) {
            c.drain();
            problemsSeen.put(c, c.faults().size()); // the failed step showed them
        }
    }

    public int size() {
        return steps.size();
    }

    /** Mass-cancels (530=7) whatever the three firms left resting, consuming one ExecType 4 per order. */
    private void cancelLeftovers() {
        for (Client c : all) {
            String q = id();
            c.send(Fix.massCancel(q, '7', null));
            Message m = c.await("OrderMassCancelReport for " + q,
                    x -> "r".equals(FixClients.type(x)) && q.equals(field(x, 11)), timeoutMs);
            Msg r = new Msg(m, c.name + " setup mass cancel");
            r.is(530, '7').is(531, '7').has(533);
            long n = Long.parseLong(r.get(533));
            for (long k = 0; k < n; k++) {
                c.await("ExecType 4 of a leftover order (" + (k + 1) + " of " + n + ")",
                        x -> "8".equals(FixClients.type(x)) && "4".equals(field(x, 150)), timeoutMs);
            }
            if (n > 0) {
                notes.add(c.name + " had " + n + " resting order(s) from an earlier run");
            }
            c.drain();
        }
    }

    private void build() {
        // FIX 4.2 has no mass cancel: no setup there (a failed run cancels its own orders).
        if (v.hasMassCancel()) {
            step("setup: mass cancel (530=7) of each firm's leftovers from earlier runs", this::cancelLeftovers);
        }

        String a = id();
        step("limit buy rests: ExecType 0, OrdStatus 0, LeavesQty = OrderQty, CumQty 0", () -> {
            c1.send(Fix.limit(a, "ACME", BUY, 10, "100.00"));
            ack(c1, a, "ACME", BUY, 10, "100.00");
        });

        String b = id();
        step("crossing sell fills both sides at the maker's price (OrdStatus 1 and 2)", () -> {
            c2.send(Fix.limit(b, "ACME", SELL, 4, "99.50"));
            fill(afterOptionalAck(c2, b, "ACME", SELL, 4, "99.50", "taker fill"), b, "100.00", 4, 4, 0, "100.00");
            fill(er(c1, a, "maker fill"), a, "100.00", 4, 4, 6, "100.00");
        });

        String a2 = id();
        String b2 = id();
        step("taker sweeps two levels best price first; AvgPx over both fills", () -> {
            c1.send(Fix.limit(a2, "ACME", BUY, 5, "100.20"));
            ack(c1, a2, "ACME", BUY, 5, "100.20");
            c2.send(Fix.limit(b2, "ACME", SELL, 8, "99.00"));
            fill(afterOptionalAck(c2, b2, "ACME", SELL, 8, "99.00", "taker first fill"), b2, "100.20", 5, 5, 3,
                    "100.20");
            fill(er(c2, b2, "taker second fill"), b2, "100.00", 3, 8, 0, "100.125");
            fill(er(c1, a2, "maker fill at 100.20"), a2, "100.20", 5, 5, 0, "100.20");
            fill(er(c1, a, "maker fill at 100.00"), a, "100.00", 3, 7, 3, "100.00");
        });

        step("cancel of a partly filled order: ExecType 4, CumQty kept, LeavesQty 0; status shows canceled", () -> {
            String x = id();
            c1.send(Fix.cancel(x, a, "ACME", BUY));
            canceled(er(c1, x, "cancel").is(41, a), a, 7, "100.00");
            status(c1, a, "ACME", BUY, '4', 7, 0);
        });

        step("cancel of an unknown ClOrdID and of a filled order: OrderCancelReject", () -> {
            String x = id();
            String nope = prefix + "nope";
            c1.send(Fix.cancel(x, nope, "ACME", BUY));
            cancelReject(c1, x, nope, '1', Set.of("1"), "cancel of unknown order");
            String y = id();
            c1.send(Fix.cancel(y, a2, "ACME", BUY));
            cancelReject(c1, y, a2, '1', Set.of("0", "1"), "cancel of a filled order");
        });

        String d = id();
        step("another firm's cancel and replace get 'unknown order' (102=1); the order is unaffected", () -> {
            c1.send(Fix.limit(d, "ACME", BUY, 10, "99.00"));
            ack(c1, d, "ACME", BUY, 10, "99.00");
            String x = id();
            c3.send(Fix.cancel(x, d, "ACME", BUY));
            cancelReject(c3, x, d, '1', Set.of("1"), "other firm's cancel");
            String y = id();
            c3.send(Fix.replace(y, d, "ACME", BUY, 10, "99.05"));
            cancelReject(c3, y, d, '2', Set.of("1"), "other firm's replace");
            status(c1, d, "ACME", BUY, '0', 0, 10).num(44, "99.00").num(38, 10);
        });

        String r1 = id();
        String r2 = id();
        step("replace: new price and quantity (ExecType 5), then a quantity-down replace", () -> {
            c1.send(Fix.replace(r1, d, "ACME", BUY, 12, "99.10"));
            Msg e = er(c1, r1, "replace");
            e.is(150, '5').is(39, '0').is(41, d).num(44, "99.10").num(38, 12).num(151, 12).num(14, 0);
            orderIdOf.put(r1, orderIdOf.get(d));
            sameOrder(e, r1);
            c1.send(Fix.replace(r2, r1, "ACME", BUY, 8, "99.10"));
            e = er(c1, r2, "quantity-down replace");
            e.is(150, '5').is(39, '0').is(41, r1).num(44, "99.10").num(38, 8).num(151, 8).num(14, 0);
            orderIdOf.put(r2, orderIdOf.get(d));
            sameOrder(e, r2);
            status(c1, r2, "ACME", BUY, '0', 0, 8).num(44, "99.10");
        });

        step("replace that crosses: ExecType 5 then fills on both sides; cancel the rest", () -> {
            String s = id();
            c2.send(Fix.limit(s, "ACME", SELL, 5, "99.50"));
            ack(c2, s, "ACME", SELL, 5, "99.50");
            String r3 = id();
            c1.send(Fix.replace(r3, r2, "ACME", BUY, 8, "99.60"));
            Msg e = er(c1, r3, "crossing replace");
            e.is(150, '5').is(39, '0').is(41, r2).num(44, "99.60").num(38, 8).num(151, 8).num(14, 0);
            orderIdOf.put(r3, orderIdOf.get(d));
            sameOrder(e, r3);
            fill(er(c1, r3, "fill after replace"), r3, "99.50", 5, 5, 3, "99.50");
            fill(er(c2, s, "maker fill"), s, "99.50", 5, 5, 0, "99.50");
            String x = id();
            c1.send(Fix.cancel(x, r3, "ACME", BUY));
            canceled(er(c1, x, "cancel of the rest").is(41, r3), r3, 5, "99.50");
            status(c2, s, "ACME", SELL, '2', 5, 0);
        });

        step("IOC: fills what it can, the remainder is canceled", () -> {
            String s = id();
            c2.send(Fix.limit(s, "ACME", SELL, 5, "101.00"));
            ack(c2, s, "ACME", SELL, 5, "101.00");
            String i = id();
            c1.send(Fix.newOrder(i, "ACME", BUY, 8, "101.00", LIMIT, IOC, false));
            fill(afterOptionalAck(c1, i, "ACME", BUY, 8, "101.00", "IOC fill"), i, "101.00", 5, 5, 3, "101.00");
            canceled(er(c1, i, "IOC remainder cancel"), i, 5, "101.00");
            fill(er(c2, s, "maker fill"), s, "101.00", 5, 5, 0, "101.00");
        });

        step("FOK that cannot fill completely is canceled and trades nothing; a fillable FOK fills", () -> {
            String s = id();
            c2.send(Fix.limit(s, "ACME", SELL, 3, "102.00"));
            ack(c2, s, "ACME", SELL, 3, "102.00");
            String f = id();
            c1.send(Fix.newOrder(f, "ACME", BUY, 5, "102.00", LIMIT, FOK, false));
            canceled(afterOptionalAck(c1, f, "ACME", BUY, 5, "102.00", "FOK cancel"), f, 0, "0");
            status(c2, s, "ACME", SELL, '0', 0, 3);
            String f2 = id();
            c1.send(Fix.newOrder(f2, "ACME", BUY, 3, "102.00", LIMIT, FOK, false));
            fill(afterOptionalAck(c1, f2, "ACME", BUY, 3, "102.00", "FOK fill"), f2, "102.00", 3, 3, 0, "102.00");
            fill(er(c2, s, "maker fill"), s, "102.00", 3, 3, 0, "102.00");
        });

        step("market order into an empty side is canceled; a market order trades then cancels the rest", () -> {
            String m = id();
            c1.send(Fix.newOrder(m, "CRNK", BUY, 5, null, MARKET, IOC, false));
            canceled(afterOptionalAck(c1, m, "CRNK", BUY, 5, null, "market cancel"), m, 0, "0");
            String s = id();
            c2.send(Fix.limit(s, "CRNK", SELL, 2, "50.00"));
            ack(c2, s, "CRNK", SELL, 2, "50.00");
            String m2 = id();
            c1.send(Fix.newOrder(m2, "CRNK", BUY, 5, null, MARKET, IOC, false));
            fill(afterOptionalAck(c1, m2, "CRNK", BUY, 5, null, "market fill"), m2, "50.00", 2, 2, 3, "50.00");
            canceled(er(c1, m2, "market remainder cancel"), m2, 2, "50.00");
            fill(er(c2, s, "maker fill"), s, "50.00", 2, 2, 0, "50.00");
        });

        String s5 = id();
        String p2 = id();
        step("post-only that would cross is rejected (ExecType 8); one that does not cross rests", () -> {
            c2.send(Fix.limit(s5, "BOLT", SELL, 5, "20.00"));
            ack(c2, s5, "BOLT", SELL, 5, "20.00");
            String p = id();
            c1.send(Fix.newOrder(p, "BOLT", BUY, 5, "20.00", LIMIT, DAY, true));
            reject(c1, p, "post-only reject");
            status(c2, s5, "BOLT", SELL, '0', 0, 5);
            c1.send(Fix.newOrder(p2, "BOLT", BUY, 5, "19.99", LIMIT, DAY, true));
            ack(c1, p2, "BOLT", BUY, 5, "19.99");
        });

        step("invalid orders are rejected with a reason: price off tick, zero qty, duplicate ClOrdID, unknown symbol",
                () -> {
                    String t = id();
                    c1.send(Fix.limit(t, "ACME", BUY, 1, "100.001"));
                    reject(c1, t, "off-tick price reject");
                    String z = id();
                    c1.send(Fix.limit(z, "ACME", BUY, 0, "100.00"));
                    reject(c1, z, "zero quantity reject");
                    c1.send(Fix.limit(p2, "BOLT", BUY, 1, "19.00"));
                    reject(c1, p2, "duplicate ClOrdID reject");
                    String u = id();
                    c1.send(Fix.limit(u, "ZZZZ", BUY, 1, "10.00"));
                    Message m = c1.await("reject of unknown symbol (ExecutionReport or BusinessMessageReject)",
                            x -> ("8".equals(FixClients.type(x)) && u.equals(field(x, 11)))
                                    || ("j".equals(FixClients.type(x)) && u.equals(field(x, 379))),
                            timeoutMs);
                    Msg r = new Msg(m, "CLIENT1 unknown symbol reject");
                    if (r.type().equals("8")) {
                        checked(r).is(150, '8').is(39, '8').hasReason();
                    } else {
                        r.is(372, "D").has(380);
                    }
                    status(c2, s5, "BOLT", SELL, '0', 0, 5);
                    status(c1, p2, "BOLT", BUY, '0', 0, 5);
                });

        if (v.hasMassCancel()) {
            step("mass cancel by symbol (530=1) then all (530=7): one ExecType 4 per order and the r count", () -> {
                String m1 = id();
                String m2 = id();
                String m3 = id();
                c1.send(Fix.limit(m1, "ACME", BUY, 1, "90.00"));
                ack(c1, m1, "ACME", BUY, 1, "90.00");
                c1.send(Fix.limit(m2, "ACME", BUY, 1, "90.01"));
                ack(c1, m2, "ACME", BUY, 1, "90.01");
                c1.send(Fix.limit(m3, "CRNK", BUY, 1, "40.00"));
                ack(c1, m3, "CRNK", BUY, 1, "40.00");
                String q1 = id();
                c1.send(Fix.massCancel(q1, '1', "ACME"));
                massCancelReport(c1, q1, '1', 2, "mass cancel ACME");
                massCanceled(c1, m1, 0, "mass cancel of " + m1);
                massCanceled(c1, m2, 0, "mass cancel of " + m2);
                String q2 = id();
                c1.send(Fix.massCancel(q2, '7', null));
                massCancelReport(c1, q2, '7', 2, "mass cancel all");
                massCanceled(c1, p2, 0, "mass cancel of " + p2);
                massCanceled(c1, m3, 0, "mass cancel of " + m3);
                String q3 = id();
                c2.send(Fix.massCancel(q3, '7', null));
                massCancelReport(c2, q3, '7', 1, "mass cancel all");
                massCanceled(c2, s5, 0, "mass cancel of " + s5);
                String q4 = id();
                c3.send(Fix.massCancel(q4, '7', null));
                massCancelReport(c3, q4, '7', 0, "mass cancel with nothing to cancel");
                status(c1, m1, "ACME", BUY, '4', 0, 0);
            });
        } else {
            step("FIX 4.2 has no OrderMassCancelRequest (q): one gets a standard reject (j 380=3 or 3 373=11) and"
                    + " cancels nothing; orders are canceled one by one", () -> {
                String m1 = id();
                c1.send(Fix.limit(m1, "ACME", BUY, 1, "90.00"));
                ack(c1, m1, "ACME", BUY, 1, "90.00");
                String q = id();
                c1.sendNonstandard(Fix.massCancel(q, '7', null));
                Message m = c1.await("BusinessMessageReject (j) or session Reject (3) of the OrderMassCancelRequest",
                        x -> ("j".equals(FixClients.type(x)) || "3".equals(FixClients.type(x)))
                                && "q".equals(field(x, 372)), timeoutMs);
                Msg r = new Msg(m, c1.name + " reject of OrderMassCancelRequest on FIX 4.2");
                if (r.type().equals("j")) {
                    r.has(45).is(380, "3");
                } else {
                    r.has(45).is(373, "11");
                }
                status(c1, m1, "ACME", BUY, '0', 0, 1);
                cancelOne(c1, m1, "ACME", BUY, 0, "0");
                cancelOne(c1, p2, "BOLT", BUY, 0, "0");
                cancelOne(c2, s5, "BOLT", SELL, 0, "0");
                status(c1, m1, "ACME", BUY, '4', 0, 0);
            });
        }

        step("TradingSessionStatusRequest (g) is answered with TradingSessionStatus (h), which QuickFIX/J's dictionary accepts", () -> {
            Message g = Fix.app("g");
            String req = id();
            g.setString(335, req); // TradSesReqID
            g.setChar(263, '0'); // SubscriptionRequestType: the status now
            c1.send(g);
            Message m = c1.await("TradingSessionStatus",
                    x -> "h".equals(FixClients.type(x)) && req.equals(field(x, 335)), timeoutMs);
            new Msg(m, c1.name + " TradingSessionStatus").is(335, req).is(336, "1").has(340);
        });

        // FIX 4.2 has no OrderMassStatusRequest (AF); ListStatusRequest (M) is one Rialto does not support either.
        String unsupported = v.fix42() ? "M" : "AF";
        step("an unsupported application message (" + unsupported + ") gets BusinessMessageReject 380=3", () -> {
            Message u = Fix.app(unsupported);
            if (v.fix42()) {
                u.setString(66, id()); // ListID
            } else {
                u.setString(584, id()); // MassStatusReqID
                u.setInt(585, 7); // all orders
            }
            c1.send(u);
            Message m = c1.await("BusinessMessageReject of the " + unsupported,
                    x -> "j".equals(FixClients.type(x)) && unsupported.equals(field(x, 372)), timeoutMs);
            new Msg(m, c1.name + " BusinessMessageReject").has(45).is(372, unsupported).is(380, "3");
        });

        step("nothing unexpected arrives afterwards (300 ms)", () -> quiet(300));
    }
}
