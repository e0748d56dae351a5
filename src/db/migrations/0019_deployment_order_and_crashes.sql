-- Ordering and crash safety of deployments, beyond 0012, 0013 and 0015.
--
-- 1. One application's deployments run one at a time and in number order,
--    whatever their trigger: a deployment job is claimable only while no
--    older deployment of its application still waits QUEUED (with a job to
--    run it). A git deployment asked for before a rollback runs first,
--    although the two wait in different queues.
-- 2. A rollback's deploy job waits in the 'lifecycle' queue (the spec's
--    Limits: start, stop, restart, delete, rollback; concurrency 4). The
--    claim keeps one deployment per application in flight in every queue.
-- 3. FINISHING is the point of no return of a deploy: the new version has
--    passed its health gate and Caddy routes to it; what remains is
--    removing the earlier version's containers, image retention and volume
--    clean-up. A deployment whose worker died in FINISHING is therefore
--    SUCCEEDED (it serves), not FAILED, and a 'runtime.recover' job is
--    queued for it to finish the clean-up (src/deploy/lifecycle.c). Marking
--    it FAILED would make recovery remove the version that serves and try
--    to start one whose container may already be gone.
-- 4. A worker that stops gracefully (SIGTERM) hands a deployment it could
--    not finish within its shutdown window back to the queue instead of
--    failing it: the deployment is QUEUED again (phase QUEUED, no worker),
--    its job QUEUED again, so the next start or another replica runs it.
--    The handler cleaned up what it had started before it returned. A
--    deploy step handed back keeps its image: its deploy job's claim takes
--    a QUEUED deployment that has an image (a rollback's always has one).
--    A worker that was killed still fails its deployments ("the worker
--    restarted while the deployment was <phase>"), as the spec says.
-- 5. A deployment between its build and its deploy step (BUILDING, the
--    build's job done, its deploy job QUEUED) runs no job: the reaper
--    leaves it to that job instead of failing it when its worker is gone.
-- 6. Every end of a deployment wakes the three queues (a deployment of the
--    same application, in any of them, may now be claimable).

-- (2) Rollbacks are created with their deploy job in 'lifecycle'.
CREATE OR REPLACE FUNCTION steward_deployment_create(p_org uuid, p_app uuid, p_trigger text, p_ref text,
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
		PERFORM steward_job_enqueue(p_org, 'lifecycle', 'deployment.deploy', 'deployment', v.id,
					    NULL, p_user);
	ELSE
		PERFORM steward_job_enqueue(p_org, 'build', 'deployment.build', 'deployment', v.id,
					    NULL, p_user);
	END IF;
	RETURN v;
END
$$;

UPDATE jobs j SET queue = 'lifecycle'
FROM deployments d
WHERE j.status = 'QUEUED' AND j.kind = 'deployment.deploy' AND j.queue = 'deploy'
  AND d.id = j.target_id AND d.trigger = 'ROLLBACK' AND d.status = 'QUEUED';

-- (1), (4) The claim of 0013, with the number order and the deploy step of
-- a deployment handed back. p_continuations: only deploy jobs of
-- deployments p_worker already runs (their build done): what a worker
-- draining for a graceful stop may still take, so that a build it finished
-- in its window is also deployed in it.
CREATE FUNCTION steward_job_claim(p_queue text, p_worker uuid, p_continuations boolean)
RETURNS SETOF jobs
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
	v_job jobs;
	v_dep deployments;
	v_locked boolean;
BEGIN
	FOR v_job IN
		SELECT * FROM jobs
		WHERE status = 'QUEUED' AND queue = p_queue AND run_after <= now()
		  AND (NOT p_continuations OR kind = 'deployment.deploy')
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
			IF p_continuations AND NOT (v_dep.status IN ('BUILDING', 'DEPLOYING')
						    AND v_dep.worker_id IS NOT DISTINCT FROM p_worker) THEN
				CONTINUE;
			END IF;
			IF NOT ((v_dep.status = 'QUEUED'
				 AND (v_job.kind = 'deployment.build' OR v_dep.image_tag IS NOT NULL))
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
				CONTINUE;
			END IF;
			-- Behind another deployment of the application in flight,
			-- behind an older one still waiting (number order, whatever
			-- the queue), or behind this deployment's own job still
			-- running (a build that queued its deploy step and has not
			-- ended yet).
			IF EXISTS (SELECT 1 FROM deployments
				   WHERE application_id = v_dep.application_id AND id <> v_dep.id
				     AND status IN ('BUILDING', 'DEPLOYING'))
			   OR EXISTS (SELECT 1 FROM deployments o
				      WHERE o.application_id = v_dep.application_id AND o.number < v_dep.number
					AND o.status = 'QUEUED'
					AND EXISTS (SELECT 1 FROM jobs oj WHERE oj.target_id = o.id
						    AND oj.status IN ('QUEUED', 'RUNNING')))
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

CREATE OR REPLACE FUNCTION steward_job_claim(p_queue text, p_worker uuid) RETURNS SETOF jobs
LANGUAGE sql VOLATILE AS $$
	SELECT * FROM steward_job_claim(p_queue, p_worker, false)
$$;

-- (3) A deployment whose worker died (or stopped) in FINISHING: SUCCEEDED,
-- its application RUNNING, and a recovery queued to finish its clean-up.
-- Returns whether it was one.
CREATE FUNCTION steward_deployment_settle_finishing(p_id uuid) RETURNS boolean
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
	v deployments;
BEGIN
	UPDATE deployments SET status = 'SUCCEEDED', phase = 'DONE', error_message = NULL,
		finished_at = now(), updated_at = now()
	WHERE id = p_id AND status = 'DEPLOYING' AND phase = 'FINISHING'
	RETURNING * INTO v;
	IF v.id IS NULL THEN
		RETURN false;
	END IF;
	UPDATE applications SET status = 'RUNNING', updated_at = now() WHERE id = v.application_id;
	PERFORM steward_job_enqueue(v.organization_id, 'lifecycle', 'runtime.recover', 'deployment', v.id,
				    NULL, NULL);
	RETURN true;
END
$$;

-- (3), (4) 0013's settling of a running job of a worker gone ('restarted')
-- or stopping ('stopped').
CREATE OR REPLACE FUNCTION steward_job_abandon(p_job jobs, p_why text) RETURNS integer
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
	v_n integer := 0;
BEGIN
	IF p_job.kind LIKE 'deployment.%' THEN
		IF steward_deployment_settle_finishing(p_job.target_id) THEN
			UPDATE jobs SET status = 'FAILED', finished_at = now(),
				error_message = 'the worker ' || p_why || ' while the deployment was finishing; '
						|| 'the deployment serves and recovery finishes its clean-up'
			WHERE id = p_job.id;
			RETURN 0;
		END IF;
		IF p_why = 'stopped' THEN
			UPDATE deployments SET status = 'QUEUED', phase = 'QUEUED', worker_id = NULL,
				updated_at = now()
			WHERE id = p_job.target_id AND status IN ('BUILDING', 'DEPLOYING')
			  AND NOT cancel_requested;
			IF FOUND THEN
				UPDATE jobs SET status = 'QUEUED', locked_by = NULL, locked_at = NULL,
					started_at = NULL, run_after = now(),
					error_message = 'the worker stopped; queued again'
				WHERE id = p_job.id;
				PERFORM pg_notify('steward_jobs', p_job.queue);
				RETURN 0;
			END IF;
		END IF;
		UPDATE jobs SET status = 'FAILED', finished_at = now(),
			error_message = 'the worker ' || p_why
		WHERE id = p_job.id;
		UPDATE deployments SET status = 'FAILED', finished_at = now(), updated_at = now(),
			error_message = 'the worker ' || p_why || ' while the deployment was '
					|| steward_phase_words(phase)
		WHERE id = p_job.target_id AND status IN ('BUILDING', 'DEPLOYING');
		GET DIAGNOSTICS v_n = ROW_COUNT;
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

-- (3), (5) 0013's reaper: orphans in FINISHING are settled SUCCEEDED, and
-- a deployment waiting for its queued deploy step is left to it.
CREATE OR REPLACE FUNCTION steward_deployments_reap(p_self uuid) RETURNS integer
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
	v_worker uuid;
	v_job jobs;
	v_id uuid;
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
		DELETE FROM workers WHERE id = v_worker;
	END LOOP;
	FOR v_job IN
		SELECT * FROM jobs j WHERE j.status = 'RUNNING'
		  AND (j.locked_by IS NULL
		       OR NOT EXISTS (SELECT 1 FROM workers w WHERE w.id::text = j.locked_by))
		ORDER BY j.id FOR UPDATE SKIP LOCKED
	LOOP
		v_count := v_count + steward_job_abandon(v_job, 'restarted');
	END LOOP;
	FOR v_id IN
		SELECT id FROM deployments WHERE worker_id IS NULL AND status = 'DEPLOYING'
		  AND phase = 'FINISHING'
	LOOP
		PERFORM steward_deployment_settle_finishing(v_id);
	END LOOP;
	UPDATE deployments d SET status = 'FAILED', finished_at = now(), updated_at = now(),
		error_message = 'the worker restarted while the deployment was '
				|| steward_phase_words(phase)
	WHERE d.worker_id IS NULL AND d.status IN ('BUILDING', 'DEPLOYING')
	  AND NOT (d.status = 'BUILDING'
		   AND EXISTS (SELECT 1 FROM jobs j WHERE j.target_id = d.id AND j.kind = 'deployment.deploy'
			       AND j.status = 'QUEUED')
		   AND NOT EXISTS (SELECT 1 FROM jobs j WHERE j.target_id = d.id AND j.status = 'RUNNING'));
	GET DIAGNOSTICS v_n = ROW_COUNT;
	v_count := v_count + v_n;
	IF v_count > 0 THEN
		UPDATE jobs j SET status = 'CANCELLED', finished_at = now(),
			error_message = 'the deployment failed'
		FROM deployments d
		WHERE j.status = 'QUEUED' AND j.kind = 'deployment.deploy' AND d.id = j.target_id
		  AND d.status = 'FAILED';
	END IF;
	RETURN v_count;
END
$$;

-- (6) Wakes every queue when a deployment ends or is queued again.
CREATE FUNCTION steward_deployment_wake() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
	PERFORM pg_notify('steward_jobs', 'build');
	PERFORM pg_notify('steward_jobs', 'deploy');
	PERFORM pg_notify('steward_jobs', 'lifecycle');
	RETURN NULL;
END
$$;

CREATE TRIGGER deployments_wake AFTER UPDATE OF status ON deployments
	FOR EACH ROW
	WHEN (OLD.status IS DISTINCT FROM NEW.status
	      AND NEW.status IN ('QUEUED', 'SUCCEEDED', 'FAILED', 'CANCELLED'))
	EXECUTE FUNCTION steward_deployment_wake();
