-- kindkit store, version 9: an outbox of ask events. When a store is told
-- its consumers (webhook endpoints), a park that is saved and a pending
-- park that ends write one row per consumer in the same transaction, so
-- an event exists exactly when the change it tells of was committed. A
-- consumer leases its rows (due, lease_owner) while it delivers them and
-- deletes them once delivered. The rows hold what an ask is and how it
-- ended, never messages or an answer's values. No foreign key: an event
-- outlives its conversation.

CREATE TABLE outbox (
	seq             INTEGER PRIMARY KEY, -- the order written
	consumer        TEXT NOT NULL,
	id              TEXT NOT NULL,            -- the event's id, the same for every consumer
	type            TEXT NOT NULL,            -- ask.parked or ask.resolved
	ask_id          TEXT NOT NULL,
	conversation_id TEXT NOT NULL,
	ask             TEXT NOT NULL,            -- interaction or confirmation
	kind            TEXT NOT NULL DEFAULT '',
	tool            TEXT NOT NULL DEFAULT '',
	deadline        INTEGER,
	status          TEXT NOT NULL DEFAULT '',
	event_at        INTEGER NOT NULL,
	attempts        INTEGER NOT NULL DEFAULT 0,
	due             INTEGER NOT NULL DEFAULT 0, -- not leased again before; a lease's end while leased
	lease_owner     TEXT NOT NULL DEFAULT ''
);
CREATE UNIQUE INDEX outbox_consumer_id ON outbox (consumer, id);
CREATE INDEX outbox_consumer_due ON outbox (consumer, due);
CREATE INDEX outbox_consumer_ask ON outbox (consumer, ask_id, seq);
