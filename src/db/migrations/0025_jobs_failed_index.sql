-- The platform figures of a metric sample (operators) count each queue's
-- FAILED jobs, all of them and those of the last 24 hours: an index of
-- the failed ones alone, so the count does not read every job ever run.
CREATE INDEX jobs_failed_idx ON jobs (queue, finished_at) WHERE status = 'FAILED';
