-- Deployments, the workers that run them, and webhook deliveries.
--
-- A deployment is a numbered record of one application (number: 1, 2, ...
-- per application). Its life: QUEUED -> BUILDING -> DEPLOYING -> SUCCEEDED,
-- or FAILED (errorMessage) from any in-flight state, or CANCELLED (asked for
-- while QUEUED, BUILDING or DEPLOYING). phase says, within BUILDING and
-- DEPLOYING, where it is (what a crash test kills it at).
--
-- One deployment per application is in flight (BUILDING or DEPLOYING): the
-- partial unique index is the lock on the application id. A deployment
-- requested while another is in flight waits QUEUED behind it.
--
-- A worker is one stewardd process. It holds a session advisory lock on
-- its id for as long as it lives (a dedicated connection), so a worker
-- whose lock can be taken is gone: its in-flight deployments are FAILED
-- "the worker restarted" (steward_deployments_reap), and its jobs go back.

CREATE TABLE workers (
	id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
	hostname text NOT NULL,
	pid integer NOT NULL,
	started_at timestamptz NOT NULL DEFAULT now(),
	last_seen_at timestamptz NOT NULL DEFAULT now()
);

-- The advisory lock key of a worker.
CREATE FUNCTION steward_worker_key(p_worker uuid) RETURNS bigint
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
	SELECT hashtextextended('steward-worker:' || p_worker::text, 0)
$$;

CREATE TABLE deployments (
	id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
	organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
	application_id uuid NOT NULL REFERENCES applications (id) ON DELETE CASCADE,
	number integer NOT NULL CHECK (number >= 1),
	status text NOT NULL DEFAULT 'QUEUED'
		CHECK (status IN ('QUEUED', 'BUILDING', 'DEPLOYING', 'SUCCEEDED', 'FAILED', 'CANCELLED')),
	phase text NOT NULL DEFAULT 'QUEUED'
		CHECK (phase IN ('QUEUED', 'CLONING', 'UNPACKING', 'BUILDING', 'STARTING', 'HEALTH_GATE',
				 'SWITCHING', 'FINISHING', 'DONE')),
	trigger text NOT NULL CHECK (trigger IN ('MANUAL', 'UPLOAD', 'ROLLBACK', 'GIT_PUSH')),
	-- What was asked for: a ref (branch, tag or sha) for git, else NULL.
	requested_ref text,
	-- Read from the clone, never from the request.
	git_ref text,
	commit_sha text CHECK (commit_sha IS NULL OR commit_sha ~ '^[0-9a-f]{40}$'),
	commit_message text,
	commit_author text,
	-- The uploaded archive (a file under the data directory) for UPLOAD.
	archive_path text,
	-- ROLLBACK: the deployment whose image is applied again.
	rollback_of uuid REFERENCES deployments (id) ON DELETE SET NULL,
	image_tag text,
	-- RECREATE or BLUE_GREEN as run (a BLUE_GREEN request may fall back).
	strategy text CHECK (strategy IN ('RECREATE', 'BLUE_GREEN')),
	colour text CHECK (colour IN ('blue', 'green')),
	log_byte_count bigint NOT NULL DEFAULT 0,
	log_tail text NOT NULL DEFAULT '',
	error_message text,
	cancel_requested boolean NOT NULL DEFAULT false,
	worker_id uuid REFERENCES workers (id) ON DELETE SET NULL,
	created_by uuid REFERENCES users (id) ON DELETE SET NULL,
	created_at timestamptz NOT NULL DEFAULT now(),
	started_at timestamptz,
	finished_at timestamptz,
	updated_at timestamptz NOT NULL DEFAULT now(),
	UNIQUE (application_id, number)
);
CREATE UNIQUE INDEX deployments_one_in_flight ON deployments (application_id)
	WHERE status IN ('BUILDING', 'DEPLOYING');
CREATE INDEX deployments_org_created_idx ON deployments (organization_id, created_at, id);
CREATE INDEX deployments_app_created_idx ON deployments (application_id, created_at, id);
CREATE INDEX deployments_in_flight_idx ON deployments (worker_id) WHERE status IN ('BUILDING', 'DEPLOYING');

-- Creates a deployment (QUEUED) of the organization's application and its
-- first job in one transaction: a 'deployment.build' job in the build
-- queue, or for a ROLLBACK a 'deployment.deploy' job in the deploy queue
-- (no build). Raises SW404 when the application is not the organization's;
-- for a ROLLBACK, SW409 NOT_ROLLBACK_TARGET when p_rollback_of is not a
-- SUCCEEDED deployment of the same application with an image.
CREATE FUNCTION steward_deployment_create(p_org uuid, p_app uuid, p_trigger text, p_ref text,
					  p_archive text, p_rollback_of uuid, p_user uuid)
RETURNS deployments
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
	v deployments;
	v_number integer;
	v_image text;
BEGIN
	-- The application's row lock orders numbering.
	PERFORM 1 FROM applications WHERE organization_id = p_org AND id = p_app FOR UPDATE;
	IF NOT FOUND THEN
		RAISE EXCEPTION USING ERRCODE = 'SW404', MESSAGE = 'application';
	END IF;
	IF p_trigger = 'ROLLBACK' THEN
		SELECT image_tag INTO v_image FROM deployments
		WHERE id = p_rollback_of AND application_id = p_app AND status = 'SUCCEEDED'
		  AND image_tag IS NOT NULL;
		IF v_image IS NULL THEN
			RAISE EXCEPTION USING ERRCODE = 'SW409',
				MESSAGE = 'NOT_ROLLBACK_TARGET|Only a succeeded deployment whose image is kept can be '
					  || 'rolled back to.';
		END IF;
	END IF;
	SELECT coalesce(max(number), 0) + 1 INTO v_number FROM deployments WHERE application_id = p_app;
	INSERT INTO deployments (organization_id, application_id, number, trigger, requested_ref,
				 archive_path, rollback_of, image_tag, created_by)
	VALUES (p_org, p_app, v_number, p_trigger, p_ref, p_archive, p_rollback_of, v_image, p_user)
	RETURNING * INTO v;
	IF p_trigger = 'ROLLBACK' THEN
		PERFORM steward_job_enqueue(p_org, 'deploy', 'deployment.deploy', 'deployment', v.id,
					    NULL, p_user);
	ELSE
		PERFORM steward_job_enqueue(p_org, 'build', 'deployment.build', 'deployment', v.id,
					    NULL, p_user);
	END IF;
	RETURN v;
END
$$;

-- Webhook deliveries already acted on (provider, delivery id): a
-- redelivery is acknowledged and does not deploy twice.
CREATE TABLE webhook_deliveries (
	provider text NOT NULL CHECK (provider IN ('github', 'gitlab', 'bitbucket', 'generic')),
	delivery_id text NOT NULL CHECK (char_length(delivery_id) BETWEEN 1 AND 200),
	application_id uuid REFERENCES applications (id) ON DELETE CASCADE,
	deployment_id uuid REFERENCES deployments (id) ON DELETE SET NULL,
	received_at timestamptz NOT NULL DEFAULT now(),
	PRIMARY KEY (provider, delivery_id)
);
CREATE INDEX webhook_deliveries_received_idx ON webhook_deliveries (received_at);
