-- Sessions, API tokens and the audit log: what the global guard resolves
-- credentials against, and where every security-relevant act is recorded.
--
-- A session or token is stored only as the SHA-256 of its secret; the
-- secret itself exists in the client's cookie or hands only. Revoking
-- keeps the row (revoked_at), so lists and the audit log stay whole.
-- Every revoke is announced with pg_notify('steward_auth', kind:id) inside
-- its transaction so that each stewardd drops what it cached.

CREATE TABLE sessions (
	id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
	user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
	organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
	token_hash bytea NOT NULL UNIQUE CHECK (octet_length(token_hash) = 32),
	-- How the session was established.
	method text NOT NULL CHECK (method IN ('PASSWORD', 'TWO_FACTOR', 'PASSKEY', 'INVITATION',
	                                       'SETUP', 'SIGNUP', 'PASSWORD_RESET')),
	ip text CHECK (char_length(ip) <= 64),
	user_agent text CHECK (char_length(user_agent) <= 256),
	created_at timestamptz NOT NULL DEFAULT now(),
	last_seen_at timestamptz NOT NULL DEFAULT now(),
	expires_at timestamptz NOT NULL,
	revoked_at timestamptz
);
CREATE INDEX sessions_user_live_idx ON sessions (user_id) WHERE revoked_at IS NULL;

CREATE TABLE api_tokens (
	id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
	user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
	organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
	name text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 100),
	-- "st_" and the first characters of the token, shown so a person can
	-- recognise it; not enough to use it.
	prefix text NOT NULL CHECK (char_length(prefix) BETWEEN 4 AND 16),
	token_hash bytea NOT NULL UNIQUE CHECK (octet_length(token_hash) = 32),
	created_at timestamptz NOT NULL DEFAULT now(),
	expires_at timestamptz,
	last_used_at timestamptz,
	revoked_at timestamptz
);
CREATE INDEX api_tokens_user_idx ON api_tokens (user_id);

CREATE TABLE audit_logs (
	id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	organization_id uuid REFERENCES organizations (id) ON DELETE SET NULL,
	actor_user_id uuid REFERENCES users (id) ON DELETE SET NULL,
	-- "auth.sign_in.succeeded", "api_token.revoked", ...
	action text NOT NULL CHECK (action ~ '^[a-z_]+(\.[a-z_]+)+$'),
	target_type text CHECK (char_length(target_type) <= 40),
	target_id text CHECK (char_length(target_id) <= 100),
	ip text CHECK (char_length(ip) <= 64),
	-- Never a secret: only identifiers, names and outcomes.
	metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
	created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX audit_logs_created_idx ON audit_logs (created_at DESC, id DESC);
CREATE INDEX audit_logs_org_idx ON audit_logs (organization_id, created_at DESC);
CREATE INDEX audit_logs_action_idx ON audit_logs (action, created_at DESC);
