package rialto.refexchange;

import java.io.File;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import quickfix.Acceptor;
import quickfix.ConfigError;
import quickfix.DefaultMessageFactory;
import quickfix.FileStoreFactory;
import quickfix.LogFactory;
import quickfix.MemoryStoreFactory;
import quickfix.MessageStoreFactory;
import quickfix.ScreenLogFactory;
import quickfix.SessionID;
import quickfix.SessionSettings;
import quickfix.SocketAcceptor;

/**
 * Entry point of the QuickFIX/J reference exchange, Rialto's benchmark peer.
 *
 * <p>Same default contract as {@code rialto serve}: FIX 4.4 acceptor on 127.0.0.1, TargetCompID
 * RIALTO, SenderCompIDs CLIENT1..CLIENT9 and BOT1..BOT64 without password (each its own firm and
 * account), instruments ACME, BOLT, CRNK (tick 0.01, lot 1). Default port 9877 (Rialto takes 9878 for orders and 9879 for market data).
 *
 * <p>Durability: QuickFIX/J's FileStore (default) keeps each session's sequence numbers and sent
 * messages on disk (no fsync), so a reconnect resumes without reset; {@code --store memory} keeps
 * them in memory only. The order book itself is in memory and not recovered after a restart.
 * Stops cleanly (Logout to every session) on SIGTERM/SIGINT.
 */
public final class RefExchange {

    private RefExchange() {
    }

    /** Parsed command line. */
    public record Options(String host, int port, String dataDir, boolean memoryStore, boolean verbose) {
    }

    static final String USAGE = """
            usage: java -jar refexchange.jar [--host 127.0.0.1] [--port 9877] [--data-dir DIR]
                                             [--store file|memory] [--verbose]
              --host      address to listen on (default 127.0.0.1)
              --port      FIX port (default 9877)
              --data-dir  where the FileStore keeps sequence numbers and sent messages
                          (default: refexchange-data next to the jar, i.e. in target/)
              --store     file (default: QuickFIX/J FileStore, no fsync) or memory (MemoryStore)
              --verbose   log every FIX message and session event to stdout
            """;

    public static Options parse(String[] args) {
        String host = "127.0.0.1";
        int port = 9877;
        String dataDir = besideJar("refexchange-data");
        boolean memory = false;
        boolean verbose = false;
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            switch (a) {
                case "--host" -> host = value(args, ++i, a);
                case "--port" -> {
                    String v = value(args, ++i, a);
                    try {
                        port = Integer.parseInt(v);
                    } catch (NumberFormatException e) {
                        throw new IllegalArgumentException("--port needs a number, got '" + v + "'");
                    }
                    if (port < 1 || port > 65535) {
                        throw new IllegalArgumentException("--port out of range: " + port);
                    }
                }
                case "--data-dir" -> dataDir = value(args, ++i, a);
                case "--store" -> {
                    String v = value(args, ++i, a);
                    if (v.equals("memory")) {
                        memory = true;
                    } else if (v.equals("file")) {
                        memory = false;
                    } else {
                        throw new IllegalArgumentException("--store must be file or memory, got '" + v + "'");
                    }
                }
                case "--verbose" -> verbose = true;
                case "-h", "--help" -> {
                    System.out.print(USAGE);
                    System.exit(0);
                }
                default -> throw new IllegalArgumentException("unknown argument '" + a + "'");
            }
        }
        return new Options(host, port, dataDir, memory, verbose);
    }

    /** A path next to the running jar (target/), or in the working directory when not run from a jar. */
    static String besideJar(String name) {
        try {
            File code = new File(RefExchange.class.getProtectionDomain().getCodeSource().getLocation().toURI());
            if (code.isFile()) {
                return new File(code.getParentFile(), name).getPath();
            }
        } catch (Exception e) {
            // fall through to the working directory
        }
        return name;
    }

    private static String value(String[] args, int i, String flag) {
        if (i >= args.length) {
            throw new IllegalArgumentException(flag + " needs a value");
        }
        return args[i];
    }

    /** The session IDs of the default contract, as seen by the acceptor. */
    public static List<SessionID> defaultSessions() {
        List<SessionID> out = new ArrayList<>();
        for (int i = 1; i <= 9; i++) {
            out.add(new SessionID("FIX.4.4", "RIALTO", "CLIENT" + i));
        }
        for (int i = 1; i <= 64; i++) {
            out.add(new SessionID("FIX.4.4", "RIALTO", "BOT" + i));
        }
        return out;
    }

    /** QuickFIX/J settings: typical production-like acceptor configuration. */
    public static SessionSettings settings(Options o, List<SessionID> sessions) throws ConfigError {
        SessionSettings s = new SessionSettings();
        s.setString("ConnectionType", "acceptor");
        s.setString("SocketAcceptAddress", o.host());
        s.setLong("SocketAcceptPort", o.port());
        s.setString("SocketTcpNoDelay", "Y");
        s.setString("NonStopSession", "Y");
        s.setString("UseDataDictionary", "Y");
        s.setString("DataDictionary", "FIX44.xml");
        s.setString("ResetOnLogon", "N");
        s.setString("ResetOnLogout", "N");
        s.setString("ResetOnDisconnect", "N");
        s.setString("PersistMessages", "Y");
        s.setString("FileStorePath", o.dataDir());
        for (SessionID sid : sessions) {
            s.setString(sid, "BeginString", sid.getBeginString());
            s.setString(sid, "SenderCompID", sid.getSenderCompID());
            s.setString(sid, "TargetCompID", sid.getTargetCompID());
        }
        return s;
    }

    /** A running exchange; {@link #stop()} logs every session out and closes the port. */
    public static final class Running {
        public final Exchange exchange;
        private final Acceptor acceptor;

        Running(Exchange exchange, Acceptor acceptor) {
            this.exchange = exchange;
            this.acceptor = acceptor;
        }

        public void stop() {
            acceptor.stop();
        }
    }

    /** Starts an exchange (used by main and by in-process tests). */
    public static Running start(Options o) throws ConfigError {
        List<SessionID> sessions = defaultSessions();
        SessionSettings settings = settings(o, sessions);
        Exchange exchange = new Exchange(Exchange.defaultInstruments(), sessions);
        MessageStoreFactory store = o.memoryStore() ? new MemoryStoreFactory() : new FileStoreFactory(settings);
        LogFactory log = o.verbose() ? new ScreenLogFactory(true, true, true) : null;
        SocketAcceptor acceptor = new SocketAcceptor(exchange, store, settings, log, new DefaultMessageFactory());
        acceptor.start();
        return new Running(exchange, acceptor);
    }

    public static void main(String[] args) throws Exception {
        if (System.getProperty("org.slf4j.simpleLogger.defaultLogLevel") == null) {
            System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
        }
        Options o;
        try {
            o = parse(args);
        } catch (IllegalArgumentException e) {
            System.err.println("refexchange: " + e.getMessage());
            System.err.print(USAGE);
            System.exit(2);
            return;
        }
        Running running = start(o);
        String store = o.memoryStore() ? "memory" : "file:" + new File(o.dataDir()).getAbsolutePath();
        System.out.println("refexchange listening on " + o.host() + ":" + o.port()
                + " (FIX.4.4, TargetCompID RIALTO, SenderCompIDs CLIENT1..9 BOT1..64, store=" + store + ")");
        System.out.flush();
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            running.stop();
            System.out.println("refexchange stopped after " + running.exchange.messagesIn() + " application messages");
            System.out.flush();
            stopped.countDown();
        }, "refexchange-shutdown"));
        stopped.await();
    }
}
