// Managed services: creation with generated credentials sealed at rest,
// disclosed only by GET /services/:id/connection with an audit record per
// call, a port of its own on its server (allocated in SQL, also under
// concurrent creations), versions per kind, strict field and filter
// validation, lifecycle jobs, backups requested as queued work, the backup
// schedule and its validation, and 404 across organizations.

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import * as h from './harness.mjs';
const { TS } = h;
import { call, ok, setup, signup } from './identity.mjs';

h.stewarddPath();
const pg = await h.startPostgres();
const srv = await h.startStewardd({ db: pg, env: { STEWARD_THREADS: 2, SIGNUP_ENABLED: 'true' } });
after(h.cleanupAll);

const sql = (q) => pg.psql(q, srv.dbName);
const PASSWORD = /^[A-Za-z0-9_-]{43}$/;
const SERVICE_KEYS = ['createdAt', 'description', 'environmentId', 'id', 'kind', 'name', 'port', 'projectId', 'serverId',
	'status', 'updatedAt', 'version'];
const RANDOM_ID = '6f1c1f0e-8d2a-4a57-9d7e-3f0b6c7b2a11';

const owner = await setup(srv); // the operator, who reads the audit log
const other = await signup(srv, 'other@example.com', 'Other');

const project = await ok(call(srv, 'POST', '/projects', owner, { body: { name: 'shop' } }), 201);
const env = project.environments[0].id;
const project2 = await ok(call(srv, 'POST', '/projects', owner, { body: { name: 'blog' } }), 201);
const env2 = project2.environments[0].id;
const otherProject = await ok(call(srv, 'POST', '/projects', other, { body: { name: 'theirs' } }), 201);
const otherEnv = otherProject.environments[0].id;
const servers = await ok(call(srv, 'GET', '/servers', owner));
const local = servers.find((s) => s.isLocal);
const otherLocal = (await ok(call(srv, 'GET', '/servers', other))).find((s) => s.isLocal);

const create = (who, body) => call(srv, 'POST', '/services', who, { body });
const connection = (who, id) => call(srv, 'GET', `/services/${id}/connection`, who);

async function fieldErrors(p) {
	const res = await p;
	return h.assertError(res, 422, 'VALIDATION_FAILED').fields;
}

async function connectionAudits(id) {
	const res = await call(srv, 'GET', '/audit-logs?action=service.connection.viewed&limit=200', owner);
	assert.equal(res.status, 200, res.text);
	return { text: res.text, records: res.json().data.filter((r) => r.targetId === id) };
}

test('create_answers_the_service_without_credentials', async () => {
	const res = await create(owner, { name: 'orders-db', kind: 'POSTGRESQL', environmentId: env, description: 'Orders' });
	assert.equal(res.status, 201, res.text);
	const s = res.json().data;
	assert.deepEqual(Object.keys(s).sort(), SERVICE_KEYS);
	assert.equal(s.name, 'orders-db');
	assert.equal(s.kind, 'POSTGRESQL');
	assert.equal(s.version, '17', 'the kind\'s default version');
	assert.equal(s.status, 'CREATED');
	assert.equal(s.description, 'Orders');
	assert.equal(s.projectId, project.id);
	assert.equal(s.environmentId, env);
	assert.equal(s.serverId, local.id, 'the local server by default');
	assert.match(s.createdAt, TS);
	assert.match(await sql(`SELECT metadata::text FROM audit_logs WHERE action = 'service.created' AND target_id = '${s.id}'`), /orders-db/);
});

