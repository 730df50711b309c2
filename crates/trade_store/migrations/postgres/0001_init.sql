-- Rialto trade store on PostgreSQL, schema version 1: the tables, columns and keys of
-- ../0001_init.sql (SQLite's), with PostgreSQL's types. Prices are exact: `price` is a NUMERIC
-- in the instrument's scale (instruments.price_decimals) and `price_units` the same price as an
-- integer count of 10^-price_decimals; quantities are integers (units of the instrument).
-- Integers are BIGINT; text compares bytes (COLLATE "C", as SQLite's). Timestamps are the
-- journal record's, in nanoseconds since 1970-01-01 UTC. `seq` is the journal record the row
-- comes from. The schema version is table rialto_schema's.

CREATE TABLE instruments (
    instrument_id  BIGINT           PRIMARY KEY,
    symbol         TEXT COLLATE "C" NOT NULL UNIQUE,
    tick           NUMERIC          NOT NULL,
    price_decimals BIGINT           NOT NULL,
    lot            BIGINT           NOT NULL
);

CREATE TABLE orders (
    order_id       BIGINT           PRIMARY KEY,
    instrument_id  BIGINT           NOT NULL,
    owner          BIGINT           NOT NULL,
    account        BIGINT           NOT NULL,
    side           TEXT COLLATE "C" NOT NULL,
    ord_type       TEXT COLLATE "C" NOT NULL,
    tif            TEXT COLLATE "C" NOT NULL,
    price          NUMERIC,
    price_units    BIGINT,
    cl_ord_id      TEXT COLLATE "C" NOT NULL,
    order_qty      BIGINT           NOT NULL,
    cum_qty        BIGINT           NOT NULL,
    leaves_qty     BIGINT           NOT NULL,
    notional       NUMERIC          NOT NULL,
    status         TEXT COLLATE "C" NOT NULL,
    created_seq    BIGINT           NOT NULL,
    created_ts_ns  BIGINT           NOT NULL,
    updated_seq    BIGINT           NOT NULL,
    updated_ts_ns  BIGINT           NOT NULL
);
CREATE INDEX orders_by_owner ON orders (owner, status, created_ts_ns);
CREATE INDEX orders_by_account ON orders (account, created_ts_ns);

CREATE TABLE order_events (
    seq            BIGINT           NOT NULL,
    n              BIGINT           NOT NULL,
    order_id       BIGINT           NOT NULL,
    kind           TEXT COLLATE "C" NOT NULL,
    reason         TEXT COLLATE "C",
    status         TEXT COLLATE "C" NOT NULL,
    price          NUMERIC,
    price_units    BIGINT,
    cl_ord_id      TEXT COLLATE "C" NOT NULL,
    order_qty      BIGINT           NOT NULL,
    cum_qty        BIGINT           NOT NULL,
    leaves_qty     BIGINT           NOT NULL,
    ts_ns          BIGINT           NOT NULL,
    PRIMARY KEY (seq, n)
);
CREATE INDEX order_events_by_order ON order_events (order_id, seq, n);

CREATE TABLE executions (
    exec_id        TEXT COLLATE "C" NOT NULL UNIQUE,
    seq            BIGINT           NOT NULL,
    n              BIGINT           NOT NULL,
    order_id       BIGINT           NOT NULL,
    instrument_id  BIGINT           NOT NULL,
    owner          BIGINT           NOT NULL,
    account        BIGINT           NOT NULL,
    side           TEXT COLLATE "C" NOT NULL,
    price          NUMERIC          NOT NULL,
    price_units    BIGINT           NOT NULL,
    qty            BIGINT           NOT NULL,
    cum_qty        BIGINT           NOT NULL,
    leaves_qty     BIGINT           NOT NULL,
    trade_id       BIGINT,
    liquidity      TEXT COLLATE "C",
    ts_ns          BIGINT           NOT NULL,
    PRIMARY KEY (seq, n)
);
CREATE INDEX executions_by_trade ON executions (trade_id);
CREATE INDEX executions_by_owner ON executions (owner, seq, n);
CREATE INDEX executions_by_order ON executions (order_id);

CREATE TABLE trades (
    trade_id       BIGINT           PRIMARY KEY,
    seq            BIGINT           NOT NULL,
    instrument_id  BIGINT           NOT NULL,
    price          NUMERIC          NOT NULL,
    price_units    BIGINT           NOT NULL,
    qty            BIGINT           NOT NULL,
    maker_order_id BIGINT           NOT NULL,
    taker_order_id BIGINT           NOT NULL,
    maker_account  BIGINT           NOT NULL,
    taker_account  BIGINT           NOT NULL,
    taker_side     TEXT COLLATE "C" NOT NULL,
    ts_ns          BIGINT           NOT NULL
);
CREATE INDEX trades_by_instrument ON trades (instrument_id, trade_id);

-- The journal position the store holds every record up to (one row), committed in the same
-- transaction as the rows of the records before it.
CREATE TABLE store_position (
    id             BIGINT           PRIMARY KEY CHECK (id = 1),
    seq            BIGINT           NOT NULL,
    ts_ns          BIGINT           NOT NULL
);
INSERT INTO store_position (id, seq, ts_ns) VALUES (1, 0, 0);
