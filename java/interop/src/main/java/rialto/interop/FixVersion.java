package rialto.interop;

import java.util.List;
import quickfix.ConfigError;
import quickfix.DataDictionary;
import quickfix.FieldNotFound;
import quickfix.IncorrectDataFormat;
import quickfix.IncorrectTagValue;
import quickfix.Message;
import quickfix.SessionID;
import quickfix.SessionSettings;

/**
 * The FIX versions the interop client speaks, and what differs between them for order entry:
 * the session's BeginString and QuickFIX/J dictionaries, the requests' required fields, and the
 * ExecutionReport codes the scenario expects.
 *
 * <ul>
 * <li>FIX 4.4: one dictionary (FIX44.xml). ExecType F (Trade) for fills, I (Order Status) for
 * status answers; no ExecTransType.
 * <li>FIX 4.2: one dictionary (FIX42.xml). ExecutionReports carry ExecTransType (20): 0 (New), 3
 * (Status) for status answers. No ExecType F or I: a fill is 1 (Partial fill) or 2 (Fill), a
 * status answer repeats the OrdStatus. NewOrderSingle and OrderCancelReplaceRequest require
 * HandlInst (21). No OrderMassCancelRequest (q), OrderMassCancelReport (r) or
 * OrderMassStatusRequest (AF).
 * <li>FIX 5.0 SP2 over FIXT.1.1: session messages in FIXT11.xml, application messages in
 * FIX50SP2.xml, DefaultApplVerID (1137) 9 on Logon. Codes as in FIX 4.4; an
 * OrderMassCancelReport (r) requires MassActionReportID (1369).
 * </ul>
 *
 * <p>Never: loosens QuickFIX/J's validation; every dictionary is the standard one shipped in
 * QuickFIX/J's message jars.
 */
public enum FixVersion {
    FIX42("FIX.4.2", "FIX42.xml", null, List.of("FIX42C1", "FIX42C2", "FIX42C3")),
    FIX44("FIX.4.4", "FIX44.xml", null, List.of("CLIENT1", "CLIENT2", "CLIENT3")),
    FIX50SP2("FIXT.1.1", "FIX50SP2.xml", "FIXT11.xml", List.of("FIX50C1", "FIX50C2", "FIX50C3"));

    /** BeginString (8) of the session. */
    public final String beginString;
    /** Dictionary of the application messages. */
    public final String appDictionary;
    /** Dictionary of the session messages when it differs (FIXT.1.1), else null. */
    public final String transportDictionary;
    /** SenderCompIDs of the scenario's three firms by default (java/interop/rialto-versions.toml). */
    public final List<String> defaultSenders;

    private volatile DataDictionary app;

    FixVersion(String beginString, String appDictionary, String transportDictionary, List<String> defaultSenders) {
        this.beginString = beginString;
        this.appDictionary = appDictionary;
        this.transportDictionary = transportDictionary;
        this.defaultSenders = defaultSenders;
    }

    /** Parses 4.2, 4.4, 5.0sp2 (or FIX.4.2, FIX.4.4, FIXT.1.1, FIX.5.0SP2), case-insensitive. */
    public static FixVersion parse(String s) {
        return switch (s.trim().toUpperCase()) {
            case "4.2", "FIX.4.2", "FIX42" -> FIX42;
            case "4.4", "FIX.4.4", "FIX44" -> FIX44;
            case "5.0SP2", "FIX.5.0SP2", "FIX50SP2", "FIXT.1.1", "FIXT11" -> FIX50SP2;
            default -> throw new IllegalArgumentException(
                    "unknown FIX version '" + s + "' (use 4.2, 4.4 or 5.0sp2)");
        };
    }

    /** Short name for output: FIX 4.2, FIX 4.4, FIX 5.0SP2 (FIXT.1.1). */
    public String label() {
        return switch (this) {
            case FIX42 -> "FIX 4.2";
            case FIX44 -> "FIX 4.4";
            case FIX50SP2 -> "FIX 5.0SP2 over FIXT.1.1";
        };
    }

    /** True for FIX 4.2's ExecutionReport dialect (ExecTransType, fills as ExecType 1/2). */
    public boolean fix42() {
        return this == FIX42;
    }

    /** Whether the version defines OrderMassCancelRequest (q) and OrderMassCancelReport (r). */
    public boolean hasMassCancel() {
        return this != FIX42;
    }

    /** ExecType (150) of a fill that leaves {@code leaves} open. */
    public char fillExecType(long leaves) {
        if (fix42()) {
            return leaves == 0 ? '2' : '1';
        }
        return 'F';
    }

    /** ExecType (150) of an answer to OrderStatusRequest for an order with this OrdStatus. */
    public char statusExecType(char ordStatus) {
        return fix42() ? ordStatus : 'I';
    }

    /** Adds this version's session settings (BeginString, dictionaries, DefaultApplVerID) to a session. */
    void configure(SessionSettings s, SessionID sid) {
        s.setString(sid, "BeginString", beginString);
        s.setString(sid, "UseDataDictionary", "Y");
        if (transportDictionary != null) {
            s.setString(sid, "TransportDataDictionary", transportDictionary);
            s.setString(sid, "AppDataDictionary", appDictionary);
            s.setString(sid, "DefaultApplVerID", "FIX.5.0SP2");
        } else {
            s.setString(sid, "DataDictionary", appDictionary);
        }
    }

    /**
     * Adds the fields this version requires of an order-entry request and the scenario leaves out
     * (FIX 4.2: HandlInst 21=1, automated execution, private, on D and G).
     */
    public Message adapt(Message m) {
        String type = FixClients.type(m);
        if (fix42() && ("D".equals(type) || "G".equals(type)) && !m.isSetField(21)) {
            m.setChar(21, '1');
        }
        return m;
    }

    /** The standard dictionary of this version's application messages (loaded once). */
    public DataDictionary dictionary() {
        DataDictionary d = app;
        if (d == null) {
            synchronized (this) {
                if (app == null) {
                    try {
                        app = new DataDictionary(appDictionary);
                    } catch (ConfigError e) {
                        throw new IllegalStateException(appDictionary + " not on the classpath", e);
                    }
                }
                d = app;
            }
        }
        return d;
    }

    /**
     * Checks an application message's body against the version's standard dictionary (message
     * type known, required fields present, every field defined for the message, values in range);
     * returns null if it is valid, else QuickFIX/J's reason.
     */
    public String invalidBody(Message m) {
        try {
            dictionary().validate(m, true);
            return null;
        } catch (IncorrectTagValue | FieldNotFound | IncorrectDataFormat e) {
            return e.getClass().getSimpleName() + ": " + e.getMessage();
        } catch (quickfix.FieldException e) {
            return "FieldException: " + e.getMessage() + " (field " + e.getField() + ")";
        }
    }
}
