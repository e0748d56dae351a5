-- A command's payload at rest is sealed (AES-256-GCM under the master key,
-- src/base/seal.c, bound to "agent-command:<id>"): a container.create
-- carries a container's environment (its secrets), a container.file a
-- password file. The remote driver (src/driver/remote.c) writes the sealed
-- text here and '{}' into payload; only the replica that sends the command
-- to the agent (src/agent/session.c) opens it, in memory, just before the
-- send. The answer (agent_command_result) and the waiter's close
-- (agent_command_close) drop it, as they drop payload.
--
-- payload stays for commands that carry nothing secret (POST
-- /servers/:id/commands, host.facts) and for a command queued by a
-- version before this one: a row with payload_sealed NULL sends payload.
ALTER TABLE agent_commands ADD COLUMN payload_sealed text
	CHECK (payload_sealed IS NULL OR payload_sealed LIKE 'v1.%');
