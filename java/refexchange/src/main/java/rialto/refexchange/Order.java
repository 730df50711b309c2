package rialto.refexchange;

/**
 * One order as the reference exchange keeps it: identity, terms in integer ticks and lots, and
 * its fill state. Mutable; touched only by the single thread that handles application messages.
 *
 * <p>Invariants: cumQty + leavesQty <= orderQty; leavesQty == 0 once the order is terminal;
 * notionalTicks == sum(fill price ticks * fill qty).
 */
public final class Order {
    public static final char BUY = '1';
    public static final char SELL = '2';
    public static final char MARKET = '1';
    public static final char LIMIT = '2';

    public final long orderId;
    public final Firm firm;
    public final int symbolIndex;
    public final char side;
    public final char ordType;
    public final char timeInForce;
    public final boolean postOnly;

    public String clOrdId;
    public long priceTicks;
    public long orderQty;
    public long cumQty;
    public long leavesQty;
    public long notionalTicks;
    /** FIX OrdStatus (39) of the order's current state. */
    public char ordStatus = '0';

    // Intrusive links of the price level the order rests in (null when not resting).
    OrderBook.Level level;
    Order prev;
    Order next;

    public Order(long orderId, Firm firm, int symbolIndex, String clOrdId, char side, char ordType,
            char timeInForce, boolean postOnly, long priceTicks, long orderQty) {
        this.orderId = orderId;
        this.firm = firm;
        this.symbolIndex = symbolIndex;
        this.clOrdId = clOrdId;
        this.side = side;
        this.ordType = ordType;
        this.timeInForce = timeInForce;
        this.postOnly = postOnly;
        this.priceTicks = priceTicks;
        this.orderQty = orderQty;
        this.leavesQty = orderQty;
    }

    public boolean isMarket() {
        return ordType == MARKET;
    }

    public boolean isResting() {
        return level != null;
    }

    void fill(long px, long qty) {
        cumQty += qty;
        leavesQty -= qty;
        notionalTicks += px * qty;
        ordStatus = leavesQty == 0 ? '2' : '1';
    }

    @Override
    public String toString() {
        return "Order{id=" + orderId + ", clOrdId=" + clOrdId + ", side=" + side + ", px=" + priceTicks
                + ", qty=" + orderQty + ", cum=" + cumQty + ", leaves=" + leavesQty + "}";
    }
}
