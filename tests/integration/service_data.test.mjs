// Managed services on a real Docker engine, with images built from Debian's
// own packages (tests/images/build: postgres:15, redis:7, and mysql:8.4 made
// of MariaDB, whose client protocol and dump tool serve the MySQL kind):
// each service on a port of its own on 127.0.0.1, reached with the disclosed
// credentials by Debian's clients (psql, redis-cli, mysql); backups that are files on the server
// (size and SHA-256 recorded, downloadable), restores that bring destroyed
// rows back, a damaged or missing dump that fails the restore and leaves the
// running data alone, a schedule's due time that gives one backup (two
// replicas polling), the retention count, and a backup whose stewardd is
// killed mid-dump that never ends SUCCEEDED without its whole file.

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import * as h from './harness.mjs';
import { ok } from './identity.mjs';
import { world, waitJob as waitJobOf } from './deploy_world.mjs';
import { dockerRequest } from './docker.mjs';

for (const tool of ['psql', 'redis-cli', 'mysql']) {
	if (spawnSync(tool, ['--version']).status !== 0) h.skip(`${tool} is missing (apt-get install postgresql-client redis-tools mariadb-client)`);
}
const w = await world();
const here = path.dirname(new URL(import.meta.url).pathname);
const built = spawnSync(path.join(here, '..', 'images', 'build'), [], {
	env: { ...process.env, DOCKER_HOST: w.docker.host }, encoding: 'utf8', timeout: 600000,
});
if (built.status === 77) h.skip(built.stderr.trim());
assert.equal(built.status, 0, `tests/images/build: ${built.stderr}`);

const services = [];
after(async () => {
	for (const id of services) {
		const list = await dockerRequest('GET', `/containers/json?all=1&filters=${encodeURIComponent(JSON.stringify({ label: [`steward.service=${id}`] }))}`);
		for (const c of list.status === 200 ? list.json() : []) await dockerRequest('DELETE', `/containers/${c.Id}?force=1`);
		await dockerRequest('DELETE', `/volumes/sw-svc-${id}-data`);
	}
	await h.cleanupAll();
});

const project = await ok(w.call('POST', '/projects', { body: { name: 'data' } }), 201);
const env = project.environments[0].id;
const local = (await ok(w.call('GET', '/servers'))).find((s) => s.isLocal);

const waitJob = (id, timeoutMs) => waitJobOf(w, id, timeoutMs);

function psql(c, q) {
	const r = spawnSync('psql', ['-h', c.host, '-p', String(c.port), '-U', c.username, '-d', c.database, '-XAtq',
		'-v', 'ON_ERROR_STOP=1', '-c', q], { env: { ...process.env, PGPASSWORD: c.password, PGCONNECT_TIMEOUT: '3' }, encoding: 'utf8' });
	return { ok: r.status === 0, out: r.stdout.trim(), err: r.stderr.trim() };
}

function mysql(c, q) {
	const r = spawnSync('mysql', ['--protocol=TCP', '-h', c.host, '-P', String(c.port), '-u', c.username, c.database,
		'-N', '-B', '-e', q], { env: { ...process.env, MYSQL_PWD: c.password }, encoding: 'utf8' });
	return { ok: r.status === 0, out: r.stdout.trim().replace(/\t/g, '|'), err: r.stderr.trim() };
}

function redis(c, ...args) {
	const r = spawnSync('redis-cli', ['-h', c.host, '-p', String(c.port), ...args],
		{ env: { ...process.env, REDISCLI_AUTH: c.password }, encoding: 'utf8' });
	return { ok: r.status === 0 && !/^(ERR|NOAUTH|LOADING|Could not connect)/m.test(r.stdout + r.stderr), out: r.stdout.trim() };
}

// A running service of kind: created, started (its job done) and answering.
async function running(name, kind, version) {
	const s = await ok(w.call('POST', '/services', { body: { name, kind, version, environmentId: env } }), 201);
	services.push(s.id);
	const job = await ok(w.call('POST', `/services/${s.id}/start`), 202);
	assert.deepEqual(await waitJob(job.id), { status: 'SUCCEEDED', error: '' });
	const c = await ok(w.call('GET', `/services/${s.id}/connection`));
	const deadline = Date.now() + 20000 * h.SLACK;
	for (;;) {
		const r = kind === 'REDIS' ? redis(c, 'PING') : kind === 'MYSQL' ? mysql(c, 'SELECT 1') : psql(c, 'SELECT 1');
		if (r.ok) break;
		if (Date.now() > deadline) {
			const logs = await dockerRequest('GET', `/containers/sw-svc-${s.id.slice(0, 8)}${s.id.slice(9, 13)}/logs?stdout=1&stderr=1&tail=30`);
			throw new Error(`${name} does not answer on ${c.port}: ${r.err ?? r.out}\n${logs.text}`);
		}
		await h.sleep(300);
	}
	return { s, c };
}

