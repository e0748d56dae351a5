-- The job runners' side of the database (src/jobs): registering a worker,
-- claiming a job, settling it, cancelling a deployment, and reaping the
-- work of workers that died.
--
-- Who moves a deployment (0012) between states:
--   QUEUED -> BUILDING      steward_job_claim of its deployment.build job
--   BUILDING -> DEPLOYING   the pipeline as its build ends (queueing the
--                           deploy job in the same statement), or else
--                           steward_job_claim of its deployment.deploy job
--   QUEUED -> DEPLOYING     steward_job_claim of the deploy job of a
--                           ROLLBACK (no build)
--   -> SUCCEEDED            the pipeline, or steward_job_finish of its
--                           deploy job (ok) if the pipeline did not
--   -> FAILED               the pipeline, steward_job_finish (not ok), or
--                           the reaper
--   -> CANCELLED            steward_deployment_cancel (QUEUED, or in flight
--                           with no job running), else the pipeline,
--                           steward_job_finish or steward_job_claim once
--                           cancel_requested is set
-- A deployment enters flight (BUILDING, or DEPLOYING for a rollback) only
-- through the claim: the claim is where the one-in-flight rule is decided
-- (the pipeline setting the same status again changes nothing), and the
-- partial unique index deployments_one_in_flight (0012) is its final
-- arbiter.
--
-- A worker (one stewardd process) holds the session advisory lock
-- steward_worker_key(id) on a connection of its own for its whole life.
-- A worker whose lock can be taken is dead.
--
-- Decisions:
-- - A deployment job of a dead worker is never run again: a deployment
--   half done (a clone, a build, containers half started) is FAILED "the
--   worker restarted while the deployment was <phase>", its job FAILED "the
--   worker restarted". Retrying could run a build twice or race a newer
--   deployment; the user deploys again (or a webhook does).
-- - A lifecycle job (start, stop, restart, delete, ...) of a dead worker
--   goes back to QUEUED once (attempts < 2): these converge the runtime on
--   a state and can be run again. A second death fails it. When the same
--   kind is already queued again for the target, the old one is CANCELLED
--   (superseded).
-- - A worker that stops gracefully settles its running jobs the same way,
--   with "stopped" for "restarted" (steward_job_finish with p_ok false and
--   p_error NULL).
-- - Deployments of one application run in the order of their jobs: a
--   deployment job is claimable only while no other deployment of its
--   application is BUILDING or DEPLOYING. A second deployment asked for
--   while one is in flight waits QUEUED behind it, never 409.
-- - pg_notify('steward_jobs', <queue>) wakes the runners of a queue; a
--   deployment that ends notifies 'build' and 'deploy' (a deployment of the
--   same application may now be claimable); a cancel of a running
--   deployment notifies 'cancel' (each worker then looks for its
--   deployments to stop).

-- Registers a worker and takes its lock for the session's life. The row
-- becomes visible when the lock is already held, so no reaper ever sees a
-- live worker without its lock.
CREATE FUNCTION steward_worker_register(p_hostname text, p_pid integer) RETURNS uuid
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
	v_id uuid := gen_random_uuid();
BEGIN
	PERFORM pg_advisory_lock(steward_worker_key(v_id));
	INSERT INTO workers (id, hostname, pid) VALUES (v_id, left(p_hostname, 255), p_pid);
	RETURN v_id;
END
$$;

-- The words of a phase in a sentence: HEALTH_GATE -> "health gate".
CREATE FUNCTION steward_phase_words(p_phase text) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
	SELECT replace(lower(p_phase), '_', ' ')
$$;

