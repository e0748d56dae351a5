-- What an application is configured with: its domains, its environment
-- variables and its git source; and the tokens an organization keeps for
-- its git hosts (the repository picker).
--
-- Secrets never reach this database in the clear: variable values, the
-- deploy key's private half, webhook secrets and git host tokens are sealed
-- by the API (AES-256-GCM, include/steward/seal.h) before they are bound as
-- parameters, each bound to its row by the associated data named beside
-- its column. The columns hold the sealed text ("v1.<key id>.<base64url>").
--
-- Errors raised here use the generic SQLSTATEs of migration 0007 (SW404,
-- SW409 'CODE|sentence', SW422 'field|sentence'); no message holds a value
-- a client sent.

-- A sealed value as seal.h writes it.
CREATE DOMAIN steward_sealed AS text CHECK (VALUE ~ '^v1\.[0-9a-f]{8}\.[A-Za-z0-9_-]+$');

-- Locks an application of the organization against concurrent changes of
-- what hangs off it (so that counting against a limit and inserting are one
-- step), or raises SW404.
CREATE FUNCTION steward_application_lock(p_org uuid, p_app uuid) RETURNS void
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
	PERFORM 1 FROM applications WHERE organization_id = p_org AND id = p_app FOR NO KEY UPDATE;
	IF NOT FOUND THEN
		RAISE EXCEPTION USING ERRCODE = 'SW404', MESSAGE = 'application';
	END IF;
END
$$;

-- ---- domains ----