async function backup(s) {
	const b = await ok(w.call('POST', `/services/${s.id}/backups`), 202);
	const job = await waitJob(b.jobId);
	const row = (await ok(w.call('GET', `/services/${s.id}/backups`))).find((x) => x.id === b.id);
	return { ...row, job };
}

async function restore(s, b) {
	const job = await ok(w.call('POST', `/services/${s.id}/backups/${b.id}/restore`), 202);
	assert.equal(job.kind, 'service.restore');
	return { job, end: await waitJob(job.id) };
}

const filePath = async (b) => (await w.sql(`SELECT file_path FROM service_backups WHERE id = '${b.id}'`)).trim();
const sha = (buf) => createHash('sha256').update(buf).digest('hex');

let pgA;

test('two_postgresql_services_on_one_server_both_run_each_on_its_own_port', async () => {
	pgA = await running('orders', 'POSTGRESQL', '15');
	const b = await running('billing', 'POSTGRESQL', '15');
	assert.equal(pgA.c.host, '127.0.0.1');
	assert.notEqual(pgA.c.port, b.c.port);
	assert.ok(psql(pgA.c, 'CREATE TABLE only_in_orders (x int)').ok);
	assert.equal(psql(b.c, "SELECT count(*) FROM pg_tables WHERE tablename = 'only_in_orders'").out, '0', 'two clusters, not one');
	// The port is the service's for good: a restart (a container made anew)
	// keeps it, and the data in the volume.
	assert.ok(psql(b.c, 'CREATE TABLE kept_across_restarts (x int); INSERT INTO kept_across_restarts VALUES (7)').ok);
	const job = await ok(w.call('POST', `/services/${b.s.id}/restart`), 202);
	assert.equal((await waitJob(job.id)).status, 'SUCCEEDED');
	assert.equal((await ok(w.call('GET', `/services/${b.s.id}/connection`))).port, b.c.port);
	const deadline = Date.now() + 20000 * h.SLACK;
	while (!psql(b.c, 'SELECT 1').ok && Date.now() < deadline) await h.sleep(300);
	assert.equal(psql(b.c, 'SELECT x FROM kept_across_restarts').out, '7');
	assert.equal((await w.sql(`SELECT count(DISTINCT port) FROM services WHERE server_id = '${local.id}'`)).trim(), '2');
});

test('a_postgresql_backup_brings_destroyed_rows_back', async () => {
	const { s, c } = pgA;
	assert.ok(psql(c, "CREATE TABLE orders (id int PRIMARY KEY, what text); INSERT INTO orders SELECT g, 'order ' || g FROM generate_series(1, 500) g").ok);
	const b = await backup(s);
	assert.equal(b.job.status, 'SUCCEEDED', b.job.error);
	assert.equal(b.status, 'SUCCEEDED', b.errorMessage);
	assert.match(b.sha256, /^[0-9a-f]{64}$/);
	const file = await filePath(b);
	assert.equal(file, `${w.srv.env.STEWARD_DATA_DIR}/backups/${s.id}/${b.id}.pgdump`);
	const bytes = fs.readFileSync(file);
	assert.equal(bytes.length, b.sizeBytes);
	assert.equal(sha(bytes), b.sha256, 'the recorded SHA-256 is the file\'s');
	assert.equal(bytes.subarray(0, 5).toString(), 'PGDMP', 'pg_dump\'s custom format');
	assert.ok(!fs.existsSync(`${file}.partial`));

	const dl = await w.call('GET', `/services/${s.id}/backups/${b.id}/download`);
	assert.equal(dl.status, 200);
	assert.equal(dl.headers['content-type'], 'application/octet-stream');
	assert.equal(dl.headers.etag, `"${b.sha256}"`);
	assert.match(dl.headers['content-disposition'], new RegExp(`attachment; filename="${b.id}.pgdump"`));
	assert.equal(sha(dl.body), b.sha256);
	assert.match(await w.sql(`SELECT metadata::text FROM audit_logs WHERE action = 'service.backup.downloaded' AND target_id = '${s.id}'`), new RegExp(b.id));

	assert.ok(psql(c, 'DROP TABLE orders').ok);
	const { job, end } = await restore(s, b);
	assert.deepEqual(end, { status: 'SUCCEEDED', error: '' });
	assert.equal(psql(c, 'SELECT count(*), max(what) FROM orders').out, '500|order 99');
	const audit = (await w.sql(`SELECT actor_user_id || ' ' || (metadata->>'backupId') || ' ' || (metadata->>'jobId') FROM audit_logs
		WHERE action = 'service.backup.restore_requested' AND target_id = '${s.id}'`)).trim();
	assert.equal(audit, `${w.owner.user.id} ${b.id} ${job.id}`, 'who asked, for which backup, which job');
});

