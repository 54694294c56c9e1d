-- kindkit store, version 4: processes sharing the database show each other's
-- turns live through LISTEN/NOTIFY. A message over NOTIFY's 8000-byte payload
-- travels by reference: it is stored here and the notification carries its
-- id. Rows are read within moments and dropped after minutes; unlogged, as
-- nothing in them outlives a crash by design.

CREATE UNLOGGED TABLE fanout_notes (
    id         BIGSERIAL PRIMARY KEY,
    body       BYTEA NOT NULL,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