-- A hostname an application is served under. A verified hostname routes to
-- one application of the whole installation (the partial unique index); an
-- unverified claim holds nothing, so no organization can squat another's
-- name by adding it first: several applications may claim one hostname
-- until one of them proves control. Control of the name is proven once
-- (verified_at) by publishing verification_token, either as the TXT record
-- _steward-challenge.<hostname> or at
-- http://<hostname>/.well-known/steward-challenge/<token>; the token is
-- public by nature (it is published), so it is stored as it is.
CREATE TABLE domains (
	id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
	organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
	application_id uuid NOT NULL REFERENCES applications (id) ON DELETE CASCADE,
	-- Lower-case LDH labels (sw_valid_hostname()).
	hostname text NOT NULL CHECK (hostname ~ '^[a-z0-9][a-z0-9.-]{0,252}$'),
	-- 64 hex digits: SHA-256 of two random UUIDs (244 random bits).
	verification_token text NOT NULL
		DEFAULT encode(sha256(convert_to(gen_random_uuid()::text || gen_random_uuid()::text, 'UTF8')), 'hex')
		CHECK (verification_token ~ '^[0-9a-f]{64}$'),
	verified_at timestamptz,
	verification_method text CHECK (verification_method IN ('DNS', 'HTTP')),
	last_checked_at timestamptz,
	-- Why the last check failed, written by the API (never a client's text).
	last_check_error text,
	created_at timestamptz NOT NULL DEFAULT now(),
	updated_at timestamptz NOT NULL DEFAULT now(),
	CHECK ((verified_at IS NULL) = (verification_method IS NULL)),
	UNIQUE (application_id, hostname)
);
CREATE UNIQUE INDEX domains_verified_hostname ON domains (hostname) WHERE verified_at IS NOT NULL;
CREATE INDEX domains_application_created_idx ON domains (application_id, created_at, id);

-- Adds a domain to an application, at most p_max per application.
CREATE FUNCTION steward_domain_create(p_org uuid, p_app uuid, p_hostname text, p_max integer)
RETURNS domains
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
	v domains;
BEGIN
	PERFORM steward_application_lock(p_org, p_app);
	IF (SELECT count(*) FROM domains WHERE application_id = p_app) >= p_max THEN
		RAISE EXCEPTION USING ERRCODE = 'SW409',
			MESSAGE = 'DOMAIN_LIMIT_REACHED|An application has at most ' || p_max
				  || ' domains; delete one first.';
	END IF;
	IF EXISTS (SELECT 1 FROM domains WHERE hostname = p_hostname AND verified_at IS NOT NULL) THEN
		RAISE EXCEPTION USING ERRCODE = 'SW409',
			MESSAGE = 'DOMAIN_EXISTS|That hostname is verified for another application of this '
				  || 'installation.';
	END IF;
	INSERT INTO domains (organization_id, application_id, hostname)
	VALUES (p_org, p_app, p_hostname) RETURNING * INTO v;
	RETURN v;
END
$$;

-- ---- variables ----

-- An environment variable of an application. value_sealed is bound to
-- "variable:<application id>:<key>"; value_length is the plaintext's
-- length in bytes (what GET shows instead of the value).
CREATE TABLE variables (
	application_id uuid NOT NULL REFERENCES applications (id) ON DELETE CASCADE,
	organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
	key text NOT NULL CHECK (key ~ '^[A-Za-z_][A-Za-z0-9_]{0,127}$'),
	value_sealed steward_sealed NOT NULL,
	value_length integer NOT NULL CHECK (value_length >= 0),
	created_at timestamptz NOT NULL DEFAULT now(),
	updated_at timestamptz NOT NULL DEFAULT now(),
	PRIMARY KEY (application_id, key)
);

-- Sets and unsets variables of an application in one transaction: p_set
-- is a JSON array of {"key", "sealed", "length"}, p_unset a JSON array of
-- keys (an unset key that is not there is no error). Refuses (SW409) a
-- result of more than p_max variables. Returns the variables afterwards,
-- by key.
CREATE FUNCTION steward_variables_apply(p_org uuid, p_app uuid, p_set jsonb, p_unset jsonb,
					p_max integer)
RETURNS TABLE (key text, value_length integer, created_at timestamptz, updated_at timestamptz,
	       created boolean)
LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
DECLARE
	v_created text[];
BEGIN
	PERFORM steward_application_lock(p_org, p_app);
	DELETE FROM variables v
	WHERE v.application_id = p_app
	  AND v.key IN (SELECT jsonb_array_elements_text(coalesce(p_unset, '[]'::jsonb)));
	WITH s AS (
		INSERT INTO variables AS v (application_id, organization_id, key, value_sealed, value_length)
		SELECT p_app, p_org, x.key, x.sealed, x.length
		FROM jsonb_to_recordset(coalesce(p_set, '[]'::jsonb)) AS x(key text, sealed text, length integer)
		ON CONFLICT ON CONSTRAINT variables_pkey DO UPDATE
			SET value_sealed = EXCLUDED.value_sealed, value_length = EXCLUDED.value_length,
			    updated_at = now()
		RETURNING v.key, (v.xmax = 0) AS created)
	SELECT coalesce(array_agg(s.key) FILTER (WHERE s.created), '{}') INTO v_created FROM s;
	IF (SELECT count(*) FROM variables v WHERE v.application_id = p_app) > p_max THEN
		RAISE EXCEPTION USING ERRCODE = 'SW409',
			MESSAGE = 'VARIABLE_LIMIT_REACHED|An application has at most ' || p_max
				  || ' variables; unset some first.';
	END IF;
	RETURN QUERY
		SELECT v.key, v.value_length, v.created_at, v.updated_at, v.key = ANY (v_created)
		FROM variables v WHERE v.application_id = p_app ORDER BY v.key;
END
$$;

-- ---- git sources ----

-- Where an application's source comes from (one per application), with
-- the deploy key the builder clones with (the private half sealed to
-- "deploy-key:<application id>") and the secret webhooks of the
-- repository are signed with (sealed to "webhook-secret:<application id>";
-- the webhook route must read it back to check an HMAC, so it is sealed,
-- not hashed).
CREATE TABLE git_sources (
	id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
	application_id uuid NOT NULL UNIQUE REFERENCES applications (id) ON DELETE CASCADE,
	organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
	repository_url text NOT NULL CHECK (char_length(repository_url) BETWEEN 1 AND 2048),
	branch text NOT NULL DEFAULT 'main' CHECK (char_length(branch) BETWEEN 1 AND 200),
	provider text NOT NULL CHECK (provider IN ('GITHUB', 'GITLAB', 'BITBUCKET', 'GENERIC')),
	deploy_public_key text NOT NULL CHECK (deploy_public_key ~ '^ssh-ed25519 [A-Za-z0-9+/=]+ [!-~]+$'),
	deploy_key_fingerprint text NOT NULL CHECK (deploy_key_fingerprint ~ '^SHA256:[A-Za-z0-9+/]{43}$'),
	deploy_private_key_sealed steward_sealed NOT NULL,
	deploy_key_created_at timestamptz NOT NULL DEFAULT now(),
	webhook_secret_sealed steward_sealed NOT NULL,
	webhook_secret_created_at timestamptz NOT NULL DEFAULT now(),
	created_at timestamptz NOT NULL DEFAULT now(),
	updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX git_sources_org_idx ON git_sources (organization_id);
-- The webhook route finds the sources of a pushed repository.
CREATE INDEX git_sources_repository_idx ON git_sources (provider, repository_url);

-- ---- git credentials ----

-- A token an organization holds for a git host's API (the repository
-- picker; later, cloning over HTTPS). token_sealed is bound to
-- "git-credential:<id>"; token_hint is its last four characters, for
-- recognising it. api_base_url is NULL only for GENERIC (no API).
CREATE TABLE git_credentials (
	id uuid PRIMARY KEY,
	organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
	name text NOT NULL,
	provider text NOT NULL CHECK (provider IN ('GITHUB', 'GITLAB', 'BITBUCKET', 'GENERIC')),
	api_base_url text CHECK (char_length(api_base_url) BETWEEN 1 AND 2048),
	username text CHECK (char_length(username) BETWEEN 1 AND 254),
	token_sealed steward_sealed NOT NULL,
	token_hint text NOT NULL CHECK (token_hint ~ '^[!-~]{4}$'),
	created_by uuid REFERENCES users (id) ON DELETE SET NULL,
	last_used_at timestamptz,
	created_at timestamptz NOT NULL DEFAULT now(),
	updated_at timestamptz NOT NULL DEFAULT now(),
	UNIQUE (organization_id, name),
	CONSTRAINT git_credentials_bitbucket_username CHECK (provider <> 'BITBUCKET' OR username IS NOT NULL),
	CONSTRAINT git_credentials_api_base_url CHECK ((provider = 'GENERIC') = (api_base_url IS NULL))
);
CREATE INDEX git_credentials_org_created_idx ON git_credentials (organization_id, created_at, id);

-- A credential's API base URL when none is given: its provider's public
-- API. Refuses one for GENERIC (it has no API) and a BITBUCKET credential
-- without a user name (Bitbucket takes a token with one).
CREATE FUNCTION steward_git_credential_defaults() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
	IF NEW.provider = 'GENERIC' AND NEW.api_base_url IS NOT NULL THEN
		RAISE EXCEPTION USING ERRCODE = 'SW422',
			MESSAGE = 'apiBaseUrl|must be null for a GENERIC credential, which has no API';
	END IF;
	IF NEW.provider = 'BITBUCKET' AND NEW.username IS NULL THEN
		RAISE EXCEPTION USING ERRCODE = 'SW422',
			MESSAGE = 'username|is required for a BITBUCKET credential';
	END IF;
	NEW.api_base_url := coalesce(NEW.api_base_url, CASE NEW.provider
		WHEN 'GITHUB' THEN 'https://api.github.com'
		WHEN 'GITLAB' THEN 'https://gitlab.com/api/v4'
		WHEN 'BITBUCKET' THEN 'https://api.bitbucket.org/2.0' END);
	RETURN NEW;
END
$$;
CREATE TRIGGER git_credentials_defaults BEFORE INSERT OR UPDATE ON git_credentials
	FOR EACH ROW EXECUTE FUNCTION steward_git_credential_defaults();
