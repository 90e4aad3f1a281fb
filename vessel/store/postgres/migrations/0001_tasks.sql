-- Tasks of every agent, scoped by agent and owner. The task column holds the
-- stripped snapshot (latest status, the user's text, the answer).
CREATE TABLE vessel_tasks (
    agent_id   text        NOT NULL,
    id         text        NOT NULL,
    owner      text        NOT NULL,
    context_id text        NOT NULL,
    state      text        NOT NULL,
    version    bigint      NOT NULL,
    replica_id text        NOT NULL,
    status_ts  timestamptz,
    task       jsonb       NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (agent_id, id)
);

CREATE INDEX vessel_tasks_list ON vessel_tasks (agent_id, owner, updated_at DESC, id DESC);
CREATE INDEX vessel_tasks_updated ON vessel_tasks (updated_at);
CREATE INDEX vessel_tasks_running ON vessel_tasks (replica_id)
    WHERE state IN ('TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING');

-- One row per live vessel process; heartbeat_at is its lease on the tasks it runs.
CREATE TABLE vessel_replicas (
    id           text        PRIMARY KEY,
    started_at   timestamptz NOT NULL DEFAULT now(),
    heartbeat_at timestamptz NOT NULL DEFAULT now()
);

-- A cancel asked for on one replica for a task running on another. The row is
-- the request; NOTIFY only wakes the target replica early.
CREATE TABLE vessel_cancel_requests (
    agent_id     text        NOT NULL,
    task_id      text        NOT NULL,
    replica_id   text        NOT NULL,
    requested_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (agent_id, task_id)
);

CREATE INDEX vessel_cancel_requests_replica ON vessel_cancel_requests (replica_id);
