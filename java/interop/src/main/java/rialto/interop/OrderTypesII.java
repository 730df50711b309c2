package rialto.interop;

import static rialto.interop.Fix.BUY;
import static rialto.interop.Fix.GTC;
import static rialto.interop.Fix.LIMIT;
import static rialto.interop.Fix.SELL;
import static rialto.interop.Fix.field;

import java.io.PrintStream;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import quickfix.FieldNotFound;
import quickfix.Message;
import rialto.interop.Fix.Msg;
import rialto.interop.FixClients.Client;

/**
 * Order types II against Rialto, after the scenario and on its three sessions (the same firms:
 * the first enters the orders, the second makes, the third takes): a stop limit order (OrdType 4,
 * StopPx 99) that a trade at its stop price triggers and that then fills, an iceberg (MaxFloor
 * 111), a GTD order (TimeInForce 6, ExpireTime 126) that expires by itself, and a pending stop
 * order (OrdType 3). QuickFIX/J validates every message it receives against the version's standard
 * dictionary, the trigger's ExecutionReport included (ExecType L in FIX 5.0SP2, D Restated in 4.2
 * and 4.4), and every message this client sends; each ExecutionReport is also checked field by
 * field.
 *
 * <p>The reference exchange has no order types II: {@code --no-orders2} leaves this part out.
 *
 * <p>State: the orders are on BOLT between 30.00 and 41.00, prices the scenario does not use, and
 * this part cancels whatever it leaves resting (one by one, so FIX 4.2 too), so a later run finds
 * the same book.
 */
public final class OrderTypesII {

    private interface Step {
        void run();
    }

    private static final String SYM = "BOLT";

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
    /** ClOrdID (the latest), side of the orders that may still rest, by session. */
    private final Map<Client, Map<String, Character>> resting = new HashMap<>();
    private final List<String> stepNames = new ArrayList<>();
    private final List<Step> steps = new ArrayList<>();

    public OrderTypesII(FixClients fix, long timeoutMs, PrintStream out) {
        List<Client> cs = fix.clients();
        if (cs.size() < 3) {
            throw new IllegalArgumentException("order types II need three sessions, got " + cs.size());
        }
        this.c1 = cs.get(0);
        this.c2 = cs.get(1);
        this.c3 = cs.get(2);
        this.v = c1.version;
        this.all = List.of(c1, c2, c3);
        this.timeoutMs = timeoutMs;
        this.out = out;
        this.prefix = "O" + Long.toString(System.currentTimeMillis(), 36).toUpperCase() + "-";
        for (Client c : all) {
            resting.put(c, new HashMap<>());
        }
    }

    public int size() {
        return steps.size();
    }

    private String id() {
        return prefix + (++next);
    }


    /** The next ExecutionReport with this ClOrdID, with the fields every one must have. */
    private Msg er(Client c, String clOrdId, String what) {
        Message m = c.await(what + " (ExecutionReport with ClOrdID " + clOrdId + ")",
                x -> "8".equals(FixClients.type(x)) && clOrdId.equals(field(x, 11)), timeoutMs);
        Msg e = new Msg(m, c.name + " " + what);
        e.has(37).has(17).has(150).has(39).is(55, SYM).has(54).has(151).has(14).has(6);
        return e;
    }

    /** ExecTransType 0 in FIX 4.2 (none after it). */
    private Msg plain(Msg e) {
        if (v.fix42()) {
            e.is(20, '0');
        } else {
            e.absent(20);
        }
        return e;
    }

    private void sameOrder(Msg e, String key) {
        String known = orderIdOf.putIfAbsent(key, e.get(37));
        if (known != null) {
            e.is(37, known);
        }
    }

    /** The first ER of an aggressive order, past its optional ExecType 0 acknowledgement. */
    private Msg afterOptionalAck(Client c, String id, String what) {
        Msg e = er(c, id, what);
        return "0".equals(e.get(150)) ? er(c, id, what) : e;
    }

    private Message order(String id, char side, long qty, String price, char ordType, char tif) {
        return Fix.newOrder(id, SYM, side, qty, price, ordType, tif, false);
    }

