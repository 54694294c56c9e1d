-- kindkit store, version 2: list_conversations lists a principal's
-- conversations, so finding them by owner must not scan the table.

CREATE INDEX conversations_owner ON conversations (owner);
