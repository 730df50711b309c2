package rialto.interop;

import java.math.BigDecimal;
import java.util.Set;
import quickfix.FieldNotFound;
import quickfix.Group;
import quickfix.Message;
import quickfix.field.TransactTime;

/**
 * Builders for the order-entry and market-data requests the tests send, and {@link Msg}, a received
 * message with field-by-field assertions that name the field and show the whole message.
 *
 * <p>The builders make plain {@link Message}s with the fields FIX 4.2, 4.4 and 5.0SP2 share; the
 * session fills in the header, and {@link FixVersion#adapt} adds what one version alone requires.
 */
public final class Fix {
    private Fix() {
    }

    public static final char BUY = '1';
    public static final char SELL = '2';
    public static final char MARKET = '1';
    public static final char LIMIT = '2';
    public static final char DAY = '0';
    public static final char GTC = '1';
    public static final char IOC = '3';
    public static final char FOK = '4';

    /** Field {@code tag} of {@code m}'s body, or null when it is absent. */
    public static String field(Message m, int tag) {
        try {
            return m.isSetField(tag) ? m.getString(tag) : null;
        } catch (FieldNotFound e) {
            return null;
        }
    }

    /** An empty application message of type {@code msgType}. */
    public static Message app(String msgType) {
        Message m = new Message();
        m.getHeader().setString(35, msgType);
        return m;
    }

    /** NewOrderSingle (D). price null for market orders. */
    public static Message newOrder(String clOrdId, String symbol, char side, long qty, String price, char ordType,
            char tif, boolean postOnly) {
        Message m = app("D");
        m.setString(11, clOrdId);
        m.setString(55, symbol);
        m.setChar(54, side);
        m.setField(new TransactTime(FixClients.now()));
        m.setString(38, Long.toString(qty));
        m.setChar(40, ordType);
        if (price != null) {
            m.setString(44, price);
        }
        m.setChar(59, tif);
        if (postOnly) {
            m.setString(18, "6");
        }
        return m;
    }

    public static Message limit(String clOrdId, String symbol, char side, long qty, String price) {
        return newOrder(clOrdId, symbol, side, qty, price, LIMIT, DAY, false);
    }

    /** OrderCancelRequest (F). */
    public static Message cancel(String clOrdId, String origClOrdId, String symbol, char side) {
        Message m = app("F");
        m.setString(41, origClOrdId);
        m.setString(11, clOrdId);
        m.setString(55, symbol);
        m.setChar(54, side);
        m.setField(new TransactTime(FixClients.now()));
        return m;
    }

    /** OrderCancelReplaceRequest (G) of a limit order: new price and total quantity. */
    public static Message replace(String clOrdId, String origClOrdId, String symbol, char side, long qty,
            String price) {
        Message m = app("G");
        m.setString(41, origClOrdId);
        m.setString(11, clOrdId);
        m.setString(55, symbol);
        m.setChar(54, side);
        m.setField(new TransactTime(FixClients.now()));
        m.setString(38, Long.toString(qty));
        m.setChar(40, LIMIT);
        m.setString(44, price);
        return m;
    }

    /** OrderMassCancelRequest (q): type '1' by symbol, '7' all orders. */
    public static Message massCancel(String clOrdId, char type, String symbol) {
        Message m = app("q");
        m.setString(11, clOrdId);
        m.setChar(530, type);
        if (symbol != null) {
            m.setString(55, symbol);
        }
        m.setField(new TransactTime(FixClients.now()));
        return m;
    }

    /** OrderStatusRequest (H). */
    public static Message status(String clOrdId, String symbol, char side) {
        Message m = app("H");
        m.setString(11, clOrdId);
        m.setString(55, symbol);
        m.setChar(54, side);
        return m;
    }

