-- Metric history: per-minute rows and hourly roll-ups of servers' hosts
-- and of applications' containers.
--
-- What is stored re-aggregates correctly: for gauges (CPU %, memory,
-- load, disk) the sum over the samples, their count, min and max; for
-- counters (network bytes, container CPU time, OOM kills, restarts) the
-- delta over the bucket. An hour is the sum of its minutes' sums and
-- counts, the min of mins, the max of maxes, the sum of deltas: never an
-- average of averages. An average is sum / samples, computed when read.
--
-- Both tables are partitioned by day on bucket; retention drops whole
-- partitions (steward_metrics_retention), never deletes rows. Partitions
-- are made ahead by steward_metrics_partitions, which the writer calls at
-- start-up and every hour.
--
-- Idempotence: a minute row is written once per (series, bucket) with ON
-- CONFLICT DO NOTHING, so a restart or a second replica never counts a
-- minute twice; an hour row is recomputed from its minute rows with ON
-- CONFLICT DO UPDATE, so writing it again gives the same row.

-- One series per server host, and per container of an application (the
-- engine's container id: a new container is a new series).
CREATE TABLE metric_series (
	id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	server_id uuid NOT NULL REFERENCES servers (id) ON DELETE CASCADE,
	application_id uuid REFERENCES applications (id) ON DELETE CASCADE,
	container_id text CHECK (container_id ~ '^[0-9a-f]{1,64}$'),
	created_at timestamptz NOT NULL DEFAULT now(),
	CHECK ((application_id IS NULL) = (container_id IS NULL))
);
CREATE UNIQUE INDEX metric_series_key ON metric_series (server_id,
	coalesce(application_id, '00000000-0000-0000-0000-000000000000'::uuid), coalesce(container_id, ''));
CREATE INDEX metric_series_application_idx ON metric_series (application_id) WHERE application_id IS NOT NULL;

-- Columns shared by both resolutions. Host series: cpu_pct is the host's
-- total, mem the used bytes (free(1)'s), mem_limit the total, load1, swap,
-- disk (all data file systems), net the interfaces but loopback.
-- Container series: cpu_pct of one core, mem against mem_limit (NULL: no
-- limit), cpu_usec, net (NULL without eBPF), oom_kills and restarts.
CREATE TABLE metric_minutes (
	series_id bigint NOT NULL REFERENCES metric_series (id) ON DELETE CASCADE,
	bucket timestamptz NOT NULL,
	samples integer NOT NULL CHECK (samples > 0),
	cpu_pct_sum double precision,
	cpu_pct_min double precision,
	cpu_pct_max double precision,
	mem_sum double precision,
	mem_min bigint,
	mem_max bigint,
	mem_limit bigint,
	load1_sum double precision,
	load1_max double precision,
	swap_used_max bigint,
	swap_total bigint,
	disk_used_max bigint,
	disk_total bigint,
	net_rx_bytes bigint,
	net_tx_bytes bigint,
	cpu_usec bigint,
	oom_kills integer,
	restarts integer,
	PRIMARY KEY (series_id, bucket)
) PARTITION BY RANGE (bucket);

CREATE TABLE metric_hours (LIKE metric_minutes INCLUDING DEFAULTS INCLUDING CONSTRAINTS,
	PRIMARY KEY (series_id, bucket),
	FOREIGN KEY (series_id) REFERENCES metric_series (id) ON DELETE CASCADE)
	PARTITION BY RANGE (bucket);

-- The series of a host (p_application and p_container NULL) or of a
-- container, made when first seen.
CREATE FUNCTION steward_metric_series(p_server uuid, p_application uuid, p_container text)
RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
	v_id bigint;
BEGIN
	SELECT id INTO v_id FROM metric_series WHERE server_id = p_server
		AND coalesce(application_id, '00000000-0000-0000-0000-000000000000'::uuid)
		    = coalesce(p_application, '00000000-0000-0000-0000-000000000000'::uuid)
		AND coalesce(container_id, '') = coalesce(p_container, '');
	IF FOUND THEN
		RETURN v_id;
	END IF;
	INSERT INTO metric_series (server_id, application_id, container_id)
		VALUES (p_server, p_application, p_container)
		ON CONFLICT DO NOTHING RETURNING id INTO v_id;
	IF v_id IS NULL THEN -- another writer made it meanwhile
		SELECT id INTO v_id FROM metric_series WHERE server_id = p_server
			AND coalesce(application_id, '00000000-0000-0000-0000-000000000000'::uuid)
			    = coalesce(p_application, '00000000-0000-0000-0000-000000000000'::uuid)
			AND coalesce(container_id, '') = coalesce(p_container, '');
	END IF;
	RETURN v_id;
END
$$;

-- Makes the daily partitions of both tables from p_from to p_to
-- (inclusive); existing ones are left. Names: metric_minutes_pYYYYMMDD.
CREATE FUNCTION steward_metrics_partitions(p_from date, p_to date)
RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
	v_day date;
	v_table text;
	v_made integer := 0;
BEGIN
	v_day := p_from;
	WHILE v_day <= p_to LOOP
		FOREACH v_table IN ARRAY ARRAY['metric_minutes', 'metric_hours'] LOOP
			IF to_regclass(format('%I', v_table || '_p' || to_char(v_day, 'YYYYMMDD'))) IS NULL THEN
				EXECUTE format('CREATE TABLE IF NOT EXISTS %I PARTITION OF %I FOR VALUES FROM (%L) TO (%L)',
					v_table || '_p' || to_char(v_day, 'YYYYMMDD'), v_table,
					(v_day::timestamp AT TIME ZONE 'UTC'), ((v_day + 1)::timestamp AT TIME ZONE 'UTC'));
				v_made := v_made + 1;
			END IF;
		END LOOP;
		v_day := v_day + 1;
	END LOOP;
	RETURN v_made;
END
$$;

-- Drops the partitions whose every row is older than the retention:
-- minute partitions ending at or before now - p_minute_days, hour
-- partitions ending at or before now - p_hour_days. Returns the names
-- dropped. Partitions are found through pg_inherits and their bounds read
-- from the catalog, never guessed from a name.
CREATE FUNCTION steward_metrics_retention(p_minute_days integer, p_hour_days integer,
					  p_now timestamptz DEFAULT now())
RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
	r record;
	v_end timestamptz;
BEGIN
	IF p_minute_days < 1 OR p_hour_days < 1 THEN
		RAISE EXCEPTION 'retention must be at least one day';
	END IF;
	FOR r IN SELECT c.relname, p.relname AS parent,
			pg_get_expr(c.relpartbound, c.oid) AS bound
		 FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
		 JOIN pg_class p ON p.oid = i.inhparent
		 WHERE p.relname IN ('metric_minutes', 'metric_hours')
		 ORDER BY c.relname LOOP
		-- FOR VALUES FROM ('...') TO ('...')
		v_end := substring(r.bound FROM 'TO \(''([^'']+)''\)')::timestamptz;
		IF v_end IS NULL THEN
			CONTINUE;
		END IF;
		IF v_end <= p_now - make_interval(days => CASE WHEN r.parent = 'metric_minutes'
							      THEN p_minute_days ELSE p_hour_days END) THEN
			EXECUTE format('DROP TABLE %I', r.relname);
			RETURN NEXT r.relname;
		END IF;
	END LOOP;
END
$$;

-- Recomputes the hour rows of the hour holding p_hour from its minute
-- rows (for every series that has one): idempotent, as often as wanted.
CREATE FUNCTION steward_metrics_rollup_hour(p_hour timestamptz)
RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
	v_start timestamptz := date_trunc('hour', p_hour, 'UTC');
	v_rows integer;
BEGIN
	INSERT INTO metric_hours (series_id, bucket, samples, cpu_pct_sum, cpu_pct_min, cpu_pct_max,
		mem_sum, mem_min, mem_max, mem_limit, load1_sum, load1_max, swap_used_max, swap_total,
		disk_used_max, disk_total, net_rx_bytes, net_tx_bytes, cpu_usec, oom_kills, restarts)
	SELECT series_id, v_start, sum(samples), sum(cpu_pct_sum), min(cpu_pct_min), max(cpu_pct_max),
		sum(mem_sum), min(mem_min), max(mem_max), max(mem_limit), sum(load1_sum), max(load1_max),
		max(swap_used_max), max(swap_total), max(disk_used_max), max(disk_total),
		sum(net_rx_bytes), sum(net_tx_bytes), sum(cpu_usec), sum(oom_kills), sum(restarts)
	FROM metric_minutes WHERE bucket >= v_start AND bucket < v_start + interval '1 hour'
	GROUP BY series_id
	ON CONFLICT (series_id, bucket) DO UPDATE SET samples = EXCLUDED.samples,
		cpu_pct_sum = EXCLUDED.cpu_pct_sum, cpu_pct_min = EXCLUDED.cpu_pct_min,
		cpu_pct_max = EXCLUDED.cpu_pct_max, mem_sum = EXCLUDED.mem_sum, mem_min = EXCLUDED.mem_min,
		mem_max = EXCLUDED.mem_max, mem_limit = EXCLUDED.mem_limit, load1_sum = EXCLUDED.load1_sum,
		load1_max = EXCLUDED.load1_max, swap_used_max = EXCLUDED.swap_used_max,
		swap_total = EXCLUDED.swap_total, disk_used_max = EXCLUDED.disk_used_max,
		disk_total = EXCLUDED.disk_total, net_rx_bytes = EXCLUDED.net_rx_bytes,
		net_tx_bytes = EXCLUDED.net_tx_bytes, cpu_usec = EXCLUDED.cpu_usec,
		oom_kills = EXCLUDED.oom_kills, restarts = EXCLUDED.restarts;
	GET DIAGNOSTICS v_rows = ROW_COUNT;
	RETURN v_rows;
END
$$;

-- Today's partitions and two days ahead exist from the start.
SELECT steward_metrics_partitions((now() AT TIME ZONE 'UTC')::date - 1, (now() AT TIME ZONE 'UTC')::date + 2);
