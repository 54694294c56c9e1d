-- kindkit store, version 1 (SQLite). Times are unix nanoseconds (UTC),
-- NULL for the zero time; JSON is kept as text, byte for byte.

CREATE TABLE conversations (
	id         TEXT PRIMARY KEY,
	owner      TEXT NOT NULL DEFAULT '',
	supports   TEXT,                          -- JSON array; NULL when none
	model_pos  INTEGER NOT NULL DEFAULT 0,
	created_at INTEGER
);

CREATE TABLE sessions (
	id                   TEXT PRIMARY KEY,
	conversation_id      TEXT NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
	agent_id             TEXT NOT NULL DEFAULT '',
	agent_name           TEXT NOT NULL DEFAULT '',
	user_name            TEXT NOT NULL DEFAULT '',
	contact_email        TEXT NOT NULL DEFAULT '',
	contact_phone        TEXT NOT NULL DEFAULT '',
	user_participant_id  TEXT NOT NULL DEFAULT '',
	agent_participant_id TEXT NOT NULL DEFAULT ''
);
CREATE INDEX sessions_conversation ON sessions (conversation_id);

CREATE TABLE messages (
	seq             INTEGER PRIMARY KEY AUTOINCREMENT, -- the order of the history
	id              TEXT NOT NULL,
	conversation_id TEXT NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
	role            TEXT NOT NULL,
	text            TEXT NOT NULL DEFAULT '',
	tool_calls      TEXT,                     -- JSON array; NULL when none
	tool_call_id    TEXT NOT NULL DEFAULT '',
	tool_name       TEXT NOT NULL DEFAULT '',
	is_error        INTEGER NOT NULL DEFAULT 0,
	created_at      INTEGER
);
CREATE INDEX messages_conversation_seq ON messages (conversation_id, seq);
CREATE UNIQUE INDEX messages_conversation_id ON messages (conversation_id, id);

CREATE TABLE parks (
	id              TEXT PRIMARY KEY,
	type            TEXT NOT NULL,
	conversation_id TEXT NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
	session_id      TEXT NOT NULL DEFAULT '',
	kind            TEXT NOT NULL DEFAULT '',
	spec            TEXT,                     -- canonical spec JSON; NULL when none
	reason          TEXT NOT NULL DEFAULT '',
	tool_call       TEXT NOT NULL,            -- JSON runtime.ToolCall
	deadline        INTEGER,
	state           TEXT NOT NULL,
	turn            TEXT NOT NULL             -- JSON runtime.TurnState
);
-- A conversation has at most one pending park.
CREATE UNIQUE INDEX parks_pending_conversation ON parks (conversation_id) WHERE state = 'pending';
CREATE INDEX parks_pending_deadline ON parks (deadline) WHERE state = 'pending';