-- Claims the next job of p_queue for worker p_worker, or returns no row.
-- Jobs are taken in order of run_after, then creation, skipping rows other
-- claimers hold (FOR UPDATE SKIP LOCKED). A deployment job is taken only
-- while its deployment waits for it (build: QUEUED; deploy: QUEUED for a
-- ROLLBACK, else BUILDING or DEPLOYING, whichever the build left it in),
-- no other deployment of its application is in flight and no other job of
-- the deployment is running; the claim then marks the deployment BUILDING
-- (phase CLONING,
-- or UNPACKING for an archive) or DEPLOYING (phase STARTING), with the
-- worker and started_at, in the same transaction as the job. A unique
-- violation of deployments_one_in_flight means another claimer won that
-- application: the job is left for later. A deployment job whose
-- deployment no longer waits for it (cancelled, failed, deleted) is
-- CANCELLED on the way; a deploy job of a deployment whose cancel was
-- asked while it waited ends the deployment CANCELLED.
CREATE FUNCTION steward_job_claim(p_queue text, p_worker uuid) RETURNS SETOF jobs
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
	v_job jobs;
	v_dep deployments;
	v_locked boolean;
BEGIN
	FOR v_job IN
		SELECT * FROM jobs
		WHERE status = 'QUEUED' AND queue = p_queue AND run_after <= now()
		ORDER BY run_after, created_at, id
		FOR UPDATE SKIP LOCKED
	LOOP
		IF v_job.kind IN ('deployment.build', 'deployment.deploy') THEN
			-- Never wait on a deployment row: whoever holds it (a cancel,
			-- a finish) decides; the job is looked at again later.
			SELECT * INTO v_dep FROM deployments WHERE id = v_job.target_id
			FOR UPDATE SKIP LOCKED;
			IF NOT FOUND THEN
				SELECT true INTO v_locked FROM deployments WHERE id = v_job.target_id;
				IF v_locked THEN
					CONTINUE;
				END IF;
				UPDATE jobs SET status = 'CANCELLED', finished_at = now(),
					error_message = 'the deployment no longer exists'
				WHERE id = v_job.id;
				CONTINUE;
			END IF;
			IF NOT (v_dep.status = 'QUEUED'
				OR (v_job.kind = 'deployment.deploy'
				    AND v_dep.status IN ('BUILDING', 'DEPLOYING'))) THEN
				UPDATE jobs SET status = 'CANCELLED', finished_at = now(),
					error_message = 'the deployment is ' || lower(v_dep.status)
				WHERE id = v_job.id;
				CONTINUE;
			END IF;
			IF v_dep.cancel_requested THEN
				UPDATE deployments SET status = 'CANCELLED', finished_at = now(), updated_at = now()
				WHERE id = v_dep.id;
				UPDATE jobs SET status = 'CANCELLED', finished_at = now(),
					error_message = 'the deployment was cancelled'
				WHERE id = v_job.id;
				PERFORM pg_notify('steward_jobs', 'build');
				PERFORM pg_notify('steward_jobs', 'deploy');
				CONTINUE;
			END IF;
			-- Behind another deployment of the application in flight, or
			-- behind this deployment's own job still running (a build
			-- that queued its deploy step and has not ended yet).
			IF EXISTS (SELECT 1 FROM deployments
				   WHERE application_id = v_dep.application_id AND id <> v_dep.id
				     AND status IN ('BUILDING', 'DEPLOYING'))
			   OR EXISTS (SELECT 1 FROM jobs WHERE target_id = v_dep.id AND status = 'RUNNING'
				      AND id <> v_job.id) THEN
				CONTINUE;
			END IF;
			BEGIN
				IF v_job.kind = 'deployment.build' THEN
					UPDATE deployments SET status = 'BUILDING',
						phase = CASE WHEN archive_path IS NULL THEN 'CLONING' ELSE 'UNPACKING' END,
						worker_id = p_worker, started_at = now(), updated_at = now()
					WHERE id = v_dep.id;
				ELSE
					UPDATE deployments SET status = 'DEPLOYING', phase = 'STARTING',
						worker_id = p_worker, started_at = coalesce(started_at, now()),
						updated_at = now()
					WHERE id = v_dep.id;
				END IF;
			EXCEPTION WHEN unique_violation THEN
				CONTINUE;
			END;
		END IF;
		UPDATE jobs SET status = 'RUNNING', attempts = attempts + 1, locked_by = p_worker::text,
			locked_at = now(), started_at = now(), error_message = NULL
		WHERE id = v_job.id
		RETURNING * INTO v_job;
		RETURN NEXT v_job;
		RETURN;
	END LOOP;
	RETURN;
