-- kindkit store, version 11: sessions lose their index by conversation
-- (sessions_conversation). No statement reads it: a session is found by
-- its id, and a conversation is never deleted, so no cascade walks its
-- sessions (TestEveryIndexRead). It cost every new conversation a page
-- (TestCycleWrites).
DROP INDEX sessions_conversation;
