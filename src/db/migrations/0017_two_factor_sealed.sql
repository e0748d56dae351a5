-- TOTP keys sealed under the master key (src/auth/seal.c), bound to
-- "totp:<user id>", like every other secret at rest. A key enrolled before
-- this migration stays in the old column, readable, until the user enrols
-- again; a new or replaced enrolment writes only secret_sealed.
ALTER TABLE two_factor ALTER COLUMN secret DROP NOT NULL;
ALTER TABLE two_factor ADD COLUMN secret_sealed text CHECK (secret_sealed ~ '^v1\.[0-9a-f]{8}\.');
ALTER TABLE two_factor ADD CONSTRAINT two_factor_key_present
	CHECK (secret IS NOT NULL OR secret_sealed IS NOT NULL);
