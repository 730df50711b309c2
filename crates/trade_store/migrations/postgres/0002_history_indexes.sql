-- Rialto trade store on PostgreSQL, schema version 2: the index the history API's closed orders
-- walk (an owner's orders in order id order, GET /api/v1/orders?status=closed).

CREATE INDEX orders_by_owner_id ON orders (owner, order_id);
