-- Resources: plans and subscriptions (quotas), projects and environments,
-- servers, applications, and the job queue that work on a server is
-- recorded in. Later migrations add what hangs off these (domains,
-- variables, volumes, git sources, services, alerts, channels).
--
-- Every organization-owned row carries organization_id, and every statement
-- that reads or changes one names it: another organization's object is
-- simply not found.
--
-- Errors that reach the client are raised with three SQLSTATEs whose
-- message the API answers with as it is (src/api/resource.c), so a message
-- never holds a value a client sent:
--   SW422  MESSAGE 'field|sentence': 422 VALIDATION_FAILED, the sentence
--          as the field's error (e.g. a referenced object that is not the
--          organization's)
--   SW409  MESSAGE 'CODE|sentence': 409 with that code and message
--   SW404  the object (or its parent) is not the organization's: 404

-- Microseconds since the epoch of a timestamp: the first half of a list
-- cursor (query.h).
CREATE FUNCTION steward_us(ts timestamptz) RETURNS bigint
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
	SELECT (extract(epoch FROM $1) * 1000000)::bigint
$$;

CREATE FUNCTION steward_from_us(us bigint) RETURNS timestamptz
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
	SELECT 'epoch'::timestamptz + $1 * interval '1 microsecond'
$$;

-- ---- plans and subscriptions ----

-- A plan's quotas; NULL is no limit. Exactly one plan is the default, the
-- plan of an organization without a subscription row.
CREATE TABLE plans (
	id text PRIMARY KEY CHECK (id ~ '^[a-z][a-z0-9-]{0,31}$'),
	name text NOT NULL,
	description text NOT NULL DEFAULT '',
	max_applications integer CHECK (max_applications >= 0),
	max_servers integer CHECK (max_servers >= 0),
	max_members integer CHECK (max_members >= 1),
	price_cents_monthly integer NOT NULL DEFAULT 0 CHECK (price_cents_monthly >= 0),
	is_default boolean NOT NULL DEFAULT false,
	position integer NOT NULL
);
CREATE UNIQUE INDEX plans_one_default ON plans (is_default) WHERE is_default;
INSERT INTO plans (id, name, description, max_applications, max_servers, max_members,
		   price_cents_monthly, is_default, position) VALUES
	('free', 'Free', 'For trying Steward out and for side projects.', 5, 2, 5, 0, true, 1),
	('team', 'Team', 'For a small team running production applications.', 50, 10, 25, 2900, false, 2),
	('business', 'Business', 'For many applications over many servers.', 500, 100, 250, 19900, false, 3),
	('unlimited', 'Unlimited', 'No quotas: the installation''s own organization, or a grant by an operator.',
	 NULL, NULL, NULL, 0, false, 4);

-- An organization's plan. With the manual billing provider a plan change
-- is a grant by an operator; granted_by records who.
CREATE TABLE subscriptions (
	organization_id uuid PRIMARY KEY REFERENCES organizations (id) ON DELETE CASCADE,
	plan_id text NOT NULL REFERENCES plans (id),
	provider text NOT NULL DEFAULT 'manual' CHECK (provider IN ('manual')),
	status text NOT NULL DEFAULT 'ACTIVE' CHECK (status IN ('ACTIVE', 'CANCELLED')),
	granted_by uuid REFERENCES users (id) ON DELETE SET NULL,
	created_at timestamptz NOT NULL DEFAULT now(),
	updated_at timestamptz NOT NULL DEFAULT now()
);

-- The installation's first organization (made by POST /setup, the
-- operator's own) is on the unlimited plan; every later one starts on the
-- default plan until an operator grants another.
CREATE FUNCTION steward_first_organization_plan() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
	IF NOT EXISTS (SELECT 1 FROM organizations WHERE id <> NEW.id) THEN
		INSERT INTO subscriptions (organization_id, plan_id) VALUES (NEW.id, 'unlimited');
	END IF;
	RETURN NEW;
END
$$;
CREATE TRIGGER organizations_first_plan AFTER INSERT ON organizations
	FOR EACH ROW EXECUTE FUNCTION steward_first_organization_plan();
INSERT INTO subscriptions (organization_id, plan_id)
	SELECT id, 'unlimited' FROM organizations ORDER BY created_at, id LIMIT 1;

-- The plan in force for an organization: its active subscription's, else
-- the default plan.
CREATE FUNCTION steward_plan_of(p_org uuid) RETURNS plans
LANGUAGE sql STABLE AS $$
	SELECT p.* FROM plans p
	WHERE p.id = coalesce((SELECT s.plan_id FROM subscriptions s
				WHERE s.organization_id = p_org AND s.status = 'ACTIVE'),
			       (SELECT d.id FROM plans d WHERE d.is_default))
$$;