test('connection_is_the_only_answer_with_credentials_and_each_call_is_audited', async () => {
	const s = await ok(create(owner, { name: 'billing-db', kind: 'POSTGRESQL', version: '15', environmentId: env }), 201);
	const before = (await connectionAudits(s.id)).records.length;
	const c1 = await ok(connection(owner, s.id));
	assert.deepEqual(Object.keys(c1).sort(), ['database', 'host', 'password', 'port', 'url', 'username']);
	assert.equal(c1.host, '127.0.0.1', 'where an application on its server reaches it');
	assert.ok(Number.isInteger(c1.port) && c1.port >= 20000 && c1.port <= 29999, `port ${c1.port}`);
	assert.equal((await sql(`SELECT port FROM services WHERE id = '${s.id}'`)).trim(), String(c1.port));
	assert.equal(c1.database, 'billing_db');
	assert.equal(c1.username, 'billing_db');
	assert.match(c1.password, PASSWORD);
	assert.equal(c1.url, `postgresql://billing_db:${c1.password}@127.0.0.1:${c1.port}/billing_db`);
	assert.equal(s.port, c1.port, 'the service shows its port (not a secret)');
	const c2 = await ok(connection(owner, s.id));
	assert.deepEqual(c2, c1, 'the same credentials every time');

	// One record per call, naming who and what, never the credentials.
	const audits = await connectionAudits(s.id);
	assert.equal(audits.records.length, before + 2);
	for (const r of audits.records) {
		assert.equal(r.actorUserId, owner.user.id);
		assert.equal(r.organizationId, owner.org.id);
		assert.equal(r.targetType, 'service');
		assert.deepEqual(r.metadata, { name: 'billing-db' });
	}
	assert.ok(!audits.text.includes(c1.password), 'no audit record holds the password');

	// Absent from every other answer.
	for (const path of [`/services/${s.id}`, '/services', `/services?name=billing-db`, `/services/${s.id}/backups`,
		`/services/${s.id}/backups/schedule`]) {
		const res = await call(srv, 'GET', path, owner);
		assert.equal(res.status, 200, path);
		assert.ok(!res.text.includes(c1.password), `${path} has no password`);
		assert.ok(!/"password"/.test(res.text), `${path} has no password member`);
	}
	const patched = await call(srv, 'PATCH', `/services/${s.id}`, owner, { body: { description: 'x' } });
	assert.ok(!patched.text.includes(c1.password) && !/"password"/.test(patched.text));

	// At rest: one sealed value, no plaintext anywhere in the database.
	const stored = (await sql(`SELECT credentials_sealed FROM services WHERE id = '${s.id}'`)).trim();
	assert.match(stored, /^v1\.[0-9a-f]{8}\.[A-Za-z0-9_-]+$/);
	assert.ok(!stored.includes(c1.password));
	const dump = await pg.dump(srv.dbName);
	assert.ok(!dump.includes(c1.password), 'the database holds no plaintext password');
	assert.ok(!srv.logs.text().includes(c1.password), 'no log line holds the password');
});

test('a_sealed_value_moved_to_another_service_does_not_open', async () => {
	const a = await ok(create(owner, { name: 'seal-a', kind: 'REDIS', environmentId: env }), 201);
	const b = await ok(create(owner, { name: 'seal-b', kind: 'REDIS', environmentId: env }), 201);
	await sql(`UPDATE services SET credentials_sealed = (SELECT credentials_sealed FROM services WHERE id = '${a.id}') WHERE id = '${b.id}'`);
	const res = await connection(owner, b.id);
	h.assertError(res, 500, 'INTERNAL_ERROR');
	await ok(call(srv, 'DELETE', `/services/${b.id}`, owner), 204);
	await ok(call(srv, 'DELETE', `/services/${a.id}`, owner), 204);
});

test('each_service_has_its_own_port_url_and_default_version', async () => {
	const my = await ok(create(owner, { name: 'shop-mysql', kind: 'MYSQL', environmentId: env }), 201);
	assert.equal(my.version, '8.4');
	const mc = await ok(connection(owner, my.id));
	assert.equal(mc.username, 'shop_mysql');
	assert.equal(mc.url, `mysql://shop_mysql:${mc.password}@127.0.0.1:${mc.port}/shop_mysql`);

	const rd = await ok(create(owner, { name: 'cache', kind: 'REDIS', version: '6', environmentId: env }), 201);
	assert.equal(rd.version, '6');
	const rc = await ok(connection(owner, rd.id));
	assert.deepEqual({ ...rc, password: 'x' }, {
		host: '127.0.0.1', port: rc.port, database: '0', username: 'default', password: 'x',
		url: `redis://default:${rc.password}@127.0.0.1:${rc.port}/0`,
	});
	assert.notEqual(rc.password, mc.password);
	assert.notEqual(rc.port, mc.port, 'each service of a server has a port of its own');

	// A long name makes a user name of at most 32 characters.
	const long = 'a'.repeat(40) + '-db';
	const ls = await ok(create(owner, { name: long, kind: 'MYSQL', version: '8.0', environmentId: env }), 201);
	const lc = await ok(connection(owner, ls.id));
	assert.equal(lc.username, 'a'.repeat(32));
	assert.equal(lc.host, '127.0.0.1');
	const ports = (await sql(`SELECT port FROM services WHERE server_id = '${local.id}'`)).trim().split('\n');
	assert.equal(new Set(ports).size, ports.length, 'no two services of a server share a port');
});

