// A managed service's data on a REMOTE server, with real parts: a second
// dockerd with the service images of tests/images/build, a second Caddy
// and the real steward-agent (remote_world.mjs). A backup runs pg_dump in
// the service's container through the agent (service.dump), its output
// streamed back as base64 progress chunks into the control plane's file
// (size and SHA-256 recorded as for a local backup); a restore streams the
// file to the agent as input chunks under the credit window, checked whole
// by the agent before pg_restore sees it: rows deleted after the backup
// come back. A dump whose agent is killed mid-way fails with a sentence and
// leaves no file, whole or partial. A Redis service's RDB file makes the same
// round trip (the agent stops and starts Redis around the swap). A dump
// given up on by the control plane stops on the agent: with two replicas
// (the agent on A, the job on B), B stopped while pg_dump waits on a table
// lock held here: the agent's service.dump ends CANCELLED at once, while
// the lock is still held, and leaves no file; the job, handed back to the
// queue, makes one whole backup on B's next version once the lock is gone.

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import * as h from './harness.mjs';
import { call, ok } from './identity.mjs';
import { world, waitJob as waitJobOf } from './deploy_world.mjs';
import { agentBinary, remoteWorld } from './remote_world.mjs';

for (const tool of ['psql', 'redis-cli']) {
	if (spawnSync(tool, ['--version']).status !== 0) h.skip(`${tool} is missing (apt-get install postgresql-client redis-tools)`);
}
agentBinary();
const w = await world({ STEWARD_AGENT_HEARTBEAT_MS: 500 }, { tsan: true });
const { second, server, startAgent, waitStatus } = await remoteWorld(w);
const here = path.dirname(new URL(import.meta.url).pathname);
const built = spawnSync(path.join(here, '..', 'images', 'build'), [], {
	env: { ...process.env, DOCKER_HOST: second.host }, encoding: 'utf8', timeout: 600000,
});
if (built.status === 77) h.skip(built.stderr.trim());
assert.equal(built.status, 0, `tests/images/build: ${built.stderr}`);
after(() => h.cleanupAll());

const waitJob = (id, timeoutMs) => waitJobOf(w, id, timeoutMs);

let agent = startAgent();
await waitStatus('ONLINE');

const project = await ok(w.call('POST', '/projects', { body: { name: 'remote-data' } }), 201);
const env = project.environments[0].id;

function psql(c, q) {
	const r = spawnSync('psql', ['-h', '127.0.0.1', '-p', String(c.port), '-U', c.username, '-d', c.database, '-XAtq',
		'-v', 'ON_ERROR_STOP=1', '-c', q], { env: { ...process.env, PGPASSWORD: c.password, PGCONNECT_TIMEOUT: '3' }, encoding: 'utf8' });
	return { ok: r.status === 0, out: r.stdout.trim(), err: r.stderr.trim() };
}

function redis(c, ...args) {
	const r = spawnSync('redis-cli', ['-h', '127.0.0.1', '-p', String(c.port), ...args],
		{ env: { ...process.env, REDISCLI_AUTH: c.password }, encoding: 'utf8' });
	return { ok: r.status === 0 && !/^(ERR|NOAUTH|LOADING|Could not connect)/m.test(r.stdout + r.stderr), out: r.stdout.trim(), err: r.stderr.trim() };
}

// A service of kind on the remote server, started and answering on its
// port (host networking on the second engine: 127.0.0.1 here).
async function running(name, kind = 'POSTGRESQL', version = '15') {
	const s = await ok(w.call('POST', '/services', { body: { name, kind, version, environmentId: env, serverId: server.id } }), 201);
	const job = await ok(w.call('POST', `/services/${s.id}/start`), 202);
	assert.deepEqual(await waitJob(job.id), { status: 'SUCCEEDED', error: '' });
	const c = await ok(w.call('GET', `/services/${s.id}/connection`));
	const deadline = Date.now() + 30000 * h.SLACK;
	for (;;) {
		const r = kind === 'REDIS' ? redis(c, 'PING') : psql(c, 'SELECT 1');
		if (r.ok) break;
		if (Date.now() > deadline) throw new Error(`${name} does not answer on ${c.port}: ${r.err}`);
		await h.sleep(300);
	}
	const cname = `sw-svc-${s.id.replace(/-/g, '').slice(0, 12)}`;
	assert.equal((await second.request('GET', `/containers/${cname}/json`)).json().State.Running, true, 'it runs on the second engine');
	return { s, c };
}

