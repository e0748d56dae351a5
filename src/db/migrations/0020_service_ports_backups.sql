-- Managed services that work: a port of their own on their server, backups
-- that are files on that server (path, size, SHA-256), restores asked for as
-- lifecycle jobs with their audit record, and schedules that run once per
-- due time however many replicas poll.
--
-- Errors reach the client as in 0007: SW422 'field|sentence', SW409
-- 'CODE|Sentence.', SW404.

-- ---- ports ----

-- Every service listens on 127.0.0.1 of its server on its own port, taken
-- from 20000-29999 (below Linux's ephemeral range, where the applications'
-- ports come from) when it is created and kept for its life: the
-- connection answer and the container's command read it from here.
ALTER TABLE services ADD COLUMN port integer CHECK (port BETWEEN 20000 AND 29999);
WITH n AS (SELECT id, row_number() OVER (PARTITION BY server_id ORDER BY created_at, id) AS k
	   FROM services)
UPDATE services s SET port = 19999 + n.k FROM n WHERE n.id = s.id;
ALTER TABLE services ALTER COLUMN port SET NOT NULL;
ALTER TABLE services ADD CONSTRAINT services_server_port_key UNIQUE (server_id, port);

-- The lowest free port of the new service's server. Allocations on one
-- server take turns (a transaction-level advisory lock on the server: the
-- second reads after the first committed), so concurrent creations never
-- pick the same port; the unique key above stands behind it. A server
-- whose 10000 ports are all taken: SW409 NO_SERVICE_PORT.
CREATE FUNCTION steward_service_port_allocate() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
	PERFORM pg_advisory_xact_lock(hashtextextended('steward-service-ports:' || NEW.server_id, 0));
	SELECT min(p) INTO NEW.port FROM generate_series(20000, 29999) p
	WHERE NOT EXISTS (SELECT 1 FROM services WHERE server_id = NEW.server_id AND port = p);
	IF NEW.port IS NULL THEN
		RAISE EXCEPTION USING ERRCODE = 'SW409', MESSAGE = 'NO_SERVICE_PORT|The server has no '
			'free service port left (20000-29999).';
	END IF;
	RETURN NEW;
END
$$;
CREATE TRIGGER services_port_allocate BEFORE INSERT ON services
	FOR EACH ROW EXECUTE FUNCTION steward_service_port_allocate();

-- ---- backups ----

-- file_path: the dump on the service's server (written under a temporary
-- name, fsynced, renamed, and only then the row SUCCEEDED, so a SUCCEEDED
-- row always has its whole file); sha256 of its bytes (hex); scheduled_for:
-- the due time of a scheduled backup (NULL: asked for by someone), one
-- backup per due time.
ALTER TABLE service_backups
	ADD COLUMN file_path text CHECK (file_path ~ '^/'),
	ADD COLUMN sha256 text CHECK (sha256 ~ '^[0-9a-f]{64}$'),
	ADD COLUMN scheduled_for timestamptz,
	ADD CONSTRAINT service_backups_succeeded_has_file
		CHECK (status <> 'SUCCEEDED' OR (file_path IS NOT NULL AND sha256 IS NOT NULL
						  AND size_bytes IS NOT NULL));
CREATE UNIQUE INDEX service_backups_once_per_due ON service_backups (service_id, scheduled_for)
	WHERE scheduled_for IS NOT NULL;

-- Keeps the service's newest backup_retention_count SUCCEEDED backups:
-- deletes the older rows and returns their files, which the caller then
-- removes (a crash in between leaves a file without a row, never a row
-- without its file).
CREATE FUNCTION steward_service_backups_retain(p_service uuid) RETURNS SETOF text
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
	RETURN QUERY
	DELETE FROM service_backups WHERE id IN (
		SELECT id FROM service_backups WHERE service_id = p_service AND status = 'SUCCEEDED'
		ORDER BY created_at DESC, id DESC
		OFFSET (SELECT backup_retention_count FROM services WHERE id = p_service))
	RETURNING file_path;