test('concurrent_creations_on_one_server_never_share_a_port', async () => {
	const made = await Promise.all([...Array(8).keys()].map((i) =>
		ok(create(owner, { name: `race-${i}`, kind: 'REDIS', environmentId: env }), 201)));
	const ports = (await sql(`SELECT port FROM services WHERE id IN (${made.map((m) => `'${m.id}'`).join(',')})`))
		.trim().split('\n').map(Number);
	assert.equal(new Set(ports).size, 8, `ports ${ports}`);
	// The lowest free port is taken again once its service is gone.
	const freed = Math.min(...ports);
	const byPort = (await sql(`SELECT id FROM services WHERE port = ${freed} AND server_id = '${local.id}'`)).trim();
	await ok(call(srv, 'DELETE', `/services/${byPort}`, owner), 204);
	const again = await ok(create(owner, { name: 'race-again', kind: 'REDIS', environmentId: env }), 201);
	assert.equal((await sql(`SELECT port FROM services WHERE id = '${again.id}'`)).trim(), String(freed));
	for (const m of [...made, again]) if (m.id !== byPort) await ok(call(srv, 'DELETE', `/services/${m.id}`, owner), 204);
});

test('each_invalid_field_is_a_field_error', async () => {
	assert.deepEqual(await fieldErrors(create(owner, {})), {
		name: ['is required'], kind: ['is required'], environmentId: ['is required'],
	});
	const base = { name: 'ok-db', kind: 'POSTGRESQL', environmentId: env };
	const one = async (over, field) => {
		const f = await fieldErrors(create(owner, { ...base, ...over }));
		assert.deepEqual(Object.keys(f), [field], `${JSON.stringify(over)} -> ${JSON.stringify(f)}`);
		return f[field][0];
	};
	for (const name of ['Orders', 'orders_db', '9db', 'db-', 'a--b', 'a'.repeat(64), '', 7]) await one({ name }, 'name');
	assert.match(await one({ kind: 'MONGODB' }, 'kind'), /POSTGRESQL, MYSQL or REDIS/);
	await one({ kind: 'postgresql' }, 'kind');
	assert.match(await one({ version: 'latest' }, 'version'), /version number/);
	await one({ version: 16 }, 'version');
	await one({ version: '16.' }, 'version');
	assert.equal(await one({ version: '12' }, 'version'), 'must be one of 13, 14, 15, 16, 17 for POSTGRESQL');
	assert.equal(await one({ kind: 'REDIS', version: '8.4' }, 'version'), 'must be one of 6, 7 for REDIS');
	assert.equal(await one({ kind: 'MYSQL', version: '5.7' }, 'version'), 'must be one of 8.0, 8.4 for MYSQL');
	await one({ environmentId: 'production' }, 'environmentId');
	await one({ environmentId: RANDOM_ID }, 'environmentId');
	await one({ environmentId: otherEnv }, 'environmentId');
	await one({ environmentId: null }, 'environmentId');
	await one({ serverId: 'local' }, 'serverId');
	await one({ serverId: otherLocal.id }, 'serverId');
	await one({ serverId: RANDOM_ID }, 'serverId');
	await one({ description: 'x'.repeat(501) }, 'description');
	await one({ description: 'line\nbreak' }, 'description');
	await one({ password: 'mine' }, 'password');
	await one({ status: 'RUNNING' }, 'status');
	// A valid create after all that: nothing was written by the refusals.
	assert.equal((await ok(call(srv, 'GET', '/services?name=ok-db', owner))).length, 0);

	// PATCH: name, kind and serverId are fixed.
	const s = await ok(create(owner, { name: 'fixed-db', kind: 'POSTGRESQL', environmentId: env }), 201);
	const patch = (body) => fieldErrors(call(srv, 'PATCH', `/services/${s.id}`, owner, { body }));
	assert.deepEqual(await patch({ name: 'renamed' }), { name: ['cannot be changed'] });
	assert.deepEqual(await patch({ kind: 'MYSQL' }), { kind: ['cannot be changed'] });
	assert.deepEqual(await patch({ serverId: local.id }), { serverId: ['cannot be changed'] });
	assert.deepEqual(await patch({ version: '8.0' }), { version: ['must be one of 13, 14, 15, 16, 17 for POSTGRESQL'] });
	assert.deepEqual(Object.keys(await patch({ environmentId: otherEnv })), ['environmentId']);
	assert.deepEqual(await patch({ environmentId: null }), { environmentId: ['must not be null'] });
	assert.deepEqual(await patch({ credentials: {} }), { credentials: ['is not a known field'] });

	// Filters.
	for (const q of ['kind=MONGO', 'serverId=abc', 'projectId=abc', 'environmentId=1', 'status=DONE', 'name=Bad', 'limit=201', 'x=1']) {
		const f = await fieldErrors(call(srv, 'GET', `/services?${q}`, owner));
		assert.deepEqual(Object.keys(f), [q.split('=')[0]], q);
	}
});