const sha = (b) => createHash('sha256').update(b).digest('hex');
const filePath = async (id) => (await w.sql(`SELECT coalesce(file_path, '') FROM service_backups WHERE id = '${id}'`)).trim();

test('a backup of a PostgreSQL service on the remote server brings deleted rows back through the agent', async () => {
	const { s, c } = await running('far-pg');
	assert.ok(psql(c, 'CREATE TABLE items (id int PRIMARY KEY, body bytea)').ok);
	// Binary rows (every byte value) and enough of them for many chunks.
	const ins = psql(c, `INSERT INTO items SELECT g, decode(repeat(md5(g::text), 64), 'hex') || '\\x00ff0a0d'::bytea FROM generate_series(1, 4000) g`);
	assert.ok(ins.ok, ins.err);
	const before = psql(c, 'SELECT count(*), md5(string_agg(body::text, \'\' ORDER BY id)) FROM items').out;

	const b = await ok(w.call('POST', `/services/${s.id}/backups`), 202);
	assert.deepEqual(await waitJob(b.jobId, 120000), { status: 'SUCCEEDED', error: '' });
	const row = (await ok(w.call('GET', `/services/${s.id}/backups`))).find((x) => x.id === b.id);
	assert.equal(row.status, 'SUCCEEDED');
	const file = await filePath(b.id);
	assert.equal(file, `${w.srv.env.STEWARD_DATA_DIR}/backups/${s.id}/${b.id}.pgdump`, 'a file of the control plane');
	const bytes = fs.readFileSync(file);
	assert.equal(bytes.subarray(0, 5).toString(), 'PGDMP', 'pg_dump\'s custom format, byte for byte');
	assert.equal(row.sizeBytes, bytes.length);
	assert.equal(row.sha256, sha(bytes), 'the SHA-256 recorded is the file\'s');
	assert.ok(bytes.length > 64 * 1024, `the dump (${bytes.length} bytes) spans several chunks`);
	assert.equal(fs.existsSync(`${file}.partial`), false);
	const cmd = (await w.sql(`SELECT status || ' ' || payload::text FROM agent_commands WHERE server_id = '${server.id}' AND kind = 'service.dump'`)).trim();
	assert.equal(cmd, 'SUCCEEDED {}', 'the dump ran as the agent\'s service.dump, its payload (the password) dropped');
	assert.equal((await w.sql(`SELECT count(*) FROM agent_command_output`)).trim(), '0', 'its output chunks are dropped once read');

	assert.ok(psql(c, 'DELETE FROM items WHERE id > 10').ok);
	assert.equal(psql(c, 'SELECT count(*) FROM items').out, '10');
	const job = await ok(w.call('POST', `/services/${s.id}/backups/${b.id}/restore`), 202);
	assert.deepEqual(await waitJob(job.id, 120000), { status: 'SUCCEEDED', error: '' });
	assert.equal(psql(c, 'SELECT count(*), md5(string_agg(body::text, \'\' ORDER BY id)) FROM items').out, before, 'every row back, byte for byte');
	const rcmd = (await w.sql(`SELECT status FROM agent_commands WHERE server_id = '${server.id}' AND kind = 'service.restore'`)).trim();
	assert.equal(rcmd, 'SUCCEEDED', 'the restore ran as the agent\'s service.restore');
	assert.equal((await w.sql(`SELECT count(*) FROM agent_command_input`)).trim(), '0', 'its input chunks are dropped');

	// A damaged file never leaves the control plane: nothing reaches the agent.
	fs.appendFileSync(file, 'x');
	assert.ok(psql(c, 'DELETE FROM items WHERE id > 5').ok);
	const bad = await ok(w.call('POST', `/services/${s.id}/backups/${b.id}/restore`), 202);
	const end = await waitJob(bad.id, 60000);
	assert.equal(end.status, 'FAILED');
	assert.match(end.error, /does not match the SHA-256 recorded when it was taken \(it is damaged\): nothing was restored/);
	assert.equal((await w.sql(`SELECT count(*) FROM agent_commands WHERE kind = 'service.restore'`)).trim(), '1', 'no second service.restore was sent');
	assert.equal(psql(c, 'SELECT count(*) FROM items').out, '5', 'the running data is left alone');
});

