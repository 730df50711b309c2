package rialto.refexchange;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import quickfix.Application;
import quickfix.FieldNotFound;
import quickfix.Message;
import quickfix.Session;
import quickfix.SessionID;
import quickfix.UnsupportedMessageType;
import quickfix.field.MsgType;
import quickfix.field.TransactTime;

/**
 * The reference exchange's FIX application: turns FIX 4.4 order-entry messages (D, F, G, q, H)
 * into order book operations and answers with ExecutionReport (8), OrderCancelReject (9) and
 * OrderMassCancelReport (r). Unsupported application messages get BusinessMessageReject (j)
 * from QuickFIX/J (via {@link UnsupportedMessageType}).
 *
 * <p>Threading: QuickFIX/J's SocketAcceptor calls {@link #fromApp} from a single thread for all
 * sessions, so the books and firms are touched by one thread only and need no locks.
 *
 * <p>Never: floats for prices or quantities (decimals are converted exactly to ticks and lots;
 * anything off the grid is rejected with a reason); never lets one firm see or change another
 * firm's orders (they get "unknown order").
 *
 * <p>Answer order per command, the same as Rialto's engine: the acknowledgement (ExecType 0 New,
 * or 5 Replaced) first, then one fill (F) per match to each side, then the cancel (4) of an
 * IOC/FOK/market remainder. A mass cancel sends one ExecType 4 per order, then the r.
 */
public final class Exchange implements Application {

    /** An instrument: symbol, tick size and lot size. */
    public record Instrument(String symbol, BigDecimal tick, long lot) {
    }

    /** The default contract's instruments. */
    public static List<Instrument> defaultInstruments() {
        BigDecimal tick = new BigDecimal("0.01");
        return List.of(new Instrument("ACME", tick, 1), new Instrument("BOLT", tick, 1),
                new Instrument("CRNK", tick, 1));
    }

    private final List<Instrument> instruments;
    private final Map<String, Integer> symbolIndex = new HashMap<>();
    private final OrderBook[] books;
    private final Map<SessionID, Firm> firms = new HashMap<>();
    private final Map<String, Firm> firmsByName = new HashMap<>();
    private long nextOrderId;
    private long nextExecId;
    private long messagesIn;

    public Exchange(List<Instrument> instruments, List<SessionID> sessions) {
        this.instruments = List.copyOf(instruments);
        this.books = new OrderBook[instruments.size()];
        for (int i = 0; i < instruments.size(); i++) {
            symbolIndex.put(instruments.get(i).symbol(), i);
            books[i] = new OrderBook();
        }
        for (SessionID sid : sessions) {
            // The acceptor's TargetCompID is the client's SenderCompID: one firm per session.
            Firm firm = new Firm(sid.getTargetCompID(), sid);
            firms.put(sid, firm);
            firmsByName.put(firm.name, firm);
        }
        // Ids unique across restarts of the process (the book itself is not recovered).
        long base = System.currentTimeMillis() * 1000;
        nextOrderId = base;
        nextExecId = base;
    }

    public long messagesIn() {
        return messagesIn;
    }

    public OrderBook book(String symbol) {
        Integer idx = symbolIndex.get(symbol);
        return idx == null ? null : books[idx];
    }

    // ---------------------------------------------------------------- QuickFIX/J callbacks

    @Override
    public void onCreate(SessionID sessionId) {
    }

    @Override
    public void onLogon(SessionID sessionId) {
    }

    @Override
    public void onLogout(SessionID sessionId) {
    }

    @Override
    public void toAdmin(Message message, SessionID sessionId) {
    }

    @Override
    public void fromAdmin(Message message, SessionID sessionId) {
    }

    @Override
    public void toApp(Message message, SessionID sessionId) {
    }

