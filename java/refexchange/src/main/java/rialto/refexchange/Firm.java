package rialto.refexchange;

import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import quickfix.SessionID;

/**
 * A firm (= one FIX session = one account): its live orders by current ClOrdID and a bounded
 * memory of recent ClOrdIDs (terminal orders, replaced ClOrdIDs) for duplicate checks and status.
 *
 * <p>Invariant: a ClOrdID is in at most one of the two maps; an order is reachable from
 * {@code live} only by its current ClOrdID and only while it is live. Only this firm's sessions
 * can reach its orders, which is how "others get unknown order" is enforced.
 */
public final class Firm {
    /** How many finished ClOrdIDs a firm remembers (duplicate check and status requests). */
    public static final int RECENT_MAX = 200_000;

    public final String name;
    public final SessionID sessionId;
    public final Map<String, Order> live = new HashMap<>();
    public final Map<String, Order> recent = new LinkedHashMap<>(1024, 0.75f, false) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Order> eldest) {
            return size() > RECENT_MAX;
        }
    };

    public Firm(String name, SessionID sessionId) {
        this.name = name;
        this.sessionId = sessionId;
    }

    public boolean knows(String clOrdId) {
        return live.containsKey(clOrdId) || recent.containsKey(clOrdId);
    }

    public Order find(String clOrdId) {
        Order o = live.get(clOrdId);
        return o != null ? o : recent.get(clOrdId);
    }

    /** The order left the book for good (filled, canceled, rejected after acceptance). */
    public void retire(Order o) {
        live.remove(o.clOrdId);
        recent.put(o.clOrdId, o);
    }

    /** The order is now known by a new ClOrdID (replace). */
    public void rename(Order o, String newClOrdId) {
        live.remove(o.clOrdId);
        recent.put(o.clOrdId, o);
        o.clOrdId = newClOrdId;
        live.put(newClOrdId, o);
    }
}