test('names_are_unique_in_the_organization', async () => {
	await ok(create(owner, { name: 'unique-db', kind: 'REDIS', environmentId: env }), 201);
	h.assertError(await create(owner, { name: 'unique-db', kind: 'MYSQL', environmentId: env2 }), 409, 'SERVICE_EXISTS');
	await ok(create(other, { name: 'unique-db', kind: 'REDIS', environmentId: otherEnv }), 201);
});

test('patch_changes_description_version_and_environment', async () => {
	const s = await ok(create(owner, { name: 'move-db', kind: 'POSTGRESQL', version: '14', environmentId: env }), 201);
	const c = await ok(connection(owner, s.id));
	const a = await ok(call(srv, 'PATCH', `/services/${s.id}`, owner, { body: { version: '16', description: 'upgraded' } }));
	assert.equal(a.version, '16');
	assert.equal(a.description, 'upgraded');
	assert.equal(a.environmentId, env);
	const b = await ok(call(srv, 'PATCH', `/services/${s.id}`, owner, { body: { environmentId: env2 } }));
	assert.equal(b.environmentId, env2);
	assert.equal(b.projectId, project2.id, 'the project follows the environment');
	assert.equal(b.version, '16');
	assert.equal(b.name, 'move-db');
	assert.deepEqual(await ok(connection(owner, s.id)), c, 'credentials are unchanged');
	assert.deepEqual(await ok(call(srv, 'GET', `/services/${s.id}`, owner)), b);
});

test('list_filters_by_kind_server_project_environment_status_and_name', async () => {
	const srv2 = await ok(call(srv, 'POST', '/servers', owner, { body: { name: 'db-host' } }), 201);
	const r = await ok(create(owner, { name: 'f-redis', kind: 'REDIS', environmentId: env2, serverId: srv2.id }), 201);
	assert.equal(r.serverId, srv2.id);
	const m = await ok(create(owner, { name: 'f-mysql', kind: 'MYSQL', environmentId: env2 }), 201);
	const ids = async (q) => (await ok(call(srv, 'GET', `/services?limit=200&${q}`, owner))).map((s) => s.id);
	assert.deepEqual(await ids(`serverId=${srv2.id}`), [r.id]);
	assert.ok((await ids('kind=REDIS')).includes(r.id) && !(await ids('kind=REDIS')).includes(m.id));
	const inBlog = await ids(`projectId=${project2.id}`);
	assert.ok(inBlog.includes(r.id) && inBlog.includes(m.id));
	assert.ok(!(await ids(`projectId=${project.id}`)).includes(r.id));
	assert.ok((await ids(`environmentId=${env2}`)).includes(m.id));
	assert.deepEqual(await ids('name=f-mysql'), [m.id]);
	assert.ok((await ids('status=CREATED')).includes(m.id));
	assert.deepEqual(await ids('status=RUNNING'), []);
	const page = (await call(srv, 'GET', '/services?limit=1', owner)).json();
	assert.equal(page.data.length, 1);
	assert.equal(typeof page.pagination.nextCursor, 'string');
	// No other organization's services.
	assert.ok((await ok(call(srv, 'GET', '/services?limit=200', other))).every((s) => s.projectId === otherProject.id));
	await ok(call(srv, 'DELETE', `/services/${r.id}`, owner), 204);
	await ok(call(srv, 'DELETE', `/servers/${srv2.id}`, owner), 204);
});

