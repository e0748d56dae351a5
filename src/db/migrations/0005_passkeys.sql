-- Passkeys (WebAuthn): the credentials users registered, and the challenges
-- the two ceremonies hand out.
--
-- A passkey row holds no secret: the public key, the public credential id
-- and what the authenticator reported. Challenges are stored as the SHA-256
-- of their bytes, live 5 minutes and are deleted by the request that
-- presents them, whatever the outcome, so each is answered at most once.
-- A pending registration is not a passkey: nothing can sign in with it, and
-- abandoning the ceremony leaves only a challenge that expires.

CREATE TABLE passkeys (
	id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
	user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
	-- The authenticator's handle for the key (WebAuthn §6.5.1: at most
	-- 1023 bytes); unique across the installation, so an assertion names
	-- exactly one passkey and thereby one user.
	credential_id bytea NOT NULL CHECK (octet_length(credential_id) BETWEEN 1 AND 1023),
	-- The COSE_Key as the authenticator sent it, checked at registration.
	public_key bytea NOT NULL CHECK (octet_length(public_key) BETWEEN 1 AND 1024),
	algorithm integer NOT NULL CHECK (algorithm IN (-7, -8, -257)), -- ES256, EdDSA, RS256
	-- Recorded for clone detection, never enforced: synced passkeys
	-- report 0 forever.
	sign_count bigint NOT NULL CHECK (sign_count BETWEEN 0 AND 4294967295),
	-- From the BE flag (fixed for a credential's life) and the BS flag
	-- (may change; updated at each sign-in).
	device_type text NOT NULL CHECK (device_type IN ('singleDevice', 'multiDevice')),
	backed_up boolean NOT NULL,
	name text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 100),
	-- Hints the browser reported (usb, nfc, ble, smart-card, hybrid,
	-- internal), handed back in excludeCredentials.
	transports text[] NOT NULL DEFAULT '{}' CHECK (cardinality(transports) <= 8),
	aaguid uuid NOT NULL,
	attestation_format text NOT NULL CHECK (attestation_format IN ('none', 'packed')),
	created_at timestamptz NOT NULL DEFAULT now(),
	updated_at timestamptz NOT NULL DEFAULT now(),
	last_used_at timestamptz
);
CREATE UNIQUE INDEX passkeys_credential_id_key ON passkeys (credential_id);
CREATE INDEX passkeys_user_idx ON passkeys (user_id, created_at);

-- A registration started by POST /auth/passkeys after the password:
-- consumed by POST /auth/passkeys/confirm of the same user.
CREATE TABLE passkey_registrations (
	challenge_hash bytea PRIMARY KEY CHECK (octet_length(challenge_hash) = 32),
	user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
	created_at timestamptz NOT NULL DEFAULT now(),
	expires_at timestamptz NOT NULL
);
CREATE INDEX passkey_registrations_user_idx ON passkey_registrations (user_id);

-- A sign-in challenge (POST /auth/passkeys/challenge, public): bound to no
-- user, since the authenticator names the account; consumed by
-- POST /auth/passkeys/verify.
CREATE TABLE passkey_challenges (
	challenge_hash bytea PRIMARY KEY CHECK (octet_length(challenge_hash) = 32),
	created_at timestamptz NOT NULL DEFAULT now(),
	expires_at timestamptz NOT NULL
);
CREATE INDEX passkey_challenges_expires_idx ON passkey_challenges (expires_at);
