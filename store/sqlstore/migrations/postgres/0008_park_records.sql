-- kindkit store, version 8: an ask that ended keeps its record: who ended
-- it, when, by which path and in which process (and, for a tool call, the
-- decision and its arguments). The engine writes it with the take that
-- ends the park, as JSON the store keeps as given; NULL while pending and
-- for parks that ended before this version.

ALTER TABLE parks ADD COLUMN record TEXT;
