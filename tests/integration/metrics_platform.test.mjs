// The spec's Platform group of a metric sample: on GET /servers/:id/sample
// of the local server, an operator gets the control plane's own figures
// (its database's size, the connections to it, each job queue's depth,
// running and failed jobs) as PostgreSQL reports them; a member who is no
// operator gets platform null.

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import * as h from './harness.mjs';
import { call, ok, setup, member } from './identity.mjs';

const pg = await h.startPostgres();
const srv = await h.startStewardd({ db: pg, env: { METRICS_EBPF: '0', DOCKER_HOST: 'unix:///nonexistent/docker.sock' } });
after(() => h.cleanupAll());
const sql = async (q) => (await pg.psql(q, srv.dbName)).trim();

const operator = await setup(srv); // the first user is the operator
const plain = await member(srv, operator, 'member@example.com', 'ADMIN');
const server = await sql(`SELECT id FROM servers WHERE organization_id = '${operator.org.id}' AND is_local`);

// Jobs no runner takes (they wait a day), and failed ones, old and recent.
const job = (queue, status, extra = '') => sql(`INSERT INTO jobs (organization_id, queue, kind, target_type, target_id, status, run_after, finished_at)
	VALUES ('${operator.org.id}', '${queue}', 'application.start', 'application', gen_random_uuid(), '${status}', now() + interval '1 day', ${extra || 'NULL'})`);
await job('build', 'QUEUED');
await job('build', 'QUEUED');
await job('deploy', 'FAILED', "now() - interval '1 hour'");
await job('deploy', 'FAILED', "now() - interval '2 days'");
await job('lifecycle', 'QUEUED');

test('an operator\'s sample of the local server carries the control plane\'s figures', async () => {
	const before = Number(await sql('SELECT pg_database_size(current_database())'));
	const s = await ok(call(srv, 'GET', `/servers/${server}/sample`, operator));
	const after = Number(await sql('SELECT pg_database_size(current_database())'));
	const p = s.platform;
	assert.ok(p, JSON.stringify(s).slice(0, 400));
	// The size PostgreSQL reports, give or take what the metrics loop writes meanwhile.
	assert.ok(Math.abs(p.databaseBytes - before) <= 0.05 * before || Math.abs(p.databaseBytes - after) <= 0.05 * after,
		`${p.databaseBytes} against ${before}..${after}`);
	// stewardd's pool holds connections, and the one asking runs a statement.
	assert.ok(p.connections >= 1 && p.activeConnections >= 1 && p.activeConnections <= p.connections, JSON.stringify(p));
	assert.deepEqual(p.queues, [
		{ queue: 'build', depth: 2, running: 0, failed: 0, failedLast24h: 0 },
		{ queue: 'deploy', depth: 0, running: 0, failed: 2, failedLast24h: 1 },
		{ queue: 'lifecycle', depth: 1, running: 0, failed: 0, failedLast24h: 0 },
	]);
});

test('a member who is not an operator gets platform null', async () => {
	const s = await ok(call(srv, 'GET', `/servers/${server}/sample`, plain));
	assert.equal(s.platform, null);
	assert.ok(s.memory.totalBytes > 0, 'the rest of the sample is there');
});
