-- Servers (what 0007 left out: the agent's address and channel) and managed
-- services (PostgreSQL, MySQL, Redis) with their backups and backup
-- schedules.
--
-- Errors reach the client as in 0007: SW422 'field|sentence', SW409
-- 'CODE|Sentence.', SW404; no message holds a value a client sent.

-- ---- servers ----

-- host: where the agent runs, for people (a hostname or an IP literal,
-- validated by the API); the agent dials in, so nothing connects to it.
-- agent_connected_at: when the agent's channel last came up.
ALTER TABLE servers
	ADD COLUMN host text CHECK (host IS NULL OR host ~ '^[0-9a-z.:-]{1,253}$'),
	ADD COLUMN agent_connected_at timestamptz;

-- The organization's server p_server locked for a change that the local
-- server cannot take (SW409 LOCAL_SERVER with p_why); NULL when it is not
-- the organization's.
CREATE FUNCTION steward_server_remote(p_org uuid, p_server uuid, p_why text) RETURNS servers
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
	v servers;
BEGIN
	SELECT * INTO v FROM servers WHERE organization_id = p_org AND id = p_server FOR UPDATE;
	IF FOUND AND v.is_local THEN
		RAISE EXCEPTION USING ERRCODE = 'SW409', MESSAGE = 'LOCAL_SERVER|The local server is '
			'the control plane''s own host; ' || p_why;
	END IF;
	RETURN v;
END
$$;

-- Sets a server's agent token (its SHA-256 and display prefix): the old one
-- stops working with this commit, and a connected agent holding it is told
-- to hang up (channel "steward_agent", payload "server:<id>"). The local
-- server has no agent: SW409 LOCAL_SERVER. No row: not the organization's.
CREATE FUNCTION steward_server_agent_token_set(p_org uuid, p_server uuid, p_hash bytea,
					       p_prefix text) RETURNS SETOF servers
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
	v servers := steward_server_remote(p_org, p_server, 'it has no agent and no agent token.');
BEGIN
	IF v.id IS NULL THEN
		RETURN;
	END IF;
	UPDATE servers SET agent_token_hash = p_hash, agent_token_prefix = p_prefix,
		agent_token_created_at = now(), updated_at = now()
	WHERE id = p_server RETURNING * INTO v;
	PERFORM pg_notify('steward_agent', 'server:' || p_server);
	RETURN NEXT v;
END
$$;

-- Deletes a server unless it is the local one (SW409 LOCAL_SERVER) or
-- anything is assigned to it (SW409 SERVER_IN_USE: an application or a
-- service; a concurrent assignment is caught by the foreign keys, 23503).
-- No row: not the organization's.
CREATE FUNCTION steward_server_delete(p_org uuid, p_server uuid) RETURNS SETOF servers
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
	v servers := steward_server_remote(p_org, p_server, 'it cannot be deleted.');
BEGIN
	IF v.id IS NULL THEN
		RETURN;
	END IF;
	IF EXISTS (SELECT 1 FROM applications WHERE server_id = p_server)
	   OR EXISTS (SELECT 1 FROM services WHERE server_id = p_server) THEN
		RAISE EXCEPTION USING ERRCODE = 'SW409', MESSAGE = 'SERVER_IN_USE|Applications or '
			'services are assigned to the server; delete them or move them first.';
	END IF;
	DELETE FROM servers WHERE id = p_server;
	PERFORM pg_notify('steward_agent', 'server:' || p_server);
	RETURN NEXT v;
END
$$;

-- ---- services ----

-- The versions a kind may run, in the order shown; one default per kind.
CREATE TABLE service_versions (
	kind text NOT NULL CHECK (kind IN ('POSTGRESQL', 'MYSQL', 'REDIS')),
	version text NOT NULL CHECK (version ~ '^[0-9]+(\.[0-9]+)?$'),
	is_default boolean NOT NULL DEFAULT false,
	position integer NOT NULL,
	PRIMARY KEY (kind, version)
);
CREATE UNIQUE INDEX service_versions_one_default ON service_versions (kind) WHERE is_default;
INSERT INTO service_versions (kind, version, is_default, position) VALUES
	('POSTGRESQL', '13', false, 1), ('POSTGRESQL', '14', false, 2), ('POSTGRESQL', '15', false, 3),
	('POSTGRESQL', '16', false, 4), ('POSTGRESQL', '17', true, 5),
	('MYSQL', '8.0', false, 1), ('MYSQL', '8.4', true, 2),
	('REDIS', '6', false, 1), ('REDIS', '7', true, 2);

-- A managed service. The id is chosen by the API before the insert: the
-- generated credentials (host, port, database, username, password: one
-- JSON object) are sealed with AES-256-GCM bound to "service:<id>" and
-- stored only sealed. name, kind and server are fixed at creation (the
-- credentials and the data volume depend on them).
--
-- Backups: a schedule (off by default) and a retention count; the runner
-- takes a backup when next_run says and keeps the newest retention_count.
CREATE TABLE services (
	id uuid PRIMARY KEY,
	organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
	project_id uuid NOT NULL REFERENCES projects (id),
	environment_id uuid NOT NULL REFERENCES environments (id),
	server_id uuid NOT NULL REFERENCES servers (id),
	name text NOT NULL,
	description text NOT NULL DEFAULT '',
	kind text NOT NULL,
	version text NOT NULL,
	-- CREATED: never started; RUNNING / STOPPED: its last lifecycle
	-- outcome (the runners move it).
	status text NOT NULL DEFAULT 'CREATED' CHECK (status IN ('CREATED', 'RUNNING', 'STOPPED')),
	credentials_sealed text NOT NULL CHECK (credentials_sealed LIKE 'v1.%'),
	backup_enabled boolean NOT NULL DEFAULT false,
	backup_frequency text NOT NULL DEFAULT 'DAILY'
		CHECK (backup_frequency IN ('HOURLY', 'DAILY', 'WEEKLY')),
	backup_hour_utc integer DEFAULT 3 CHECK (backup_hour_utc BETWEEN 0 AND 23),
	backup_weekday text CHECK (backup_weekday IN ('MONDAY', 'TUESDAY', 'WEDNESDAY', 'THURSDAY',
						      'FRIDAY', 'SATURDAY', 'SUNDAY')),
	backup_retention_count integer NOT NULL DEFAULT 7 CHECK (backup_retention_count BETWEEN 1 AND 100),
	backup_schedule_updated_at timestamptz NOT NULL DEFAULT now(),
	created_at timestamptz NOT NULL DEFAULT now(),
	updated_at timestamptz NOT NULL DEFAULT now(),
	UNIQUE (organization_id, name),
	FOREIGN KEY (kind, version) REFERENCES service_versions (kind, version),
	-- An hour for daily and weekly schedules only, a weekday for weekly only.
	CHECK ((backup_frequency = 'HOURLY') = (backup_hour_utc IS NULL)),
	CHECK ((backup_frequency = 'WEEKLY') = (backup_weekday IS NOT NULL))
);
CREATE INDEX services_org_created_idx ON services (organization_id, created_at, id);
CREATE INDEX services_server_idx ON services (server_id);
CREATE INDEX services_environment_idx ON services (environment_id);

-- A version that is not one of the kind's: SW422 on "version" naming the
-- versions the kind has (the table's text, never the client's).
CREATE FUNCTION steward_service_version_check() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
	IF NOT EXISTS (SELECT 1 FROM service_versions WHERE kind = NEW.kind AND version = NEW.version) THEN
		RAISE EXCEPTION USING ERRCODE = 'SW422', MESSAGE = 'version|must be one of '
			|| (SELECT string_agg(version, ', ' ORDER BY position) FROM service_versions
			    WHERE kind = NEW.kind) || ' for ' || NEW.kind;
	END IF;
	RETURN NEW;
END
$$;
CREATE TRIGGER services_version_check BEFORE INSERT OR UPDATE OF kind, version ON services
	FOR EACH ROW EXECUTE FUNCTION steward_service_version_check();

-- environmentId and serverId are checked, and locked against a concurrent
-- delete, by the functions applications use (0008):
-- steward_application_environment() and steward_application_server().

-- When a backup schedule next runs after p_from (NULL when disabled):
-- HOURLY at minute 0 of every hour, DAILY at p_hour:00 UTC, WEEKLY on
-- p_weekday at p_hour:00 UTC.
CREATE FUNCTION steward_backup_next_run(p_enabled boolean, p_frequency text, p_hour integer,
					p_weekday text, p_from timestamptz) RETURNS timestamptz
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
	v_now timestamp := p_from AT TIME ZONE 'UTC';
	v_next timestamp;
	v_day integer;
BEGIN
	IF NOT p_enabled THEN
		RETURN NULL;
	END IF;
	IF p_frequency = 'HOURLY' THEN
		RETURN (date_trunc('hour', v_now) + interval '1 hour') AT TIME ZONE 'UTC';
	END IF;
	v_next := date_trunc('day', v_now) + make_interval(hours => p_hour);
	IF p_frequency = 'WEEKLY' THEN
		v_day := array_position(ARRAY['MONDAY', 'TUESDAY', 'WEDNESDAY', 'THURSDAY', 'FRIDAY',
					      'SATURDAY', 'SUNDAY'], p_weekday);
		v_next := v_next + make_interval(days => (v_day - extract(isodow FROM v_now)::integer + 7) % 7);
		IF v_next <= v_now THEN
			v_next := v_next + interval '7 days';
		END IF;
	ELSIF v_next <= v_now THEN
		v_next := v_next + interval '1 day';
	END IF;
	RETURN v_next AT TIME ZONE 'UTC';
END
$$;

-- A backup of a service: requested (QUEUED, with its job), taken by the
-- runner (RUNNING, then SUCCEEDED with its size or FAILED with a reason).
CREATE TABLE service_backups (
	id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
	organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
	service_id uuid NOT NULL REFERENCES services (id) ON DELETE CASCADE,
	status text NOT NULL DEFAULT 'QUEUED'
		CHECK (status IN ('QUEUED', 'RUNNING', 'SUCCEEDED', 'FAILED')),
	size_bytes bigint CHECK (size_bytes >= 0),
	error_message text CHECK (char_length(error_message) <= 1000),
	job_id uuid,
	started_at timestamptz,
	finished_at timestamptz,
	created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX service_backups_service_created_idx ON service_backups (service_id, created_at, id);
CREATE UNIQUE INDEX service_backups_one_queued ON service_backups (service_id) WHERE status = 'QUEUED';

-- Requests a backup of the organization's service p_service now: a backup
-- row QUEUED and a lifecycle job "service.backup" (payload {"backupId"})
-- in one transaction. While one is still queued, that one is returned
-- (as the job queue does). No row: not the organization's.
CREATE FUNCTION steward_service_backup_request(p_org uuid, p_service uuid, p_user uuid)
RETURNS SETOF service_backups
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
	v_service services;
	v service_backups;
	v_job jobs;
BEGIN
	SELECT * INTO v_service FROM services
	WHERE organization_id = p_org AND id = p_service FOR UPDATE;
	IF NOT FOUND THEN
		RETURN;
	END IF;
	SELECT * INTO v FROM service_backups WHERE service_id = p_service AND status = 'QUEUED';
	IF FOUND THEN
		RETURN NEXT v;
		RETURN;
	END IF;
	INSERT INTO service_backups (organization_id, service_id)
	VALUES (p_org, p_service) RETURNING * INTO v;
	v_job := steward_job_enqueue(p_org, 'lifecycle', 'service.backup', 'service', p_service,
				     jsonb_build_object('backupId', v.id), p_user);
	UPDATE service_backups SET job_id = v_job.id WHERE id = v.id RETURNING * INTO v;
	RETURN NEXT v;
END
$$;