test('a Redis service on the remote server: its RDB file comes back through the agent and is restored there', async () => {
	const { s, c } = await running('far-cache', 'REDIS', '7');
	for (let i = 0; i < 50; i++) assert.ok(redis(c, 'SET', `k${i}`, `v${i}`).ok);
	const b = await ok(w.call('POST', `/services/${s.id}/backups`), 202);
	assert.deepEqual(await waitJob(b.jobId, 120000), { status: 'SUCCEEDED', error: '' });
	const row = (await ok(w.call('GET', `/services/${s.id}/backups`))).find((x) => x.id === b.id);
	const bytes = fs.readFileSync(await filePath(b.id));
	assert.equal(bytes.subarray(0, 5).toString(), 'REDIS', 'an RDB file, byte for byte');
	assert.equal(row.sha256, sha(bytes));
	assert.equal(row.sizeBytes, bytes.length);

	assert.ok(redis(c, 'FLUSHALL').ok);
	assert.equal(redis(c, 'DBSIZE').out, '0');
	const job = await ok(w.call('POST', `/services/${s.id}/backups/${b.id}/restore`), 202);
	assert.deepEqual(await waitJob(job.id, 120000), { status: 'SUCCEEDED', error: '' });
	assert.equal(redis(c, 'DBSIZE').out, '50');
	assert.equal(redis(c, 'GET', 'k7').out, 'v7');
});

