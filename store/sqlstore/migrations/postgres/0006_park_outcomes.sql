-- kindkit store, version 6: a history page shows every card of its turns
-- that ended, with how it ended: a kind's card, a host tool's Ask, an MCP
-- server's elicitation, a write confirmation, and one stopped with Stop.
-- The messages alone cannot say so (an Ask's answer is not a message), so
-- a park keeps its outcome from the take that ends it, and when it was
-- saved, and a conversation's ended parks are found by time saved.

ALTER TABLE parks ADD COLUMN created_at BIGINT;
ALTER TABLE parks ADD COLUMN outcome TEXT;   -- JSON; NULL while pending or when none
CREATE INDEX parks_conversation_created ON parks (conversation_id, created_at, id);