-- Raises SW409 QUOTA_EXCEEDED when adding one more p_quota
-- ('applications', 'servers', 'members') would pass the organization's
-- plan. Locks the organization's row first, so that concurrent creations
-- in one organization are counted one after the other and cannot pass the
-- quota together; call it first in the transaction that inserts.
CREATE FUNCTION steward_quota_check(p_org uuid, p_quota text) RETURNS void
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
	v_plan plans;
	v_max integer;
	v_count bigint;
BEGIN
	PERFORM 1 FROM organizations WHERE id = p_org FOR UPDATE;
	v_plan := steward_plan_of(p_org);
	IF p_quota = 'applications' THEN
		v_max := v_plan.max_applications;
		SELECT count(*) INTO v_count FROM applications WHERE organization_id = p_org;
	ELSIF p_quota = 'servers' THEN
		v_max := v_plan.max_servers;
		-- The control plane's own host is not counted.
		SELECT count(*) INTO v_count FROM servers WHERE organization_id = p_org AND NOT is_local;
	ELSIF p_quota = 'members' THEN
		v_max := v_plan.max_members;
		SELECT count(*) INTO v_count FROM memberships WHERE organization_id = p_org;
	ELSE
		RAISE EXCEPTION 'unknown quota %', p_quota;
	END IF;
	IF v_max IS NOT NULL AND v_count >= v_max THEN
		RAISE EXCEPTION USING ERRCODE = 'SW409',
			MESSAGE = 'QUOTA_EXCEEDED|The ' || v_plan.name || ' plan allows ' || v_max || ' '
				  || p_quota || '; an operator can grant a larger plan (PUT /subscription).';
	END IF;
END
$$;

-- ---- projects and environments ----

CREATE TABLE projects (
	id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
	organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
	name text NOT NULL,
	description text NOT NULL DEFAULT '',
	created_at timestamptz NOT NULL DEFAULT now(),
	updated_at timestamptz NOT NULL DEFAULT now(),
	UNIQUE (organization_id, name)
);
CREATE INDEX projects_org_created_idx ON projects (organization_id, created_at, id);

CREATE TABLE environments (
	id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
	organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
	project_id uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
	name text NOT NULL,
	created_at timestamptz NOT NULL DEFAULT now(),
	updated_at timestamptz NOT NULL DEFAULT now(),
	UNIQUE (project_id, name)
);
CREATE INDEX environments_project_created_idx ON environments (project_id, created_at, id);

-- ---- servers ----

-- A server runs an agent that dials back with its token (stored as the
-- SHA-256 only), except the control plane's own host (is_local), which the
-- control plane drives in-process: every organization has exactly one, made
-- with the organization, not counted against the servers quota and never
-- deleted through the API.
CREATE TABLE servers (
	id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
	organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
	name text NOT NULL,
	description text NOT NULL DEFAULT '',
	is_local boolean NOT NULL DEFAULT false,
	-- PENDING: no agent has connected yet; ONLINE / OFFLINE: the agent's
	-- channel is up / was lost. The local server is ONLINE while the
	-- control plane runs.
	status text NOT NULL DEFAULT 'PENDING' CHECK (status IN ('PENDING', 'ONLINE', 'OFFLINE')),
	agent_token_hash bytea UNIQUE CHECK (octet_length(agent_token_hash) = 32),
	agent_token_prefix text,
	agent_token_created_at timestamptz,
	last_seen_at timestamptz,
	created_at timestamptz NOT NULL DEFAULT now(),
	updated_at timestamptz NOT NULL DEFAULT now(),
	UNIQUE (organization_id, name),
	CHECK (NOT is_local OR agent_token_hash IS NULL)
);
CREATE UNIQUE INDEX servers_one_local ON servers (organization_id) WHERE is_local;
CREATE INDEX servers_org_created_idx ON servers (organization_id, created_at, id);

CREATE FUNCTION steward_local_server_create() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
	INSERT INTO servers (organization_id, name, description, is_local, status)
	VALUES (NEW.id, 'local', 'The host the control plane runs on.', true, 'ONLINE');
	RETURN NEW;
END
$$;
CREATE TRIGGER organizations_local_server AFTER INSERT ON organizations
	FOR EACH ROW EXECUTE FUNCTION steward_local_server_create();
INSERT INTO servers (organization_id, name, description, is_local, status)
	SELECT id, 'local', 'The host the control plane runs on.', true, 'ONLINE' FROM organizations;

-- ---- applications ----