    @Override
    public void fromApp(Message message, SessionID sessionId) throws FieldNotFound, UnsupportedMessageType {
        messagesIn++;
        Firm firm = firms.get(sessionId);
        if (firm == null) {
            throw new UnsupportedMessageType();
        }
        String msgType = message.getHeader().getString(MsgType.FIELD);
        switch (msgType) {
            case MsgType.ORDER_SINGLE -> onNewOrder(firm, message);
            case MsgType.ORDER_CANCEL_REQUEST -> onCancel(firm, message);
            case MsgType.ORDER_CANCEL_REPLACE_REQUEST -> onReplace(firm, message);
            case MsgType.ORDER_MASS_CANCEL_REQUEST -> onMassCancel(firm, message);
            case MsgType.ORDER_STATUS_REQUEST -> onStatus(firm, message);
            default -> throw new UnsupportedMessageType();
        }
    }

    // ---------------------------------------------------------------- NewOrderSingle (D)

    /** A field that failed validation, with the FIX reject code and a human-readable reason. */
    private static final class Invalid extends Exception {
        final int ordRejReason;

        Invalid(int ordRejReason, String text) {
            super(text, null, false, false);
            this.ordRejReason = ordRejReason;
        }
    }

    private void onNewOrder(Firm firm, Message m) throws FieldNotFound {
        String clOrdId = m.getString(11);
        String symbol = m.getString(55);
        char side = m.getChar(54);
        Order order;
        try {
            if (firm.knows(clOrdId)) {
                throw new Invalid(6, "duplicate ClOrdID " + clOrdId);
            }
            Integer idx = symbolIndex.get(symbol);
            if (idx == null) {
                throw new Invalid(1, "unknown symbol " + symbol);
            }
            Instrument ins = instruments.get(idx);
            if (side != Order.BUY && side != Order.SELL) {
                throw new Invalid(99, "unsupported Side " + side + " (1 buy, 2 sell)");
            }
            char ordType = m.getChar(40);
            if (ordType != Order.MARKET && ordType != Order.LIMIT) {
                throw new Invalid(99, "unsupported OrdType " + ordType + " (1 market, 2 limit)");
            }
            char tif = m.isSetField(59) ? m.getChar(59) : '0';
            if (tif != '0' && tif != '1' && tif != '3' && tif != '4') {
                throw new Invalid(99, "unsupported TimeInForce " + tif + " (0 day, 1 gtc, 3 ioc, 4 fok)");
            }
            boolean postOnly = m.isSetField(18) && (" " + m.getString(18) + " ").contains(" 6 ");
            long qty = parseQty(ins, m);
            long priceTicks = 0;
            if (ordType == Order.LIMIT) {
                if (!m.isSetField(44)) {
                    throw new Invalid(99, "limit order without Price");
                }
                priceTicks = parsePrice(ins, m.getString(44));
            } else if (m.isSetField(44)) {
                throw new Invalid(99, "market order with a Price");
            }
            if (postOnly && (ordType == Order.MARKET || tif == '3' || tif == '4')) {
                throw new Invalid(99, "post-only needs a DAY or GTC limit order");
            }
            order = new Order(nextOrderId++, firm, idx, clOrdId, side, ordType, tif, postOnly, priceTicks, qty);
            if (postOnly && books[idx].wouldCross(side, false, priceTicks)) {
                throw new Invalid(99, "post-only order would cross");
            }
        } catch (Invalid e) {
            rejectNew(firm, m, clOrdId, symbol, side, e.ordRejReason, e.getMessage());
            return;
        }
        firm.live.put(clOrdId, order);
        send(firm, report(order, '0', order.clOrdId, null));
        OrderBook book = books[order.symbolIndex];
        if (order.timeInForce == '4' && book.fillableQty(order, order.leavesQty) < order.leavesQty) {
            cancelRemainder(order, "fill-or-kill order cannot be filled completely");
            return;
        }
        aggress(book, order);
    }

    /** Matches an accepted (or replaced) order, then rests or cancels what is left. */
    private void aggress(OrderBook book, Order order) {
        OrderBook.Stop stop = book.match(order, this::onFill);
        if (order.leavesQty == 0) {
            order.firm.retire(order);
        } else if (stop == OrderBook.Stop.SELF_TRADE) {
            cancelRemainder(order, "self-trade prevention: would trade with own resting order");
        } else if (order.isMarket()) {
            cancelRemainder(order, "market order: no more liquidity");
        } else if (order.timeInForce == '3') {
            cancelRemainder(order, "immediate-or-cancel remainder");
        } else {
            book.rest(order);
        }
    }

