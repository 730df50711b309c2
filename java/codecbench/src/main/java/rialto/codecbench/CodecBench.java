package rialto.codecbench;

import java.nio.charset.StandardCharsets;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import org.HdrHistogram.Histogram;

import quickfix.DataDictionary;
import quickfix.DefaultMessageFactory;
import quickfix.Message;
import quickfix.MessageFactory;
import quickfix.MessageUtils;
import quickfix.field.Account;
import quickfix.field.AvgPx;
import quickfix.field.ClOrdID;
import quickfix.field.CumQty;
import quickfix.field.ExecID;
import quickfix.field.ExecInst;
import quickfix.field.ExecType;
import quickfix.field.LastPx;
import quickfix.field.LastQty;
import quickfix.field.LeavesQty;
import quickfix.field.MsgSeqNum;
import quickfix.field.OrdStatus;
import quickfix.field.OrdType;
import quickfix.field.OrderID;
import quickfix.field.OrderQty;
import quickfix.field.Price;
import quickfix.field.SenderCompID;
import quickfix.field.SendingTime;
import quickfix.field.Side;
import quickfix.field.Symbol;
import quickfix.field.TargetCompID;
import quickfix.field.TimeInForce;
import quickfix.field.TransactTime;
import quickfix.fix44.ExecutionReport;
import quickfix.fix44.NewOrderSingle;

/**
 * QuickFIX/J's FIX 4.4 codec timed the way FIX Antenna's performance lab times an engine (send
 * latency, receive latency, receive-and-send, throughput), without sockets: the Java side of
 * {@code rialto bench codec}, with the same message contents as Rialto's side.
 *
 * <ul>
 *   <li>send: a NewOrderSingle or a filled ExecutionReport built from values (header included, as
 *       QuickFIX/J's session fills it) and serialized to bytes ({@code toString}, then the bytes
 *       the socket would be written);</li>
 *   <li>receive: bytes to a typed message ({@code MessageUtils.parse} with the FIX 4.4 dictionary
 *       and the checksum checked, as a session parses) and every field an order path reads;</li>
 *   <li>receive_send: a NewOrderSingle received, and the ExecutionReport answering it built from
 *       its fields and serialized;</li>
 *   <li>throughput: receive_send back to back for N seconds on one thread, messages/s.</li>
 * </ul>
 *
 * Validation on: {@code DataDictionary.validate} (required fields, formats, enum values): of the
 * body before serializing a message sent (as {@code toApp} would), of the whole message after
 * parsing one received (as a session with ValidateIncomingMessage=Y does). Latencies are taken
 * between two {@code System.nanoTime} reads per message; the {@code clock} line says what two
 * reads cost. One line per figure on stdout, in the format of {@code rialto bench codec}.
 */
public final class CodecBench {
    static final String CLIENT = "CLIENT1";
    static final String EXCHANGE = "RIALTO";
    /** 2023-11-14 22:13:20 UTC (1,700,000,000 s after the epoch); message i is i µs later. */
    static final LocalDateTime T0 = LocalDateTime.of(2023, 11, 14, 22, 13, 20);
    /** Distinct ClOrdIDs and inbound frames cycled through. */
    static final int RING = 1024;

    final DataDictionary dd;
    final MessageFactory factory = new DefaultMessageFactory();
    final String[] clOrdIds = new String[RING];
    final byte[][] nosFrames = new byte[RING][];
    final byte[][] erFrames = new byte[RING][];
    boolean validate;
    /** Sums values read back so that no work can be optimized away. */
    long sink;

    CodecBench() throws Exception {
        dd = new DataDictionary("FIX44.xml");
        for (int i = 0; i < RING; i++) {
            clOrdIds[i] = String.format(Locale.ROOT, "ORD-%07d", i + 1);
        }
        for (int i = 0; i < RING; i++) {
            nosFrames[i] = sendNewOrder(i);
            erFrames[i] = sendReport(i);
        }
    }

    static LocalDateTime time(long i) {
        return T0.plusNanos(i * 1000);
    }

    static void header(Message m, String sender, String target, long seq, LocalDateTime t) {
        Message.Header h = m.getHeader();
        h.setString(SenderCompID.FIELD, sender);
        h.setString(TargetCompID.FIELD, target);
        h.setInt(MsgSeqNum.FIELD, (int) seq);
        h.setField(new SendingTime(t));
    }

    byte[] serialize(Message m) throws Exception {
        if (validate) {
            dd.validate(m, true);
        }
        return m.toString().getBytes(StandardCharsets.ISO_8859_1);
    }

