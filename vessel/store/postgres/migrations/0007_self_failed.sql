-- A mark on each task the lease reaper failed that has push configs: no turn
-- is left to tell them, so the push outbox does (store.SelfFailures), and
-- drops the mark once it has enqueued the notifications. claimed_at is the
-- replica's claim while it enqueues, so one replica takes each mark; a claim
-- older than a minute (its replica died mid-pass) may be taken again.
CREATE TABLE vessel_self_failed (
    agent_id   text        NOT NULL,
    task_id    text        NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    claimed_at timestamptz,
    PRIMARY KEY (agent_id, task_id)
);

CREATE INDEX vessel_self_failed_created ON vessel_self_failed (created_at);
