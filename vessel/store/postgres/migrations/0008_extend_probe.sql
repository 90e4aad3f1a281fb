-- The table readiness extends after a task write was refused for a disk
-- reason (health.go, probeExtend): in a transaction rolled back, the
-- store empties it (a new, empty file) and inserts one row, so PostgreSQL
-- must add a block to a file in the store's own tablespace. The store owns
-- it, so neither CREATE on a schema nor TEMP on the database is needed. It
-- never keeps a row.
CREATE TABLE vessel_extend_probe (b bytea NOT NULL);
