package rialto.interop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import quickfix.Message;

/**
 * The per-version rules of the interop client: every request the scenario sends is a valid message
 * of each version's standard dictionary (after {@link FixVersion#adapt}), the deliberate exceptions
 * are not, the expected ExecutionReport codes, and the command line's version options.
 */
class FixVersionTest {

    /** The requests of the scenario, by name. */
    private static Map<String, Message> requests() {
        return Map.of(
                "limit", Fix.limit("A1", "ACME", Fix.BUY, 10, "100.00"),
                "market IOC", Fix.newOrder("A2", "CRNK", Fix.SELL, 5, null, Fix.MARKET, Fix.IOC, false),
                "post-only FOK", Fix.newOrder("A3", "BOLT", Fix.BUY, 5, "19.99", Fix.LIMIT, Fix.FOK, true),
                "cancel", Fix.cancel("A4", "A1", "ACME", Fix.BUY),
                "replace", Fix.replace("A5", "A1", "ACME", Fix.BUY, 12, "99.10"),
                "status", Fix.status("A1", "ACME", Fix.BUY));
    }

    @Test
    void everyScenarioRequestIsAValidMessageOfEachVersion() {
        for (FixVersion v : FixVersion.values()) {
            for (Map.Entry<String, Message> r : requests().entrySet()) {
                Message m = v.adapt(r.getValue());
                assertNull(v.invalidBody(m), v + " " + r.getKey() + ": " + FixClients.dump(m));
            }
        }
    }

    @Test
    void fix42NeedsHandlInstOnNewOrderAndReplaceOnly() {
        Message d = Fix.limit("A1", "ACME", Fix.BUY, 10, "100.00");
        assertNotNull(FixVersion.FIX42.invalidBody(d), "FIX42.xml requires HandlInst(21) on D");
        assertTrue(FixVersion.FIX42.adapt(d).isSetField(21));
        assertFalse(FixVersion.FIX44.adapt(Fix.limit("A1", "ACME", Fix.BUY, 10, "100.00")).isSetField(21));
        assertFalse(FixVersion.FIX42.adapt(Fix.cancel("A4", "A1", "ACME", Fix.BUY)).isSetField(21));
    }

    @Test
    void massCancelExistsFromFix44AndIsTheDeliberateNonstandardMessageOfFix42() {
        Message q = Fix.massCancel("Q1", '7', null);
        assertNull(FixVersion.FIX44.invalidBody(q));
        assertNull(FixVersion.FIX50SP2.invalidBody(Fix.massCancel("Q2", '1', "ACME")));
        String why = FixVersion.FIX42.invalidBody(Fix.massCancel("Q3", '7', null));
        assertNotNull(why, "q is not a FIX 4.2 message");
        assertFalse(FixVersion.FIX42.hasMassCancel());
        assertTrue(FixVersion.FIX44.hasMassCancel() && FixVersion.FIX50SP2.hasMassCancel());
    }

    @Test
    void theUnsupportedMessagesOfTheScenarioAreStandardOnes() {
        Message m = Fix.app("M");
        m.setString(66, "L1");
        assertNull(FixVersion.FIX42.invalidBody(m), "ListStatusRequest is FIX 4.2");
        for (FixVersion v : List.of(FixVersion.FIX44, FixVersion.FIX50SP2)) {
            Message af = Fix.app("AF");
            af.setString(584, "S1");
            af.setInt(585, 7);
            assertNull(v.invalidBody(af), v + " OrderMassStatusRequest");
        }
    }

    @Test
    void aFieldOutOfRangeIsReportedWithTheTag() {
        Message d = Fix.newOrder("A1", "ACME", Fix.BUY, 10, "100.00", Fix.LIMIT, '9', false);
        String why = FixVersion.FIX42.invalidBody(FixVersion.FIX42.adapt(d));
        assertNotNull(why);
        assertTrue(why.contains("59"), why);
    }

    @Test
    void executionReportCodesPerVersion() {
        assertEquals('1', FixVersion.FIX42.fillExecType(3));
        assertEquals('2', FixVersion.FIX42.fillExecType(0));
        assertEquals('F', FixVersion.FIX44.fillExecType(3));
        assertEquals('F', FixVersion.FIX50SP2.fillExecType(0));
        assertEquals('4', FixVersion.FIX42.statusExecType('4'));
        assertEquals('I', FixVersion.FIX44.statusExecType('4'));
        assertEquals('I', FixVersion.FIX50SP2.statusExecType('0'));
    }

    @Test
    void parsesVersionNames() {
        assertEquals(FixVersion.FIX42, FixVersion.parse("4.2"));
        assertEquals(FixVersion.FIX42, FixVersion.parse("FIX.4.2"));
        assertEquals(FixVersion.FIX44, FixVersion.parse("fix.4.4"));
        assertEquals(FixVersion.FIX50SP2, FixVersion.parse("5.0sp2"));
        assertEquals(FixVersion.FIX50SP2, FixVersion.parse("FIXT.1.1"));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> FixVersion.parse("4.3"));
        assertTrue(e.getMessage().contains("4.3"), e.getMessage());
    }

    @Test
    void commandLineVersionsAndSenders() {
        Main.Options o = Main.parse(new String[] {"--fix-version", "4.2,5.0sp2"});
        assertEquals(List.of(FixVersion.FIX42, FixVersion.FIX50SP2), o.versions());
        assertNull(o.senders());
        assertEquals(List.of(FixVersion.FIX44), Main.parse(new String[0]).versions());
        o = Main.parse(new String[] {"--fix-version", "4.2", "--senders", "A,B,C"});
        assertEquals(List.of("A", "B", "C"), o.senders());
        for (String[] bad : new String[][] {
            {"--fix-version", "4.2,4.2"},
            {"--fix-version", "4.1"},
            {"--senders", "A,B"},
            {"--senders", "A,A,B"},
            {"--fix-version", "4.2,4.4", "--senders", "A,B,C"},
            {"--fix-version", "4.2", "--latency", "10", "--rate", "10"},
        }) {
            assertThrows(IllegalArgumentException.class, () -> Main.parse(bad), String.join(" ", bad));
        }
    }
}