END
$$;

-- Settles a running job of a worker that is gone (p_why 'restarted') or
-- stopping (p_why 'stopped'): a deployment job FAILED "the worker <why>"
-- and its deployment, if still in flight, FAILED "the worker <why> while
-- the deployment was <phase>"; any other job back to QUEUED once (attempts
-- < 2; CANCELLED when the same kind is queued again already), else FAILED
-- "the worker <why>". The caller holds the job's row. Returns the number
-- of deployments it failed (0 or 1).
CREATE FUNCTION steward_job_abandon(p_job jobs, p_why text) RETURNS integer
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
	v_n integer := 0;
BEGIN
	IF p_job.kind LIKE 'deployment.%' THEN
		UPDATE jobs SET status = 'FAILED', finished_at = now(),
			error_message = 'the worker ' || p_why
		WHERE id = p_job.id;
		UPDATE deployments SET status = 'FAILED', finished_at = now(), updated_at = now(),
			error_message = 'the worker ' || p_why || ' while the deployment was '
					|| steward_phase_words(phase)
		WHERE id = p_job.target_id AND status IN ('BUILDING', 'DEPLOYING');
		GET DIAGNOSTICS v_n = ROW_COUNT;
		IF v_n > 0 THEN
			PERFORM pg_notify('steward_jobs', 'build');
			PERFORM pg_notify('steward_jobs', 'deploy');
		END IF;
	ELSIF p_job.attempts < 2 THEN
		IF EXISTS (SELECT 1 FROM jobs WHERE target_id = p_job.target_id AND kind = p_job.kind
			   AND status = 'QUEUED') THEN
			UPDATE jobs SET status = 'CANCELLED', finished_at = now(),
				error_message = 'the worker ' || p_why || '; superseded by a newer request'
			WHERE id = p_job.id;
		ELSE
			UPDATE jobs SET status = 'QUEUED', locked_by = NULL, locked_at = NULL,
				started_at = NULL, run_after = now(),
				error_message = 'the worker ' || p_why || '; queued again'
			WHERE id = p_job.id;
			PERFORM pg_notify('steward_jobs', p_job.queue);
		END IF;
	ELSE
		UPDATE jobs SET status = 'FAILED', finished_at = now(),
			error_message = 'the worker ' || p_why
		WHERE id = p_job.id;
	END IF;
	RETURN v_n;
END
$$;

-- Settles a job its runner has finished: p_ok true SUCCEEDED, false FAILED
-- with p_error (error_message) — or, with p_error NULL, the runner was
-- stopped by its worker shutting down (steward_job_abandon 'stopped').
-- A job that is no longer RUNNING (the reaper settled it) is left as it is.
-- For a deployment job whose deployment is still in flight, the
-- deployment is settled too: CANCELLED when its cancel was asked, else
-- FAILED (error_message p_error), else after a build the deploy job is
-- queued unless the pipeline queued it already (the deployment stays in
-- flight, BUILDING or DEPLOYING as the build left it), else after a deploy
-- SUCCEEDED (phase DONE). A deployment the pipeline settled itself is left
-- as it is, and the job follows it (FAILED with its error_message,
-- CANCELLED). Returns the job.
CREATE FUNCTION steward_job_finish(p_job uuid, p_ok boolean, p_error text) RETURNS jobs
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
	v_job jobs;
	v_dep deployments;
	v_status text;