test('start_stop_and_restart_queue_lifecycle_jobs', async () => {
	const s = await ok(create(owner, { name: 'life-db', kind: 'POSTGRESQL', environmentId: env }), 201);
	for (const verb of ['start', 'stop', 'restart']) {
		const job = await ok(call(srv, 'POST', `/services/${s.id}/${verb}`, owner), 202);
		assert.deepEqual(Object.keys(job).sort(), ['attempts', 'createdAt', 'errorMessage', 'finishedAt', 'id', 'kind', 'queue',
			'startedAt', 'status', 'targetId', 'targetType']);
		assert.equal(job.kind, `service.${verb}`);
		assert.equal(job.queue, 'lifecycle');
		assert.equal(job.status, 'QUEUED');
		assert.equal(job.targetType, 'service');
		assert.equal(job.targetId, s.id);
		const again = await ok(call(srv, 'POST', `/services/${s.id}/${verb}`, owner), 202);
		assert.equal(again.id, job.id, 'a queued job is answered again');
		assert.equal((await sql(`SELECT kind || ' ' || organization_id FROM jobs WHERE id = '${job.id}'`)).trim(),
			`service.${verb} ${owner.org.id}`);
	}
});

test('backups_are_requested_as_queued_work_and_listed', async () => {
	const s = await ok(create(owner, { name: 'backed-db', kind: 'POSTGRESQL', environmentId: env }), 201);
	assert.deepEqual(await ok(call(srv, 'GET', `/services/${s.id}/backups`, owner)), []);
	const asked = await call(srv, 'POST', `/services/${s.id}/backups`, owner);
	const b = await ok(asked, 202);
	assert.equal(asked.headers.location, `/jobs/${b.jobId}`, 'Location names the backup\'s job');
	assert.deepEqual(Object.keys(b).sort(), ['createdAt', 'errorMessage', 'finishedAt', 'id', 'jobId', 'scheduledFor',
		'serviceId', 'sha256', 'sizeBytes', 'startedAt', 'status']);
	assert.equal(b.status, 'QUEUED');
	assert.equal(b.serviceId, s.id);
	assert.equal(b.sizeBytes, null);
	assert.equal(b.startedAt, null);
	assert.equal(b.finishedAt, null);
	assert.match(b.createdAt, TS);
	const job = (await sql(`SELECT queue || ' ' || kind || ' ' || target_type || ' ' || target_id || ' ' || status || ' ' || (payload->>'backupId')
		FROM jobs WHERE id = '${b.jobId}'`)).trim();
	assert.equal(job, `lifecycle service.backup service ${s.id} QUEUED ${b.id}`);
	const again = await ok(call(srv, 'POST', `/services/${s.id}/backups`, owner), 202);
	assert.equal(again.id, b.id, 'a queued backup is answered again');
	assert.equal((await sql(`SELECT count(*) FROM service_backups WHERE service_id = '${s.id}'`)).trim(), '1');

	const list = await call(srv, 'GET', `/services/${s.id}/backups`, owner);
	assert.equal(list.status, 200);
	assert.deepEqual(list.json().data, [b]);
	assert.deepEqual(list.json().pagination, { nextCursor: null });
	assert.deepEqual(await ok(call(srv, 'GET', `/services/${s.id}/backups?status=QUEUED`, owner)), [b]);
	assert.deepEqual(await ok(call(srv, 'GET', `/services/${s.id}/backups?status=SUCCEEDED`, owner)), []);

	// Once the runner has taken it, a new request is a new backup.
	await sql(`UPDATE service_backups SET status = 'SUCCEEDED', size_bytes = 1234, file_path = '/nowhere/x.pgdump', sha256 = repeat('a', 64), started_at = now(), finished_at = now() WHERE id = '${b.id}'`);
	await sql(`UPDATE jobs SET status = 'SUCCEEDED' WHERE id = '${b.jobId}'`);
	const b2 = await ok(call(srv, 'POST', `/services/${s.id}/backups`, owner), 202);
	assert.notEqual(b2.id, b.id);
	assert.notEqual(b2.jobId, b.jobId);
	const all = await ok(call(srv, 'GET', `/services/${s.id}/backups`, owner));
	assert.deepEqual(all.map((x) => x.id), [b2.id, b.id], 'newest first');
	assert.equal(all[1].sizeBytes, 1234);
	assert.match(all[1].finishedAt, TS);
	assert.deepEqual(Object.keys(await fieldErrors(call(srv, 'GET', `/services/${s.id}/backups?status=DONE`, owner))), ['status']);
	assert.match(await sql(`SELECT metadata::text FROM audit_logs WHERE action = 'service.backup.requested' AND target_id = '${s.id}'`), new RegExp(b.id));
});

