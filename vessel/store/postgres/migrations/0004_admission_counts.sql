-- Each replica's running turns by admission key ("turns", "agent:<id>",
-- "app:<id>", "owner:<owner>"), replaced every second or so, so that every
-- replica counts the others' turns against the [limits] caps. Rows of a
-- replica whose lease expired are ignored, and go with its lease row.
CREATE TABLE vessel_admission_counts (
    replica_id text    NOT NULL,
    key        text    NOT NULL,
    n          integer NOT NULL CHECK (n > 0),
    PRIMARY KEY (replica_id, key)
);