    private void onFill(Order maker, Order taker, long priceTicks, long qty) {
        Message makerEr = report(maker, 'F', maker.clOrdId, null);
        addLast(makerEr, maker, priceTicks, qty);
        send(maker.firm, makerEr);
        if (maker.leavesQty == 0) {
            maker.firm.retire(maker);
        }
        Message takerEr = report(taker, 'F', taker.clOrdId, null);
        addLast(takerEr, taker, priceTicks, qty);
        send(taker.firm, takerEr);
    }

    private void addLast(Message er, Order o, long priceTicks, long qty) {
        er.setString(31, price(o.symbolIndex, priceTicks));
        er.setString(32, Long.toString(qty));
    }

    private void cancelRemainder(Order order, String text) {
        order.leavesQty = 0;
        order.ordStatus = '4';
        order.firm.retire(order);
        Message er = report(order, '4', order.clOrdId, null);
        er.setString(58, text);
        send(order.firm, er);
    }

    private void rejectNew(Firm firm, Message m, String clOrdId, String symbol, char side, int reason, String text)
            throws FieldNotFound {
        Message er = new quickfix.fix44.ExecutionReport();
        er.setString(37, "NONE");
        er.setString(17, execId());
        er.setString(11, clOrdId);
        er.setChar(150, '8');
        er.setChar(39, '8');
        er.setString(55, symbol);
        er.setChar(54, side);
        if (m.isSetField(38)) {
            er.setString(38, m.getString(38));
        }
        er.setString(14, "0");
        er.setString(151, "0");
        er.setString(6, "0");
        er.setInt(103, reason);
        er.setString(58, text);
        er.setString(1, firm.name);
        er.setField(new TransactTime(now()));
        send(firm, er);
    }

    private static long parseQty(Instrument ins, Message m) throws FieldNotFound, Invalid {
        if (!m.isSetField(38)) {
            throw new Invalid(13, "OrderQty missing");
        }
        BigDecimal q;
        try {
            q = new BigDecimal(m.getString(38));
        } catch (NumberFormatException e) {
            throw new Invalid(13, "OrderQty is not a number: " + m.getString(38));
        }
        if (q.signum() <= 0) {
            throw new Invalid(13, "OrderQty must be positive: " + m.getString(38));
        }
        long qty;
        try {
            qty = q.longValueExact();
        } catch (ArithmeticException e) {
            throw new Invalid(13, "OrderQty " + m.getString(38) + " is not a whole number of units");
        }
        if (qty % ins.lot() != 0) {
            throw new Invalid(13, "OrderQty " + qty + " is not a multiple of lot " + ins.lot());
        }
        return qty;
    }

    private static long parsePrice(Instrument ins, String text) throws Invalid {
        BigDecimal p;
        try {
            p = new BigDecimal(text);
        } catch (NumberFormatException e) {
            throw new Invalid(99, "Price is not a number: " + text);
        }
        if (p.signum() <= 0) {
            throw new Invalid(99, "Price must be positive: " + text);
        }
        BigDecimal[] qr = p.divideAndRemainder(ins.tick());
        if (qr[1].signum() != 0) {
            throw new Invalid(99, "Price " + text + " is not a multiple of tick " + ins.tick().toPlainString());
        }
        try {
            return qr[0].longValueExact();
        } catch (ArithmeticException e) {
            throw new Invalid(99, "Price out of range: " + text);
        }
    }

    // ---------------------------------------------------------------- Cancel (F) and replace (G)

