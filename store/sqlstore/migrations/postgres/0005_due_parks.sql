-- kindkit store, version 5: the deadline sweep asks, on every tick, for the
-- first pending parks that are due. Version 1's index on deadline could not
-- serve "deadline IS NULL OR deadline < now" as one ordered range. This
-- index is on the expression the query filters and orders by (a park
-- without a deadline is due since 1970), so a tick reads only the parks it
-- returns.

DROP INDEX parks_pending_deadline;
CREATE INDEX parks_pending_due ON parks ((COALESCE(deadline, 0))) WHERE state = 'pending';