test('a_backup_whose_job_ends_unsettled_is_failed_with_the_jobs_reason', async () => {
	const s = await ok(create(owner, { name: 'orphan-db', kind: 'POSTGRESQL', environmentId: env }), 201);
	const b = await ok(call(srv, 'POST', `/services/${s.id}/backups`, owner), 202);
	// As the queue leaves a job whose worker died twice.
	await sql(`UPDATE service_backups SET status = 'RUNNING', started_at = now() WHERE id = '${b.id}'`);
	await sql(`UPDATE jobs SET status = 'FAILED', finished_at = now(), error_message = 'the worker restarted' WHERE id = '${b.jobId}'`);
	const [after] = await ok(call(srv, 'GET', `/services/${s.id}/backups`, owner));
	assert.equal(after.status, 'FAILED');
	assert.equal(after.errorMessage, 'the worker restarted');
	assert.equal(after.sha256, null);
	// SUCCEEDED only with a whole file recorded.
	const refused = await sql(`DO $$ BEGIN UPDATE service_backups SET status = 'SUCCEEDED', size_bytes = 1 WHERE id = '${b.id}';
		EXCEPTION WHEN check_violation THEN RAISE NOTICE 'refused'; END $$`).catch((e) => String(e));
	assert.equal((await sql(`SELECT status FROM service_backups WHERE id = '${b.id}'`)).trim(), 'FAILED', String(refused));
	await ok(call(srv, 'DELETE', `/services/${s.id}`, owner), 204);
});

test('a_restore_is_queued_with_its_audit_record_and_one_waits_at_a_time', async () => {
	const s = await ok(create(owner, { name: 'restored-db', kind: 'POSTGRESQL', environmentId: env }), 201);
	const made = (await sql(`INSERT INTO service_backups (organization_id, service_id, status, size_bytes, file_path, sha256, started_at, finished_at)
		SELECT organization_id, id, 'SUCCEEDED', 1, '/nowhere/' || g || '.pgdump', repeat('b', 64), now(), now()
		FROM services, generate_series(1, 2) g WHERE id = '${s.id}' RETURNING id`)).trim().split('\n');
	const [b1, b2] = made;
	const r1 = await call(srv, 'POST', `/services/${s.id}/backups/${b1}/restore`, owner);
	const j1 = await ok(r1, 202);
	assert.equal(r1.headers.location, `/jobs/${j1.id}`, 'the 202 names where its job is read');
	assert.deepEqual({ ...j1, id: 'x', createdAt: 'x' }, { id: 'x', queue: 'lifecycle', kind: 'service.restore', status: 'QUEUED',
		targetType: 'service', targetId: s.id, createdAt: 'x', attempts: 0, startedAt: null, finishedAt: null, errorMessage: null });
	assert.deepEqual(await ok(call(srv, 'GET', `/jobs/${j1.id}`, owner)), j1, 'GET /jobs/:id answers the same job');
	assert.equal((await sql(`SELECT payload->>'backupId' FROM jobs WHERE id = '${j1.id}'`)).trim(), b1);
	const again = await ok(call(srv, 'POST', `/services/${s.id}/backups/${b1}/restore`, owner), 202);
	assert.equal(again.id, j1.id, 'the same backup asked again answers its job');
	h.assertError(await call(srv, 'POST', `/services/${s.id}/backups/${b2}/restore`, owner), 409, 'RESTORE_PENDING');
	const audits = (await sql(`SELECT actor_user_id || ' ' || (metadata->>'backupId') || ' ' || (metadata->>'jobId') FROM audit_logs
		WHERE action = 'service.backup.restore_requested' AND target_id = '${s.id}' ORDER BY created_at`)).trim().split('\n');
	assert.deepEqual(audits, [`${owner.user.id} ${b1} ${j1.id}`, `${owner.user.id} ${b1} ${j1.id}`], 'who asked, each time');
	// Another organization's principal finds neither.
	h.assertError(await call(srv, 'POST', `/services/${s.id}/backups/${b1}/restore`, other), 404, 'NOT_FOUND');
	h.assertError(await call(srv, 'GET', `/services/${s.id}/backups/${b1}/download`, other), 404, 'NOT_FOUND');
	// A backup of another service is not this service's.
	const s2 = await ok(create(owner, { name: 'other-db', kind: 'POSTGRESQL', environmentId: env }), 201);
	h.assertError(await call(srv, 'POST', `/services/${s2.id}/backups/${b2}/restore`, owner), 404, 'NOT_FOUND');
	h.assertError(await call(srv, 'GET', `/services/${s2.id}/backups/${b2}/download`, owner), 404, 'NOT_FOUND');
	h.assertError(await call(srv, 'GET', `/services/${s.id}/backups/${b2}/download`, owner), 410, 'BACKUP_FILE_MISSING');
	for (const x of [s, s2]) await ok(call(srv, 'DELETE', `/services/${x.id}`, owner), 204);
});

