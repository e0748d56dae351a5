-- Ended agent commands go (issue: the table grew for ever: the metrics
-- loop sends each ONLINE agent a metrics.sample every 15 seconds, and a
-- sample's result is kilobytes). A command ends when it is SUCCEEDED or
-- FAILED (then counted from updated_at) or when it expired unanswered
-- (counted from expires_at: a late answer then finds no row and is
-- dropped). The control plane's own commands (created_by NULL: samples,
-- probes, builds, lifecycle) are read by their waiter at once and kept
-- one hour; a command a user sent (POST /servers/:id/commands) is kept
-- 7 days, so GET /servers/:id/commands/:commandId reads it that long.
-- Their input and output chunks go with them (ON DELETE CASCADE). The
-- metrics writer calls this at start-up and every hour; it answers how
-- many rows went.
CREATE FUNCTION steward_agent_commands_purge(p_now timestamptz DEFAULT now())
RETURNS bigint LANGUAGE sql AS $$
	WITH d AS (
		DELETE FROM agent_commands
		WHERE CASE WHEN status IN ('SUCCEEDED', 'FAILED') THEN updated_at ELSE expires_at END
		      < p_now - CASE WHEN created_by IS NULL THEN interval '1 hour' ELSE interval '7 days' END
		RETURNING 1)
	SELECT count(*) FROM d
$$;
