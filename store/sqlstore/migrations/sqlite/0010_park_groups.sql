-- kindkit store, version 10: several pending parks per conversation. The
-- raise calls of one model step open their parks together; they share a
-- park_group ('' for a park alone), and the turn resumes once, from the
-- take that leaves none of its group pending. The unique index of one
-- pending park per conversation becomes a plain one, which still finds
-- a conversation's pending parks by its key.

ALTER TABLE parks ADD COLUMN park_group TEXT NOT NULL DEFAULT '';
DROP INDEX parks_pending_conversation;
CREATE INDEX parks_pending_conversation ON parks (ck, created_at, id) WHERE state = 'pending';
