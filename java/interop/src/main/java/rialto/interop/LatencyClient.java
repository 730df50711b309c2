package rialto.interop;

import static rialto.interop.Fix.field;

import java.io.PrintStream;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.HdrHistogram.Histogram;
import quickfix.FieldNotFound;
import quickfix.Message;
import rialto.interop.FixClients.Client;

/**
 * Open-loop FIX round-trip latency on one session with a QuickFIX/J client, like the FIXEdge
 * single-session test (seed 003): NewOrderSingle at a fixed rate, latency from each order's
 * intended send time (so a stall delays the schedule, not the measurement: no coordinated
 * omission) to its first ExecutionReport, recorded in an HdrHistogram.
 *
 * <p>Flow {@code rest} (default): limit buys that rest on a ladder of 100 prices far below any
 * other test's prices; once {@code window} orders rest, each new order is followed by a cancel of
 * the oldest (cancels are not timed), so the book stays small. Flow {@code ioc}: IOC buys that find
 * nothing and are canceled at once. The run ends with a mass cancel of the session's orders.
 *
 * <p>Pacing: the sender parks until about 60 µs before each intended send time, then spins (so
 * timer slack does not add to the measured latency); {@code spin=false} parks all the way, which
 * costs no CPU but adds the park overshoot (typically 50-100 µs) to every sample.
 *
 * <p>Output: the seeds' table {@code Percentile : Microseconds : Event count} from MIN through
 * 99.999999% to MAX, then one line {@code rate_offered=.. rate_achieved=.. p50_us=.. p99_us=..
 * p999_us=.. rejects=.. errors=..}.
 */
public final class LatencyClient {

    /** Options of one run. */
    public record Config(long count, long rate, long warmup, String flow, int window, String symbol,
            long timeoutMs, boolean spin) {
    }

    private final Client client;
    private final Config cfg;
    private final PrintStream out;
    private final String prefix = "L" + Long.toString(System.currentTimeMillis(), 36).toUpperCase() + "-";
    private final String cancelPrefix = prefix + "X";
    private long[] intendedNs;
    private boolean[] answered;
    private final Histogram histogram = new Histogram(TimeUnit.SECONDS.toNanos(60), 3);
    private final AtomicLong answeredCount = new AtomicLong();
    private long rejects;
    private long acks;
    private long fills;
    private long canceledNew;
    private long otherReports;
    private long errors;

    public LatencyClient(Client client, Config cfg, PrintStream out) {
        this.client = client;
        this.cfg = cfg;
        this.out = out;
    }

    /** Runs warm-up then the measured run; returns the summary line. */
    public String run() {
        if (cfg.warmup() > 0) {
            out.printf(Locale.ROOT, "warm-up: %d orders at %d/s%n", cfg.warmup(), cfg.rate());
            phase(cfg.warmup(), "W");
        }
        synchronized (this) {
            histogram.reset();
            rejects = acks = fills = canceledNew = otherReports = errors = 0;
        }
        out.printf(Locale.ROOT, "measured: %d orders at %d/s on %s (flow %s)%n", cfg.count(), cfg.rate(),
                client.name, cfg.flow());
        long[] timing = phase(cfg.count(), "M");
        cleanup();
        double seconds = timing[1] / 1e9;
        double achieved = seconds > 0 ? cfg.count() / seconds : 0;
        printTable();
        synchronized (this) {
            String summary = String.format(Locale.ROOT,
                    "rate_offered=%d rate_achieved=%.1f p50_us=%.1f p99_us=%.1f p999_us=%.1f rejects=%d errors=%d",
                    cfg.rate(), achieved, us(histogram.getValueAtPercentile(50)),
                    us(histogram.getValueAtPercentile(99)), us(histogram.getValueAtPercentile(99.9)), rejects, errors);
            out.printf(Locale.ROOT, "reports: acks=%d fills=%d canceled=%d rejects=%d other=%d; sent in %.3f s%n",
                    acks, fills, canceledNew, rejects, otherReports, seconds);
            out.println(summary);
            return summary;
        }
    }

    public synchronized long errors() {
        return errors;
    }

    private synchronized void addErrors(long n) {
        errors += n;
    }

