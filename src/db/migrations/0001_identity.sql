-- Identity: users (with the operator flag), organizations and memberships,
-- and the functions behind POST /setup and POST /signup, each one round
-- trip and atomic. PostgreSQL 13+ (gen_random_uuid() is core since 13).
--
-- Errors raised here carry Steward's own SQLSTATEs (class "SW", which
-- PostgreSQL does not use); src/db/statements.h names them:
--   SW001  setup is already complete (a user exists)
--   SW002  setup is required (signup before the first user)
--   SW003  the e-mail address is already registered

-- Timestamps leave the database as RFC 3339 UTC with milliseconds,
-- e.g. 2026-11-21T16:22:35.123Z, the API's format.
CREATE FUNCTION steward_rfc3339(ts timestamptz) RETURNS text
LANGUAGE sql STABLE STRICT PARALLEL SAFE AS $$
	SELECT to_char($1 AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
$$;

CREATE TABLE users (
	id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
	-- Stored lower-case; the unique index makes the comparison
	-- case-insensitive even for rows written some other way.
	email text NOT NULL CHECK (char_length(email) BETWEEN 3 AND 254),
	name text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 100),
	password_hash text NOT NULL,
	is_operator boolean NOT NULL DEFAULT false,
	created_at timestamptz NOT NULL DEFAULT now(),
	updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX users_email_key ON users (lower(email));

CREATE TABLE organizations (
	id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
	name text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 100),
	created_at timestamptz NOT NULL DEFAULT now(),
	updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE memberships (
	user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
	organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
	role text NOT NULL CHECK (role IN ('OWNER', 'ADMIN', 'MEMBER')),
	created_at timestamptz NOT NULL DEFAULT now(),
	updated_at timestamptz NOT NULL DEFAULT now(),
	PRIMARY KEY (user_id, organization_id)
);
CREATE INDEX memberships_organization_id_idx ON memberships (organization_id);

-- One row whose lock serialises concurrent setups. The first setup holds
-- the row lock until it commits; the others then see its user (read
-- committed takes a fresh snapshot per statement in a volatile function)
-- and fail with SW001. Under repeatable read or serializable the losers
-- fail with 40001 instead: either way exactly one setup succeeds.
CREATE TABLE setup_state (
	singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
	completed_at timestamptz
);
INSERT INTO setup_state (singleton) VALUES (true);

-- Both functions return one row:
--   user_id, user_email, user_name, user_is_operator, user_created_at,
--   organization_id, organization_name, organization_created_at, membership_role
CREATE FUNCTION steward_setup(p_email text, p_name text, p_password_hash text,
			      p_organization_name text)
RETURNS TABLE (user_id uuid, user_email text, user_name text, user_is_operator boolean,
	       user_created_at text, organization_id uuid, organization_name text,
	       organization_created_at text, membership_role text)
LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
DECLARE
	u users%ROWTYPE;
	o organizations%ROWTYPE;
BEGIN
	UPDATE setup_state SET completed_at = now() WHERE singleton;
	IF EXISTS (SELECT 1 FROM users) THEN
		RAISE EXCEPTION 'setup is already complete' USING ERRCODE = 'SW001';
	END IF;
	INSERT INTO users (email, name, password_hash, is_operator)
		VALUES (lower(p_email), p_name, p_password_hash, true) RETURNING * INTO u;
	INSERT INTO organizations (name) VALUES (p_organization_name) RETURNING * INTO o;
	INSERT INTO memberships (user_id, organization_id, role) VALUES (u.id, o.id, 'OWNER');
	RETURN QUERY SELECT u.id, u.email, u.name, u.is_operator, steward_rfc3339(u.created_at),
		o.id, o.name, steward_rfc3339(o.created_at), 'OWNER'::text;
END
$$;

-- A NULL organization name names the organization after the user.
CREATE FUNCTION steward_signup(p_email text, p_name text, p_password_hash text,
			       p_organization_name text)
RETURNS TABLE (user_id uuid, user_email text, user_name text, user_is_operator boolean,
	       user_created_at text, organization_id uuid, organization_name text,
	       organization_created_at text, membership_role text)
LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
DECLARE
	u users%ROWTYPE;
	o organizations%ROWTYPE;
BEGIN
	IF NOT EXISTS (SELECT 1 FROM users) THEN
		RAISE EXCEPTION 'setup is required' USING ERRCODE = 'SW002';
	END IF;
	-- A concurrent signup with the same address waits for the first and
	-- then does nothing, so the race also ends in SW003.
	INSERT INTO users (email, name, password_hash, is_operator)
		VALUES (lower(p_email), p_name, p_password_hash, false)
		ON CONFLICT ((lower(email))) DO NOTHING
		RETURNING * INTO u;
	IF NOT FOUND THEN
		RAISE EXCEPTION 'e-mail address is already registered' USING ERRCODE = 'SW003';
	END IF;
	INSERT INTO organizations (name) VALUES (coalesce(p_organization_name, p_name))
		RETURNING * INTO o;
	INSERT INTO memberships (user_id, organization_id, role) VALUES (u.id, o.id, 'OWNER');
	RETURN QUERY SELECT u.id, u.email, u.name, u.is_operator, steward_rfc3339(u.created_at),
		o.id, o.name, steward_rfc3339(o.created_at), 'OWNER'::text;
END
$$;