CREATE TABLE applications (
	id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
	organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
	project_id uuid NOT NULL REFERENCES projects (id),
	environment_id uuid NOT NULL REFERENCES environments (id),
	server_id uuid NOT NULL REFERENCES servers (id),
	-- A DNS label: also the compose project and container names.
	name text NOT NULL,
	description text NOT NULL DEFAULT '',
	source_kind text NOT NULL DEFAULT 'GIT' CHECK (source_kind IN ('GIT', 'UPLOAD')),
	dockerfile_path text,
	build_context text NOT NULL DEFAULT '.',
	-- exec form (a JSON array of strings), never a shell line; used when
	-- the source has no Dockerfile.
	start_command jsonb CHECK (start_command IS NULL OR jsonb_typeof(start_command) = 'array'),
	port integer NOT NULL DEFAULT 3000 CHECK (port BETWEEN 1 AND 65535),
	health_check_path text NOT NULL DEFAULT '/',
	health_check_expected_status integer NOT NULL DEFAULT 200
		CHECK (health_check_expected_status BETWEEN 100 AND 599),
	health_check_timeout_seconds integer NOT NULL DEFAULT 5
		CHECK (health_check_timeout_seconds BETWEEN 1 AND 300),
	health_check_retries integer NOT NULL DEFAULT 12 CHECK (health_check_retries BETWEEN 1 AND 100),
	deploy_strategy text NOT NULL DEFAULT 'RECREATE' CHECK (deploy_strategy IN ('RECREATE', 'BLUE_GREEN')),
	image_retention_count integer NOT NULL DEFAULT 3 CHECK (image_retention_count BETWEEN 1 AND 50),
	cpu_limit_millicores integer CHECK (cpu_limit_millicores BETWEEN 10 AND 256000),
	memory_limit_mb integer CHECK (memory_limit_mb BETWEEN 16 AND 1048576),
	-- CREATED: never deployed; RUNNING / STOPPED: its last lifecycle
	-- outcome; the deployments issue moves it.
	status text NOT NULL DEFAULT 'CREATED' CHECK (status IN ('CREATED', 'RUNNING', 'STOPPED', 'FAILED')),
	created_at timestamptz NOT NULL DEFAULT now(),
	updated_at timestamptz NOT NULL DEFAULT now(),
	UNIQUE (organization_id, name)
);
CREATE INDEX applications_org_created_idx ON applications (organization_id, created_at, id);
CREATE INDEX applications_environment_idx ON applications (environment_id);
CREATE INDEX applications_server_idx ON applications (server_id);

-- ---- jobs ----

-- Work for a runner, claimed with FOR UPDATE SKIP LOCKED. Queues and their
-- concurrency: build 1, deploy 2, lifecycle 4 (start, stop, restart,
-- delete, rollback, backups). A target has at most one open job of a kind
-- (the partial unique index): asking again while one is queued returns it.
CREATE TABLE jobs (
	id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
	organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
	queue text NOT NULL CHECK (queue IN ('build', 'deploy', 'lifecycle')),
	kind text NOT NULL CHECK (kind ~ '^[a-z]+(\.[a-z_]+)+$'),
	target_type text NOT NULL CHECK (target_type ~ '^[a-z_]+$'),
	target_id uuid NOT NULL,
	payload jsonb NOT NULL DEFAULT '{}'::jsonb,
	status text NOT NULL DEFAULT 'QUEUED'
		CHECK (status IN ('QUEUED', 'RUNNING', 'SUCCEEDED', 'FAILED', 'CANCELLED')),
	attempts integer NOT NULL DEFAULT 0,
	run_after timestamptz NOT NULL DEFAULT now(),
	locked_by text,
	locked_at timestamptz,
	error_message text,
	created_by uuid REFERENCES users (id) ON DELETE SET NULL,
	created_at timestamptz NOT NULL DEFAULT now(),
	started_at timestamptz,
	finished_at timestamptz
);
CREATE INDEX jobs_claim_idx ON jobs (queue, run_after, created_at) WHERE status = 'QUEUED';
CREATE UNIQUE INDEX jobs_one_queued ON jobs (target_id, kind) WHERE status = 'QUEUED';
CREATE INDEX jobs_target_idx ON jobs (target_id, created_at);

-- Queues a job for a target unless one of that kind is already queued, and
-- wakes the runners (channel "steward_jobs", payload: the queue). Returns
-- the job (new or already queued).
CREATE FUNCTION steward_job_enqueue(p_org uuid, p_queue text, p_kind text, p_target_type text,
				    p_target uuid, p_payload jsonb, p_user uuid) RETURNS jobs
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
	v_job jobs;
BEGIN
	INSERT INTO jobs (organization_id, queue, kind, target_type, target_id, payload, created_by)
	VALUES (p_org, p_queue, p_kind, p_target_type, p_target, coalesce(p_payload, '{}'::jsonb), p_user)
	ON CONFLICT (target_id, kind) WHERE status = 'QUEUED' DO NOTHING
	RETURNING * INTO v_job;
	IF v_job.id IS NULL THEN
		SELECT * INTO v_job FROM jobs
		WHERE target_id = p_target AND kind = p_kind AND status = 'QUEUED';
	ELSE
		PERFORM pg_notify('steward_jobs', p_queue);
	END IF;
	RETURN v_job;
END
$$;
