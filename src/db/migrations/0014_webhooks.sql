-- Inbound webhooks (POST /webhooks/:provider): finding the git sources of
-- a pushed repository, and remembering deliveries so that a redelivery
-- does not deploy twice.

-- The key a repository is matched by, from any URL form git_sources holds
-- (https://host/path, ssh://user@host:port/path, user@host:path,
-- file:///path) or a payload names: the host and the path without a
-- scheme, user, port, leading or trailing slashes or ".git", in lower case
-- ("github.com/acme/shop"). So https://github.com/Acme/Shop.git,
-- git@github.com:acme/shop and ssh://git@github.com:22/acme/shop/ are one
-- repository. Lower-casing the path too can only widen a match, and a
-- wider match admits no one: every candidate's secret must still verify
-- the signature. NULL when the text is none of those forms.
CREATE FUNCTION steward_git_repository_key(p_url text) RETURNS text
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
	m text[];
	v_host text;
	v_path text;
BEGIN
	IF char_length(p_url) > 2048 THEN
		RETURN NULL;
	END IF;
	m := regexp_match(p_url,
		'^[A-Za-z][A-Za-z0-9+.-]*://(?:[^@/?#]*@)?(\[[0-9A-Fa-f:.]*\]|[^:/?#@]*)(?::[0-9]*)?(/[^?#]*)?$');
	IF m IS NOT NULL THEN
		v_host := m[1];
		v_path := coalesce(m[2], '');
	ELSE
		m := regexp_match(p_url, '^(?:[^@/:]+@)?([^@/:]+):([^?#]*)$');
		IF m IS NULL THEN
			RETURN NULL;
		END IF;
		v_host := m[1];
		v_path := m[2];
	END IF;
	v_path := regexp_replace(v_path, '/+$', '');
	v_path := regexp_replace(v_path, '\.git$', '', 'i');
	v_path := regexp_replace(regexp_replace(v_path, '^/+', ''), '/+$', '');
	IF v_path = '' THEN
		RETURN NULL;
	END IF;
	RETURN lower(v_host) || '/' || lower(v_path);
END
$$;

CREATE INDEX git_sources_repository_key_idx
	ON git_sources (provider, steward_git_repository_key(repository_url));

-- Deliveries are remembered per application: a delivery id is chosen by
-- the sender (the generic provider lets anyone pick one), so one
-- organization's ids must never make another's deliveries look like
-- redeliveries. outcome: DEPLOYED, or why it was ignored (PING,
-- NOT_A_PUSH, TAG, OTHER_BRANCH, BRANCH_DELETED, NO_COMMIT); a redelivery
-- answers it again.
DELETE FROM webhook_deliveries WHERE application_id IS NULL;
ALTER TABLE webhook_deliveries
	ALTER COLUMN application_id SET NOT NULL,
	ADD COLUMN outcome text NOT NULL DEFAULT 'DEPLOYED' CHECK (outcome ~ '^[A-Z_]{1,32}$'),
	DROP CONSTRAINT webhook_deliveries_pkey,
	ADD PRIMARY KEY (application_id, provider, delivery_id);
ALTER TABLE webhook_deliveries ALTER COLUMN outcome DROP DEFAULT;

-- Acts on a verified delivery to an application of the organization, in
-- one transaction: records (provider, delivery id) with its outcome and,
-- when p_ref is not NULL (outcome DEPLOYED), creates a GIT_PUSH deployment
-- of p_ref (steward_deployment_create: the deployment and its build job).
-- A delivery already recorded changes nothing and returns the earlier
-- outcome (r_redelivered true) with its deployment as it is now (NULLs
-- when none, or when it was deleted since). Deliveries older than 30 days
-- are forgotten, a few at a time (providers redeliver for days, not
-- months; the generic scheme's timestamps refuse anything older than five
-- minutes anyway). Raises SW404 when the application is gone.
CREATE FUNCTION steward_webhook_delivery(p_provider text, p_delivery text, p_org uuid, p_app uuid,
					 p_ref text, p_outcome text)
RETURNS TABLE (r_redelivered boolean, r_outcome text, r_deployment uuid, r_number integer,
	       r_status text, r_ref text)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
	v_key text;
	v_deployment deployments;
BEGIN
	DELETE FROM webhook_deliveries WHERE ctid IN (
		SELECT ctid FROM webhook_deliveries WHERE received_at < now() - interval '30 days'
		LIMIT 100 FOR UPDATE SKIP LOCKED);
	INSERT INTO webhook_deliveries (provider, delivery_id, application_id, outcome)
	VALUES (p_provider, p_delivery, p_app, p_outcome)
	ON CONFLICT (application_id, provider, delivery_id) DO NOTHING
	RETURNING delivery_id INTO v_key;
	IF v_key IS NULL THEN
		RETURN QUERY
		SELECT true, w.outcome, d.id, d.number, d.status, d.requested_ref
		FROM webhook_deliveries w LEFT JOIN deployments d ON d.id = w.deployment_id
		WHERE w.application_id = p_app AND w.provider = p_provider AND w.delivery_id = p_delivery;
		RETURN;
	END IF;
	IF p_ref IS NULL THEN
		RETURN QUERY SELECT false, p_outcome, NULL::uuid, NULL::integer, NULL::text, NULL::text;
		RETURN;
	END IF;
	v_deployment := steward_deployment_create(p_org, p_app, 'GIT_PUSH', p_ref, NULL, NULL, NULL);
	UPDATE webhook_deliveries SET deployment_id = v_deployment.id
	WHERE application_id = p_app AND provider = p_provider AND delivery_id = p_delivery;
	RETURN QUERY SELECT false, p_outcome, v_deployment.id, v_deployment.number, v_deployment.status,
			    v_deployment.requested_ref;
END
$$;
