-- kindkit store, version 3: an acknowledged answer resumes a turn that must
-- finish. From the take that stores its answer until that turn ends, a park
-- owes its turn a reply, run under a lease (owner, until) that another
-- process may take over once it has run out.

ALTER TABLE parks ADD COLUMN owed BOOLEAN NOT NULL DEFAULT FALSE;
ALTER TABLE parks ADD COLUMN lease_owner TEXT NOT NULL DEFAULT '';
ALTER TABLE parks ADD COLUMN lease_until BIGINT;
CREATE INDEX parks_owed_lease ON parks (lease_until) WHERE owed;
