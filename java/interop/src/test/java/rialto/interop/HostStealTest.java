package rialto.interop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class HostStealTest {
    @Test
    void readsTheStealColumnInMilliseconds() {
        // user nice system idle iowait irq softirq steal guest guest_nice
        assertEquals(4560, HostSteal.parse("cpu  100 0 50 9000 3 0 7 456 0 0"));
        assertEquals(0, HostSteal.parse("cpu 1 2 3 4 5 6 7 0"));
    }

    @Test
    void aShortOrBadLineIsUnknown() {
        assertEquals(-1, HostSteal.parse("cpu  100 0 50 9000"));
        assertEquals(-1, HostSteal.parse("cpu  1 2 3 4 5 6 7 x"));
    }

    @Test
    void duringReportsADifferenceOrNothing() {
        assertEquals("", HostSteal.during(-1));
        long now = HostSteal.millis();
        if (now >= 0) {
            assertTrue(HostSteal.during(now).startsWith("; host steal during the wait: "));
        }
    }
}
