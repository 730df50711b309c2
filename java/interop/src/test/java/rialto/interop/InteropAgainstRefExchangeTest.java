package rialto.interop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.PrintStream;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import rialto.refexchange.RefExchange;

/**
 * Runs the interop scenario and a short latency run against the reference exchange started in
 * this JVM on a free port, so `mvn test` proves the test program and the peer agree.
 *
 * <p>With {@code -Dfix.port=P} (and optionally {@code -Dfix.host=H}, {@code -Dfix.reset=true}) the
 * same tests run against that external server instead, e.g. Rialto:
 * {@code mvn -q test -Dfix.host=127.0.0.1 -Dfix.port=9878}. The client's sequence store is then
 * {@code target/fix-store/H_P}, the one {@code run-interop.sh} uses.
 */
class InteropAgainstRefExchangeTest {
    private static RefExchange.Running exchange;
    private static int port;
    private static Path dir;

    @BeforeAll
    static void start() throws Exception {
        System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
        if (System.getProperty("fix.port") != null) {
            return; // external server: Main.parse reads fix.host, fix.port, fix.reset
        }
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        dir = Files.createTempDirectory("refexchange-test");
        exchange = RefExchange.start(RefExchange.parse(new String[] {"--port", Integer.toString(port), "--data-dir",
            dir.resolve("server").toString()}));
    }

    @AfterAll
    static void stop() {
        if (exchange != null) {
            exchange.stop();
        }
    }

    private Main.Options options(String... extra) {
        // The reference exchange has no order types II.
        String[] base = exchange == null ? new String[0]
            : new String[] {"--port", Integer.toString(port), "--store-dir", dir.resolve("client").toString(),
                "--no-orders2"};
        String[] all = new String[base.length + extra.length];
        System.arraycopy(base, 0, all, 0, base.length);
        System.arraycopy(extra, 0, all, base.length, extra.length);
        return Main.parse(all);
    }

    @Test
    void scenarioPassesTwiceWithPersistedSequenceNumbers() throws Exception {
        for (int run = 1; run <= 2; run++) {
            ByteArrayOutputStream buf = new ByteArrayOutputStream();
            boolean ok = Main.interop(options(), new PrintStream(buf, true, StandardCharsets.UTF_8));
            String out = buf.toString(StandardCharsets.UTF_8);
            assertTrue(ok, "run " + run + ":\n" + out);
            assertTrue(out.contains("-> PASS"), out);
            assertTrue(new File(options().storeDir(), "FIX.4.4-CLIENT1-RIALTO.senderseqnums").isFile());
        }
    }

    @Test
    void latencyModePrintsTheSeedTableAndSummary() throws Exception {
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        long errors = Main.latency(options("--latency", "300", "--rate", "1000", "--warmup", "0", "--sender",
            "CLIENT8", "--window", "50"), new PrintStream(buf, true, StandardCharsets.UTF_8));
        String out = buf.toString(StandardCharsets.UTF_8);
        assertEquals(0, errors, out);
        assertTrue(out.contains("Percentile : Microseconds : Event count"), out);
        assertTrue(out.contains("MAX, TOTAL : "), out);
        assertTrue(out.contains(" : 300\n"), out);
        assertTrue(out.matches("(?s).*rate_offered=1000 rate_achieved=[0-9.]+ p50_us=[0-9.]+ p99_us=[0-9.]+"
            + " p999_us=[0-9.]+ rejects=0 errors=0\n.*"), out);
    }
}