    /** A client's limit buy of 100 ACME at 101.25, day. */
    byte[] sendNewOrder(long i) throws Exception {
        LocalDateTime t = time(i);
        NewOrderSingle m = new NewOrderSingle(new ClOrdID(clOrdIds[(int) (i % RING)]),
                new Side(Side.BUY), new TransactTime(t), new OrdType(OrdType.LIMIT));
        m.set(new Symbol("ACME"));
        m.set(new OrderQty(100));
        m.set(new Price(101.25));
        m.set(new TimeInForce(TimeInForce.DAY));
        header(m, CLIENT, EXCHANGE, i + 2, t);
        return serialize(m);
    }

    /** The exchange's report of that order filled in one trade. */
    ExecutionReport report(long i, String clOrdId, String symbol, char side, double price,
            double qty) {
        ExecutionReport m = new ExecutionReport(new OrderID(Long.toString(1_000_000 + i)),
                new ExecID((5_000_000 + i) + ".1"), new ExecType(ExecType.TRADE),
                new OrdStatus(OrdStatus.FILLED), new Side(side), new LeavesQty(0),
                new CumQty(qty), new AvgPx(price));
        m.set(new ClOrdID(clOrdId));
        m.set(new Account("1"));
        m.set(new Symbol(symbol));
        m.set(new OrdType(OrdType.LIMIT));
        m.set(new Price(price));
        m.set(new TimeInForce(TimeInForce.DAY));
        m.set(new OrderQty(qty));
        m.set(new LastPx(price));
        m.set(new LastQty(qty));
        LocalDateTime t = time(i);
        m.set(new TransactTime(t));
        header(m, EXCHANGE, CLIENT, i + 2, t);
        return m;
    }

    byte[] sendReport(long i) throws Exception {
        return serialize(report(i, clOrdIds[(int) (i % RING)], "ACME", Side.BUY, 101.25, 100));
    }

    Message parse(byte[] frame) throws Exception {
        // What QuickFIX/J's decoder hands the session: a String of the frame's bytes.
        String s = new String(frame, StandardCharsets.ISO_8859_1);
        Message m = MessageUtils.parse(factory, dd, s, true);
        if (validate) {
            dd.validate(m);
        }
        return m;
    }

    long readHeader(Message m, String sender, String target) throws Exception {
        Message.Header h = m.getHeader();
        if (!sender.equals(h.getString(SenderCompID.FIELD))
                || !target.equals(h.getString(TargetCompID.FIELD))) {
            throw new IllegalStateException("CompIDs differ: " + m);
        }
        return h.getInt(MsgSeqNum.FIELD) + h.getUtcTimeStamp(SendingTime.FIELD).getNano();
    }

    /** A client reading its report: every field it acts on. */
    long receiveReport(byte[] frame) throws Exception {
        ExecutionReport m = (ExecutionReport) parse(frame);
        long v = readHeader(m, EXCHANGE, CLIENT);
        v += m.getOrderID().getValue().length() + m.getClOrdID().getValue().length()
                + m.getExecID().getValue().length() + m.getExecType().getValue()
                + m.getOrdStatus().getValue() + m.getSymbol().getValue().length()
                + m.getSide().getValue() + (long) (m.getLastPx().getValue() * 100)
                + (long) m.getLastQty().getValue() + (long) m.getLeavesQty().getValue()
                + (long) m.getCumQty().getValue() + (long) (m.getAvgPx().getValue() * 100)
                + m.getTransactTime().getValue().getNano();
        return v;
    }

    /** The fields of a NewOrderSingle an exchange's order path reads. */
    static final class Order {
        String clOrdId;
        String symbol;
        char side;
        char ordType;
        char tif;
        double price;
        double qty;
        String account;
        boolean postOnly;
    }

    Order readOrder(NewOrderSingle m, Order o) throws Exception {
        readHeader(m, CLIENT, EXCHANGE);
        o.clOrdId = m.getClOrdID().getValue();
        o.symbol = m.getSymbol().getValue();
        if (!"ACME".equals(o.symbol)) {
            throw new IllegalStateException("unknown symbol " + o.symbol);
        }
        o.side = m.getSide().getValue();
        o.ordType = m.getOrdType().getValue();
        o.tif = m.isSetTimeInForce() ? m.getTimeInForce().getValue() : TimeInForce.DAY;
        o.price = m.getPrice().getValue();
        o.qty = m.getOrderQty().getValue();
        o.account = m.isSetAccount() ? m.getAccount().getValue() : null;
        o.postOnly = m.isSetExecInst() && m.getExecInst().getValue().indexOf('6') >= 0;
        return o;
    }

    final Order order = new Order();

    long receiveOrder(byte[] frame) throws Exception {
        Order o = readOrder((NewOrderSingle) parse(frame), order);
        return o.clOrdId.length() + o.side + o.ordType + o.tif + (long) (o.price * 100)
                + (long) o.qty + (o.postOnly ? 1 : 0);
    }

    long receiveSend(long i) throws Exception {
        Order o = readOrder((NewOrderSingle) parse(nosFrames[(int) (i % RING)]), order);
        return serialize(report(i, o.clOrdId, o.symbol, o.side, o.price, o.qty)).length;
    }

