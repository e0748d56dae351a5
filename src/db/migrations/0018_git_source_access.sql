-- How a git source is reached: a git credential for private https
-- repositories, and the ssh host key pinned on first use.
--
-- credential_id: the organization's git credential whose token is sent
-- (HTTP Basic) when an https repository asks for one; only for https URLs,
-- only a credential of the source's own organization. A credential in use
-- is not deleted (409 GIT_CREDENTIAL_IN_USE), except by the cascade of its
-- organization's deletion.
--
-- ssh_host_key: "<key type> SHA256:<base64 without padding>" of the ssh
-- server, learned from the first successful fetch (trust on first use) or
-- set by a member; a fetch that meets another key fails. Changing the
-- repository URL forgets it unless the same update sets it.
ALTER TABLE git_sources
	ADD COLUMN credential_id uuid REFERENCES git_credentials (id) ON DELETE SET NULL,
	ADD COLUMN ssh_host_key text
		CHECK (ssh_host_key ~ '^[a-z0-9@.-]{1,64} SHA256:[A-Za-z0-9+/]{43}$'),
	ADD COLUMN ssh_host_key_pinned_at timestamptz;
CREATE INDEX git_sources_credential_idx ON git_sources (credential_id) WHERE credential_id IS NOT NULL;

CREATE FUNCTION steward_git_source_access() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
	IF NEW.credential_id IS NOT NULL THEN
		IF NOT EXISTS (SELECT 1 FROM git_credentials c
			       WHERE c.id = NEW.credential_id AND c.organization_id = NEW.organization_id) THEN
			RAISE EXCEPTION USING ERRCODE = 'SW422',
				MESSAGE = 'credentialId|does not name a git credential of this organization';
		END IF;
		IF NEW.repository_url NOT LIKE 'https://%' THEN
			RAISE EXCEPTION USING ERRCODE = 'SW422',
				MESSAGE = 'credentialId|is only for https repositories: an ssh repository '
					  'is fetched with the deploy key';
		END IF;
	END IF;
	IF TG_OP = 'UPDATE' AND NEW.repository_url IS DISTINCT FROM OLD.repository_url
	   AND NEW.ssh_host_key IS NOT DISTINCT FROM OLD.ssh_host_key THEN
		NEW.ssh_host_key := NULL;
	END IF;
	IF TG_OP = 'INSERT' OR NEW.ssh_host_key IS DISTINCT FROM OLD.ssh_host_key THEN
		NEW.ssh_host_key_pinned_at := CASE WHEN NEW.ssh_host_key IS NULL THEN NULL ELSE now() END;
	END IF;
	RETURN NEW;
END
$$;
CREATE TRIGGER git_sources_access BEFORE INSERT OR UPDATE ON git_sources
	FOR EACH ROW EXECUTE FUNCTION steward_git_source_access();

-- A credential that a git source still uses is not deleted. Only for a
-- DELETE of the credential itself (trigger depth 1): when the organization
-- is deleted, the cascade removes its sources too.
CREATE FUNCTION steward_git_credential_in_use() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
	IF pg_trigger_depth() = 1 AND EXISTS (SELECT 1 FROM git_sources s WHERE s.credential_id = OLD.id) THEN
		RAISE EXCEPTION USING ERRCODE = 'SW409',
			MESSAGE = 'GIT_CREDENTIAL_IN_USE|Git sources still fetch with this credential; '
				  'set their credentialId to another one or null first.';
	END IF;
	RETURN OLD;
END
$$;
CREATE TRIGGER git_credentials_in_use BEFORE DELETE ON git_credentials
	FOR EACH ROW EXECUTE FUNCTION steward_git_credential_in_use();

-- The pin learned by a fetch of p_url: kept only while none is set and
-- the URL is still the one fetched (a member may have pinned one, or
-- changed the URL, meanwhile; their word wins).
CREATE FUNCTION steward_git_source_learn_host_key(p_app uuid, p_url text, p_key text) RETURNS void
LANGUAGE sql VOLATILE AS $$
	UPDATE git_sources SET ssh_host_key = p_key
	WHERE application_id = p_app AND repository_url = p_url AND ssh_host_key IS NULL;
$$;
