-- A forwarded message carries its caller's call (who called, with which
-- tools and added approvals: store.CallCarrier) so that the holding
-- replica handles it as if it had come there, and, for SendMessage, the
-- holding replica writes the answer it would have given (transcript and
-- files included) for the sender to return. forward_id names one
-- forwarding, so a sender reads and deletes only its own row.
ALTER TABLE vessel_resume_requests
    ADD COLUMN forward_id  text    NOT NULL DEFAULT '',
    ADD COLUMN call        bytea,
    ADD COLUMN want_result boolean NOT NULL DEFAULT false,
    ADD COLUMN result      bytea;
