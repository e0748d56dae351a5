-- Organizations: invitations, and the functions that change memberships.
--
-- Every change of who belongs to an organization, and with which role, runs
-- in one function that first locks the organization's row: changes to one
-- organization are serialised, so two owners demoting each other at once
-- cannot leave it without an OWNER, and two invitations of one address
-- cannot both be opened. Each function announces the member whose
-- credentials changed meaning with pg_notify('steward_auth', 'user:<id>')
-- in its transaction, so every stewardd drops the principals it cached.
--
-- Errors raised here carry Steward's own SQLSTATEs (class "SW";
-- src/db/statements_organizations.h names them):
--   SW601  the change would leave the organization without an OWNER
--   SW602  the invited address already belongs to a member
--   SW603  the address already has an open invitation
--   SW604  the invitation is unknown, used, cancelled or expired
--   SW605  the invited address already has an account
--   SW607  the organization has too many open invitations

-- An invitation is stored as the SHA-256 of its token (32 random bytes);
-- the token itself is shown once, to the OWNER who invites. It is open
-- until accepted, cancelled or past expires_at.
CREATE TABLE invitations (
	id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
	organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
	-- Stored lower-case.
	email text NOT NULL CHECK (char_length(email) BETWEEN 3 AND 254),
	role text NOT NULL CHECK (role IN ('OWNER', 'ADMIN', 'MEMBER')),
	token_hash bytea NOT NULL UNIQUE CHECK (octet_length(token_hash) = 32),
	invited_by uuid REFERENCES users (id) ON DELETE SET NULL,
	created_at timestamptz NOT NULL DEFAULT now(),
	expires_at timestamptz NOT NULL,
	accepted_at timestamptz,
	accepted_user_id uuid REFERENCES users (id) ON DELETE SET NULL,
	cancelled_at timestamptz,
	CHECK (accepted_at IS NULL OR cancelled_at IS NULL)
);
CREATE INDEX invitations_open_idx ON invitations (organization_id, created_at)
	WHERE accepted_at IS NULL AND cancelled_at IS NULL;

-- Sessions and tokens of one member in one organization, revoked when the
-- member is removed.
CREATE INDEX api_tokens_user_org_idx ON api_tokens (user_id, organization_id);

-- The start of every change of a membership: locks the organization, and
-- returns the member's role (NULL: not a member). Raises SW601 when the
-- member is the last OWNER and would stop being one (p_role: the new role,
-- NULL for a removal).
CREATE FUNCTION steward_member_lock(p_org uuid, p_user uuid, p_role text) RETURNS text
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
	old text;
BEGIN
	PERFORM 1 FROM organizations o WHERE o.id = p_org FOR UPDATE;
	SELECT m.role INTO old FROM memberships m
		WHERE m.organization_id = p_org AND m.user_id = p_user;
	IF old = 'OWNER' AND p_role IS DISTINCT FROM 'OWNER' AND (SELECT count(*) FROM memberships m
		WHERE m.organization_id = p_org AND m.role = 'OWNER') = 1 THEN
		RAISE EXCEPTION 'the organization would have no owner' USING ERRCODE = 'SW601';
	END IF;
	RETURN old;
END
$$;

-- Changes a member's role. No row: not a member. Returns the role before
-- and the member as it is now.
CREATE FUNCTION steward_member_set_role(p_org uuid, p_user uuid, p_role text)
RETURNS TABLE (previous_role text, user_id uuid, email text, name text, role text,
	       joined_at text)
LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
DECLARE
	old text := steward_member_lock(p_org, p_user, p_role);
BEGIN
	IF old IS NULL THEN
		RETURN;
	END IF;
	IF old <> p_role THEN
		UPDATE memberships m SET role = p_role, updated_at = now()
			WHERE m.organization_id = p_org AND m.user_id = p_user;
		PERFORM pg_notify('steward_auth', 'user:' || p_user);
	END IF;
	RETURN QUERY SELECT old, u.id, u.email, u.name, m.role, steward_rfc3339(m.created_at)
		FROM memberships m JOIN users u ON u.id = m.user_id
		WHERE m.organization_id = p_org AND m.user_id = p_user;
END
$$;

-- Removes a member, and revokes the member's sessions and API tokens of
-- this organization. No row: not a member.
CREATE FUNCTION steward_member_remove(p_org uuid, p_user uuid)
RETURNS TABLE (role text, sessions_revoked bigint, tokens_revoked bigint)
LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
DECLARE
	old text := steward_member_lock(p_org, p_user, NULL);
	s bigint;
	t bigint;
