-- A mark on each task failed at start (left unfinished by the previous run)
-- that has push configs: no turn is left to tell them, so the push outbox
-- does (store.SelfFailures) and drops the mark once it has enqueued the
-- notifications. IF NOT EXISTS: see 0001.
CREATE TABLE IF NOT EXISTS vessel_self_failed (
    agent_id   TEXT    NOT NULL,
    task_id    TEXT    NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (agent_id, task_id)
);
