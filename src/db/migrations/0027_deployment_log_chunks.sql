-- A deployment's log in PostgreSQL as it is written, so any replica reads it
-- whole (GET /deployments/:id/logs), not only the one whose data directory
-- holds the file. The runner stores the bytes its log file gained each time
-- it writes logByteCount (about every second, and at each phase's end): one
-- row per store, `off` the file offset of its first byte, the rows abutting
-- (`off` of the next = `off` + length of this). The file stays the source on
-- its own replica (sent without copying); another replica sends these rows.
-- They go with the deployment.
CREATE TABLE deployment_log_chunks (
	deployment_id uuid NOT NULL REFERENCES deployments (id) ON DELETE CASCADE,
	off bigint NOT NULL CHECK (off >= 0),
	data bytea NOT NULL CHECK (length(data) > 0),
	PRIMARY KEY (deployment_id, off)
);
