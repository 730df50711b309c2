package rialto.refexchange;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import quickfix.SessionID;

/** The reference book's matching rules: price-time priority, maker's price, STP, FOK, reduce. */
class OrderBookTest {
    private final Firm a = new Firm("A", new SessionID("FIX.4.4", "RIALTO", "A"));
    private final Firm b = new Firm("B", new SessionID("FIX.4.4", "RIALTO", "B"));
    private long nextId = 1;

    private Order limit(Firm f, char side, long px, long qty) {
        return new Order(nextId++, f, 0, "c" + nextId, side, Order.LIMIT, '0', false, px, qty);
    }

    private Order market(Firm f, char side, long qty) {
        return new Order(nextId++, f, 0, "c" + nextId, side, Order.MARKET, '3', false, 0, qty);
    }

    private record Fill(long maker, long taker, long px, long qty) {
    }

    private static List<Fill> match(OrderBook book, Order taker, List<OrderBook.Stop> stop) {
        List<Fill> fills = new ArrayList<>();
        stop.add(book.match(taker, (m, t, px, q) -> fills.add(new Fill(m.orderId, t.orderId, px, q))));
        return fills;
    }

    @Test
    void bestPriceFirstThenTimeAtMakersPrice() {
        OrderBook book = new OrderBook();
        Order b1 = limit(a, Order.BUY, 10000, 5);
        Order b2 = limit(a, Order.BUY, 10020, 5);
        Order b3 = limit(a, Order.BUY, 10020, 5);
        book.rest(b1);
        book.rest(b2);
        book.rest(b3);
        Order s = limit(b, Order.SELL, 9900, 12);
        List<OrderBook.Stop> stop = new ArrayList<>();
        List<Fill> fills = match(book, s, stop);
        assertEquals(List.of(new Fill(b2.orderId, s.orderId, 10020, 5), new Fill(b3.orderId, s.orderId, 10020, 5),
                new Fill(b1.orderId, s.orderId, 10000, 2)), fills);
        assertEquals(OrderBook.Stop.NONE, stop.get(0));
        assertEquals(0, s.leavesQty);
        assertEquals('2', s.ordStatus);
        assertEquals(5 * 10020 * 2 + 2 * 10000, s.notionalTicks);
        assertEquals(3, b1.leavesQty);
        assertEquals('1', b1.ordStatus);
        assertEquals(10000, book.bestBid());
        assertEquals(3, book.depthAt(Order.BUY, 10000));
        assertEquals(0, book.depthAt(Order.BUY, 10020));
    }

    @Test
    void nonCrossingLimitDoesNotTrade() {
        OrderBook book = new OrderBook();
        book.rest(limit(a, Order.SELL, 10100, 5));
        Order bid = limit(b, Order.BUY, 10099, 5);
        assertFalse(book.wouldCross(Order.BUY, false, 10099));
        assertTrue(book.wouldCross(Order.BUY, false, 10100));
        assertTrue(match(book, bid, new ArrayList<>()).isEmpty());
        book.rest(bid);
        assertEquals(10099, book.bestBid());
        assertEquals(10100, book.bestAsk());
    }

    @Test
    void selfTradeStopsTheAggressor() {
        OrderBook book = new OrderBook();
        Order other = limit(b, Order.SELL, 10000, 2);
        Order own = limit(a, Order.SELL, 10000, 2);
        Order behind = limit(b, Order.SELL, 10000, 2);
        book.rest(other);
        book.rest(own);
        book.rest(behind);
        Order taker = market(a, Order.BUY, 6);
        assertEquals(2, book.fillableQty(taker, 6));
        List<OrderBook.Stop> stop = new ArrayList<>();
        List<Fill> fills = match(book, taker, stop);
        assertEquals(1, fills.size());
        assertEquals(OrderBook.Stop.SELF_TRADE, stop.get(0));
        assertEquals(4, taker.leavesQty);
        assertEquals(List.of(own, behind), book.orders(Order.SELL));
    }

    @Test
    void removeAndReduceKeepLevelsConsistent() {
        OrderBook book = new OrderBook();
        Order o1 = limit(a, Order.BUY, 10000, 5);
        Order o2 = limit(a, Order.BUY, 10000, 7);
        book.rest(o1);
        book.rest(o2);
        book.reduce(o2, 3);
        assertEquals(8, book.depthAt(Order.BUY, 10000));
        book.remove(o1);
        assertNull(o1.level);
        assertEquals(List.of(o2), book.orders(Order.BUY));
        book.remove(o2);
        assertEquals(Long.MIN_VALUE, book.bestBid());
    }

    /** Random orders against a naive list-based model: same fills, never crossed afterwards. */
    @Test
    void randomFlowMatchesNaiveModel() {
        Random rnd = new Random(7);
        OrderBook book = new OrderBook();
        List<Order> naive = new ArrayList<>();
        for (int i = 0; i < 3000; i++) {
            Firm f = rnd.nextBoolean() ? a : b;
            char side = rnd.nextBoolean() ? Order.BUY : Order.SELL;
            Order o = limit(f, side, 10000 + rnd.nextInt(20) - 10, 1 + rnd.nextInt(9));
            // naive: best opposite price, then oldest; stops at own firm.
            long expectTraded = 0;
            List<Order> snapshot = new ArrayList<>();
            for (Order r : naive) {
                if (r.side != side && (side == Order.BUY ? r.priceTicks <= o.priceTicks : r.priceTicks >= o.priceTicks)) {
                    snapshot.add(r);
                }
            }
            snapshot.sort((x, y) -> {
                int c = side == Order.BUY ? Long.compare(x.priceTicks, y.priceTicks)
                        : Long.compare(y.priceTicks, x.priceTicks);
                return c != 0 ? c : Long.compare(x.orderId, y.orderId);
            });
            long want = o.leavesQty;
            for (Order r : snapshot) {
                if (r.firm == f || want == 0) {
                    break;
                }
                long q = Math.min(want, r.leavesQty);
                expectTraded += q;
                want -= q;
            }
            List<OrderBook.Stop> stop = new ArrayList<>();
            List<Fill> fills = match(book, o, stop);
            long traded = fills.stream().mapToLong(Fill::qty).sum();
            assertEquals(expectTraded, traded, "order " + i);
            naive.removeIf(r -> r.leavesQty == 0);
            if (o.leavesQty > 0 && stop.get(0) == OrderBook.Stop.NONE && rnd.nextInt(4) > 0) {
                book.rest(o);
                naive.add(o);
            }
            assertTrue(book.bestBid() < book.bestAsk() || book.bestBid() == Long.MIN_VALUE
                    || book.bestAsk() == Long.MAX_VALUE, "crossed after order " + i);
        }
    }
}
