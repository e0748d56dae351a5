-- The agent channel's record on a server: what its agent said in its hello
-- and which session of which control plane replica holds it.
--
-- status moves PENDING -> ONLINE with the first hello, and to OFFLINE when
-- the session ends. A replica that dies cannot write OFFLINE, so a read
-- counts an ONLINE server whose last heartbeat is older than three
-- intervals (agent_heartbeat_ms) as OFFLINE (SERVER_STATUS in
-- src/db/statements_servers.c).
-- agent_connection_id names the session that holds the server: a session
-- that ends writes OFFLINE only while it still holds it, so an agent that
-- reconnected (to any replica) is not marked OFFLINE by its old session.
ALTER TABLE servers
	ADD COLUMN agent_version text,
	ADD COLUMN agent_protocol integer,
	ADD COLUMN agent_boot_id text,
	ADD COLUMN agent_host jsonb,
	ADD COLUMN agent_capabilities jsonb,
	ADD COLUMN agent_connection_id text,
	ADD COLUMN agent_heartbeat_ms integer CHECK (agent_heartbeat_ms > 0);

-- ---- commands to a server's agent ----

-- A command is issued on any replica and run by the replica that holds the
-- server's session: the insert notifies steward_agent "command:<server>",
-- the holder sends every pending command of that server (also to an agent
-- that dials again, on any replica, after a restart), and the agent's
-- answer is written here and notified as "result:<id>". A command resent
-- under its id is never run twice: the agent's journal answers it. The
-- columns are the protocol's (docs/agent-protocol.md): kind, payload,
-- expires_at; status QUEUED (not sent yet), SENT, ACKED (the agent
-- journaled and started it), SUCCEEDED, FAILED (error_code, error_message);
-- one past expires_at and not finished reads as EXPIRED.
CREATE TABLE agent_commands (
	id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
	organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
	server_id uuid NOT NULL REFERENCES servers (id) ON DELETE CASCADE,
	kind text NOT NULL CHECK (kind ~ '^[a-z]+(\.[a-z]+)+$'),
	payload jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(payload) = 'object'),
	expires_at timestamptz NOT NULL,
	status text NOT NULL DEFAULT 'QUEUED'
		CHECK (status IN ('QUEUED', 'SENT', 'ACKED', 'SUCCEEDED', 'FAILED')),
	result jsonb,
	error_code text,
	error_message text,
	created_by uuid REFERENCES users (id) ON DELETE SET NULL,
	created_at timestamptz NOT NULL DEFAULT now(),
	updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX agent_commands_pending_idx ON agent_commands (server_id, created_at)
	WHERE status IN ('QUEUED', 'SENT', 'ACKED');

CREATE FUNCTION steward_agent_command_notify() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
	IF TG_OP = 'INSERT' THEN
		PERFORM pg_notify('steward_agent', 'command:' || NEW.server_id);
	ELSIF NEW.status IN ('SUCCEEDED', 'FAILED') AND OLD.status NOT IN ('SUCCEEDED', 'FAILED') THEN
		PERFORM pg_notify('steward_agent', 'result:' || NEW.id);
	END IF;
	RETURN NULL;
END
$$;
CREATE TRIGGER agent_commands_notify AFTER INSERT OR UPDATE OF status ON agent_commands
	FOR EACH ROW EXECUTE FUNCTION steward_agent_command_notify();