test('a dump whose agent is killed mid-way fails with a sentence and leaves no file', async () => {
	const { s, c } = await running('far-big');
	// Random bytes do not compress: a dump of some 32 MiB takes a while to stream.
	const made = psql(c, 'CREATE TABLE big AS SELECT g AS id, decode(string_agg(md5(random()::text || k), \'\'), \'hex\') AS body FROM generate_series(1, 8192) g, generate_series(1, 256) k GROUP BY g');
	assert.ok(made.ok, made.err);
	const b = await ok(w.call('POST', `/services/${s.id}/backups`), 202);
	// Killed once its output is flowing: bytes of it have reached the
	// control plane's partial file.
	const dir = `${w.srv.env.STEWARD_DATA_DIR}/backups/${s.id}`;
	const partial = `${dir}/${b.id}.pgdump.partial`;
	const deadline = Date.now() + 60000 * h.SLACK;
	for (;;) {
		if (fs.existsSync(partial) && fs.statSync(partial).size > 0) break;
		if (Date.now() > deadline) assert.fail('no output of the dump arrived');
		await h.sleep(20);
	}
	agent.kill('SIGKILL');
	const end = await waitJob(b.jobId, 60000);
	assert.equal(end.status, 'FAILED');
	assert.match(end.error, /^The backup failed: The server's agent disconnected while it ran service\.dump: its outcome on the server is not known\.$/);
	const row = (await ok(w.call('GET', `/services/${s.id}/backups`))).find((x) => x.id === b.id);
	assert.equal(row.status, 'FAILED');
	const left = fs.existsSync(dir) ? fs.readdirSync(dir) : [];
	assert.deepEqual(left, [], 'no file, whole or partial');
	agent = startAgent();
	await waitStatus('ONLINE');
});

test('a dump given up on (its replica stopped) stops on the agent: CANCELLED while pg_dump still waits', async () => {
	const { s, c } = await running('far-held');
	let bkJob = null, bEnv = null;
	assert.ok(psql(c, 'CREATE TABLE held AS SELECT g AS id FROM generate_series(1, 100) g').ok);
	// A session here holds the table: pg_dump waits on it (a real lock,
	// for as long as this test wants; no fault injected).
	const holder = spawn('psql', ['-h', '127.0.0.1', '-p', String(c.port), '-U', c.username, '-d', c.database, '-XAtq',
		'-v', 'ON_ERROR_STOP=1'], { env: { ...process.env, PGPASSWORD: c.password }, stdio: ['pipe', 'pipe', 'pipe'] });
	let held = '';
	holder.stdout.on('data', (d) => { held += d; });
	holder.stderr.on('data', (d) => { held += d; });
	const holderExited = new Promise((resolve) => holder.once('exit', resolve));
	holder.stdin.write("BEGIN;\nLOCK TABLE held IN ACCESS EXCLUSIVE MODE;\nSELECT 'locked';\n");
	const until = async (what, fn, timeoutMs = 30000) => {
		const deadline = Date.now() + timeoutMs * h.SLACK;
		for (;;) {
			const v = await fn();
			if (v) return v;
			if (Date.now() > deadline) assert.fail(`${what}: not within ${timeoutMs} ms\nagent:\n${agent.log().slice(-4000)}`);
			await h.sleep(50);
		}
	};
	try {
		await until('the table held', () => held.includes('locked'));
		// A holds the agent and runs no jobs; B runs the job.
		const port = w.srv.port;
		w.srv.kill();
		await w.srv.exited;
		const a = await w.restart({ STEWARD_RUNNERS: 'false' }, { port });
		bEnv = { ...w.env, DATABASE_URL: a.env.DATABASE_URL, STEWARD_DATA_DIR: a.env.STEWARD_DATA_DIR,
			STEWARD_RUNNERS: 'true', STEWARD_SHUTDOWN_TIMEOUT_MS: '6000' };
		const b = await h.startStewardd({ env: bEnv });
		await until('the agent on A', () => a.logs.text().includes(`agent online server=${server.id}`));
		await waitStatus('ONLINE');
		const bk = await ok(call(b, 'POST', `/services/${s.id}/backups`, w.owner), 202);
		await until('pg_dump waiting on the lock', () => psql(c, "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'pg_dump' AND wait_event_type = 'Lock'").out === '1');
		const id = await until('its service.dump', async () => (await w.sql(`SELECT id FROM agent_commands WHERE server_id = '${server.id}' AND kind = 'service.dump' AND status = 'ACKED'`)).trim());
		assert.match(id, h.UUID);

		// B stops (a rolling upgrade): its window's last part asks the
		// dump to stop, and the cancel crosses to A, then to the agent.
		assert.equal(await b.stop('SIGTERM', 30000), 0);
		// The waiter gave the command up (ABANDONED: never sent again) and
		// the agent stopped pg_dump's stream: its answer, CANCELLED, comes
		// while the lock is still held (and is the row's, in the unlikely
		// order where it arrives before the waiter closes the row).
		assert.match((await w.sql(`SELECT status || ' ' || error_code FROM agent_commands WHERE id = '${id}'`)).trim(), /^FAILED (ABANDONED|CANCELLED)$/);
		await until('the agent stopping the dump', () => agent.log().includes(`service.dump ${id} stopped by its cancel`));
		assert.match(agent.log(), new RegExp(`command ${id} cancelled by the control plane`));
		assert.ok(holder.exitCode === null, 'the lock is still held: the dump did not end by itself');
		assert.match(b.logs.text(), /jobs: the work still running is stopped and handed back to the queue/);
		const dir = `${a.env.STEWARD_DATA_DIR}/backups/${s.id}`;
		const left = fs.existsSync(dir) ? fs.readdirSync(dir) : [];
		assert.deepEqual(left, [], 'no file, whole or partial');
		// Handed back to the queue, not failed: the next runner takes it.
		assert.equal((await w.sql(`SELECT status FROM jobs WHERE id = '${bk.jobId}'`)).trim(), 'QUEUED');
		bkJob = bk;
	} finally {
		holder.stdin.end('COMMIT;\n');
		await holderExited;
	}
	// B's next version starts (A still holds the agent) and takes the job
	// B handed back, the lock gone: one whole backup.
	const b2 = await h.startStewardd({ env: bEnv });
	assert.deepEqual(await waitJob(bkJob.jobId, 120000), { status: 'SUCCEEDED', error: '' });
	const row = (await ok(call(b2, 'GET', `/services/${s.id}/backups`, w.owner))).find((x) => x.id === bkJob.id);
	assert.equal(row.status, 'SUCCEEDED');
	assert.deepEqual(fs.readdirSync(`${w.srv.env.STEWARD_DATA_DIR}/backups/${s.id}`), [`${bkJob.id}.pgdump`]);
	await b2.stop();
});