END
$$;

-- ---- restores ----

-- Asks for the organization's backup p_backup of service p_service to be
-- restored: a lifecycle job "service.restore" (payload {"backupId"}) and
-- the audit record "service.backup.restore_requested" (who, from where,
-- which backup, which job) in one transaction. Only a SUCCEEDED backup can
-- be restored (SW409 BACKUP_NOT_RESTORABLE); while a restore of another
-- backup of the service waits, SW409 RESTORE_PENDING (one of the same
-- backup is answered again). No row: not the organization's.
CREATE FUNCTION steward_service_restore_request(p_org uuid, p_service uuid, p_backup uuid,
						p_user uuid, p_ip text) RETURNS SETOF jobs
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
	v_backup service_backups;
	v_job jobs;
BEGIN
	PERFORM 1 FROM services WHERE organization_id = p_org AND id = p_service FOR UPDATE;
	IF NOT FOUND THEN
		RETURN;
	END IF;
	SELECT * INTO v_backup FROM service_backups WHERE id = p_backup AND service_id = p_service;
	IF NOT FOUND THEN
		RETURN;
	END IF;
	IF v_backup.status <> 'SUCCEEDED' THEN
		RAISE EXCEPTION USING ERRCODE = 'SW409', MESSAGE = 'BACKUP_NOT_RESTORABLE|Only a '
			'backup that succeeded can be restored.';
	END IF;
	SELECT * INTO v_job FROM jobs
	WHERE target_id = p_service AND kind = 'service.restore' AND status = 'QUEUED';
	IF FOUND AND v_job.payload->>'backupId' <> p_backup::text THEN
		RAISE EXCEPTION USING ERRCODE = 'SW409', MESSAGE = 'RESTORE_PENDING|A restore of another '
			'backup of the service is queued already.';
	END IF;
	v_job := steward_job_enqueue(p_org, 'lifecycle', 'service.restore', 'service', p_service,
				     jsonb_build_object('backupId', p_backup), p_user);
	INSERT INTO audit_logs (organization_id, actor_user_id, action, target_type, target_id, ip,
				metadata)
	VALUES (p_org, p_user, 'service.backup.restore_requested', 'service', p_service::text, p_ip,
		jsonb_build_object('backupId', p_backup, 'jobId', v_job.id));
	RETURN NEXT v_job;
END
$$;

-- ---- schedules ----

-- backup_next_run_at: the due time of the service's schedule (NULL: off).
-- While it is on, one lifecycle job "service.backup_due" waits for it
-- (run_after = the due time, payload {"dueAt"}); the job queue's claim
-- (FOR UPDATE SKIP LOCKED) gives it to one runner of one replica.
ALTER TABLE services ADD COLUMN backup_next_run_at timestamptz;

-- Sets the service's next due time from its schedule, after p_from, and
-- the job that waits for it (moved, or cancelled when the schedule is off).
CREATE FUNCTION steward_service_schedule_arm(p_service uuid, p_from timestamptz) RETURNS void
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
	v services;
	v_job jobs;
BEGIN
	UPDATE services SET backup_next_run_at = steward_backup_next_run(backup_enabled,
		backup_frequency, backup_hour_utc, backup_weekday, p_from)
	WHERE id = p_service RETURNING * INTO v;
	IF v.backup_next_run_at IS NULL THEN
		UPDATE jobs SET status = 'CANCELLED', finished_at = now(),
			error_message = 'The backup schedule was turned off.'
		WHERE target_id = p_service AND kind = 'service.backup_due' AND status = 'QUEUED';
		RETURN;
	END IF;
	v_job := steward_job_enqueue(v.organization_id, 'lifecycle', 'service.backup_due', 'service',
				     p_service, jsonb_build_object('dueAt', v.backup_next_run_at), NULL);
	UPDATE jobs SET run_after = v.backup_next_run_at,
		payload = jsonb_build_object('dueAt', v.backup_next_run_at)
	WHERE id = v_job.id;
