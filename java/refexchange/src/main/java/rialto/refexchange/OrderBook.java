package rialto.refexchange;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * One instrument's price-time order book: price levels in a sorted map, each level a FIFO
 * doubly-linked list of resting orders.
 *
 * <p>Role: matching only. Prices are long ticks and quantities long lots; no FIX, no I/O, no
 * clock. Every change the book makes is reported to the {@link Listener} in the order it
 * happens (fills best price first, FIFO within a price).
 *
 * <p>Invariants: a resting order has leavesQty > 0 and sits in exactly one level; a level is
 * never empty; the book is never crossed after a call returns (best bid < best ask).
 * Self-trade prevention is cancel-newest: an aggressor that reaches an order of its own firm
 * stops matching and its remainder is canceled.
 */
public final class OrderBook {

    /** What happened to the orders of one command, in order. */
    public interface Listener {
        /** One match at the maker's price. Both orders are already updated. */
        void onFill(Order maker, Order taker, long priceTicks, long qty);
    }

    /** Why an aggressor stopped matching with quantity left. */
    public enum Stop {
        /** Nothing left to match, or the remainder may rest. */
        NONE,
        /** The next resting order belongs to the aggressor's own firm (cancel-newest). */
        SELF_TRADE
    }

    private final TreeMap<Long, Level> bids = new TreeMap<>(Comparator.reverseOrder());
    private final TreeMap<Long, Level> asks = new TreeMap<>();

    private TreeMap<Long, Level> sideOf(char side) {
        return side == Order.BUY ? bids : asks;
    }

    private TreeMap<Long, Level> oppositeOf(char side) {
        return side == Order.BUY ? asks : bids;
    }

    /** True if a limit order at this price (or a market order) would trade on arrival. */
    public boolean wouldCross(char side, boolean market, long priceTicks) {
        Map.Entry<Long, Level> best = oppositeOf(side).firstEntry();
        if (best == null) {
            return false;
        }
        return market || crosses(side, priceTicks, best.getKey());
    }

    private static boolean crosses(char side, long priceTicks, long restingPrice) {
        return side == Order.BUY ? priceTicks >= restingPrice : priceTicks <= restingPrice;
    }

    /**
     * Quantity this aggressor could trade right now, stopping at the first order of its own firm
     * (self-trade prevention would stop it there). Used for fill-or-kill.
     */
    public long fillableQty(Order taker, long wanted) {
        long total = 0;
        for (Map.Entry<Long, Level> e : oppositeOf(taker.side).entrySet()) {
            if (!taker.isMarket() && !crosses(taker.side, taker.priceTicks, e.getKey())) {
                break;
            }
            for (Order o = e.getValue().head; o != null; o = o.next) {
                if (o.firm == taker.firm) {
                    return total;
                }
                total += o.leavesQty;
                if (total >= wanted) {
                    return total;
                }
            }
        }
        return total;
    }

    /**
     * Matches the aggressor against the opposite side while it crosses. Does not rest it.
     * Fully filled makers leave the book.
     */
    public Stop match(Order taker, Listener listener) {
        TreeMap<Long, Level> opposite = oppositeOf(taker.side);
        while (taker.leavesQty > 0) {
            Map.Entry<Long, Level> best = opposite.firstEntry();
            if (best == null) {
                return Stop.NONE;
            }
            long px = best.getKey();
            if (!taker.isMarket() && !crosses(taker.side, taker.priceTicks, px)) {
                return Stop.NONE;
            }
            Level level = best.getValue();
            while (taker.leavesQty > 0 && level.head != null) {
                Order maker = level.head;
                if (maker.firm == taker.firm) {
                    return Stop.SELF_TRADE;
                }
                long qty = Math.min(maker.leavesQty, taker.leavesQty);
                maker.fill(px, qty);
                taker.fill(px, qty);
                level.totalQty -= qty;
                if (maker.leavesQty == 0) {
                    level.unlink(maker);
                }
                listener.onFill(maker, taker, px, qty);
            }
            if (level.head == null) {
                opposite.remove(px);
            }
        }
        return Stop.NONE;
    }

    /** Puts an order with leavesQty > 0 at the back of its price level. */
    public void rest(Order order) {
        if (order.leavesQty <= 0 || order.level != null) {
            throw new IllegalStateException("order cannot rest: " + order);
        }
        Level level = sideOf(order.side).computeIfAbsent(order.priceTicks, p -> new Level());
        level.append(order);
    }

    /** Takes a resting order out of the book (cancel, or replace that loses priority). */
    public void remove(Order order) {
        Level level = order.level;
        if (level == null) {
            throw new IllegalStateException("order is not resting: " + order);
        }
        level.unlink(order);
        if (level.head == null) {
            sideOf(order.side).remove(order.priceTicks);
        }
    }

    /** Reduces a resting order's quantity in place, keeping its queue position. */
    public void reduce(Order order, long newLeaves) {
        if (order.level == null || newLeaves <= 0 || newLeaves > order.leavesQty) {
            throw new IllegalStateException("invalid in-place reduce of " + order);
        }
        order.level.totalQty -= order.leavesQty - newLeaves;
        order.leavesQty = newLeaves;
    }

    /** Best bid price in ticks, or Long.MIN_VALUE if there is none. */
    public long bestBid() {
        return bids.isEmpty() ? Long.MIN_VALUE : bids.firstKey();
    }

    /** Best ask price in ticks, or Long.MAX_VALUE if there is none. */
    public long bestAsk() {
        return asks.isEmpty() ? Long.MAX_VALUE : asks.firstKey();
    }

    /** Total resting quantity at one price of one side (0 if none). */
    public long depthAt(char side, long priceTicks) {
        Level level = sideOf(side).get(priceTicks);
        return level == null ? 0 : level.totalQty;
    }

    /** Resting orders of one side in priority order (tests and diagnostics). */
    public List<Order> orders(char side) {
        List<Order> out = new ArrayList<>();
        for (Level level : sideOf(side).values()) {
            for (Order o = level.head; o != null; o = o.next) {
                out.add(o);
            }
        }
        return out;
    }

    /** A FIFO of resting orders at one price. */
    static final class Level {
        Order head;
        Order tail;
        long totalQty;

        void append(Order o) {
            o.level = this;
            o.prev = tail;
            o.next = null;
            if (tail == null) {
                head = o;
            } else {
                tail.next = o;
            }
            tail = o;
            totalQty += o.leavesQty;
        }

        void unlink(Order o) {
            if (o.prev == null) {
                head = o.next;
            } else {
                o.prev.next = o.next;
            }
            if (o.next == null) {
                tail = o.prev;
            } else {
                o.next.prev = o.prev;
            }
            totalQty -= o.leavesQty;
            o.prev = null;
            o.next = null;
            o.level = null;
        }
    }
}
