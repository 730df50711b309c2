-- Rialto trade store, schema version 1. Prices are exact: `price` is a decimal string in the
-- instrument's scale (instruments.price_decimals) and `price_units` the same price as an integer
-- count of 10^-price_decimals; quantities are integers (shares, units of the instrument).
-- Timestamps are the journal record's, in nanoseconds since 1970-01-01 UTC. `seq` is the
-- journal record the row comes from.

CREATE TABLE instruments (
    instrument_id  INTEGER PRIMARY KEY,
    symbol         TEXT    NOT NULL UNIQUE,
    tick           TEXT    NOT NULL,
    price_decimals INTEGER NOT NULL,
    lot            INTEGER NOT NULL
);

CREATE TABLE orders (
    order_id       INTEGER PRIMARY KEY,
    instrument_id  INTEGER NOT NULL,
    owner          INTEGER NOT NULL,
    account        INTEGER NOT NULL,
    side           TEXT    NOT NULL,
    ord_type       TEXT    NOT NULL,
    tif            TEXT    NOT NULL,
    price          TEXT,
    price_units    INTEGER,
    cl_ord_id      TEXT    NOT NULL,
    order_qty      INTEGER NOT NULL,
    cum_qty        INTEGER NOT NULL,
    leaves_qty     INTEGER NOT NULL,
    notional       TEXT    NOT NULL,
    status         TEXT    NOT NULL,
    created_seq    INTEGER NOT NULL,
    created_ts_ns  INTEGER NOT NULL,
    updated_seq    INTEGER NOT NULL,
    updated_ts_ns  INTEGER NOT NULL
);
CREATE INDEX orders_by_owner ON orders (owner, status, created_ts_ns);
CREATE INDEX orders_by_account ON orders (account, created_ts_ns);

CREATE TABLE order_events (
    seq            INTEGER NOT NULL,
    n              INTEGER NOT NULL,
    order_id       INTEGER NOT NULL,
    kind           TEXT    NOT NULL,
    reason         TEXT,
    status         TEXT    NOT NULL,
    price          TEXT,
    price_units    INTEGER,
    cl_ord_id      TEXT    NOT NULL,
    order_qty      INTEGER NOT NULL,
    cum_qty        INTEGER NOT NULL,
    leaves_qty     INTEGER NOT NULL,
    ts_ns          INTEGER NOT NULL,
    PRIMARY KEY (seq, n)
) WITHOUT ROWID;
CREATE INDEX order_events_by_order ON order_events (order_id, seq, n);

CREATE TABLE executions (
    exec_id        TEXT    NOT NULL UNIQUE,
    seq            INTEGER NOT NULL,
    n              INTEGER NOT NULL,
    order_id       INTEGER NOT NULL,
    instrument_id  INTEGER NOT NULL,
    owner          INTEGER NOT NULL,
    account        INTEGER NOT NULL,
    side           TEXT    NOT NULL,
    price          TEXT    NOT NULL,
    price_units    INTEGER NOT NULL,
    qty            INTEGER NOT NULL,
    cum_qty        INTEGER NOT NULL,
    leaves_qty     INTEGER NOT NULL,
    trade_id       INTEGER,
    liquidity      TEXT,
    ts_ns          INTEGER NOT NULL,
    PRIMARY KEY (seq, n)
) WITHOUT ROWID;
CREATE INDEX executions_by_trade ON executions (trade_id);
CREATE INDEX executions_by_owner ON executions (owner, seq, n);
CREATE INDEX executions_by_order ON executions (order_id);

CREATE TABLE trades (
    trade_id       INTEGER PRIMARY KEY,
    seq            INTEGER NOT NULL,
    instrument_id  INTEGER NOT NULL,
    price          TEXT    NOT NULL,
    price_units    INTEGER NOT NULL,
    qty            INTEGER NOT NULL,
    maker_order_id INTEGER NOT NULL,
    taker_order_id INTEGER NOT NULL,
    maker_account  INTEGER NOT NULL,
    taker_account  INTEGER NOT NULL,
    taker_side     TEXT    NOT NULL,
    ts_ns          INTEGER NOT NULL
);
CREATE INDEX trades_by_instrument ON trades (instrument_id, trade_id);

-- The journal position the store holds every record up to (one row), committed in the same
-- transaction as the rows of the records before it.
CREATE TABLE store_position (
    id             INTEGER PRIMARY KEY CHECK (id = 1),
    seq            INTEGER NOT NULL,
    ts_ns          INTEGER NOT NULL
);
INSERT INTO store_position (id, seq, ts_ns) VALUES (1, 0, 0);
