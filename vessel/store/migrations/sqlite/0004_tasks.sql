-- Tasks of every agent in one table, scoped by agent and owner, as in the
-- PostgreSQL store; updated_at is in Unix nanoseconds, task the stripped
-- snapshot (latest status, the user's text, the answer). Before this
-- migration each agent had a table "tasks_<agent>"; migration 5 (a step in
-- Go, store.SQLiteMigrations) moves their rows here and drops them.
CREATE TABLE vessel_tasks (
    agent_id   TEXT    NOT NULL,
    id         TEXT    NOT NULL,
    owner      TEXT    NOT NULL,
    context_id TEXT    NOT NULL,
    state      TEXT    NOT NULL,
    version    INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    task       BLOB    NOT NULL,
    PRIMARY KEY (agent_id, id)
);

CREATE INDEX vessel_tasks_list ON vessel_tasks (agent_id, owner, updated_at);
CREATE INDEX vessel_tasks_updated ON vessel_tasks (updated_at);