    private void sendOrder(Client c, Message m) throws FieldNotFound {
        c.send(m);
        resting.get(c).put(m.getString(11), m.getChar(54));
    }

    private void cancel(Client c, String orig, char side, String what) {
        String x = id();
        c.send(Fix.cancel(x, orig, SYM, side));
        plain(er(c, x, what)).is(150, '4').is(39, '4').is(41, orig).num(151, 0);
        resting.get(c).remove(orig);
        orderIdOf.put(x, orderIdOf.get(orig));
    }

    /** ExecType of a stop's trigger: L (Triggered or Activated by System) in FIX 5.0SP2, D before. */
    private char triggered() {
        return v == FixVersion.FIX50SP2 ? 'L' : 'D';
    }

    private void step(String name, Step s) {
        stepNames.add(name);
        steps.add(s);
    }

    /** Runs every step; stops at the first failure, then cancels what is left. Returns the steps passed. */
    public int run() {
        build();
        int passed = 0;
        for (int i = 0; i < steps.size(); i++) {
            try {
                steps.get(i).run();
                out.println("ok    " + stepNames.get(i));
                passed++;
            } catch (AssertionError | RuntimeException e) {
                out.println("FAIL  " + stepNames.get(i));
                out.println("      " + (e instanceof AssertionError ? e.getMessage() : e.toString()));
                cleanUp();
                return passed;
            }
        }
        return passed;
    }

