-- Push notification configs (A2A 1.0 §9), bound to the owner of their task
-- like the task itself; created_at is in Unix nanoseconds. A config may be
-- saved before its task's row, so there is no foreign key; the TTL cleanup
-- deletes configs whose task is gone.
--
-- IF NOT EXISTS: databases made before migrations were versioned
-- (schema_migrations absent) already have this table, and upgrade in place.
CREATE TABLE IF NOT EXISTS vessel_push_configs (
    agent_id   TEXT    NOT NULL,
    task_id    TEXT    NOT NULL,
    id         TEXT    NOT NULL,
    owner      TEXT    NOT NULL,
    config     BLOB    NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (agent_id, task_id, id)
);
