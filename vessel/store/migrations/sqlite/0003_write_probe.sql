-- One row the health check rewrites after a failed write (a full disk) to
-- learn whether the database takes writes again. IF NOT EXISTS: see 0001.
CREATE TABLE IF NOT EXISTS vessel_write_probe (
    id INTEGER PRIMARY KEY,
    at INTEGER NOT NULL
);