    /** Sends n orders on schedule and waits for their first reports. Returns {start, duration} ns. */
    private long[] phase(long n, String tag) {
        if (n > Integer.MAX_VALUE - 8) {
            throw new IllegalArgumentException("too many orders: " + n);
        }
        intendedNs = new long[(int) n];
        answered = new boolean[(int) n];
        answeredCount.set(0);
        String idPrefix = prefix + tag;
        CountDownLatch done = new CountDownLatch(1);
        client.listener = m -> onReport(m, idPrefix, n, done);
        long intervalNs = 1_000_000_000L / cfg.rate();
        long start = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(10);
        long[] ring = new long[Math.max(1, cfg.window())];
        long sentLast = start;
        for (int i = 0; i < n; i++) {
            long intended = start + i * intervalNs;
            long now;
            while ((now = System.nanoTime()) < intended) {
                long left = intended - now;
                if (!cfg.spin()) {
                    LockSupport.parkNanos(left);
                } else if (left > 80_000) {
                    LockSupport.parkNanos(left - 60_000);
                } else {
                    Thread.onSpinWait();
                }
            }
            intendedNs[i] = intended;
            Message order = "ioc".equals(cfg.flow())
                    ? Fix.newOrder(idPrefix + i, cfg.symbol(), Fix.BUY, 1, price(i), Fix.LIMIT, Fix.IOC, false)
                    : Fix.newOrder(idPrefix + i, cfg.symbol(), Fix.BUY, 1, price(i), Fix.LIMIT, Fix.DAY, false);
            try {
                client.send(order);
            } catch (AssertionError e) {
                addErrors(1);
            }
            if ("rest".equals(cfg.flow()) && cfg.window() > 0) {
                int slot = i % ring.length;
                if (i >= ring.length) {
                    int old = i - ring.length;
                    try {
                        client.send(Fix.cancel(cancelPrefix + tag + old, idPrefix + old, cfg.symbol(), Fix.BUY));
                    } catch (AssertionError e) {
                        addErrors(1);
                    }
                }
                ring[slot] = i;
            }
            sentLast = System.nanoTime();
        }
        try {
            if (!done.await(cfg.timeoutMs(), TimeUnit.MILLISECONDS)) {
                long missing = n - answeredCount.get();
                out.printf(Locale.ROOT, "%d order(s) got no ExecutionReport within %d ms%n", missing, cfg.timeoutMs());
                addErrors(missing);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return new long[] {start, sentLast - start};
    }

    /** Limit prices 1.00 .. 1.99, far below the interop scenario's prices. */
    private static String price(int i) {
        int cents = 100 + (i % 100);
        return (cents / 100) + "." + String.format(Locale.ROOT, "%02d", cents % 100);
    }

    private void onReport(Message m, String idPrefix, long n, CountDownLatch done) {
        long now = System.nanoTime();
        String type = FixClients.type(m);
        try {
            if (!"8".equals(type)) {
                if (!"9".equals(type) && !"r".equals(type)) {
                    addErrors(1);
                }
                return;
            }
            String clOrdId = m.getString(11);
            if (!clOrdId.startsWith(idPrefix) || clOrdId.startsWith(cancelPrefix)) {
                return;
            }
            int i;
            try {
                i = Integer.parseInt(clOrdId.substring(idPrefix.length()));
            } catch (NumberFormatException e) {
                return;
            }
            if (i < 0 || i >= n) {
                return;
            }
            char execType = m.getChar(150);
            synchronized (this) {
                switch (execType) {
                    case '0' -> acks++;
                    case 'F' -> fills++;
                    case '4' -> canceledNew++;
                    case '8' -> rejects++;
                    default -> otherReports++;
                }
                if (answered[i]) {
                    return;
                }
                answered[i] = true;
                histogram.recordValue(Math.max(0, now - intendedNs[i]));
            }
            if (answeredCount.incrementAndGet() == n) {
                done.countDown();
            }
        } catch (FieldNotFound e) {
            addErrors(1);
        }
    }

    /** Mass cancel of whatever this session still has resting, so later runs start clean. */
    private void cleanup() {
        client.listener = null;
        String q = prefix + "Q";
        client.send(Fix.massCancel(q, '7', null));
        try {
            client.await("OrderMassCancelReport of the cleanup", x -> "r".equals(FixClients.type(x))
                    && q.equals(field(x, 11)), cfg.timeoutMs());
        } catch (AssertionError e) {
            out.println("cleanup: " + e.getMessage());
            addErrors(1);
        }
        client.drain();
    }


    private static double us(long ns) {
        return ns / 1000.0;
    }

    private static final double[] PERCENTILES = {50.0, 90.0, 99.0, 99.9, 99.99, 99.999, 99.9999, 99.99999,
        99.999999};

    /** The seeds' format: Percentile : Microseconds : Event count (cumulative). */
    private synchronized void printTable() {
        Histogram h = histogram;
        out.println("Percentile : Microseconds : Event count");
        if (h.getTotalCount() == 0) {
            out.println("MAX, TOTAL : 0.0 : 0");
            return;
        }
        long min = h.getMinValue();
        out.printf(Locale.ROOT, "MIN : %.1f : %d%n", us(min), h.getCountBetweenValues(0, min));
        for (double p : PERCENTILES) {
            long v = h.getValueAtPercentile(p);
            out.printf(Locale.ROOT, "%s%% : %.1f : %d%n", pct(p), us(v), h.getCountBetweenValues(0, v));
        }
        out.printf(Locale.ROOT, "MAX, TOTAL : %.1f : %d%n", us(h.getMaxValue()), h.getTotalCount());
    }

    private static String pct(double p) {
        String s = String.format(Locale.ROOT, "%.6f", p).replaceAll("0+$", "");
        return s.endsWith(".") ? s + "0" : s;
    }
}
