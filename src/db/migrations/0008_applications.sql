-- Applications (their table is in 0007) and their volumes.
--
-- An application belongs to an environment (and so to the environment's
-- project) and runs on one server of its organization: the organization's
-- local server when none is named. The checks that a referenced
-- environment or server is the organization's are raised here as SW422 on
-- the API field (never with a client's value in the message).
--
-- Work on the server is recorded as jobs (0007, steward_job_enqueue) in
-- the lifecycle queue, target_type 'application' unless said otherwise:
--   application.start, application.stop, application.restart
--       payload {}: the runner reads the application row.
--   application.delete
--       queued by the statement that deletes the row (the row and its
--       sub-resources are gone at once); payload {"serverId", "name",
--       "volumes": [names of the runtime volumes to remove]}, all the
--       runner needs to remove its containers, images and volumes.
--       Queued start, stop and restart jobs of the application are
--       cancelled in the same statement.
--   volume.delete (target_type 'volume')
--       queued when a volume without a host path is deleted; payload
--       {"applicationId", "serverId", "name"}: the runner removes the
--       runtime's volume (its data) once no container uses it. A host path
--       is never removed.

-- The project of the organization's environment p_env, locked against a
-- concurrent delete; SW422 on environmentId when it is not the
-- organization's.
CREATE FUNCTION steward_application_environment(p_org uuid, p_env uuid) RETURNS uuid
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
	v_project uuid;
BEGIN
	SELECT project_id INTO v_project FROM environments
	WHERE organization_id = p_org AND id = p_env FOR KEY SHARE;
	IF v_project IS NULL THEN
		RAISE EXCEPTION USING ERRCODE = 'SW422', MESSAGE = 'environmentId|does not exist';
	END IF;
	RETURN v_project;
END
$$;

-- The organization's server p_server, or its local server when p_server is
-- NULL; SW422 on serverId when it is not the organization's.
CREATE FUNCTION steward_application_server(p_org uuid, p_server uuid) RETURNS uuid
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
	v_id uuid;
BEGIN
	SELECT id INTO v_id FROM servers
	WHERE organization_id = p_org AND (id = p_server OR (p_server IS NULL AND is_local))
	FOR KEY SHARE;
	IF v_id IS NULL THEN
		RAISE EXCEPTION USING ERRCODE = 'SW422', MESSAGE = 'serverId|does not exist';
	END IF;
	RETURN v_id;
END
$$;

-- ---- volumes ----

-- A named volume mounted into the application's containers at mount_path,
-- or, when host_path is set (operators only, checked by the API), a bind
-- mount of that host directory. The runtime's volume name is derived from
-- the application and the name, so the name cannot change.
CREATE TABLE volumes (
	id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
	organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
	application_id uuid NOT NULL REFERENCES applications (id) ON DELETE CASCADE,
	name text NOT NULL,
	mount_path text NOT NULL,
	host_path text,
	created_at timestamptz NOT NULL DEFAULT now(),
	updated_at timestamptz NOT NULL DEFAULT now(),
	CONSTRAINT volumes_name_key UNIQUE (application_id, name),
	CONSTRAINT volumes_mount_path_key UNIQUE (application_id, mount_path)
);
CREATE INDEX volumes_application_created_idx ON volumes (application_id, created_at, id);

-- Locks the organization's application p_app (so that the volumes of one
-- application are created and changed one after the other) and raises
-- SW409 when another volume than p_id (NULL: any) has the name p_name or
-- the mount path p_mount (either NULL: not checked). false when the
-- application is not the organization's.
CREATE FUNCTION steward_volume_check(p_org uuid, p_app uuid, p_id uuid, p_name text, p_mount text)
RETURNS boolean
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
	PERFORM 1 FROM applications WHERE organization_id = p_org AND id = p_app FOR NO KEY UPDATE;
	IF NOT FOUND THEN
		RETURN false;
	END IF;
	IF p_name IS NOT NULL AND EXISTS (SELECT 1 FROM volumes WHERE application_id = p_app
					  AND name = p_name AND id IS DISTINCT FROM p_id) THEN
		RAISE EXCEPTION USING ERRCODE = 'SW409',
			MESSAGE = 'VOLUME_EXISTS|The application already has a volume of that name.';
	END IF;
	IF p_mount IS NOT NULL AND EXISTS (SELECT 1 FROM volumes WHERE application_id = p_app
					   AND mount_path = p_mount AND id IS DISTINCT FROM p_id) THEN
		RAISE EXCEPTION USING ERRCODE = 'SW409',
			MESSAGE = 'VOLUME_MOUNT_PATH_EXISTS|The application already has a volume mounted at that path.';
	END IF;
	RETURN true;
END
$$;

-- Creates a volume of the organization's application p_app: SW404 when the
-- application is not the organization's, SW409 VOLUME_LIMIT_REACHED when it
-- has p_max volumes already, SW409 as steward_volume_check() says.
CREATE FUNCTION steward_volume_create(p_org uuid, p_app uuid, p_name text, p_mount text,
				      p_host text, p_max integer) RETURNS volumes
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
	v_volume volumes;
BEGIN
	IF NOT steward_volume_check(p_org, p_app, NULL, p_name, p_mount) THEN
		RAISE EXCEPTION USING ERRCODE = 'SW404', MESSAGE = 'application not found';
	END IF;
	IF (SELECT count(*) FROM volumes WHERE application_id = p_app) >= p_max THEN
		RAISE EXCEPTION USING ERRCODE = 'SW409',
			MESSAGE = 'VOLUME_LIMIT_REACHED|The application has the most volumes allowed ('
				  || p_max || '); delete one first.';
	END IF;
	INSERT INTO volumes (organization_id, application_id, name, mount_path, host_path)
	VALUES (p_org, p_app, p_name, p_mount, p_host)
	RETURNING * INTO v_volume;
	RETURN v_volume;
END
$$;

-- Changes the mount path (p_mask's 2nd character '1') and the host path
-- (3rd) of the organization's volume p_id of application p_app. No row when
-- either is not the organization's.
CREATE FUNCTION steward_volume_update(p_org uuid, p_id uuid, p_app uuid, p_mask text,
				      p_mount text, p_host text) RETURNS SETOF volumes
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
	IF NOT steward_volume_check(p_org, p_app, p_id, NULL,
				    CASE WHEN substr(p_mask, 2, 1) = '1' THEN p_mount END) THEN
		RETURN;
	END IF;
	RETURN QUERY
	WITH u AS (UPDATE volumes SET
		mount_path = CASE WHEN substr(p_mask, 2, 1) = '1' THEN p_mount ELSE mount_path END,
		host_path = CASE WHEN substr(p_mask, 3, 1) = '1' THEN p_host ELSE host_path END,
		updated_at = now()
	WHERE organization_id = p_org AND id = p_id AND application_id = p_app
	RETURNING *)
	SELECT * FROM u;
END
$$;