BEGIN
	SELECT * INTO v_job FROM jobs WHERE id = p_job FOR UPDATE;
	IF NOT FOUND OR v_job.status <> 'RUNNING' THEN
		RETURN v_job;
	END IF;
	IF NOT p_ok AND p_error IS NULL THEN
		PERFORM steward_job_abandon(v_job, 'stopped');
		SELECT * INTO v_job FROM jobs WHERE id = p_job;
		RETURN v_job;
	END IF;
	v_status := CASE WHEN p_ok THEN 'SUCCEEDED' ELSE 'FAILED' END;
	IF v_job.kind IN ('deployment.build', 'deployment.deploy') THEN
		SELECT * INTO v_dep FROM deployments WHERE id = v_job.target_id FOR UPDATE;
		IF v_dep.status IN ('BUILDING', 'DEPLOYING') THEN
			IF v_dep.cancel_requested THEN
				UPDATE deployments SET status = 'CANCELLED', finished_at = now(), updated_at = now()
				WHERE id = v_dep.id;
				v_status := 'CANCELLED';
			ELSIF NOT p_ok THEN
				UPDATE deployments SET status = 'FAILED', finished_at = now(), updated_at = now(),
					error_message = p_error
				WHERE id = v_dep.id;
			ELSIF v_job.kind = 'deployment.build' THEN
				-- Unless the pipeline queued it (and maybe a runner took it).
				IF NOT EXISTS (SELECT 1 FROM jobs WHERE target_id = v_dep.id
					       AND kind = 'deployment.deploy'
					       AND status IN ('QUEUED', 'RUNNING')) THEN
					PERFORM steward_job_enqueue(v_dep.organization_id, 'deploy',
								    'deployment.deploy', 'deployment', v_dep.id,
								    NULL, v_job.created_by);
				END IF;
			ELSE
				UPDATE deployments SET status = 'SUCCEEDED', phase = 'DONE', finished_at = now(),
					updated_at = now()
				WHERE id = v_dep.id;
			END IF;
		ELSIF v_dep.status = 'CANCELLED' THEN
			-- Settled by the pipeline: the job says what it says.
			v_status := 'CANCELLED';
		ELSIF v_dep.status = 'FAILED' THEN
			v_status := 'FAILED';
			p_error := coalesce(p_error, v_dep.error_message);
		END IF;
		-- The application's next deployment, or this one's deploy step,
		-- may be claimable now.
		PERFORM pg_notify('steward_jobs', 'deploy');
		IF NOT EXISTS (SELECT 1 FROM deployments WHERE id = v_job.target_id
			       AND status IN ('BUILDING', 'DEPLOYING')) THEN
			PERFORM pg_notify('steward_jobs', 'build');
		END IF;
	END IF;
	UPDATE jobs SET status = v_status, finished_at = now(),
		error_message = CASE WHEN v_status = 'FAILED' THEN p_error
				     WHEN v_status = 'CANCELLED' THEN 'the deployment was cancelled' END
	WHERE id = p_job
	RETURNING * INTO v_job;
	RETURN v_job;
END
$$;

