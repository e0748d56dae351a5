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
