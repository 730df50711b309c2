-- Rialto trade store, schema version 3: fewer indexes to keep up to date on every row written.
-- orders_by_owner (owner, status, created_ts_ns) changed with every status change of an order;
-- an owner's orders are found by orders_by_owner_id. executions' exec_id is the text of its
-- primary key (seq, n): its own unique index is dropped (the table is rebuilt, the only way
-- SQLite drops a column constraint), the column stays.

DROP INDEX orders_by_owner;

CREATE TABLE executions_v3 (
    exec_id        TEXT    NOT NULL,
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
INSERT INTO executions_v3 SELECT * FROM executions;
DROP TABLE executions;
ALTER TABLE executions_v3 RENAME TO executions;
CREATE INDEX executions_by_trade ON executions (trade_id);
CREATE INDEX executions_by_owner ON executions (owner, seq, n);
CREATE INDEX executions_by_order ON executions (order_id);