BEGIN
	IF old IS NULL THEN
		RETURN;
	END IF;
	DELETE FROM memberships m WHERE m.organization_id = p_org AND m.user_id = p_user;
	UPDATE sessions x SET revoked_at = now()
		WHERE x.user_id = p_user AND x.organization_id = p_org AND x.revoked_at IS NULL;
	GET DIAGNOSTICS s = ROW_COUNT;
	UPDATE api_tokens x SET revoked_at = now()
		WHERE x.user_id = p_user AND x.organization_id = p_org AND x.revoked_at IS NULL;
	GET DIAGNOSTICS t = ROW_COUNT;
	PERFORM pg_notify('steward_auth', 'user:' || p_user);
	RETURN QUERY SELECT old, s, t;
END
$$;

-- Opens an invitation valid for 7 days. p_email is lower-case.
CREATE FUNCTION steward_invite(p_org uuid, p_email text, p_role text, p_token_hash bytea,
			       p_invited_by uuid)
RETURNS TABLE (id uuid, email text, role text, invited_by uuid, created_at text,
	       expires_at text)
LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
DECLARE
	i invitations%ROWTYPE;
BEGIN
	PERFORM 1 FROM organizations o WHERE o.id = p_org FOR UPDATE;
	IF EXISTS (SELECT 1 FROM memberships m JOIN users u ON u.id = m.user_id
		   WHERE m.organization_id = p_org AND lower(u.email) = p_email) THEN
		RAISE EXCEPTION 'already a member' USING ERRCODE = 'SW602';
	END IF;
	IF EXISTS (SELECT 1 FROM invitations v WHERE v.organization_id = p_org
		   AND v.email = p_email AND v.accepted_at IS NULL AND v.cancelled_at IS NULL
		   AND v.expires_at > now()) THEN
		RAISE EXCEPTION 'already invited' USING ERRCODE = 'SW603';
	END IF;
	IF (SELECT count(*) FROM invitations v WHERE v.organization_id = p_org
	    AND v.accepted_at IS NULL AND v.cancelled_at IS NULL AND v.expires_at > now()) >= 100 THEN
		RAISE EXCEPTION 'too many open invitations' USING ERRCODE = 'SW607';
	END IF;
	INSERT INTO invitations (organization_id, email, role, token_hash, invited_by, expires_at)
		VALUES (p_org, p_email, p_role, p_token_hash, p_invited_by, now() + interval '7 days')
		RETURNING * INTO i;
	RETURN QUERY SELECT i.id, i.email, i.role, i.invited_by, steward_rfc3339(i.created_at),
		steward_rfc3339(i.expires_at);
END
$$;

-- Accepts an open invitation: creates the user with the invited address,
-- the membership with the invited role, and closes the invitation, all or
-- nothing. Of concurrent accepts of one invitation exactly one succeeds.
CREATE FUNCTION steward_accept_invitation(p_token_hash bytea, p_name text, p_password_hash text)
RETURNS TABLE (user_id uuid, organization_id uuid, invitation_id uuid, role text)
LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
DECLARE
	i invitations%ROWTYPE;
	u users%ROWTYPE;
BEGIN
	SELECT * INTO i FROM invitations v WHERE v.token_hash = p_token_hash FOR UPDATE;
	IF NOT FOUND OR i.accepted_at IS NOT NULL OR i.cancelled_at IS NOT NULL
	   OR i.expires_at <= now() THEN
		RAISE EXCEPTION 'invitation is not open' USING ERRCODE = 'SW604';
	END IF;
	INSERT INTO users (email, name, password_hash, is_operator)
		VALUES (i.email, p_name, p_password_hash, false)
		ON CONFLICT ((lower(email))) DO NOTHING
		RETURNING * INTO u;
	IF NOT FOUND THEN
		RAISE EXCEPTION 'e-mail address is already registered' USING ERRCODE = 'SW605';
	END IF;
	INSERT INTO memberships (user_id, organization_id, role)
		VALUES (u.id, i.organization_id, i.role);
	UPDATE invitations v SET accepted_at = now(), accepted_user_id = u.id WHERE v.id = i.id;
	RETURN QUERY SELECT u.id, i.organization_id, i.id, i.role;
END
$$;