-- Reaps the work of dead workers: for every worker (but p_self, whose own
-- lock is re-entrant for the caller's session) whose lock can be taken,
-- its RUNNING jobs are abandoned ('restarted', see steward_job_abandon)
-- and its row deleted; then every deployment still in flight that names
-- no worker (its worker's row deleted: ON DELETE SET NULL) becomes FAILED
-- "the worker restarted while the deployment was <phase>". The dead worker's
-- lock is held (transaction-level) while it is reaped, so two reapers
-- never reap one worker at once. Returns the number of deployments failed.
CREATE FUNCTION steward_deployments_reap(p_self uuid) RETURNS integer
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
	v_worker uuid;
	v_job jobs;
	v_count integer := 0;
	v_n integer;
BEGIN
	FOR v_worker IN
		SELECT id FROM workers WHERE p_self IS NULL OR id <> p_self ORDER BY started_at, id
	LOOP
		IF NOT pg_try_advisory_xact_lock(steward_worker_key(v_worker)) THEN
			CONTINUE;
		END IF;
		FOR v_job IN
			SELECT * FROM jobs WHERE status = 'RUNNING' AND locked_by = v_worker::text
			ORDER BY id FOR UPDATE
		LOOP
			v_count := v_count + steward_job_abandon(v_job, 'restarted');
		END LOOP;
		-- Its deployments still in flight now name no worker (ON DELETE
		-- SET NULL): failed below with the orphans.
		DELETE FROM workers WHERE id = v_worker;
	END LOOP;
	-- Running jobs whose worker row is gone (deleted above, or by hand).
	FOR v_job IN
		SELECT * FROM jobs j WHERE j.status = 'RUNNING'
		  AND (j.locked_by IS NULL
		       OR NOT EXISTS (SELECT 1 FROM workers w WHERE w.id::text = j.locked_by))
		ORDER BY j.id FOR UPDATE SKIP LOCKED
	LOOP
		v_count := v_count + steward_job_abandon(v_job, 'restarted');
	END LOOP;
	UPDATE deployments SET status = 'FAILED', finished_at = now(), updated_at = now(),
		error_message = 'the worker restarted while the deployment was '
				|| steward_phase_words(phase)
	WHERE worker_id IS NULL AND status IN ('BUILDING', 'DEPLOYING');
	GET DIAGNOSTICS v_n = ROW_COUNT;
	v_count := v_count + v_n;
	IF v_count > 0 THEN
		-- Their queued deploy steps will never be wanted.
		UPDATE jobs j SET status = 'CANCELLED', finished_at = now(),
			error_message = 'the deployment failed'
		FROM deployments d
		WHERE j.status = 'QUEUED' AND j.kind = 'deployment.deploy' AND d.id = j.target_id
		  AND d.status = 'FAILED';
		PERFORM pg_notify('steward_jobs', 'build');
		PERFORM pg_notify('steward_jobs', 'deploy');
	END IF;
	RETURN v_count;
END
$$;

-- Cancels the organization's deployment p_id. QUEUED (or in flight with
-- no job running: between its build and its deploy step): CANCELLED at
-- once with its queued jobs, returned with cancelled true. BUILDING or
-- DEPLOYING with a job running: cancel_requested is set and the workers
-- are told (NOTIFY 'cancel'); the runner stops the job and the deployment
-- ends CANCELLED; returned with cancelled false (asking again is
-- harmless). SW404 when it is not the organization's; SW409
-- DEPLOYMENT_FINISHED when it has ended.
CREATE FUNCTION steward_deployment_cancel(p_org uuid, p_id uuid)
RETURNS TABLE (deployment deployments, cancelled boolean)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
	v deployments;
BEGIN
	SELECT * INTO v FROM deployments WHERE organization_id = p_org AND id = p_id FOR UPDATE;
	IF NOT FOUND THEN
		RAISE EXCEPTION USING ERRCODE = 'SW404', MESSAGE = 'deployment';
	END IF;
	IF v.status NOT IN ('QUEUED', 'BUILDING', 'DEPLOYING') THEN
		RAISE EXCEPTION USING ERRCODE = 'SW409',
			MESSAGE = 'DEPLOYMENT_FINISHED|The deployment has already ended.';
	END IF;
	IF v.status = 'QUEUED'
	   OR NOT EXISTS (SELECT 1 FROM jobs WHERE target_id = v.id AND status = 'RUNNING') THEN
		UPDATE deployments SET status = 'CANCELLED', cancel_requested = true, finished_at = now(),
			updated_at = now()
		WHERE id = v.id
		RETURNING * INTO v;
		UPDATE jobs SET status = 'CANCELLED', finished_at = now(),
			error_message = 'the deployment was cancelled'
		WHERE target_id = v.id AND status = 'QUEUED';
		PERFORM pg_notify('steward_jobs', 'build');
		PERFORM pg_notify('steward_jobs', 'deploy');
		RETURN QUERY SELECT v, true;
		RETURN;
	END IF;
	UPDATE deployments SET cancel_requested = true, updated_at = now() WHERE id = v.id
	RETURNING * INTO v;
	PERFORM pg_notify('steward_jobs', 'cancel');
	RETURN QUERY SELECT v, false;
END
$$;
