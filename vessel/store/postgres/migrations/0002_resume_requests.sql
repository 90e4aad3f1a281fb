-- A message (an approval decision) sent on one replica for a task paused on
-- another. The holding replica claims the row (taken), runs the message
-- through its own handler as the task's owner, and deletes the row once
-- the handler took it, or writes its error for the sender to return.
CREATE TABLE vessel_resume_requests (
    agent_id     text        NOT NULL,
    task_id      text        NOT NULL,
    replica_id   text        NOT NULL,
    owner        text        NOT NULL,
    request      jsonb       NOT NULL,
    taken        boolean     NOT NULL DEFAULT false,
    error        text,
    requested_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (agent_id, task_id)
);

CREATE INDEX vessel_resume_requests_replica ON vessel_resume_requests (replica_id);
