-- kindkit store, version 7: a conversation's rows are found by its key
-- (ck), a number in the order conversations were made, instead of by its
-- id. The id is a random UUID, so every index that began with it put each
-- new row on a page of its own: a cycle wrote 29 pages to the WAL under
-- concurrent load. The conversations that are live are the recent ones,
-- so indexes that begin with ck put their rows on the last few pages,
-- which a group commit writes once for all: 21 pages (BenchmarkCycleWAL).
--
-- conversations.ck is one more than the largest when a conversation is
-- made (one writer: no two get the same), its old rows take their rowid;
-- the other tables copy their conversation's. The foreign keys stay on
-- conversation_id: a conversation is never deleted, so their cascades need
-- no index of their own.
--
-- A kindkit older than this refuses the file; one still running when it
-- is migrated must be stopped first: it would store rows without keys.

ALTER TABLE conversations ADD COLUMN ck INTEGER;
UPDATE conversations SET ck = rowid;
CREATE UNIQUE INDEX conversations_ck ON conversations (ck);

ALTER TABLE sessions ADD COLUMN ck INTEGER NOT NULL DEFAULT 0;
UPDATE sessions SET ck = (SELECT c.ck FROM conversations c WHERE c.id = sessions.conversation_id);
DROP INDEX sessions_conversation;
CREATE INDEX sessions_conversation ON sessions (ck);

ALTER TABLE messages ADD COLUMN ck INTEGER NOT NULL DEFAULT 0;
UPDATE messages SET ck = (SELECT c.ck FROM conversations c WHERE c.id = messages.conversation_id);
DROP INDEX messages_conversation_seq;
DROP INDEX messages_conversation_id;
CREATE INDEX messages_conversation_seq ON messages (ck, seq);
CREATE UNIQUE INDEX messages_conversation_id ON messages (ck, id);

ALTER TABLE parks ADD COLUMN ck INTEGER NOT NULL DEFAULT 0;
UPDATE parks SET ck = (SELECT c.ck FROM conversations c WHERE c.id = parks.conversation_id);
DROP INDEX parks_pending_conversation;
DROP INDEX parks_conversation_created;
CREATE UNIQUE INDEX parks_pending_conversation ON parks (ck) WHERE state = 'pending';
CREATE INDEX parks_conversation_created ON parks (ck, created_at, id);