test('a_damaged_or_missing_dump_fails_the_restore_and_leaves_the_running_data', async () => {
	const { s, c } = pgA;
	assert.ok(psql(c, 'CREATE TABLE IF NOT EXISTS kept (x int); INSERT INTO kept VALUES (1)').ok);
	const b = await backup(s);
	assert.equal(b.status, 'SUCCEEDED', b.errorMessage);
	assert.ok(psql(c, 'INSERT INTO kept VALUES (2)').ok, 'a row the backup does not have');
	const file = await filePath(b);
	const good = fs.readFileSync(file);

	const damaged = Buffer.from(good);
	damaged[damaged.length >> 1] ^= 0xff;
	fs.writeFileSync(file, damaged);
	let r = await restore(s, b);
	assert.equal(r.end.status, 'FAILED');
	assert.match(r.end.error, /^The restore failed: the backup file .* does not match the SHA-256 recorded when it was taken \(it is damaged\): nothing was restored\.$/);
	assert.equal(psql(c, 'SELECT count(*) FROM kept').out, '2', 'the running data is untouched');

	fs.unlinkSync(file);
	r = await restore(s, b);
	assert.equal(r.end.status, 'FAILED');
	assert.match(r.end.error, /^The restore failed: the backup file .* is missing: nothing was restored\.$/);
	assert.equal(psql(c, 'SELECT count(*) FROM kept').out, '2');
	h.assertError(await w.call('GET', `/services/${s.id}/backups/${b.id}/download`), 410, 'BACKUP_FILE_MISSING');

	// A dump the tool refuses (its SHA-256 recorded as it is: the tool is
	// the last line): pg_restore's single transaction changes nothing.
	fs.writeFileSync(file, Buffer.from('PGDMP not really a dump'));
	await w.sql(`UPDATE service_backups SET sha256 = '${sha(fs.readFileSync(file))}' WHERE id = '${b.id}'`);
	r = await restore(s, b);
	assert.equal(r.end.status, 'FAILED');
	assert.match(r.end.error, /^The restore failed: pg_restore failed \(exit 1\): .+\.$/);
	assert.equal(psql(c, 'SELECT count(*) FROM kept').out, '2');
});

test('only_a_backup_that_succeeded_is_restored_or_downloaded', async () => {
	const { s } = pgA;
	const failed = (await w.sql(`INSERT INTO service_backups (organization_id, service_id, status, error_message)
		SELECT organization_id, id, 'FAILED', 'x' FROM services WHERE id = '${s.id}' RETURNING id`)).trim().split('\n')[0];
	h.assertError(await w.call('POST', `/services/${s.id}/backups/${failed}/restore`), 409, 'BACKUP_NOT_RESTORABLE');
	h.assertError(await w.call('GET', `/services/${s.id}/backups/${failed}/download`), 409, 'BACKUP_NOT_READY');
	h.assertError(await w.call('POST', `/services/${s.id}/backups/${h.NIL}/restore`), 404, 'NOT_FOUND');
});