test('the_backup_schedule_is_read_set_and_validated', async () => {
	const s = await ok(create(owner, { name: 'sched-db', kind: 'MYSQL', environmentId: env }), 201);
	const url = `/services/${s.id}/backups/schedule`;
	const def = await ok(call(srv, 'GET', url, owner));
	assert.deepEqual({ ...def, updatedAt: 'x' }, {
		enabled: false, frequency: 'DAILY', hourUtc: 3, weekday: null, retentionCount: 7, nextRunAt: null, updatedAt: 'x',
	});

	const weekly = await ok(call(srv, 'PUT', url, owner, {
		body: { enabled: true, frequency: 'WEEKLY', hourUtc: 4, weekday: 'SUNDAY', retentionCount: 14 },
	}));
	assert.equal(weekly.enabled, true);
	assert.equal(weekly.frequency, 'WEEKLY');
	assert.equal(weekly.hourUtc, 4);
	assert.equal(weekly.weekday, 'SUNDAY');
	assert.equal(weekly.retentionCount, 14);
	const next = new Date(weekly.nextRunAt);
	assert.equal(next.getUTCDay(), 0);
	assert.equal(next.getUTCHours(), 4);
	assert.equal(next.getUTCMinutes(), 0);
	assert.ok(next > Date.now() && next - Date.now() <= 7 * 86400e3, weekly.nextRunAt);
	assert.deepEqual(await ok(call(srv, 'GET', url, owner)), weekly);

	const daily = await ok(call(srv, 'PUT', url, owner, { body: { enabled: true, frequency: 'DAILY', hourUtc: 0 } }));
	assert.equal(daily.retentionCount, 7, 'the default retention');
	assert.equal(daily.weekday, null);
	const dn = new Date(daily.nextRunAt);
	assert.equal(dn.getUTCHours(), 0);
	assert.ok(dn > Date.now() && dn - Date.now() <= 86400e3);

	const hourly = await ok(call(srv, 'PUT', url, owner, { body: { enabled: true, frequency: 'HOURLY', hourUtc: null, retentionCount: 100 } }));
	assert.equal(hourly.hourUtc, null);
	const hn = new Date(hourly.nextRunAt);
	assert.equal(hn.getUTCMinutes(), 0);
	assert.ok(hn > Date.now() && hn - Date.now() <= 3600e3);

	const off = await ok(call(srv, 'PUT', url, owner, { body: { enabled: false, frequency: 'DAILY', hourUtc: 23, retentionCount: 1 } }));
	assert.equal(off.nextRunAt, null);
	assert.equal(off.hourUtc, 23);

	const put = (body) => fieldErrors(call(srv, 'PUT', url, owner, { body }));
	assert.deepEqual(await put({}), { enabled: ['is required'], frequency: ['is required'] });
	const d = { enabled: true, frequency: 'DAILY', hourUtc: 2 };
	assert.deepEqual(await put({ ...d, enabled: 'yes' }), { enabled: ['must be true or false'] });
	assert.deepEqual(Object.keys(await put({ ...d, frequency: 'MONTHLY' })), ['frequency']);
	assert.deepEqual(await put({ ...d, hourUtc: 24 }), { hourUtc: ['must be a whole number from 0 to 23'] });
	assert.deepEqual(await put({ ...d, hourUtc: -1 }), { hourUtc: ['must be a whole number from 0 to 23'] });
	assert.deepEqual(await put({ ...d, hourUtc: 1.5 }), { hourUtc: ['must be a whole number from 0 to 23'] });
	assert.deepEqual(await put({ ...d, retentionCount: 0 }), { retentionCount: ['must be a whole number from 1 to 100'] });
	assert.deepEqual(await put({ ...d, retentionCount: 101 }), { retentionCount: ['must be a whole number from 1 to 100'] });
	assert.deepEqual(await put({ enabled: true, frequency: 'DAILY' }), { hourUtc: ['is required when frequency is DAILY or WEEKLY'] });
	assert.deepEqual(await put({ ...d, weekday: 'MONDAY' }), { weekday: ['must be absent or null unless frequency is WEEKLY'] });
	assert.deepEqual(await put({ enabled: true, frequency: 'HOURLY', hourUtc: 5 }), { hourUtc: ['must be absent or null when frequency is HOURLY'] });
	assert.deepEqual(await put({ ...d, frequency: 'WEEKLY' }), { weekday: ['is required when frequency is WEEKLY'] });
	assert.deepEqual(Object.keys(await put({ ...d, frequency: 'WEEKLY', weekday: 'FUNDAY' })), ['weekday']);
	assert.deepEqual(await put({ ...d, cron: '0 3 * * *' }), { cron: ['is not a known field'] });
	assert.deepEqual(await ok(call(srv, 'GET', url, owner)), off, 'refusals changed nothing');
	assert.match(await sql(`SELECT count(*) FROM audit_logs WHERE action = 'service.backup_schedule.updated' AND target_id = '${s.id}'`), /^4/);
});