    /**
     * MarketDataRequest (V): subscription 0 snapshot, 1 snapshot and updates, 2 unsubscribe;
     * depth 0 the full book; MDUpdateType 1 (incremental); the MDEntryTypes (269) and symbols given.
     * Every version's dictionary requires MarketDepth and both groups, an unsubscribe too.
     */
    public static Message marketDataRequest(String mdReqId, char subscription, int depth, String entryTypes,
            String... symbols) {
        Message m = app("V");
        m.setString(262, mdReqId);
        m.setChar(263, subscription);
        m.setInt(264, depth);
        m.setInt(265, 1);
        for (char t : entryTypes.toCharArray()) {
            Group g = new Group(267, 269);
            g.setChar(269, t);
            m.addGroup(g);
        }
        for (String s : symbols) {
            Group g = new Group(146, 55);
            g.setString(55, s);
            m.addGroup(g);
        }
        return m;
    }

    /** SecurityListRequest (x, FIX 4.4 and later): symbol null asks for every instrument (559=4), else 559=0. */
    public static Message securityListRequest(String reqId, String symbol) {
        Message m = app("x");
        m.setString(320, reqId);
        if (symbol == null) {
            m.setInt(559, 4);
        } else {
            m.setInt(559, 0);
            m.setString(55, symbol);
        }
        return m;
    }

    /** SecurityStatusRequest (e), a snapshot (263=0). */
    public static Message securityStatusRequest(String reqId, String symbol) {
        Message m = app("e");
        m.setString(324, reqId);
        m.setString(55, symbol);
        m.setChar(263, '0');
        return m;
    }

    /** A received message under test. Each check throws AssertionError naming the field. */
    public static final class Msg {
        public final Message m;
        public final String what;

        public Msg(Message m, String what) {
            this.m = m;
            this.what = what;
        }

        public String get(int tag) {
            try {
                return m.isSetField(tag) ? m.getString(tag) : null;
            } catch (FieldNotFound e) {
                return null;
            }
        }

        public String type() {
            return FixClients.type(m);
        }

        AssertionError fail(String detail) {
            return new AssertionError(what + ": " + detail + "\n    got " + FixClients.dump(m));
        }

        /** The field is present with exactly this text. */
        public Msg is(int tag, String expected) {
            String v = get(tag);
            if (v == null) {
                throw fail(FixClients.tagName(tag) + " missing, expected " + expected);
            }
            if (!v.equals(expected)) {
                throw fail(FixClients.tagName(tag) + " is " + v + ", expected " + expected);
            }
            return this;
        }

        public Msg is(int tag, char expected) {
            return is(tag, String.valueOf(expected));
        }

        /** The field is one of these values. */
        public Msg oneOf(int tag, Set<String> expected) {
            String v = get(tag);
            if (v == null || !expected.contains(v)) {
                throw fail(FixClients.tagName(tag) + " is " + v + ", expected one of " + expected);
            }
            return this;
        }

        /** The field is present and numerically equal (100.5 == 100.50). */
        public Msg num(int tag, String expected) {
            String v = get(tag);
            if (v == null) {
                throw fail(FixClients.tagName(tag) + " missing, expected " + expected);
            }
            BigDecimal got;
            try {
                got = new BigDecimal(v);
            } catch (NumberFormatException e) {
                throw fail(FixClients.tagName(tag) + " is not a number: " + v);
            }
            if (got.compareTo(new BigDecimal(expected)) != 0) {
                throw fail(FixClients.tagName(tag) + " is " + v + ", expected " + expected);
            }
            return this;
        }

        public Msg num(int tag, long expected) {
            return num(tag, Long.toString(expected));
        }

        /** The field is not present. */
        public Msg absent(int tag) {
            String v = get(tag);
            if (v != null) {
                throw fail(FixClients.tagName(tag) + " is " + v + ", expected no such field");
            }
            return this;
        }

        /** The field is present and not empty. */
        public Msg has(int tag) {
            String v = get(tag);
            if (v == null || v.isEmpty()) {
                throw fail(FixClients.tagName(tag) + " missing");
            }
            return this;
        }

        /** A reject reason is given: a Text(58) or a reject code (103, 102, 380, 532). */
        public Msg hasReason() {
            for (int tag : new int[] {58, 103, 102, 380, 532}) {
                String v = get(tag);
                if (v != null && !v.isEmpty()) {
                    return this;
                }
            }
            throw fail("no reason given (Text 58 or a reject reason code)");
        }
    }
}