    private void onCancel(Firm firm, Message m) throws FieldNotFound {
        String clOrdId = m.getString(11);
        String orig = m.getString(41);
        Order o = firm.live.get(orig);
        if (firm.knows(clOrdId)) {
            cancelReject(firm, clOrdId, orig, o, '1', 6, "duplicate ClOrdID " + clOrdId);
            return;
        }
        if (o == null || !instruments.get(o.symbolIndex).symbol().equals(m.getString(55))
                || o.side != m.getChar(54)) {
            cancelReject(firm, clOrdId, orig, null, '1', 1, "unknown order " + orig);
            return;
        }
        books[o.symbolIndex].remove(o);
        o.leavesQty = 0;
        o.ordStatus = '4';
        firm.rename(o, clOrdId);
        firm.retire(o);
        send(firm, report(o, '4', clOrdId, orig));
    }

    private void onReplace(Firm firm, Message m) throws FieldNotFound {
        String clOrdId = m.getString(11);
        String orig = m.getString(41);
        Order o = firm.live.get(orig);
        if (firm.knows(clOrdId)) {
            cancelReject(firm, clOrdId, orig, o, '2', 6, "duplicate ClOrdID " + clOrdId);
            return;
        }
        if (o == null || !instruments.get(o.symbolIndex).symbol().equals(m.getString(55))
                || o.side != m.getChar(54)) {
            cancelReject(firm, clOrdId, orig, null, '2', 1, "unknown order " + orig);
            return;
        }
        Instrument ins = instruments.get(o.symbolIndex);
        OrderBook book = books[o.symbolIndex];
        long newPx;
        long newQty;
        try {
            if (m.getChar(40) != Order.LIMIT || o.ordType != Order.LIMIT) {
                throw new Invalid(99, "only limit orders can be replaced, as limit orders");
            }
            if (!m.isSetField(44)) {
                throw new Invalid(99, "replace without Price");
            }
            newPx = parsePrice(ins, m.getString(44));
            newQty = parseQty(ins, m);
            if (newQty <= o.cumQty) {
                throw new Invalid(99, "new OrderQty " + newQty + " is not above CumQty " + o.cumQty);
            }
            if (o.postOnly && newPx != o.priceTicks && book.wouldCross(o.side, false, newPx)) {
                throw new Invalid(99, "post-only order would cross");
            }
        } catch (Invalid e) {
            cancelReject(firm, clOrdId, orig, o, '2', 99, e.getMessage());
            return;
        }
        long newLeaves = newQty - o.cumQty;
        firm.rename(o, clOrdId);
        if (newPx == o.priceTicks && newLeaves <= o.leavesQty) {
            book.reduce(o, newLeaves);
            o.orderQty = newQty;
            send(firm, report(o, '5', clOrdId, orig));
            return;
        }
        book.remove(o);
        o.priceTicks = newPx;
        o.orderQty = newQty;
        o.leavesQty = newLeaves;
        send(firm, report(o, '5', clOrdId, orig));
        aggress(book, o);
    }

    private void cancelReject(Firm firm, String clOrdId, String orig, Order o, char responseTo, int reason,
            String text) {
        Message r = new quickfix.fix44.OrderCancelReject();
        r.setString(37, o == null ? "NONE" : Long.toString(o.orderId));
        r.setString(11, clOrdId);
        r.setString(41, orig);
        r.setChar(39, o == null ? '8' : o.ordStatus);
        r.setChar(434, responseTo);
        r.setInt(102, reason);
        r.setString(58, text);
        r.setString(1, firm.name);
        send(firm, r);
    }

    // ---------------------------------------------------------------- Mass cancel (q)

