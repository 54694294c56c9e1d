-- kindkit store, version 13: the rows of a conversation no longer have
-- foreign keys to it. PostgreSQL checks a foreign key by locking the row
-- it references (FOR KEY SHARE), and a lock is a write of the row's
-- page: every session, message and park inserted wrote its
-- conversation's page, whole on its first change after a checkpoint
-- (full_page_writes). At a million waiting asks a resumed one's
-- conversation is on a page nothing else touched, so each resume wrote
-- it. A row's conversation is checked where it is inserted instead: its
-- key (ck, NOT NULL) is read from the conversation, and a conversation
-- that does not exist has none, which refuses the row. A conversation
-- is never deleted, so the cascades had nothing to do.
ALTER TABLE sessions DROP CONSTRAINT sessions_conversation_id_fkey;
ALTER TABLE messages DROP CONSTRAINT messages_conversation_id_fkey;
ALTER TABLE parks DROP CONSTRAINT parks_conversation_id_fkey;
