-- Push notification configs (A2A 1.0 §9), bound to the owner of their task
-- like the task itself. A config may be saved before its task's first row
-- (SendMessage with a push config), so there is no foreign key; the TTL
-- cleanup deletes configs whose task is gone.
CREATE TABLE vessel_push_configs (
    agent_id   text        NOT NULL,
    task_id    text        NOT NULL,
    id         text        NOT NULL,
    owner      text        NOT NULL,
    config     jsonb       NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (agent_id, task_id, id)
);