    interface Work {
        long run(long i) throws Exception;
    }

    static final long HIGHEST_NS = 60_000_000_000L;

    /** warmup + n calls, each between two clock reads; the last n recorded. */
    String latency(String figure, String msg, long warmup, long n, Work w) throws Exception {
        Histogram h = new Histogram(1, HIGHEST_NS, 3);
        long total = 0;
        for (long i = 0; i < warmup + n; i++) {
            long t0 = System.nanoTime();
            sink += w.run(i);
            long dt = System.nanoTime() - t0;
            if (i >= warmup) {
                h.recordValue(Math.min(Math.max(dt, 1), HIGHEST_NS));
                total += dt;
            }
        }
        return line(figure, msg) + String.format(Locale.ROOT,
                " count=%d p50_ns=%d p99_ns=%d p999_ns=%d max_ns=%d mean_ns=%.1f", n,
                h.getValueAtPercentile(50), h.getValueAtPercentile(99),
                h.getValueAtPercentile(99.9), h.getMaxValue(), (double) total / n);
    }

    String line(String figure, String msg) {
        return "codec impl=quickfixj figure=" + figure + " msg=" + msg + " validation="
                + (validate ? "on" : "off");
    }

    /** receive_send back to back for `seconds` after `warmup` calls; the clock read every 256. */
    String throughput(long warmup, double seconds) throws Exception {
        for (long i = 0; i < warmup; i++) {
            sink += receiveSend(i);
        }
        long limit = (long) (seconds * 1e9);
        long t0 = System.nanoTime();
        long n = 0;
        long elapsed;
        do {
            for (int k = 0; k < 256; k++, n++) {
                sink += receiveSend(n);
            }
            elapsed = System.nanoTime() - t0;
        } while (elapsed < limit);
        return line("throughput", "NewOrderSingle>ExecutionReport") + String.format(Locale.ROOT,
                " count=%d seconds=%.3f mean_ns=%.1f msgs_per_s=%.0f", n, elapsed / 1e9,
                (double) elapsed / n, n * 1e9 / elapsed);
    }

    List<String> run(long warmup, long n, double seconds) throws Exception {
        List<String> out = new ArrayList<>();
        out.add(latency("send", "NewOrderSingle", warmup, n, i -> sendNewOrder(i).length));
        out.add(latency("send", "ExecutionReport", warmup, n, i -> sendReport(i).length));
        out.add(latency("receive", "ExecutionReport", warmup, n,
                i -> receiveReport(erFrames[(int) (i % RING)])));
        out.add(latency("receive", "NewOrderSingle", warmup, n,
                i -> receiveOrder(nosFrames[(int) (i % RING)])));
        out.add(latency("receive_send", "NewOrderSingle>ExecutionReport", warmup, n,
                this::receiveSend));
        out.add(throughput(warmup, seconds));
        return out;
    }

    static void usage(String problem) {
        System.err.println(problem);
        System.err.println("usage: java -jar codecbench.jar [--messages N] [--warmup N] [--seconds S]"
                + " [--validation off|on|off,on] [--print-messages]");
        System.exit(2);
    }

    public static void main(String[] args) throws Exception {
        long n = 500_000;
        long warmup = 200_000;
        double seconds = 5;
        String validation = "off,on";
        boolean print = false;
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (a.equals("--print-messages")) {
                print = true;
                continue;
            }
            if (i + 1 >= args.length) {
                usage(a + " needs a value");
            }
            String v = args[++i];
            try {
                switch (a) {
                    case "--messages" -> n = Long.parseLong(v);
                    case "--warmup" -> warmup = Long.parseLong(v);
                    case "--seconds" -> seconds = Double.parseDouble(v);
                    case "--validation" -> validation = v;
                    default -> usage("unknown option " + a);
                }
            } catch (NumberFormatException e) {
                usage(a + " " + v + ": not a number");
            }
        }
        if (n < 1 || warmup < 0 || !(seconds > 0 && seconds <= 3600)) {
            usage("--messages must be at least 1, --warmup at least 0, --seconds in (0, 3600]");
        }
        CodecBench b = new CodecBench();
        if (print) {
            System.out.println(new String(b.nosFrames[0], StandardCharsets.ISO_8859_1).replace('\u0001', '|'));
            System.out.println(new String(b.erFrames[0], StandardCharsets.ISO_8859_1).replace('\u0001', '|'));
            return;
        }
        System.out.println(b.latency("clock", "none", warmup, n, i -> 0));
        for (String mode : validation.split(",")) {
            switch (mode) {
                case "off" -> b.validate = false;
                case "on" -> b.validate = true;
                default -> usage("--validation " + validation + ": use off, on or off,on");
            }
            for (String line : b.run(warmup, n, seconds)) {
                System.out.println(line);
            }
        }
        System.err.println("codecbench: check " + b.sink);
    }
}
