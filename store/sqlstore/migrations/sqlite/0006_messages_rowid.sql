-- kindkit store, version 6: messages.seq is a plain INTEGER PRIMARY KEY.
-- AUTOINCREMENT made every insert read and rewrite the messages row of
-- sqlite_sequence, one more page in the WAL per commit. Without it a new
-- row's seq is one more than the largest in the table, so the history keeps
-- its insertion order; a seq is reused only when the newest messages of the
-- table were deleted (their conversation was), and then it still comes after
-- every message that is left.
--
-- SQLite cannot drop AUTOINCREMENT in place: the table is made again, its
-- rows copied with their seq.

CREATE TABLE messages_v6 (
	seq             INTEGER PRIMARY KEY, -- the order of the history
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
INSERT INTO messages_v6 (seq, id, conversation_id, role, text, tool_calls, tool_call_id, tool_name, is_error, created_at)
	SELECT seq, id, conversation_id, role, text, tool_calls, tool_call_id, tool_name, is_error, created_at FROM messages;
DROP TABLE messages;
ALTER TABLE messages_v6 RENAME TO messages;
CREATE INDEX messages_conversation_seq ON messages (conversation_id, seq);
CREATE UNIQUE INDEX messages_conversation_id ON messages (conversation_id, id);