test('delete_removes_the_service_cancels_its_queued_work_and_queues_its_removal', async () => {
	const s = await ok(create(owner, { name: 'gone-db', kind: 'REDIS', environmentId: env }), 201);
	const b = await ok(call(srv, 'POST', `/services/${s.id}/backups`, owner), 202);
	const start = await ok(call(srv, 'POST', `/services/${s.id}/start`, owner), 202);
	await ok(call(srv, 'DELETE', `/services/${s.id}`, owner), 204);
	for (const id of [b.jobId, start.id]) {
		assert.equal((await sql(`SELECT status FROM jobs WHERE id = '${id}'`)).trim(), 'CANCELLED', 'queued work is cancelled');
	}
	h.assertError(await call(srv, 'GET', `/services/${s.id}`, owner), 404, 'NOT_FOUND');
	h.assertError(await call(srv, 'DELETE', `/services/${s.id}`, owner), 404, 'NOT_FOUND');
	h.assertError(await connection(owner, s.id), 404, 'NOT_FOUND');
	h.assertError(await call(srv, 'GET', `/services/${s.id}/backups`, owner), 404, 'NOT_FOUND');
	assert.equal((await sql(`SELECT count(*) FROM service_backups WHERE id = '${b.id}'`)).trim(), '0');
	const job = (await sql(`SELECT payload->>'name' || ' ' || (payload->>'kind') || ' ' || (payload->>'serverId') FROM jobs
		WHERE kind = 'service.delete' AND target_id = '${s.id}'`)).trim();
	assert.equal(job, `gone-db REDIS ${local.id}`);
	assert.match(await sql(`SELECT metadata::text FROM audit_logs WHERE action = 'service.deleted' AND target_id = '${s.id}'`), /gone-db/);
});

test('another_organizations_service_is_not_found', async () => {
	const s = await ok(create(owner, { name: 'private-db', kind: 'POSTGRESQL', environmentId: env }), 201);
	const audits = (await connectionAudits(s.id)).records.length;
	for (const id of [s.id, RANDOM_ID]) {
		const calls = [
			['GET', `/services/${id}`], ['PATCH', `/services/${id}`, { description: 'x' }], ['PATCH', `/services/${id}`, {}],
			['POST', `/services/${id}/start`], ['POST', `/services/${id}/stop`], ['POST', `/services/${id}/restart`],
			['GET', `/services/${id}/connection`], ['GET', `/services/${id}/backups`], ['POST', `/services/${id}/backups`],
			['GET', `/services/${id}/backups/schedule`],
			['PUT', `/services/${id}/backups/schedule`, { enabled: true, frequency: 'HOURLY' }],
			['DELETE', `/services/${id}`],
		];
		for (const [method, path, body] of calls) {
			h.assertError(await call(srv, method, path, other, { body }), 404, 'NOT_FOUND');
		}
	}
	h.assertError(await call(srv, 'GET', '/services/not-a-uuid', owner), 404, 'NOT_FOUND');
	h.assertError(await call(srv, 'GET', '/services/not-a-uuid/backups', owner), 404, 'NOT_FOUND');
	assert.equal((await connectionAudits(s.id)).records.length, audits, 'a refused disclosure writes no record');
	assert.equal((await sql(`SELECT count(*) FROM jobs WHERE target_id = '${s.id}'`)).trim(), '0');
	const still = await ok(call(srv, 'GET', `/services/${s.id}`, owner));
	assert.equal(still.description, '');
	assert.equal((await ok(call(srv, 'GET', `/services/${s.id}/backups/schedule`, owner))).enabled, false);
});
