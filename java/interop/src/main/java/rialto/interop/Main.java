package rialto.interop;

import java.io.File;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Command line of the interop program.
 *
 * <pre>
 * java -jar interop.jar [--host H] [--port P] [--fix-version 4.4[,4.2,5.0sp2]] [--senders A,B,C] [--store-dir D]
 *                       [--reset] [--timeout-ms T] [--keep-going] [--no-orders2] [--verbose]
 *     runs the scripted order-entry scenario in each FIX version given (default 4.4 as CLIENT1,
 *     CLIENT2, CLIENT3; 4.2 as FIX42C1..3; 5.0sp2 over FIXT.1.1 as FIX50C1..3), then the order types II
 *     ({@link OrderTypesII}, unless --no-orders2); exit 0 if every step passes
 * java -jar interop.jar --latency N --rate R [--warmup W] [--sender CLIENT9] [--flow rest|ioc]
 *                       [--window 1000] [--symbol ACME] [--host H] [--port P] ...
 *     measures NewOrderSingle -> first ExecutionReport round trips on one session
 * java -jar interop.jar --market-data --md-port M [--host H] [--port P] [--fix-version 4.4[,4.2,5.0sp2]]
 *                       [--md-sender S --order-senders A,B] [--timeout-ms T] [--verbose]
 *     the market-data check ({@link MarketDataCheck}): subscribes at the market-data port M, trades
 *     at the order-entry port P, checks every W and X; exit 0 if every step passes
 * </pre>
 *
 * Over TLS with system properties fix.tls.truststore (PKCS12, the server's CA), fix.tls.keystore
 * (PKCS12, the client certificate), fix.tls.password and fix.tls.protocols (FixClients#tls).
 * Defaults come from system properties fix.host (127.0.0.1) and fix.port (9878). Exit codes:
 * 0 pass, 1 a check failed, 2 bad arguments.
 */
public final class Main {
    private Main() {
    }

    static final String USAGE = """
            usage: interop [--host 127.0.0.1] [--port 9878] [--fix-version 4.4] [--senders A,B,C] [--store-dir DIR]
                           [--reset] [--timeout-ms 5000] [--keep-going] [--no-orders2] [--verbose]
                   interop --latency N --rate R [--warmup 2000] [--sender CLIENT9] [--flow rest|ioc]
                           [--window 1000] [--symbol ACME] [--no-spin] [--host ..] [--port ..]
                   (the latency client uses a MemoryStore and ResetSeqNumFlag=Y on Logon)
                   interop --market-data --md-port M [--host ..] [--port ..] [--fix-version 4.4] [--md-sender S]
                           [--order-senders A,B] [--timeout-ms 5000] [--verbose]
                   (market-data check: W/X/Y/y/f at the market-data port M while two firms trade CRNK at the
                   order-entry port; MemoryStore and ResetSeqNumFlag=Y on every session; default sessions
                   CLIENT6 + CLIENT5,CLIENT7 for 4.4, FIX42C5 + FIX42C4,FIX42C6 for 4.2, FIX50C5 + FIX50C4,FIX50C6
                   for 5.0sp2)
              --fix-version  4.2, 4.4 (default) or 5.0sp2 (FIXT.1.1, DefaultApplVerID 9), or a comma list: the
                           scenario runs in each in turn, QuickFIX/J validating against that version's dictionary
              --senders    the scenario's three SenderCompIDs (one version only; default CLIENT1,CLIENT2,CLIENT3
                           for 4.4, FIX42C1..3 for 4.2, FIX50C1..3 for 5.0sp2: java/interop/rialto-versions.toml)
              --store-dir  QuickFIX/J FileStore for the client's sequence numbers
                           (default fix-store/HOST_PORT next to the jar, i.e. in target/); keep it as long
                           as the server keeps its data
              --reset      send ResetSeqNumFlag(141)=Y on Logon (both sides restart at 1)
              --keep-going after a failed step, mass-cancel and run the remaining steps (default: stop)
              --no-orders2 leave out the order types II after the scenario (stop limit, iceberg, GTD and stop
                           orders; a server without them, e.g. the reference exchange)
            TLS (order entry): java -Dfix.tls.truststore=trust.p12 [-Dfix.tls.keystore=client.p12]
                           [-Dfix.tls.password=changeit] [-Dfix.tls.protocols=TLSv1.2] -jar interop.jar ...
            """;

    /** Parsed options (package-private for tests). */
    record Options(String host, int port, File storeDir, boolean reset, long timeoutMs, boolean verbose, boolean keepGoing,
            long latencyCount, long rate, long warmup, String sender, String flow, int window, String symbol,
            boolean spin, List<FixVersion> versions, List<String> senders, boolean marketData, int mdPort,
            String mdSender, List<String> orderSenders, boolean orders2) {
    }

    static Options parse(String[] args) {
        String host = System.getProperty("fix.host", "127.0.0.1");
        int port = Integer.parseInt(System.getProperty("fix.port", "9878"));
        String store = System.getProperty("fix.store");
        boolean reset = Boolean.parseBoolean(System.getProperty("fix.reset", "false"));
        // -Dfix.timeout.ms: for the JUnit run against a live server, which has no command line.
        long timeoutMs = Long.parseLong(System.getProperty("fix.timeout.ms", "5000"));
        boolean verbose = false;
        boolean keepGoing = false;
        long latency = 0;
        long rate = 0;
        long warmup = -1;
        String sender = "CLIENT9";
        String flow = "rest";
        int window = 1000;
        String symbol = "ACME";
        boolean spin = true;
        List<FixVersion> versions = List.of(FixVersion.FIX44);
        List<String> senders = null;
        boolean marketData = false;
        int mdPort = 0;
        String mdSender = null;
        List<String> orderSenders = null;
        boolean orders2 = true;
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            switch (a) {
                case "--host" -> host = value(args, ++i, a);
                case "--port" -> port = (int) number(args, ++i, a, 1, 65535);
                case "--store-dir" -> store = value(args, ++i, a);
                case "--reset" -> reset = true;
                case "--timeout-ms" -> timeoutMs = number(args, ++i, a, 1, 3_600_000);
                case "--verbose" -> verbose = true;
                case "--keep-going" -> keepGoing = true;
                case "--no-orders2" -> orders2 = false;
                case "--latency" -> latency = number(args, ++i, a, 1, 100_000_000);
                case "--rate" -> rate = number(args, ++i, a, 1, 10_000_000);
                case "--warmup" -> warmup = number(args, ++i, a, 0, 100_000_000);
                case "--sender" -> sender = value(args, ++i, a);
                case "--flow" -> {
                    flow = value(args, ++i, a);
                    if (!flow.equals("rest") && !flow.equals("ioc")) {
                        throw new IllegalArgumentException("--flow must be rest or ioc, got '" + flow + "'");
                    }
                }
                case "--window" -> window = (int) number(args, ++i, a, 0, 1_000_000);
                case "--symbol" -> symbol = value(args, ++i, a);
                case "--no-spin" -> spin = false;
                case "--fix-version" -> {
                    List<FixVersion> vs = new ArrayList<>();
                    for (String x : value(args, ++i, a).split(",")) {
                        FixVersion fv = FixVersion.parse(x);
                        if (vs.contains(fv)) {
                            throw new IllegalArgumentException("--fix-version lists " + x + " twice");
                        }
                        vs.add(fv);
                    }
                    versions = List.copyOf(vs);
                }
                case "--senders" -> {
                    senders = List.of(value(args, ++i, a).split(","));
                    if (senders.size() != 3 || senders.stream().anyMatch(String::isBlank)
                            || Set.copyOf(senders).size() != 3) {
                        throw new IllegalArgumentException("--senders needs three different SenderCompIDs, got '"
                                + String.join(",", senders) + "'");
                    }
                }
                case "--market-data" -> marketData = true;
                case "--md-port" -> mdPort = (int) number(args, ++i, a, 1, 65535);
                case "--md-sender" -> mdSender = value(args, ++i, a);
                case "--order-senders" -> {
                    orderSenders = List.of(value(args, ++i, a).split(","));
                    if (orderSenders.size() != 2 || orderSenders.stream().anyMatch(String::isBlank)
                            || Set.copyOf(orderSenders).size() != 2) {
                        throw new IllegalArgumentException("--order-senders needs two different SenderCompIDs"
                                + " (a maker firm and a taker firm), got '" + String.join(",", orderSenders) + "'");
                    }
                }
                case "-h", "--help" -> {
                    System.out.print(USAGE);
                    System.exit(0);
                }
                default -> throw new IllegalArgumentException("unknown argument '" + a + "'");
            }
        }
        if (latency > 0 && rate == 0) {
            throw new IllegalArgumentException("--latency needs --rate");
        }
        if (rate > 0 && latency == 0) {
            throw new IllegalArgumentException("--rate is only for --latency N");
        }
        if (senders != null && versions.size() != 1) {
            throw new IllegalArgumentException("--senders is for one --fix-version only");
        }
        if (latency > 0 && !versions.equals(List.of(FixVersion.FIX44))) {
            throw new IllegalArgumentException("the latency client speaks FIX 4.4 only");
        }
        if (marketData) {
            if (mdPort == 0) {
                throw new IllegalArgumentException("--market-data needs --md-port (the market-data port)");
            }
            if (latency > 0 || senders != null) {
                throw new IllegalArgumentException("--market-data takes --md-sender and --order-senders, not --latency"
                        + " or --senders");
            }
            if ((mdSender != null || orderSenders != null) && versions.size() != 1) {
                throw new IllegalArgumentException("--md-sender and --order-senders are for one --fix-version only");
            }
            if (mdSender != null && orderSenders != null && orderSenders.contains(mdSender)) {
                throw new IllegalArgumentException("--md-sender must differ from the --order-senders");
            }
        } else if (mdPort != 0 || mdSender != null || orderSenders != null) {
            throw new IllegalArgumentException("--md-port, --md-sender and --order-senders are for --market-data");
        }
        if (warmup < 0) {
            warmup = Math.min(latency / 10, 2000);
        }
        File storeDir = new File(store != null ? store : besideJar("fix-store/" + host + "_" + port));
        return new Options(host, port, storeDir, reset, timeoutMs, verbose, keepGoing, latency, rate, warmup, sender, flow,
                window, symbol, spin, versions, senders, marketData, mdPort, mdSender, orderSenders, orders2);
    }

    /** A path next to the running jar (target/), or under target/ of the working directory otherwise. */
    static String besideJar(String name) {
        try {
            File code = new File(Main.class.getProtectionDomain().getCodeSource().getLocation().toURI());
            if (code.isFile()) {
                return new File(code.getParentFile(), name).getPath();
            }
        } catch (Exception e) {
            // fall through to the working directory
        }
        return "target/" + name;
    }

    private static String value(String[] args, int i, String flag) {
        if (i >= args.length) {
            throw new IllegalArgumentException(flag + " needs a value");
        }
        return args[i];
    }

    private static long number(String[] args, int i, String flag, long min, long max) {
        String v = value(args, i, flag);
        long n;
        try {
            n = Long.parseLong(v);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(flag + " needs a whole number, got '" + v + "'");
        }
        if (n < min || n > max) {
            throw new IllegalArgumentException(flag + " must be in " + min + ".." + max + ", got " + n);
        }
        return n;
    }

    /** Runs the scenario in each FIX version of the options; returns true if every step of every run passed. */
    static boolean interop(Options o, PrintStream out) throws Exception {
        boolean ok = true;
        for (FixVersion v : o.versions()) {
            ok &= interop(o, v, out);
        }
        if (o.versions().size() > 1) {
            out.println("interop: " + o.versions().stream().map(FixVersion::label).toList()
                    + (ok ? " -> PASS" : " -> FAIL"));
        }
        return ok;
    }

    /** Runs the scenario in FIX version v; returns true if every step passed. */
    static boolean interop(Options o, FixVersion v, PrintStream out) throws Exception {
        List<String> senders = o.senders() != null ? o.senders() : v.defaultSenders;
        out.println("interop: " + v.label() + " against " + o.host() + ":" + o.port() + " (store " + o.storeDir()
                + (o.reset() ? ", ResetSeqNumFlag=Y" : "") + ")");
        FixClients fix = new FixClients(new FixClients.Config(o.host(), o.port(), o.storeDir(), o.reset(),
                o.verbose(), v, true), senders);
        try {
            try {
                fix.logon(Math.max(10_000, o.timeoutMs()));
                fix.checkServerLogons();
                out.println("ok    logon of " + String.join(", ", senders)
                        + (v == FixVersion.FIX50SP2 ? " (server's DefaultApplVerID 9)" : ""));
            } catch (AssertionError e) {
                out.println("FAIL  logon");
                out.println("      " + e.getMessage());
                return false;
            }
            Scenario s = new Scenario(fix, o.timeoutMs(), out);
            int passed = s.run(o.keepGoing());
            for (String n : s.notes()) {
                out.println("note: " + n);
            }
            boolean ok = passed == s.size();
            int size = s.size();
            if (o.orders2() && (ok || o.keepGoing())) {
                OrderTypesII t = new OrderTypesII(fix, o.timeoutMs(), out);
                int p = t.run();
                out.println("order types II: " + v.label() + ": " + p + "/" + t.size() + " steps passed");
                ok &= p == t.size();
                passed += p;
                size += t.size();
            }
            try {
                fix.logout(o.timeoutMs());
                out.println("ok    logout answered on every session");
            } catch (AssertionError e) {
                out.println("FAIL  logout");
                out.println("      " + e.getMessage());
                ok = false;
            }
            out.println("interop: " + v.label() + ": " + passed + "/" + size
                    + " scenario steps passed, ClOrdID prefix " + s.prefix() + (ok ? " -> PASS" : " -> FAIL"));
            return ok;
        } finally {
            fix.close();
        }
    }

    /** Runs the market-data check in each FIX version of the options; returns true if every step of every run passed. */
    static boolean marketData(Options o, PrintStream out) throws Exception {
        boolean ok = true;
        for (FixVersion v : o.versions()) {
            ok &= marketData(o, v, out);
        }
        if (o.versions().size() > 1) {
            out.println("market data: " + o.versions().stream().map(FixVersion::label).toList()
                    + (ok ? " -> PASS" : " -> FAIL"));
        }
        return ok;
    }

    /**
     * Runs the market-data check in FIX version v: the market-data session at --md-port, the two
     * order sessions at --port, each with a MemoryStore and ResetSeqNumFlag=Y; true if every step passed.
     */
    static boolean marketData(Options o, FixVersion v, PrintStream out) throws Exception {
        String mdSender = o.mdSender() != null ? o.mdSender() : MarketDataCheck.defaultMdSender(v);
        List<String> orderSenders = o.orderSenders() != null ? o.orderSenders() : MarketDataCheck.defaultOrderSenders(v);
        out.println("market data: " + v.label() + ", " + mdSender + " at " + o.host() + ":" + o.mdPort() + ", "
                + String.join(" and ", orderSenders) + " trading at " + o.host() + ":" + o.port()
                + " (ResetSeqNumFlag=Y, dictionary validation on)");
        List<String> senders = new ArrayList<>(List.of(mdSender));
        senders.addAll(orderSenders);
        // One initiator: the market-data session at --md-port, the order sessions at --port.
        FixClients fix = new FixClients(new FixClients.Config(o.host(), o.port(), null, true, o.verbose(), v, true),
                senders, MarketDataCheck.STRICT, Map.of(mdSender, o.mdPort()));
        try {
            try {
                fix.logon(Math.max(10_000, o.timeoutMs()));
                fix.checkServerLogons();
                out.println("ok    logon of " + mdSender + " at the market-data port and " + String.join(", ", orderSenders)
                        + " at the order-entry port" + (v == FixVersion.FIX50SP2 ? " (server's DefaultApplVerID 9)" : ""));
            } catch (AssertionError e) {
                out.println("FAIL  logon");
                out.println("      " + e.getMessage());
                for (FixClients.Client c : fix.clients()) {
                    List<String> errs = c.engineErrors();
                    if (!errs.isEmpty()) { // e.g. the connection refused
                        out.println("      " + c.name + ": " + errs.get(errs.size() - 1));
                    }
                }
                return false;
            }
            MarketDataCheck c = new MarketDataCheck(fix.client(mdSender), fix.client(orderSenders.get(0)),
                    fix.client(orderSenders.get(1)), o.timeoutMs(), out);
            int passed = c.run();
            for (String n : c.notes()) {
                out.println("note: " + n);
            }
            boolean ok = passed == c.size();
            try {
                fix.logout(o.timeoutMs());
                out.println("ok    logout answered on every session");
            } catch (AssertionError e) {
                out.println("FAIL  logout");
                out.println("      " + e.getMessage());
                ok = false;
            }
            out.println("market data: " + v.label() + ": " + passed + "/" + c.size() + " steps passed, ClOrdID prefix "
                    + c.prefix() + (ok ? " -> PASS" : " -> FAIL"));
            return ok;
        } finally {
            fix.close();
        }
    }

    /** Runs the latency client; returns the number of errors. */
    static long latency(Options o, PrintStream out) throws Exception {
        // The latency client keeps no state between runs: MemoryStore and ResetSeqNumFlag=Y on Logon
        // (less client work per message than a FileStore; the same for every exchange measured).
        FixClients fix = new FixClients(new FixClients.Config(o.host(), o.port(), null, true, o.verbose(),
                FixVersion.FIX44, false), List.of(o.sender()));
        try {
            fix.logon(Math.max(10_000, o.timeoutMs()));
            LatencyClient lc = new LatencyClient(fix.client(o.sender()), new LatencyClient.Config(o.latencyCount(),
                    o.rate(), o.warmup(), o.flow(), o.window(), o.symbol(), Math.max(o.timeoutMs(), 10_000), o.spin()), out);
            lc.run();
            fix.logout(o.timeoutMs());
            return lc.errors();
        } finally {
            fix.close();
        }
    }

    public static void main(String[] args) {
        if (System.getProperty("org.slf4j.simpleLogger.defaultLogLevel") == null) {
            System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
        }
        Options o;
        try {
            o = parse(args);
        } catch (IllegalArgumentException e) {
            System.err.println("interop: " + e.getMessage());
            System.err.print(USAGE);
            System.exit(2);
            return;
        }
        int code;
        try {
            if (o.latencyCount() > 0) {
                code = latency(o, System.out) == 0 ? 0 : 1;
            } else if (o.marketData()) {
                code = marketData(o, System.out) ? 0 : 1;
            } else {
                code = interop(o, System.out) ? 0 : 1;
            }
        } catch (AssertionError e) {
            System.out.println("FAIL  " + e.getMessage());
            code = 1;
        } catch (Exception e) {
            System.out.println("FAIL  " + e);
            e.printStackTrace(System.out);
            code = 1;
        }
        System.out.flush();
        System.exit(code);
    }
}
