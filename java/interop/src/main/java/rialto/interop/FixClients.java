package rialto.interop;

import java.io.File;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import quickfix.Application;
import quickfix.ConfigError;
import quickfix.CompositeLogFactory;
import quickfix.DefaultMessageFactory;
import quickfix.DoNotSend;
import quickfix.FieldNotFound;
import quickfix.FileStoreFactory;
import quickfix.Log;
import quickfix.LogFactory;
import quickfix.MemoryStoreFactory;
import quickfix.MessageStoreFactory;
import quickfix.Message;
import quickfix.ScreenLogFactory;
import quickfix.Session;
import quickfix.SessionID;
import quickfix.SessionSettings;
import quickfix.SocketInitiator;
import quickfix.field.MsgType;
import quickfix.field.PossDupFlag;
import quickfix.field.Text;

/**
 * A QuickFIX/J initiator holding one or more sessions of one FIX version ({@link FixVersion}: FIX
 * 4.2, FIX 4.4 or FIX 5.0SP2 over FIXT.1.1) to an exchange (TargetCompID RIALTO), with an inbox per
 * session that tests read with bounded waits.
 *
 * <p>Validation both ways: QuickFIX/J checks every received message against the version's
 * standard dictionary (a malformed one is answered with a session Reject, recorded as a problem,
 * and never reaches the inbox), and {@code toApp} checks every application message this client
 * sends the same way, so the tests only ever send standard messages ({@link Client#sendNonstandard}
 * is the one deliberate exception, e.g. OrderMassCancelRequest on FIX 4.2).
 *
 * <p>Sequence numbers: sessions use QuickFIX/J's FileStore in {@code storeDir}, like a real
 * exchange member, so a later run against the same server resumes the sequence (the server
 * persists its side too). {@code reset=true} sends ResetSeqNumFlag(141)=Y on Logon instead, for a
 * server whose data dir was wiped while the client store was kept (or the other way round).
 *
 * <p>Never: swallows a session-level problem. A Reject (35=3) or Logout text in either direction
 * is recorded and shown with any failure.
 */
public final class FixClients implements AutoCloseable {

    /**
     * Options for the initiator. storeDir null: QuickFIX/J MemoryStore (nothing persisted; then
     * reset should be true so both sides start the session at 1). diagnostics: check each sent
     * application message against the dictionary and keep the last received raw messages for
     * failure texts (the scenario); off for the latency client, whose send and receive paths
     * should cost what a plain QuickFIX/J client's do.
     */
    public record Config(String host, int port, File storeDir, boolean reset, boolean verbose, FixVersion version,
            boolean diagnostics) {
        /** FIX 4.4 with diagnostics. */
        public Config(String host, int port, File storeDir, boolean reset, boolean verbose) {
            this(host, port, storeDir, reset, verbose, FixVersion.FIX44, true);
        }
    }

