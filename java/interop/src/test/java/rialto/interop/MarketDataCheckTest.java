package rialto.interop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigDecimal;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import quickfix.Message;

/**
 * The market-data check's parts that need no server: its requests are valid messages of each
 * version's standard dictionary (SecurityListRequest only from FIX 4.4), the order model's book,
 * and the command line.
 */
class MarketDataCheckTest {

    private static Map<String, Message> requests() {
        return Map.of(
                "subscribe", Fix.marketDataRequest("R1", '1', 0, "012", "CRNK"),
                "snapshot", Fix.marketDataRequest("R2", '0', 0, "01", "CRNK", "ACME"),
                "unsubscribe", Fix.marketDataRequest("R1", '2', 0, "012", "CRNK"),
                "unsupported entry type", Fix.marketDataRequest("R3", '1', 0, "4", "CRNK"),
                "security status", Fix.securityStatusRequest("S1", "CRNK"));
    }

    @Test
    void everyMarketDataRequestIsAValidMessageOfEachVersion() {
        for (FixVersion v : FixVersion.values()) {
            for (Map.Entry<String, Message> r : requests().entrySet()) {
                Message m = v.adapt(r.getValue());
                assertNull(v.invalidBody(m), v + " " + r.getKey() + ": " + FixClients.dump(m));
            }
        }
    }

    @Test
    void securityListRequestExistsFromFix44() {
        assertNull(FixVersion.FIX44.invalidBody(Fix.securityListRequest("L1", null)));
        assertNull(FixVersion.FIX50SP2.invalidBody(Fix.securityListRequest("L2", "CRNK")));
        assertNotNull(FixVersion.FIX42.invalidBody(Fix.securityListRequest("L3", null)),
                "x is not a FIX 4.2 message: the check sends it on purpose there");
    }

    private static BigDecimal px(String p) {
        return new BigDecimal(p).stripTrailingZeros();
    }

    @Test
    void theOrderModelKeepsPriceTimeQueuesOnTopOfTheBaseline() {
        MarketDataCheck.Book base = new MarketDataCheck.Book();
        base.bids.put(px("20.00"), new MarketDataCheck.Level(7, 2));
        MarketDataCheck.Orders o = new MarketDataCheck.Orders(base);
        o.rest("A", '0', px("30.00"), 10);
        o.rest("B", '0', px("30.00"), 5);
        o.rest("C", '1', px("30.05"), 4);
        assertEquals(new MarketDataCheck.Level(15, 2), o.level('0', px("30.0")));
        o.fill('0', px("30.00"), 10);
        assertEquals(new MarketDataCheck.Level(5, 1), o.level('0', px("30.00")));
        assertFalse(o.resting().contains("A"));
        assertThrows(IllegalStateException.class, () -> o.fill('0', px("30.00"), 6), "more than the oldest order");
        o.cancel("B");
        assertNull(o.level('0', px("30.00")));
        MarketDataCheck.Book b = o.book();
        assertEquals(1, b.bids.size());
        assertEquals(new MarketDataCheck.Level(7, 2), b.bids.get(px("20")));
        assertEquals(new MarketDataCheck.Level(4, 1), b.offers.get(px("30.05")));
        assertTrue(b.same(o.book()));
        o.cancel("C");
        assertTrue(o.book().same(base));
        assertTrue(o.resting().isEmpty());
    }

    @Test
    void marketDataModeNeedsItsPortAndTakesItsOwnSessions() {
        Main.Options o = Main.parse(new String[] {"--market-data", "--md-port", "9879", "--fix-version", "5.0sp2",
            "--md-sender", "X1", "--order-senders", "X2,X3"});
        assertTrue(o.marketData());
        assertEquals(9879, o.mdPort());
        assertEquals("X1", o.mdSender());
        assertEquals(List.of("X2", "X3"), o.orderSenders());
        assertEquals("CLIENT6", MarketDataCheck.defaultMdSender(FixVersion.FIX44));
        assertEquals(List.of("FIX42C4", "FIX42C6"), MarketDataCheck.defaultOrderSenders(FixVersion.FIX42));
        for (String[] bad : new String[][] {
            {"--market-data"},
            {"--md-port", "9879"},
            {"--market-data", "--md-port", "9879", "--order-senders", "X2"},
            {"--market-data", "--md-port", "9879", "--md-sender", "X2", "--order-senders", "X2,X3"},
            {"--market-data", "--md-port", "9879", "--fix-version", "4.2,4.4", "--md-sender", "X1"},
            {"--market-data", "--md-port", "9879", "--senders", "A,B,C"}}) {
            assertThrows(IllegalArgumentException.class, () -> Main.parse(bad), String.join(" ", bad));
        }
    }
}