END
$$;

-- The schedule's due time p_due came (the "service.backup_due" job):
-- when it is still the service's due time, a backup row (scheduled_for
-- p_due) and its "service.backup" job, and the next due time armed, in
-- one transaction. Anything else (the schedule changed, the due time was
-- taken already, the service is gone) does nothing: each due time gives
-- one backup. Returns the backup (none when nothing was done). A backup
-- still queued from before is left to run for this due time.
CREATE FUNCTION steward_service_backup_due(p_service uuid, p_due timestamptz)
RETURNS SETOF service_backups
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
	v_service services;
	v service_backups;
	v_job jobs;
BEGIN
	SELECT * INTO v_service FROM services WHERE id = p_service FOR UPDATE;
	IF NOT FOUND OR v_service.backup_next_run_at IS DISTINCT FROM p_due THEN
		RETURN;
	END IF;
	PERFORM steward_service_schedule_arm(p_service, greatest(now(), p_due));
	IF EXISTS (SELECT 1 FROM service_backups WHERE service_id = p_service AND status = 'QUEUED') THEN
		RETURN;
	END IF;
	INSERT INTO service_backups (organization_id, service_id, scheduled_for)
	VALUES (v_service.organization_id, p_service, p_due)
	ON CONFLICT (service_id, scheduled_for) WHERE scheduled_for IS NOT NULL DO NOTHING
	RETURNING * INTO v;
	IF v.id IS NULL THEN
		RETURN;
	END IF;
	v_job := steward_job_enqueue(v_service.organization_id, 'lifecycle', 'service.backup',
				     'service', p_service, jsonb_build_object('backupId', v.id), NULL);
	UPDATE service_backups SET job_id = v_job.id WHERE id = v.id RETURNING * INTO v;
	RETURN NEXT v;
END
$$;

-- Replaces the organization's service's schedule and arms its next due
-- time (the job that waits for it). No row: not the organization's.
CREATE FUNCTION steward_service_schedule_set(p_org uuid, p_service uuid, p_enabled boolean,
					     p_frequency text, p_hour integer, p_weekday text,
					     p_retention integer) RETURNS SETOF services
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
	v services;
BEGIN
	UPDATE services SET backup_enabled = p_enabled, backup_frequency = p_frequency,
		backup_hour_utc = p_hour, backup_weekday = p_weekday,
		backup_retention_count = p_retention, backup_schedule_updated_at = now()
	WHERE organization_id = p_org AND id = p_service RETURNING * INTO v;
	IF NOT FOUND THEN
		RETURN;
	END IF;
	PERFORM steward_service_schedule_arm(p_service, now());
	RETURN QUERY SELECT * FROM services WHERE id = p_service;
END
$$;

-- Schedules turned on before this migration start waiting now.
SELECT steward_service_schedule_arm(id, now()) FROM services WHERE backup_enabled;

-- A backup whose job ends without the runner settling it (its worker died
-- twice, or the job was cancelled) ends FAILED with the job's reason: no
-- backup stays QUEUED or RUNNING for ever, and none becomes SUCCEEDED but
-- by the runner, after its file is whole (renamed and fsynced).
CREATE FUNCTION steward_service_backup_job_ended() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
	UPDATE service_backups SET status = 'FAILED',
		error_message = left(coalesce(NEW.error_message, 'The backup''s job ended ('
					      || lower(NEW.status) || ').'), 1000),
		started_at = coalesce(started_at, now()), finished_at = now()
	WHERE job_id = NEW.id AND status IN ('QUEUED', 'RUNNING');
	RETURN NULL;
END
$$;
CREATE TRIGGER jobs_service_backup_ended AFTER UPDATE OF status ON jobs
	FOR EACH ROW WHEN (NEW.kind = 'service.backup' AND NEW.status IN ('FAILED', 'CANCELLED')
			   AND OLD.status IS DISTINCT FROM NEW.status)
	EXECUTE FUNCTION steward_service_backup_job_ended();
