-- Rialto trade store (PostgreSQL), schema version 3: fewer indexes to keep up to date on every
-- row written, as in SQLite's 0003: orders_by_owner (changed with every status change of an
-- order) and the unique index of executions' exec_id (the text of its primary key (seq, n)).

DROP INDEX orders_by_owner;
ALTER TABLE executions DROP CONSTRAINT executions_exec_id_key;
