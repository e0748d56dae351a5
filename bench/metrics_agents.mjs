#!/usr/bin/env node
// The metrics loop's remote half (bench/METHODOLOGY.md, "Remote samples"):
// BENCH_SAMPLE_AGENTS real steward-agents (one server each, on this host,
// their engine absent: a sample of the host's figures) and one stewardd
// whose loop ticks every BENCH_SAMPLE_INTERVAL_MS. For each tick, from the
// agent_commands rows of metrics.sample: how long the remote half took,
// from its first command's insert to its last answer, and how far apart
// its first and last inserts were. Run it once per build to compare
// (STEWARDD=<binary>): the figures of each run are its own.
//
//   STEWARDD=build-bench/stewardd STEWARD_AGENT=build-bench/steward-agent \
//   node bench/metrics_agents.mjs
//
// Settings: BENCH_SAMPLE_AGENTS (20), BENCH_SAMPLE_INTERVAL_MS (1000),
// BENCH_SAMPLE_SECONDS (20). Every wait is bounded; exits 77 saying why
// when PostgreSQL or a binary is missing.

import fs from 'node:fs';
import { spawn } from 'node:child_process';
import * as h from '../tests/integration/harness.mjs';
import { setup, call, ok } from '../tests/integration/identity.mjs';

const num = (k, d, max) => {
	const v = Number(process.env[k] ?? d);
	if (!Number.isInteger(v) || v < 1 || v > max) { console.error(`${k}: a whole number from 1 to ${max}`); process.exit(2); }
	return v;
};
const AGENTS = num('BENCH_SAMPLE_AGENTS', 20, 500);
const INTERVAL = num('BENCH_SAMPLE_INTERVAL_MS', 1000, 15000);
const SECONDS = num('BENCH_SAMPLE_SECONDS', 20, 600);
if (!process.env.STEWARD_AGENT || !fs.existsSync(process.env.STEWARD_AGENT)) h.skip('STEWARD_AGENT is not set to a built binary');
h.stewarddPath();
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const pg = await h.startPostgres();
const srv = await h.startStewardd({ db: pg, env: { STEWARD_RUNNERS: 'false', STEWARD_LOG_LEVEL: 'warn',
	METRICS_SAMPLE_INTERVAL_MS: String(INTERVAL) } });
const sql = async (q) => (await pg.psql(q, srv.dbName)).trim();
const owner = await setup(srv);
const agents = [];
try {
	for (let i = 0; i < AGENTS; i++) {
		const made = await ok(call(srv, 'POST', '/servers', owner, { body: { name: `far-${i}`, host: '127.0.0.1' } }), 201);
		const [, url, token] = /^STEWARD_URL='([^']+)' STEWARD_AGENT_TOKEN='(sta_[A-Za-z0-9_-]{43})'/.exec(made.agentCommand);
		const dataDir = h.makeTempDir('sw-bench-sample-');
		agents.push(spawn(process.env.STEWARD_AGENT, [], {
			env: { PATH: process.env.PATH, STEWARD_URL: url, STEWARD_AGENT_TOKEN: token, STEWARD_AGENT_DATA_DIR: dataDir,
				DOCKER_HOST: `unix://${dataDir}/no-docker.sock`, CADDY_ADMIN_URL: 'http://127.0.0.1:9' },
			stdio: 'ignore',
		}));
	}
	const deadline = Date.now() + 60000;
	while (Number(await sql("SELECT count(*) FROM servers WHERE status = 'ONLINE' AND agent_capabilities ? 'metrics.sample'")) < AGENTS) {
		if (Date.now() > deadline) throw new Error('the agents did not all come ONLINE listing metrics.sample');
		await sleep(200);
	}
	const from = await sql("SELECT to_char(now(), 'YYYY-MM-DD HH24:MI:SS.US')");
	await sleep(SECONDS * 1000);
	// Ticks: metrics.sample rows grouped by insert time, a new tick where
	// the gap to the previous insert passes a second (or half the interval).
	const out = await sql(`WITH c AS (
		SELECT created_at, updated_at, status,
			CASE WHEN created_at - lag(created_at) OVER (ORDER BY created_at) > interval '${Math.min(1000, INTERVAL / 2)} milliseconds' THEN 1 ELSE 0 END AS new
		FROM agent_commands WHERE kind = 'metrics.sample' AND created_at > '${from}'),
		t AS (SELECT *, sum(new) OVER (ORDER BY created_at) AS tick FROM c)
		SELECT count(*), count(*) FILTER (WHERE status = 'SUCCEEDED'),
			round(extract(epoch FROM max(updated_at) - min(created_at)) * 1000, 1),
			round(extract(epoch FROM max(created_at) - min(created_at)) * 1000, 1)
		FROM t GROUP BY tick ORDER BY tick`);
	const ticks = out.split('\n').filter(Boolean).map((l) => l.split('|').map(Number))
		.filter(([n]) => n === AGENTS); // whole ticks only (the window cuts the first and last)
	if (ticks.length < 3) {
		// No tick ended within the window's gaps: the loop asks without
		// a pause, one tick running into the next.
		const all = out.split('\n').filter(Boolean).map((l) => l.split('|').map(Number));
		const asked = all.reduce((s, t) => s + t[0], 0), answered = all.reduce((s, t) => s + t[1], 0);
		console.log(`metrics_agents agents ${AGENTS} interval_ms ${INTERVAL} ticks 0 (no pause between ticks in ${SECONDS} s)` +
			` answered ${answered}/${asked}, one per ${(SECONDS * 1000 / Math.max(1, answered)).toFixed(1)} ms:` +
			` a tick of ${AGENTS} agents takes about ${(SECONDS * AGENTS / Math.max(1, answered)).toFixed(1)} s`);
	} else {
		const pct = (v, p) => v.slice().sort((a, b) => a - b)[Math.min(v.length - 1, Math.floor(v.length * p))];
		const span = ticks.map((t) => t[2]), spread = ticks.map((t) => t[3]);
		const answered = ticks.reduce((s, t) => s + t[1], 0), asked = ticks.reduce((s, t) => s + t[0], 0);
		console.log(`metrics_agents agents ${AGENTS} interval_ms ${INTERVAL} ticks ${ticks.length} answered ${answered}/${asked}` +
			` remote_half_ms p50 ${pct(span, 0.5)} max ${Math.max(...span)} inserts_spread_ms p50 ${pct(spread, 0.5)} max ${Math.max(...spread)}`);
	}
} finally {
	for (const a of agents) a.kill('SIGTERM');
	await h.cleanupAll();
}