test('a_redis_backup_brings_destroyed_keys_back_and_a_bad_rdb_changes_nothing', async () => {
	const { s, c } = await running('cache', 'REDIS', '7');
	const info = (await dockerRequest('GET', `/containers/sw-svc-${s.id.slice(0, 8)}${s.id.slice(9, 13)}/json`)).json();
	assert.deepEqual(info.Config.Cmd, ['redis-server', '/data/steward-redis.conf']);
	assert.ok(!JSON.stringify(info.Config).includes(c.password), 'the password is on no command line and in no environment');
	for (let i = 0; i < 50; i++) assert.ok(redis(c, 'SET', `k${i}`, `v${i}`).ok);
	const b = await backup(s);
	assert.equal(b.status, 'SUCCEEDED', b.errorMessage);
	const file = await filePath(b);
	assert.equal(fs.readFileSync(file).subarray(0, 5).toString(), 'REDIS');
	assert.equal(sha(fs.readFileSync(file)), b.sha256);

	assert.ok(redis(c, 'FLUSHALL').ok);
	assert.equal(redis(c, 'DBSIZE').out, '0');
	const r = await restore(s, b);
	assert.deepEqual(r.end, { status: 'SUCCEEDED', error: '' });
	assert.equal(redis(c, 'DBSIZE').out, '50');
	assert.equal(redis(c, 'GET', 'k7').out, 'v7');

	// A file that is not an RDB (recorded as it is): redis-check-rdb refuses
	// it before Redis is stopped.
	assert.ok(redis(c, 'SET', 'after', 'yes').ok);
	fs.writeFileSync(file, Buffer.from('REDIS0011 garbage'));
	await w.sql(`UPDATE service_backups SET sha256 = '${sha(fs.readFileSync(file))}' WHERE id = '${b.id}'`);
	const bad = await restore(s, b);
	assert.equal(bad.end.status, 'FAILED');
	assert.match(bad.end.error, /redis-check-rdb \(the backup is not a valid RDB file: nothing was restored\) failed/);
	assert.equal(redis(c, 'GET', 'after').out, 'yes', 'the running data is untouched');
});

test('a_mysql_backup_brings_destroyed_rows_back', async () => {
	const { s, c } = await running('shop', 'MYSQL', '8.4');
	assert.ok(mysql(c, "CREATE TABLE items (id int PRIMARY KEY, name text); INSERT INTO items VALUES (1, 'pen'), (2, 'ink')").ok);
	const b = await backup(s);
	assert.equal(b.status, 'SUCCEEDED', b.errorMessage);
	const file = await filePath(b);
	assert.match(file, /\.sql$/);
	assert.match(fs.readFileSync(file, 'utf8'), /CREATE TABLE `items`/);
	assert.ok(mysql(c, 'DROP TABLE items').ok);
	const r = await restore(s, b);
	assert.deepEqual(r.end, { status: 'SUCCEEDED', error: '' });
	assert.equal(mysql(c, 'SELECT count(*), max(name) FROM items').out, '2|pen');
});

test('a_backup_of_a_stopped_service_fails_with_a_sentence', async () => {
	const { s } = await running('stopped-db', 'POSTGRESQL', '15');
	const job = await ok(w.call('POST', `/services/${s.id}/stop`), 202);
	assert.equal((await waitJob(job.id)).status, 'SUCCEEDED');
	const b = await backup(s);
	assert.equal(b.status, 'FAILED');
	assert.equal(b.errorMessage, 'The service is not running: start it before taking a backup.');
	assert.equal(b.sha256, null);
});

