// Minute-row writes for many containers: the metrics loop's one statement
// (sw_db_stmt_metrics_minutes_write, a JSON array of rows through
// jsonb_to_recordset, ON CONFLICT DO NOTHING) with N container series
// (BENCH_CONTAINERS, default 10000) on a scratch PostgreSQL migrated by
// stewardd. Prints, for the first minute (series made on the way) and for
// later minutes (series exist), the time of the statement, and the bytes
// one row takes in its partition (heap and primary key), as markdown; also
// written to bench/results/metrics_minutes.md.
//
//   STEWARDD=build/release/stewardd node bench/metrics_minutes.mjs

import fs from 'node:fs';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as h from '../tests/integration/harness.mjs';
import { benchOrganization } from './bench_world.mjs';

const N = Number(process.env.BENCH_CONTAINERS || 10000);
const MINUTES = Number(process.env.BENCH_MINUTES || 5);
const here = path.dirname(fileURLToPath(import.meta.url));

h.stewarddPath();
const pg = await h.startPostgres();
const { db, sql, org, server, project, env } = await benchOrganization(pg, { METRICS_SAMPLE_INTERVAL_MS: 15000 });
// One application per 10 containers.
await sql(`INSERT INTO applications (organization_id, project_id, environment_id, server_id, name)
	SELECT '${org}', '${project}', '${env}', '${server}', 'app-' || i FROM generate_series(1, ${Math.ceil(N / 10)}) i`);
const apps = (await sql(`SELECT id FROM applications ORDER BY name`)).split('\n');

const minute0 = Math.floor(Date.now() / 60000) * 60000 - MINUTES * 60000;
function rows(bucketMs) {
	const out = [];
	for (let i = 0; i < N; i++) {
		out.push({ serverId: server, applicationId: apps[Math.floor(i / 10)], containerId: (i + 1).toString(16).padStart(64, 'a'),
			bucketMs, samples: 4, cpu_pct_sum: 12.5 * (i % 7), cpu_pct_min: 1.25, cpu_pct_max: 9.5, mem_sum: 4 * 123456789, mem_min: 120000000,
			mem_max: 130000000, mem_limit: 536870912, cpu_usec: 3000000 + i, oom_kills: 0, restarts: 0, net_rx_bytes: 1000 + i, net_tx_bytes: 2000 + i });
	}
	return JSON.stringify(out);
}

// The statement as the loop sends it, read from its C source: its string
// literals and the MINUTE_COLUMNS macro, in order.
const source = fs.readFileSync(path.join(here, '..', 'src', 'db', 'statements_metrics.c'), 'utf8');
const literals = (t) => [...t.matchAll(/"((?:[^"\\]|\\.)*)"|MINUTE_COLUMNS/g)].map((x) => (x[0] === 'MINUTE_COLUMNS' ? columns : x[1].replace(/\\"/g, '"')));
const macro = /#define MINUTE_COLUMNS([\s\S]*?)\n\n/.exec(source)[1];
const columns = [...macro.matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((x) => x[1]).join('');
const body = /\.name = "metrics_minutes_write",\s*\.sql =([\s\S]*?),\s*\.nparams/.exec(source)[1];
const text = literals(body).join('');

const psql = (file) => execFileSync('psql', ['-X', '-q', '-A', '-t', '-v', 'ON_ERROR_STOP=1', '-h', pg.dir, '-p', String(pg.port),
	'-U', 'postgres', '-d', db, '-f', file], { encoding: 'utf8', maxBuffer: 1 << 26 });
const dir = h.makeTempDir('sw-bench-');
const times = [];
let jsonBytes = 0;
for (let k = 0; k < MINUTES; k++) {
	const file = path.join(dir, `rows${k}.json`);
	const json = rows(minute0 + k * 60000);
	jsonBytes = json.length;
	fs.writeFileSync(file, json);
	const qf = path.join(dir, `q${k}.sql`);
	fs.writeFileSync(qf, `\\set rows \`cat ${file}\`\n\\timing on\n${text.replaceAll('$1', ":'rows'")};\n`);
	const out = psql(qf);
	const ms = Number(/Time: ([0-9.]+) ms/.exec(out)[1]);
	const written = Number(out.trim().split('\n')[0]);
	if (written !== N) throw new Error(`minute ${k}: ${written} rows written of ${N}:\n${out}`);
	times.push(ms);
}
const size = Number(await sql(`SELECT sum(pg_table_size(c.oid) + pg_indexes_size(c.oid)) FROM pg_inherits i
	JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent WHERE p.relname = 'metric_minutes'`));
const heap = Number(await sql(`SELECT sum(pg_table_size(c.oid)) FROM pg_inherits i
	JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent WHERE p.relname = 'metric_minutes'`));
const nrows = Number(await sql(`SELECT count(*) FROM metric_minutes`));
const cores = (await import('node:os')).cpus().length;
const report = `# Minute-row writes (bench/metrics_minutes.mjs)

${N} container series, ${MINUTES} minutes, one statement per minute as the metrics loop sends it
(JSON ${(jsonBytes / 1e6).toFixed(1)} MB per minute), scratch PostgreSQL on this machine (${cores} cores).

| | ms |
|---|---|
| first minute (series created) | ${times[0].toFixed(0)} |
| later minutes (median) | ${[...times.slice(1)].sort((a, b) => a - b)[Math.floor((times.length - 1) / 2)].toFixed(0)} |

Stored: ${nrows} rows, ${(size / nrows).toFixed(0)} bytes per row with the primary key (${(heap / nrows).toFixed(0)} heap only).
`;
console.log(report);
fs.mkdirSync(path.join(here, 'results'), { recursive: true });
fs.writeFileSync(path.join(here, 'results', 'metrics_minutes.md'), report);
await h.cleanupAll();
process.exit(0);