    /** One session's view: what it received and how to send. */
    public static final class Client {
        public final String name;
        public final SessionID sessionId;
        public final FixVersion version;
        final LinkedBlockingQueue<Message> queue = new LinkedBlockingQueue<>();
        final List<Message> pending = new ArrayList<>();
        final List<String> problems = new CopyOnWriteArrayList<>();
        /** The problems this client caused or found: a Reject it sent, a message it refused to send. */
        final List<String> faults = new CopyOnWriteArrayList<>();
        /**
         * What QuickFIX/J reported on its own: its log's error events (e.g. "Rejecting invalid message")
         * and BusinessMessageRejects (35=j) it generated for a received message. Read by the market-data
         * check, which allows none.
         */
        final List<String> engineErrors = new CopyOnWriteArrayList<>();
        /** ClOrdID, Symbol, Side of every NewOrderSingle and replace sent (FIX 4.2 cleanup has no mass cancel). */
        final List<String[]> sentOrders = new CopyOnWriteArrayList<>();
        final CountDownLatch loggedOn = new CountDownLatch(1);
        final CountDownLatch loggedOut = new CountDownLatch(1);
        volatile boolean logoutReceived;
        /** The server's Logon (35=A) of the current connection. */
        volatile Message serverLogon;
        /** Optional hook called on the QuickFIX/J thread for each application message. */
        volatile Consumer<Message> listener;
        /** The last raw messages received, by MsgSeqNum, to show what a Reject we sent refers to. */
        private final Map<Long, String> recentIncoming = new LinkedHashMap<>(64, 0.75f, false) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<Long, String> eldest) {
                return size() > 512;
            }
        };
        /** Set while {@link #sendNonstandard} sends: toApp then skips the dictionary check. */
        volatile boolean nonstandard;

        Client(String name, SessionID sessionId, FixVersion version) {
            this.name = name;
            this.sessionId = sessionId;
            this.version = version;
        }

        /**
         * Sends an application message, with the fields the version requires added
         * ({@link FixVersion#adapt}); fails if QuickFIX/J refuses it or it is not a valid message
         * of the version.
         */
        public void send(Message m) {
            Session s = Session.lookupSession(sessionId);
            if (s == null || !s.send(version.adapt(m))) {
                throw new AssertionError(name + ": could not send " + FixClients.dump(m) + problemsText());
            }
            String t = type(m);
            if (("D".equals(t) || "G".equals(t)) && m.isSetField(11) && m.isSetField(55) && m.isSetField(54)) {
                try {
                    sentOrders.add(new String[] {m.getString(11), m.getString(55), m.getString(54)});
                } catch (FieldNotFound e) {
                    // checked just above
                }
            }
        }

        /** ClOrdID, Symbol and Side of each order and replace sent, oldest first. */
        public List<String[]> sentOrders() {
            return List.copyOf(sentOrders);
        }

        /** Rejects this client sent and messages it refused to send (see {@link #problems}). */
        public List<String> faults() {
            return faults;
        }

        /** QuickFIX/J's error events and the BusinessMessageRejects it generated (see {@link #engineErrors}). */
        public List<String> engineErrors() {
            return engineErrors;
        }

        /** Sends a message the version's dictionary does not allow, on purpose (no check). */
        public void sendNonstandard(Message m) {
            synchronized (this) {
                nonstandard = true;
                try {
                    send(m);
                } finally {
                    nonstandard = false;
                }
            }
        }

        /**
         * The first received application message (in arrival order) that matches, waiting at most
         * timeoutMs. Non-matching messages stay in the inbox for later expectations.
         */
        public Message await(String what, Predicate<Message> p, long timeoutMs) {
            for (Iterator<Message> it = pending.iterator(); it.hasNext();) {
                Message m = it.next();
                if (p.test(m)) {
                    it.remove();
                    return m;
                }
            }
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
            long stealAtStart = HostSteal.millis();
            while (true) {
                long left = deadline - System.nanoTime();
                Message m;
                try {
                    m = left > 0 ? queue.poll(left, TimeUnit.NANOSECONDS) : queue.poll();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new AssertionError("interrupted");
                }
                if (m == null) {
                    throw new AssertionError(name + ": no " + what + " within " + timeoutMs + " ms"
                            + HostSteal.during(stealAtStart) + inboxText() + problemsText());
                }
                if (p.test(m)) {
                    return m;
                }
                pending.add(m);
            }
        }

        /** Everything received and not yet consumed; empties the inbox. */
        public List<Message> drain() {
            List<Message> out = new ArrayList<>(pending);
            pending.clear();
            queue.drainTo(out);
            return out;
        }

        public List<String> problems() {
            return problems;
        }

        String inboxText() {
            List<Message> all = new ArrayList<>(pending);
            all.addAll(queue);
            if (all.isEmpty()) {
                return "; inbox empty";
            }
            StringBuilder sb = new StringBuilder("; inbox holds " + all.size() + " other message(s):");
            for (Message m : all) {
                sb.append("\n    ").append(dump(m));
            }
            return sb.toString();
        }

        /** The last three session problems (the step that fails shows its own). */
        String problemsText() {
            List<String> all = new ArrayList<>(problems); // a snapshot: QuickFIX/J may add while we print
            if (all.isEmpty()) {
                return "";
            }
            List<String> shown = all.subList(Math.max(0, all.size() - 3), all.size());
            String more = all.size() > 3 ? "(" + (all.size() - 3) + " earlier) | " : "";
            return "; session problems: " + more + String.join("\n    | ", shown);
        }

        void incoming(String raw) {
            Matcher m = SEQ.matcher(raw);
            if (m.find()) {
                synchronized (recentIncoming) {
                    recentIncoming.put(Long.parseLong(m.group(1)), raw.replace('\u0001', '|'));
                }
            }
        }

        /** The raw message received with this MsgSeqNum, if it is among the last 512. */
        String incoming(long seq) {
            synchronized (recentIncoming) {
                return recentIncoming.get(seq);
            }
        }
    }

    private static final Pattern SEQ = Pattern.compile("\u000134=([0-9]+)\u0001");

    private final Map<String, Client> clients = new LinkedHashMap<>();
    private final Map<SessionID, Client> bySession = new LinkedHashMap<>();
    private final SocketInitiator initiator;
    private final Config config;
    private final Map<String, Integer> portOf;

    public FixClients(Config config, List<String> senderCompIds) throws ConfigError {
        this(config, senderCompIds, Map.of(), Map.of());
    }

    /**
     * As above, with more QuickFIX/J session settings for every session (e.g. the validation
     * settings spelled out; they override the defaults set here), and some sessions at another
     * port of the host than {@code config.port()} (SenderCompID to port; e.g. a market-data port).
     */
    public FixClients(Config config, List<String> senderCompIds, Map<String, String> sessionSettings,
            Map<String, Integer> portOf) throws ConfigError {
        this.config = config;
        this.portOf = Map.copyOf(portOf);
        SessionSettings s = new SessionSettings();
        s.setString("ConnectionType", "initiator");
        s.setString("SocketConnectHost", config.host());
        s.setLong("SocketConnectPort", config.port());
        s.setLong("HeartBtInt", 30);
        s.setLong("ReconnectInterval", 1);
        s.setString("NonStopSession", "Y");
        s.setString("SocketTcpNoDelay", "Y");
        if (config.storeDir() != null) {
            s.setString("FileStorePath", config.storeDir().getPath());
        }
        s.setString("ResetOnLogon", config.reset() ? "Y" : "N");
        s.setString("ResetOnLogout", "N");
        s.setString("ResetOnDisconnect", "N");
        tls(s);
        for (String sender : senderCompIds) {
            SessionID sid = new SessionID(config.version().beginString, sender, "RIALTO");
            config.version().configure(s, sid);
            s.setString(sid, "SenderCompID", sender);
            s.setString(sid, "TargetCompID", "RIALTO");
            for (Map.Entry<String, String> e : sessionSettings.entrySet()) {
                s.setString(sid, e.getKey(), e.getValue());
            }
            if (portOf.containsKey(sender)) {
                s.setLong(sid, "SocketConnectPort", portOf.get(sender));
            }
            Client c = new Client(sender, sid, config.version());
            clients.put(sender, c);
            bySession.put(sid, c);
        }
        LogFactory screen = config.verbose() ? new ScreenLogFactory(true, true, true) : null;
        LogFactory log = screen;
        if (config.diagnostics()) {
            LogFactory recent = sid -> new RecentLog(bySession.get(sid));
            log = screen != null ? new CompositeLogFactory(new LogFactory[] {recent, screen}) : recent;
        }
        MessageStoreFactory store = config.storeDir() != null ? new FileStoreFactory(s) : new MemoryStoreFactory();
        initiator = new SocketInitiator(new App(), store, s, log, new DefaultMessageFactory());
    }

    /**
     * TLS, when the system property fix.tls.truststore names a PKCS12 trust store (the CA of
     * the server's certificate): SocketUseSSL=Y for every session (Rialto's market-data port is
     * plain TCP: not for the market-data check). fix.tls.keystore: a PKCS12 key store with the
     * client certificate (a server with client_ca_file requires one naming each SenderCompID);
     * fix.tls.password: both stores' password (default changeit); fix.tls.protocols: e.g.
     * TLSv1.2 (default: the JDK's, TLS 1.3 and 1.2).
     */
    private static void tls(SessionSettings s) {
        String trust = System.getProperty("fix.tls.truststore");
        if (trust == null) {
            return;
        }
        String password = System.getProperty("fix.tls.password", "changeit");
        s.setString("SocketUseSSL", "Y");
        s.setString("SocketTrustStore", trust);
        s.setString("SocketTrustStorePassword", password);
        s.setString("TrustStoreType", "PKCS12");
        String key = System.getProperty("fix.tls.keystore");
        if (key != null) {
            s.setString("SocketKeyStore", key);
            s.setString("SocketKeyStorePassword", password);
            s.setString("KeyStoreType", "PKCS12");
        }
        String protocols = System.getProperty("fix.tls.protocols");
        if (protocols != null) {
            s.setString("EnabledProtocols", protocols);
        }
    }

    public Client client(String sender) {
        return clients.get(sender);
    }

    /** The sessions in the order they were given. */
    public List<Client> clients() {
        return List.copyOf(clients.values());
    }

    /** Connects every session and waits until each is logged on. */
    public void logon(long timeoutMs) throws ConfigError {
        initiator.start();
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        for (Client c : clients.values()) {
            long left = deadline - System.nanoTime();
            boolean ok;
            try {
                ok = c.loggedOn.await(Math.max(0, left), TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                ok = false;
            }
            if (!ok) {
                throw new AssertionError(c.name + ": not logged on to " + config.host() + ":"
                        + portOf.getOrDefault(c.name, config.port())
                        + " within " + timeoutMs + " ms" + c.problemsText()
                        + (config.reset() ? "" : "; if the server's data dir and this client's sequence store "
                                + config.storeDir() + " disagree, delete the store or rerun with --reset"));
            }
        }
    }

    /**
     * FIXT.1.1: the server's Logon carries DefaultApplVerID (1137) 9, FIX 5.0SP2 (QuickFIX/J takes
     * the session's application version from it). Nothing to check for FIX 4.x.
     */
    public void checkServerLogons() {
        if (config.version() != FixVersion.FIX50SP2) {
            return;
        }
        for (Client c : clients.values()) {
            Message m = c.serverLogon;
            if (m == null) {
                throw new AssertionError(c.name + ": logged on without the server's Logon seen");
            }
            new Fix.Msg(m, c.name + " server Logon").is(1137, "9");
        }
    }

    /** Sends Logout on every session and waits for the sessions to end. */
    public void logout(long timeoutMs) {
        for (Client c : clients.values()) {
            Session s = Session.lookupSession(c.sessionId);
            if (s != null) {
                s.logout("interop test done");
            }
        }
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        for (Client c : clients.values()) {
            try {
                if (!c.loggedOut.await(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS)) {
                    throw new AssertionError(c.name + ": no Logout answer within " + timeoutMs + " ms"
                            + c.problemsText());
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted");
            }
            if (!c.logoutReceived) {
                throw new AssertionError(c.name + ": session ended without the server's Logout" + c.problemsText());
            }
        }
    }

    @Override
    public void close() {
        initiator.stop(true);
    }

    private final class App implements Application {
        @Override
        public void onCreate(SessionID sessionId) {
        }

        @Override
        public void onLogon(SessionID sessionId) {
            Client c = bySession.get(sessionId);
            if (c != null) {
                c.loggedOn.countDown();
            }
        }

        @Override
        public void onLogout(SessionID sessionId) {
            Client c = bySession.get(sessionId);
            if (c != null && c.loggedOn.getCount() == 0) {
                c.loggedOut.countDown();
            }
        }

        @Override
        public void toAdmin(Message message, SessionID sessionId) {
            note(message, sessionId, "we sent");
        }

        @Override
        public void fromAdmin(Message message, SessionID sessionId) {
            Client c = bySession.get(sessionId);
            if (c != null && MsgType.LOGOUT.equals(type(message))) {
                c.logoutReceived = true;
            }
            if (c != null && MsgType.LOGON.equals(type(message))) {
                c.serverLogon = message;
            }
            note(message, sessionId, "server sent");
            if (c != null && MsgType.REJECT.equals(type(message))) {
                c.queue.add(message); // a step may expect it; otherwise it is an unexpected message
            }
        }

        private void note(Message message, SessionID sessionId, String who) {
            Client c = bySession.get(sessionId);
            String t = type(message);
            if (c == null) {
                return;
            }
            if (MsgType.REJECT.equals(t) || (MsgType.LOGOUT.equals(t) && message.isSetField(Text.FIELD))) {
                String p = who + " " + dump(message);
                if (MsgType.REJECT.equals(t) && "we sent".equals(who)) {
                    String ref = null;
                    try {
                        ref = message.isSetField(45) ? c.incoming(message.getInt(45)) : null;
                    } catch (FieldNotFound e) {
                        // checked just above
                    }
                    p = "QuickFIX/J rejected the server's " + (ref != null ? ref : "message 45=" + field45(message))
                            + "\n      with " + dump(message);
                    c.faults.add(p);
                }
                c.problems.add(p);
            }
        }

        @Override
        public void toApp(Message message, SessionID sessionId) throws DoNotSend {
            Client c = bySession.get(sessionId);
            if (c == null || c.nonstandard || !config.diagnostics()) {
                return;
            }
            if ("j".equals(type(message))) {
                // The tests never send j: QuickFIX/J made it about a message it received.
                String p = "QuickFIX/J sent a BusinessMessageReject about the server's "
                        + (message.isSetField(45) ? c.incoming(field45Long(message)) : null) + "\n      with "
                        + dump(message);
                c.problems.add(p);
                c.engineErrors.add(p);
            }
            String invalid = c.version.invalidBody(message);
            if (invalid != null) {
                String p = "not sent (not a valid " + c.version.label() + " message: " + invalid + ") "
                        + dump(message);
                c.problems.add(p);
                c.faults.add(p);
                throw new DoNotSend();
            }
        }

        @Override
        public void fromApp(Message message, SessionID sessionId) {
            Client c = bySession.get(sessionId);
            if (c == null) {
                return;
            }
            try {
                if (message.getHeader().isSetField(PossDupFlag.FIELD)
                        && message.getHeader().getBoolean(PossDupFlag.FIELD)) {
                    return; // a resend of an earlier run's message
                }
            } catch (FieldNotFound e) {
                // checked just above
            }
            Consumer<Message> l = c.listener;
            if (l != null) {
                l.accept(message);
            } else {
                c.queue.add(message);
            }
        }
    }

    private static long field45Long(Message m) {
        try {
            return m.getInt(45);
        } catch (FieldNotFound e) {
            return -1;
        }
    }

    private static String field45(Message m) {
        try {
            return m.isSetField(45) ? m.getString(45) : "?";
        } catch (FieldNotFound e) {
            return "?";
        }
    }

    /** Keeps each session's last received raw messages (for failure texts); logs nothing. */
    private static final class RecentLog implements Log {
        private final Client client;

        RecentLog(Client client) {
            this.client = client;
        }

        @Override
        public void clear() {
        }

        @Override
        public void onIncoming(String message) {
            if (client != null) {
                client.incoming(message);
            }
        }

        @Override
        public void onOutgoing(String message) {
        }

        @Override
        public void onEvent(String text) {
        }

        @Override
        public void onErrorEvent(String text) {
            if (client != null) {
                client.engineErrors.add("QuickFIX/J error event: " + text);
            }
        }
    }

    static String type(Message m) {
        try {
            return m.getHeader().getString(MsgType.FIELD);
        } catch (FieldNotFound e) {
            return "?";
        }
    }

    /** Name of a FIX tag, e.g. 150 -> ExecType(150), from the first dictionary that defines it. */
    static String tagName(int tag) {
        for (FixVersion v : new FixVersion[] {FixVersion.FIX44, FixVersion.FIX50SP2, FixVersion.FIX42}) {
            String n = v.dictionary().getFieldName(tag);
            if (n != null) {
                return n + "(" + tag + ")";
            }
        }
        return Integer.toString(tag);
    }

    /** The message with | for SOH. */
    public static String dump(Message m) {
        return m.toString().replace('\u0001', '|');
    }

    static LocalDateTime now() {
        return LocalDateTime.now(ZoneOffset.UTC);
    }
}
