-- kindkit store, version 12: a park keeps whom it is addressed to (a
-- principal, or group:NAME; '' for anyone of its conversation), so that an
-- inbox finds the pending asks of an addressee across conversations. The
-- index holds addressed pending parks only: a park nobody is named for is
-- never in it, so unaddressed asks, most of them, cost it no write. Its
-- second column is the order an inbox lists them in: by deadline, a park
-- without one last.
--
-- Until now the addressee was only in the engine's turn state (JSON, key
-- "addressee"): pending parks that have one get it from there. Ended
-- parks keep it only in their state, where the engine still reads it.

ALTER TABLE parks ADD COLUMN addressee TEXT NOT NULL DEFAULT '';
UPDATE parks SET addressee = COALESCE(json_extract(turn, '$.addressee'), '')
	WHERE state = 'pending' AND turn LIKE '%"addressee":%' AND json_valid(turn);
CREATE INDEX parks_pending_addressee ON parks (addressee, COALESCE(deadline, 9223372036854775807), id)
	WHERE state = 'pending' AND addressee <> '';
