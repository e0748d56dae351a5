-- Password reset tokens: a secret mailed to the account's address, good
-- once and for a limited time (the ttl is given by stewardd when the token
-- is made). Stored only as the SHA-256 of the secret, like sessions.
--
-- A user has at most one unused token (the partial unique index): a new
-- request replaces the old token, so only the latest mail works. Used
-- tokens stay as history until the user is deleted.

CREATE TABLE password_reset_tokens (
	id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
	user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
	token_hash bytea NOT NULL UNIQUE CHECK (octet_length(token_hash) = 32),
	-- The address the request came from.
	ip text CHECK (char_length(ip) <= 64),
	created_at timestamptz NOT NULL DEFAULT now(),
	expires_at timestamptz NOT NULL,
	used_at timestamptz
);
CREATE UNIQUE INDEX password_reset_tokens_live_key ON password_reset_tokens (user_id)
	WHERE used_at IS NULL;