    private void onMassCancel(Firm firm, Message m) throws FieldNotFound {
        String clOrdId = m.getString(11);
        char type = m.getChar(530);
        Integer onlySymbol = null;
        Message r = new quickfix.fix44.OrderMassCancelReport();
        r.setString(37, "MC" + (nextOrderId++));
        r.setString(11, clOrdId);
        r.setChar(530, type);
        if (type == '1') {
            String symbol = m.isSetField(55) ? m.getString(55) : "";
            r.setString(55, symbol);
            onlySymbol = symbolIndex.get(symbol);
            if (onlySymbol == null) {
                r.setChar(531, '0');
                r.setChar(532, '1');
                r.setString(58, "unknown symbol " + symbol);
                send(firm, r);
                return;
            }
        } else if (type != '7') {
            r.setChar(531, '0');
            r.setChar(532, '0');
            r.setString(58, "mass cancel type " + type + " not supported (1 by symbol, 7 all)");
            send(firm, r);
            return;
        }
        List<Order> victims = new ArrayList<>();
        for (Order o : firm.live.values()) {
            if (o.isResting() && (onlySymbol == null || o.symbolIndex == onlySymbol)) {
                victims.add(o);
            }
        }
        victims.sort(Comparator.comparingLong(o -> o.orderId));
        for (Order o : victims) {
            books[o.symbolIndex].remove(o);
            o.leavesQty = 0;
            o.ordStatus = '4';
            firm.retire(o);
            Message er = report(o, '4', o.clOrdId, null);
            er.setString(58, "mass cancel " + clOrdId);
            send(firm, er);
        }
        r.setChar(531, type);
        r.setInt(533, victims.size());
        send(firm, r);
    }

    // ---------------------------------------------------------------- Order status (H)

    private void onStatus(Firm firm, Message m) throws FieldNotFound {
        String clOrdId = m.getString(11);
        Order o = firm.find(clOrdId);
        Message er;
        if (o == null) {
            er = new quickfix.fix44.ExecutionReport();
            er.setString(37, "NONE");
            er.setString(17, execId());
            er.setString(11, clOrdId);
            er.setChar(150, 'I');
            er.setChar(39, '8');
            er.setString(55, m.getString(55));
            er.setChar(54, m.getChar(54));
            er.setString(14, "0");
            er.setString(151, "0");
            er.setString(6, "0");
            er.setInt(103, 5);
            er.setString(58, "unknown order " + clOrdId);
            er.setString(1, firm.name);
        } else {
            er = report(o, 'I', clOrdId, null);
        }
        if (m.isSetField(790)) {
            er.setString(790, m.getString(790));
        }
        send(firm, er);
    }

    // ---------------------------------------------------------------- Reports

    private Message report(Order o, char execType, String clOrdId, String origClOrdId) {
        Message er = new quickfix.fix44.ExecutionReport();
        er.setString(37, Long.toString(o.orderId));
        er.setString(17, execId());
        er.setString(11, clOrdId);
        if (origClOrdId != null) {
            er.setString(41, origClOrdId);
        }
        er.setChar(150, execType);
        er.setChar(39, o.ordStatus);
        er.setString(1, o.firm.name);
        er.setString(55, instruments.get(o.symbolIndex).symbol());
        er.setChar(54, o.side);
        er.setString(38, Long.toString(o.orderQty));
        er.setChar(40, o.ordType);
        if (o.ordType == Order.LIMIT) {
            er.setString(44, price(o.symbolIndex, o.priceTicks));
        }
        er.setChar(59, o.timeInForce);
        if (o.postOnly) {
            er.setString(18, "6");
        }
        er.setString(14, Long.toString(o.cumQty));
        er.setString(151, Long.toString(o.leavesQty));
        er.setString(6, avgPx(o));
        er.setField(new TransactTime(now()));
        return er;
    }

    private String price(int symbolIdx, long ticks) {
        return BigDecimal.valueOf(ticks).multiply(instruments.get(symbolIdx).tick()).toPlainString();
    }

    private String avgPx(Order o) {
        if (o.cumQty == 0) {
            return "0";
        }
        BigDecimal notional = BigDecimal.valueOf(o.notionalTicks).multiply(instruments.get(o.symbolIndex).tick());
        return notional.divide(BigDecimal.valueOf(o.cumQty), 8, RoundingMode.HALF_EVEN).stripTrailingZeros()
                .toPlainString();
    }

    private String execId() {
        return Long.toString(nextExecId++);
    }

    private static LocalDateTime now() {
        return LocalDateTime.now(ZoneOffset.UTC);
    }

    private void send(Firm firm, Message message) {
        Session session = Session.lookupSession(firm.sessionId);
        if (session != null) {
            // If the session is logged off, QuickFIX/J stores the message for resend on logon.
            session.send(message);
        }
    }
}