test('a_due_time_gives_one_backup_and_retention_keeps_the_newest', async () => {
	const { s } = pgA;
	const sched = await ok(w.call('PUT', `/services/${s.id}/backups/schedule`, { body: { enabled: true, frequency: 'HOURLY', retentionCount: 2 } }));
	const waiting = (await w.sql(`SELECT steward_rfc3339(run_after) || ' ' || (payload->>'dueAt') FROM jobs
		WHERE target_id = '${s.id}' AND kind = 'service.backup_due' AND status = 'QUEUED'`)).trim().split(' ');
	assert.equal(waiting[0], sched.nextRunAt, 'a job waits for the due time');

	// A second replica on the same database and data directory polls too.
	await h.startStewardd({ db: w.pg, env: { ...w.env, DATABASE_URL: w.srv.env.DATABASE_URL, STEWARD_DATA_DIR: w.srv.env.STEWARD_DATA_DIR } });
	// The due time comes (moved to the past rather than waited for).
	const due = (await w.sql(`SELECT to_json(date_trunc('hour', now()) - interval '1 hour')#>>'{}'`)).trim();
	await w.sql(`UPDATE services SET backup_next_run_at = '${due}' WHERE id = '${s.id}';
		UPDATE jobs SET run_after = now(), payload = jsonb_build_object('dueAt', '${due}'::timestamptz)
		WHERE target_id = '${s.id}' AND kind = 'service.backup_due' AND status = 'QUEUED'`);
	const deadline = Date.now() + 120000 * h.SLACK;
	let made;
	for (;;) {
		made = (await ok(w.call('GET', `/services/${s.id}/backups`))).filter((x) => x.scheduledFor);
		if (made.length && ['SUCCEEDED', 'FAILED'].includes(made[0].status)) break;
		assert.ok(Date.now() < deadline, 'the scheduled backup was not taken');
		await h.sleep(300);
	}
	assert.equal(made.length, 1);
	assert.equal(made[0].status, 'SUCCEEDED', made[0].errorMessage);
	assert.equal(Date.parse(made[0].scheduledFor), Date.parse(due));
	// Another replica's runner handed the same due time gets nothing.
	assert.equal((await w.sql(`SELECT count(*) FROM steward_service_backup_due('${s.id}', '${due}')`)).trim(), '0');
	assert.equal((await w.sql(`SELECT count(*) FROM service_backups WHERE service_id = '${s.id}' AND scheduled_for IS NOT NULL`)).trim(), '1');
	const next = (await ok(w.call('GET', `/services/${s.id}/backups/schedule`))).nextRunAt;
	assert.ok(Date.parse(next) > Date.now(), 'the next due time is armed');
	assert.equal((await w.sql(`SELECT count(*) FROM jobs WHERE target_id = '${s.id}' AND kind = 'service.backup_due' AND status = 'QUEUED'`)).trim(), '1');

	// Retention: two more successful backups leave the newest two, rows and files.
	const b1 = await backup(s);
	const b2 = await backup(s);
	assert.equal(b2.status, 'SUCCEEDED', b2.errorMessage);
	const kept = (await ok(w.call('GET', `/services/${s.id}/backups?status=SUCCEEDED`))).map((x) => x.id);
	assert.deepEqual(kept, [b2.id, b1.id]);
	const files = fs.readdirSync(`${w.srv.env.STEWARD_DATA_DIR}/backups/${s.id}`).sort();
	assert.deepEqual(files, [`${b1.id}.pgdump`, `${b2.id}.pgdump`].sort());

	// Turned off: nothing waits any more.
	await ok(w.call('PUT', `/services/${s.id}/backups/schedule`, { body: { enabled: false, frequency: 'HOURLY' } }));
	assert.equal((await w.sql(`SELECT count(*) FROM jobs WHERE target_id = '${s.id}' AND kind = 'service.backup_due' AND status = 'QUEUED'`)).trim(), '0');
});

test('a_backup_killed_mid_way_never_succeeds_without_its_whole_file', async (t) => {
	const { s, c } = pgA;
	// Enough data that pg_dump is still writing when the container is frozen.
	assert.ok(psql(c, "CREATE TABLE bulk AS SELECT g, md5(g::text) || md5((g * 7)::text) || md5((g * 13)::text) AS t FROM generate_series(1, 1500000) g").ok);
	const b = await ok(w.call('POST', `/services/${s.id}/backups`), 202);
	const final = `${w.srv.env.STEWARD_DATA_DIR}/backups/${s.id}/${b.id}.pgdump`;
	const deadline = Date.now() + 60000 * h.SLACK;
	while (!(fs.existsSync(`${final}.partial`) && fs.statSync(`${final}.partial`).size > 0)) {
		assert.ok(Date.now() < deadline, 'the dump did not start');
		await h.sleep(10);
	}
	const container = `sw-svc-${s.id.slice(0, 8)}${s.id.slice(9, 13)}`;
	assert.equal((await dockerRequest('POST', `/containers/${container}/pause`)).status, 204);
	const killed = w.srv;
	killed.proc.kill('SIGKILL');
	await killed.exited;
	assert.equal((await w.sql(`SELECT status FROM service_backups WHERE id = '${b.id}'`)).trim(), 'RUNNING');
	assert.ok(!fs.existsSync(final), 'no file under the backup\'s name while the dump is cut short');
	assert.equal((await dockerRequest('POST', `/containers/${container}/unpause`)).status, 204);

	// Another process reaps the dead worker's job: run again (or failed).
	await w.restart();
	let row;
	for (;;) {
		row = (await ok(w.call('GET', `/services/${s.id}/backups`))).find((x) => x.id === b.id);
		if (['SUCCEEDED', 'FAILED'].includes(row.status)) break;
		assert.ok(Date.now() < deadline + 60000 * h.SLACK, `the backup is still ${row.status}`);
		await h.sleep(300);
	}
	t.diagnostic(`after the restart the backup ended ${row.status}${row.errorMessage ? `: ${row.errorMessage}` : ''}`);
	if (row.status === 'SUCCEEDED') {
		const bytes = fs.readFileSync(final);
		assert.equal(bytes.length, row.sizeBytes);
		assert.equal(sha(bytes), row.sha256, 'a SUCCEEDED backup has its whole file');
		assert.ok(!fs.existsSync(`${final}.partial`));
	} else {
		assert.ok(!fs.existsSync(final), 'a FAILED backup has no file');
	}
});