    /** After a failure: cancels every order this part may have left, and forgets the inboxes. */
    private void cleanUp() {
        for (Client c : all) {
            for (Map.Entry<String, Character> o : resting.get(c).entrySet()) {
                try {
                    c.send(Fix.cancel(id(), o.getKey(), SYM, o.getValue()));
                } catch (AssertionError e) {
                    out.println("      (clean-up: " + e.getMessage() + ")");
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

    private void build() {
        String sl = id();
        String mk = id();
        step("stop limit (OrdType 4, StopPx 99) rests as New; a trade at its StopPx triggers it (ExecType "
                + triggered() + "), then it fills; OrdType and StopPx on every report", () -> {
                    try {
                        Message m = order(sl, BUY, 5, "40.60", '4', GTC);
                        m.setString(99, "40.50");
                        sendOrder(c1, m);
                        Msg a = plain(er(c1, sl, "stop limit acknowledgement"));
                        a.is(150, '0').is(39, '0').is(40, '4').num(44, "40.60").num(99, "40.50").num(38, 5)
                                .num(151, 5).num(14, 0);
                        sameOrder(a, sl);
                        sendOrder(c2, order(mk, SELL, 10, "40.50", LIMIT, GTC));
                        plain(er(c2, mk, "maker acknowledgement")).is(150, '0');
                        String tk = id();
                        sendOrder(c3, order(tk, BUY, 2, "40.50", LIMIT, GTC));
                        plain(afterOptionalAck(c3, tk, "taker fill")).is(150, v.fillExecType(0)).num(32, 2).num(31,
                                "40.50");
                        resting.get(c3).remove(tk);
                        plain(er(c2, mk, "maker fill")).num(32, 2).num(151, 8);
                        Msg t = plain(er(c1, sl, "trigger"));
                        t.is(150, triggered()).is(39, '0').is(40, '4').num(44, "40.60").num(99, "40.50").num(151, 5)
                                .num(14, 0).absent(32);
                        sameOrder(t, sl);
                        Msg f = plain(er(c1, sl, "fill after the trigger"));
                        f.is(150, v.fillExecType(0)).is(39, '2').is(40, '4').num(99, "40.50").num(31, "40.50")
                                .num(32, 5).num(151, 0).num(14, 5).num(6, "40.50");
                        sameOrder(f, sl);
                        resting.get(c1).remove(sl);
                        plain(er(c2, mk, "maker fill")).num(32, 5).num(151, 3);
                        cancel(c2, mk, SELL, "cancel of the maker's rest");
                    } catch (FieldNotFound e) {
                        throw new AssertionError(e);
                    }
                });

        String ice = id();
        step("iceberg (MaxFloor 111): acknowledged, filled across a refill and canceled, MaxFloor on every report",
                () -> {
                    try {
                        Message m = order(ice, SELL, 30, "40.80", LIMIT, GTC);
                        m.setString(111, "10");
                        sendOrder(c1, m);
                        plain(er(c1, ice, "iceberg acknowledgement")).is(150, '0').is(40, '2').num(111, 10)
                                .num(38, 30).num(151, 30);
                        String tk = id();
                        sendOrder(c3, order(tk, BUY, 12, "40.80", LIMIT, GTC));
                        plain(afterOptionalAck(c3, tk, "taker fill of the peak")).num(32, 10).num(151, 2);
                        plain(er(c3, tk, "taker fill of the refilled peak")).num(32, 2).num(151, 0);
                        resting.get(c3).remove(tk);
                        plain(er(c1, ice, "iceberg fill")).is(39, '1').num(32, 10).num(151, 20).num(111, 10);
                        plain(er(c1, ice, "iceberg fill after its refill")).is(39, '1').num(32, 2).num(151, 18)
                                .num(111, 10);
                        String x = id();
                        c1.send(Fix.cancel(x, ice, SYM, SELL));
                        plain(er(c1, x, "cancel of the iceberg")).is(150, '4').num(111, 10).num(14, 12);
                        resting.get(c1).remove(ice);
                    } catch (FieldNotFound e) {
                        throw new AssertionError(e);
                    }
                });

        String gtd = id();
        step("GTD (TimeInForce 6, ExpireTime 126): acknowledged with its ExpireTime, expires (ExecType C) once it"
                + " passes, with nothing else sent", () -> {
                    try {
                        Message m = order(gtd, BUY, 1, "30.00", LIMIT, '6');
                        LocalDateTime at = FixClients.now().plusSeconds(2).withNano(0);
                        m.setUtcTimeStamp(126, at, true);
                        sendOrder(c1, m);
                        Msg a = plain(er(c1, gtd, "GTD acknowledgement"));
                        a.is(150, '0').is(59, '6').has(126);
                        String expire = a.get(126);
                        Msg x = plain(er(c1, gtd, "expiry"));
                        x.is(150, 'C').is(39, 'C').is(59, '6').is(126, expire).num(151, 0);
                        resting.get(c1).remove(gtd);
                    } catch (FieldNotFound e) {
                        throw new AssertionError(e);
                    }
                });

        String st = id();
        step("stop (OrdType 3) pending: OrderStatusRequest says New with OrdType 3 and StopPx; canceled", () -> {
            try {
                Message m = order(st, SELL, 3, null, '3', GTC);
                m.setString(99, "30.50");
                sendOrder(c1, m);
                plain(er(c1, st, "stop acknowledgement")).is(150, '0').is(39, '0').is(40, '3').num(99, "30.50")
                        .absent(44);
                c1.send(Fix.status(st, SYM, SELL));
                Msg s = er(c1, st, "order status");
                if (v.fix42()) {
                    s.is(20, '3').is(150, '0');
                } else {
                    s.is(150, 'I');
                }
                s.is(39, '0').is(40, '3').num(99, "30.50").num(151, 3);
                cancel(c1, st, SELL, "cancel of the stop");
            } catch (FieldNotFound e) {
                throw new AssertionError(e);
            }
        });

        step("nothing unexpected arrives afterwards (300 ms), and no session Reject either way", () -> {
            try {
                Thread.sleep(300);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            StringBuilder sb = new StringBuilder();
            for (Client c : all) {
                for (Message m : c.drain()) {
                    sb.append("\n    ").append(c.name).append(" got ").append(FixClients.dump(m));
                }
                for (String p : c.faults()) {
                    sb.append("\n    ").append(c.name).append(" session problem (QuickFIX/J): ").append(p);
                }
            }
            if (sb.length() > 0) {
                throw new AssertionError("unexpected:" + sb);
            }
        });
    }
}
