-- A command's streams between the replica whose job issued it and the
-- replica whose session holds the agent (docs/agent-protocol.md, *input*
-- and *progress*): PostgreSQL stays the only shared state.
--
-- agent_command_input: the chunks of a command's input (an image build's
-- context, base64), inserted by the job no further ahead than a window past
-- what the agent has taken (input_taken, from its acks); the session sends
-- each once (sent) and deletes those the agent has taken.
-- agent_command_output: the agent's progress chunks, in seq order; a chunk
-- resent under the same seq is dropped by the key. Both go with the
-- command's close.
ALTER TABLE agent_commands ADD COLUMN input_taken bigint NOT NULL DEFAULT 0 CHECK (input_taken >= 0);

CREATE TABLE agent_command_input (
	command_id uuid NOT NULL REFERENCES agent_commands (id) ON DELETE CASCADE,
	seq bigint NOT NULL CHECK (seq >= 0),
	data text NOT NULL,
	last boolean NOT NULL DEFAULT false,
	sent boolean NOT NULL DEFAULT false,
	PRIMARY KEY (command_id, seq)
);

CREATE TABLE agent_command_output (
	command_id uuid NOT NULL REFERENCES agent_commands (id) ON DELETE CASCADE,
	seq bigint NOT NULL CHECK (seq >= 0),
	stream text NOT NULL CHECK (stream IN ('stdout', 'stderr', 'log')),
	data text NOT NULL,
	PRIMARY KEY (command_id, seq)
);
