-- Two-factor authentication (TOTP, RFC 6238): a user's enrolment, their
-- single-use recovery codes, and the challenges that sign-in hands out in
-- place of a session while the second factor is outstanding.
--
-- Nothing here holds a secret a client could present as it is: challenges
-- and recovery codes are stored as SHA-256 only. The TOTP key has to be
-- usable by the server, so it is stored as the key itself (see below).

CREATE TABLE two_factor (
	user_id uuid PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
	-- The shared TOTP key (20 random bytes). Stored as it is for now: the
	-- resources issue introduces the master key and seals secrets like
	-- this one with it.
	secret bytea NOT NULL CHECK (octet_length(secret) BETWEEN 16 AND 64),
	-- NULL while enrolment waits for its first code; set by confirmation.
	-- Re-enrolling replaces a pending row, never an enabled one.
	enabled_at timestamptz,
	-- The newest time step accepted (unix time / 30), -1 for none: a code
	-- is accepted only for a newer step, so each code works once.
	last_used_step bigint NOT NULL DEFAULT -1,
	created_at timestamptz NOT NULL DEFAULT now(),
	updated_at timestamptz NOT NULL DEFAULT now()
);

-- Disabling deletes the enrolment and, through the cascade, these.
CREATE TABLE two_factor_recovery_codes (
	id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
	user_id uuid NOT NULL REFERENCES two_factor (user_id) ON DELETE CASCADE,
	-- SHA-256 of "<user id>:<code in normal form>".
	code_hash bytea NOT NULL CHECK (octet_length(code_hash) = 32),
	created_at timestamptz NOT NULL DEFAULT now(),
	used_at timestamptz,
	UNIQUE (user_id, code_hash)
);

-- A sign-in that passed the password and waits for the second factor.
-- Live while unused, unexpired and under the failure limit; verification
-- consumes it (used_at) whatever it issues.
CREATE TABLE two_factor_challenges (
	id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
	user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
	token_hash bytea NOT NULL UNIQUE CHECK (octet_length(token_hash) = 32),
	failed_attempts integer NOT NULL DEFAULT 0 CHECK (failed_attempts >= 0),
	created_at timestamptz NOT NULL DEFAULT now(),
	expires_at timestamptz NOT NULL,
	used_at timestamptz
);
CREATE INDEX two_factor_challenges_user_idx ON two_factor_challenges (user_id);

-- One attempt at a live challenge, in one transaction. The challenge row
-- is locked first, so attempts at the same challenge run one after the
-- other. Then exactly one of:
--   p_step given (the code matched this step in the caller's check): the
--     enrolment's last_used_step moves to p_step only if it is older, so
--     of two concurrent attempts with the same code one wins;
--   p_recovery_hash given: that unused recovery code is marked used;
--   neither: the code was simply wrong.
-- On success the challenge is consumed; otherwise its failure count grows
-- (at p_max_failures it is dead). Returns one row:
--   outcome: 'ACCEPTED', 'REJECTED' or 'CHALLENGE_INVALID' (not live);
--   remaining: on ACCEPTED the unused recovery codes left, on REJECTED
--     the attempts left on the challenge, else 0;
--   user_id: the challenge's user (NULL on CHALLENGE_INVALID).
CREATE FUNCTION steward_two_factor_attempt(p_challenge uuid, p_max_failures integer,
					    p_step bigint, p_recovery_hash bytea)
RETURNS TABLE (outcome text, remaining bigint, user_id uuid)
LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
DECLARE
	c two_factor_challenges%ROWTYPE;
	ok boolean := false;
BEGIN
	SELECT * INTO c FROM two_factor_challenges
		WHERE id = p_challenge AND used_at IS NULL AND expires_at > now()
		AND failed_attempts < p_max_failures
		FOR UPDATE;
	IF NOT FOUND THEN
		RETURN QUERY SELECT 'CHALLENGE_INVALID'::text, 0::bigint, NULL::uuid;
		RETURN;
	END IF;
	IF p_step IS NOT NULL THEN
		UPDATE two_factor SET last_used_step = p_step, updated_at = now()
			WHERE user_id = c.user_id AND enabled_at IS NOT NULL
			AND last_used_step < p_step;
		ok := FOUND;
	ELSIF p_recovery_hash IS NOT NULL THEN
		UPDATE two_factor_recovery_codes r SET used_at = now()
			FROM two_factor t
			WHERE r.user_id = c.user_id AND r.code_hash = p_recovery_hash
			AND r.used_at IS NULL AND t.user_id = r.user_id AND t.enabled_at IS NOT NULL;
		ok := FOUND;
	END IF;
	IF ok THEN
		UPDATE two_factor_challenges SET used_at = now() WHERE id = c.id;
		RETURN QUERY SELECT 'ACCEPTED'::text,
			(SELECT count(*) FROM two_factor_recovery_codes r
			 WHERE r.user_id = c.user_id AND r.used_at IS NULL),
			c.user_id;
	ELSE
		UPDATE two_factor_challenges SET failed_attempts = failed_attempts + 1
			WHERE id = c.id;
		RETURN QUERY SELECT 'REJECTED'::text,
			greatest(p_max_failures - c.failed_attempts - 1, 0)::bigint, c.user_id;
	END IF;
END
$$;
