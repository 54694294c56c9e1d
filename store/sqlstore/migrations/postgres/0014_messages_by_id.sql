-- kindkit store, version 14: a message is found by its id through an
-- index on the id alone (messages_id), no longer on (ck, id). Ids are
-- time-ordered (UUIDv7, minted when a message is stored), so a new
-- message's entry goes to the index's last page, which every write
-- shares; under (ck, id) it went among its conversation's, and a resumed
-- ask's conversation is an old one: at a million waiting asks that page
-- was cold, written whole on its first change after a checkpoint. The
-- two statements that look a message up (a history page's cursor, the
-- ended parks before a message) name the conversation too, and check it
-- on the row. The old index was unique; nothing relied on it: the
-- engine mints every message's id, and no statement conflicts on it.
DROP INDEX messages_conversation_id;
CREATE INDEX messages_id ON messages (id);
