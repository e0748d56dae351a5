-- What the deployment pipeline (src/deploy/pipeline.c) keeps beyond 0012.
--
-- port: the port the deployment's version listens on (host networking):
-- the application's port for RECREATE, a free port picked at deploy time
-- for a BLUE_GREEN colour. Caddy's upstream for the application is
-- 127.0.0.1:<port of the serving deployment>, so the runner that puts a
-- version back (below) knows where to route.
--
-- Recovery: whenever a deployment in flight (BUILDING, DEPLOYING) ends
-- FAILED or CANCELLED, whoever ended it (its runner, the job runners'
-- settling, or the reaper after the worker died mid-deploy), one lifecycle
-- job is queued in the same transaction. Its runner removes what the deployment
-- left on the server (its containers, its image unless a rollback or a
-- retained deployment shares it) and puts the serving version back as it
-- was (started again when the application is RUNNING, Caddy routed to it).
-- It is idempotent: after a runner that already cleaned up, it finds
-- nothing to do.

ALTER TABLE deployments ADD COLUMN port integer CHECK (port BETWEEN 1 AND 65535);

CREATE FUNCTION steward_deployment_recover_enqueue() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
	PERFORM steward_job_enqueue(NEW.organization_id, 'lifecycle', 'runtime.recover', 'deployment',
				    NEW.id, NULL, NULL);
	RETURN NULL;
END
$$;

CREATE TRIGGER deployments_recover AFTER UPDATE OF status ON deployments
	FOR EACH ROW
	WHEN (OLD.status IN ('BUILDING', 'DEPLOYING') AND NEW.status IN ('FAILED', 'CANCELLED'))
	EXECUTE FUNCTION steward_deployment_recover_enqueue();
