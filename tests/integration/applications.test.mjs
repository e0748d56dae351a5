// Applications, their lifecycle routes and their volumes: every route's
// success and each validation rule (one failure per rule, with its field),
// 404 across organizations, the applications quota of the free plan, the
// jobs queued (rows read from PostgreSQL), deletes cascading with the
// runner's job, and host-path volumes refused to anyone but an operator.
// Tests run in file order and share the organizations made at the top.

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import * as h from './harness.mjs';
const { TS, UUID, NIL } = h;
import { call, ok, setup, signup, member } from './identity.mjs';

h.stewarddPath();
const pg = await h.startPostgres();
const srv = await h.startStewardd({ db: pg, env: { SIGNUP_ENABLED: 'true' } });
after(h.cleanupAll);

const sql = async (q) => (await pg.psql(q, srv.dbName)).trim();

const owner = await setup(srv); // the operator
const plain = await member(srv, owner, 'mia@example.com', 'MEMBER'); // not an operator
const other = await signup(srv, 'other@example.com', 'Other'); // another organization

async function fields(p) {
	return h.assertError(await p, 422, 'VALIDATION_FAILED').fields;
}
async function project(who, name) {
	const p = await ok(call(srv, 'POST', '/projects', who, { body: { name } }), 201);
	return { id: p.id, env: p.environments[0].id };
}
const localServer = (who) => sql(`SELECT id FROM servers WHERE organization_id = '${who.org.id}' AND is_local`);

const web = await project(owner, 'web');
const staging = await ok(call(srv, 'POST', `/projects/${web.id}/environments`, owner, { body: { name: 'staging' } }), 201);
const shop = await project(owner, 'shop');
const theirs = await project(other, 'theirs');
const theirApp = await ok(call(srv, 'POST', '/applications', other, { body: { name: 'their-app', environmentId: theirs.env } }), 201);

const create = (body, who = owner) => call(srv, 'POST', '/applications', who, { body });
const newApp = (name, extra = {}, who = owner, env = web.env) => ok(create({ name, environmentId: env, ...extra }, who), 201);

// ------------------------------------------------------------ create

test('create_with_defaults_answers_every_member', async () => {
	const a = await newApp('api');
	assert.match(a.id, UUID);
	assert.deepEqual({ ...a, id: undefined, createdAt: undefined, updatedAt: undefined }, {
		id: undefined,
		name: 'api',
		description: '',
		projectId: web.id,
		environmentId: web.env,
		serverId: await localServer(owner),
		sourceKind: 'GIT',
		dockerfilePath: null,
		buildContext: '.',
		startCommand: null,
		port: 3000,
		healthCheckPath: '/',
		healthCheckExpectedStatus: 200,
		healthCheckTimeoutSeconds: 5,
		healthCheckRetries: 12,
		deployStrategy: 'RECREATE',
		imageRetentionCount: 3,
		cpuLimitMillicores: null,
		memoryLimitMb: null,
		status: 'CREATED',
		createdAt: undefined,
		updatedAt: undefined,
	});
	assert.match(a.createdAt, TS);
	assert.match(a.updatedAt, TS);
	assert.deepEqual(await ok(call(srv, 'GET', `/applications/${a.id}`, owner)), a);
	const audit = await sql(`SELECT metadata::text FROM audit_logs WHERE action = 'application.created' AND target_id = '${a.id}'`);
	assert.deepEqual(JSON.parse(audit), { name: 'api' });
});

test('create_with_every_member_given', async () => {
	const body = {
		name: 'worker',
		description: 'Background jobs',
		environmentId: staging.id,
		serverId: await localServer(owner),
		sourceKind: 'UPLOAD',
		dockerfilePath: 'deploy/Dockerfile.prod',
		buildContext: 'services/worker',
		startCommand: ['node', '--max-old-space-size=256', 'dist/worker.js', 'a b; rm -rf / $(x)'],
		port: 8080,
		healthCheckPath: '/healthz?full=1',
		healthCheckExpectedStatus: 204,
		healthCheckTimeoutSeconds: 300,
		healthCheckRetries: 1,
		deployStrategy: 'BLUE_GREEN',
		imageRetentionCount: 50,
		cpuLimitMillicores: 10,
		memoryLimitMb: 1048576,
	};
	const a = await ok(create(body), 201);
	for (const [k, v] of Object.entries(body)) assert.deepEqual(a[k], v, k);
	assert.equal(a.projectId, web.id);
	assert.equal(await sql(`SELECT start_command::text FROM applications WHERE id = '${a.id}'`),
		'["node", "--max-old-space-size=256", "dist/worker.js", "a b; rm -rf / $(x)"]');
});

test('create_refuses_each_bad_member_with_its_field', async () => {
	const f0 = await fields(create({}));
	assert.deepEqual(f0.name, ['is required']);
	assert.deepEqual(f0.environmentId, ['is required']);
	const cases = [
		['name', ''], ['name', 'Api'], ['name', 'my_app'], ['name', '9lives'], ['name', 'api-'],
		['name', 'a'.repeat(64)], ['name', 42], ['name', null],
		['description', 'x'.repeat(501)], ['description', 'line\nbreak'], ['description', null],
		['environmentId', 'production'], ['environmentId', 7],
		['serverId', 'local'], ['serverId', null],
		['sourceKind', 'SVN'], ['sourceKind', 'git'],
		['dockerfilePath', '/Dockerfile'], ['dockerfilePath', '../Dockerfile'], ['dockerfilePath', 'a//b'],
		['dockerfilePath', 'docker/'], ['dockerfilePath', ''], ['dockerfilePath', 3],
		['buildContext', '/'], ['buildContext', '..'], ['buildContext', 'a/../b'], ['buildContext', null],
		['startCommand', 'npm start'], ['startCommand', []], ['startCommand', Array(65).fill('x')],
		['startCommand', ['node', 1]], ['startCommand', ['']], ['startCommand', ['a\u0001b']],
		['startCommand', [['nested']]], ['startCommand', { cmd: 'x' }],
		['port', 0], ['port', 65536], ['port', '3000'], ['port', 80.5], ['port', null],
		['healthCheckPath', 'healthz'], ['healthCheckPath', '/a b'], ['healthCheckPath', '/x#frag'],
		['healthCheckPath', '//evil.example'],
		['healthCheckExpectedStatus', 99], ['healthCheckExpectedStatus', 600],
		['healthCheckTimeoutSeconds', 0], ['healthCheckTimeoutSeconds', 301],
		['healthCheckRetries', 0], ['healthCheckRetries', 101],
		['deployStrategy', 'ROLLING'], ['deployStrategy', 'recreate'],
		['imageRetentionCount', 0], ['imageRetentionCount', 51],
		['cpuLimitMillicores', 9], ['cpuLimitMillicores', 256001], ['cpuLimitMillicores', '500'],
		['memoryLimitMb', 15], ['memoryLimitMb', 1048577],
	];
	for (const [key, value] of cases) {
		const f = await fields(create({ name: 'valid-name', environmentId: web.env, [key]: value }));
		assert.ok(f[key], `${key}=${JSON.stringify(value)} -> ${JSON.stringify(f)}`);
		assert.deepEqual(Object.keys(f), [key], `only ${key} in ${JSON.stringify(f)}`);
	}
	for (const key of ['status', 'projectId', 'id', 'createdAt', 'healthCheck']) {
		const f = await fields(create({ name: 'valid-name', environmentId: web.env, [key]: 'x' }));
		assert.deepEqual(f[key], ['is not a known field'], key);
	}
	const f = await fields(create({ name: 'valid-name', environmentId: web.env, startCommand: ['ok', 'bad\u0007'] }));
	assert.match(f.startCommand[0], /^argument 2 /);
	// A NUL never gets as far: the JSON reader refuses it.
	h.assertError(await create({ name: 'valid-name', environmentId: web.env, startCommand: ['a\u0000b'] }), 400, 'INVALID_JSON');
	assert.equal(await sql(`SELECT count(*) FROM applications WHERE name = 'valid-name'`), '0');
});

test('an_environment_or_server_not_of_the_organization_is_422_on_that_field', async () => {
	const envOf = await fields(create({ name: 'x', environmentId: theirs.env }));
	assert.deepEqual(envOf, { environmentId: ['does not exist'] });
	assert.deepEqual(await fields(create({ name: 'x', environmentId: NIL })), { environmentId: ['does not exist'] });
	const srvOf = await fields(create({ name: 'x', environmentId: web.env, serverId: await localServer(other) }));
	assert.deepEqual(srvOf, { serverId: ['does not exist'] });
	assert.deepEqual(await fields(create({ name: 'x', environmentId: web.env, serverId: NIL })), { serverId: ['does not exist'] });
});

test('a_taken_name_is_409_APPLICATION_EXISTS_in_the_organization_only', async () => {
	h.assertError(await create({ name: 'api', environmentId: shop.env }), 409, 'APPLICATION_EXISTS');
	const mine = await newApp('api', {}, other, theirs.env);
	assert.equal(mine.name, 'api');
});

// ------------------------------------------------------------ get and list

test('get_of_another_organization_or_a_bad_id_is_404', async () => {
	for (const p of [`/applications/${theirApp.id}`, `/applications/${NIL}`, '/applications/api']) {
		h.assertError(await call(srv, 'GET', p, owner), 404, 'NOT_FOUND');
	}
	assert.equal((await ok(call(srv, 'GET', `/applications/${theirApp.id}`, other))).name, 'their-app');
});

test('list_filters_and_pages', async () => {
	const shopApp = await newApp('shop-front', {}, owner, shop.env);
	const names = async (q) => (await ok(call(srv, 'GET', `/applications${q}`, owner))).map((a) => a.name).sort();
	assert.deepEqual(await names(''), ['api', 'shop-front', 'worker']);
	assert.deepEqual(await names(`?projectId=${shop.id}`), ['shop-front']);
	assert.deepEqual(await names(`?projectId=${web.id}`), ['api', 'worker']);
	assert.deepEqual(await names(`?environmentId=${staging.id}`), ['worker']);
	assert.deepEqual(await names(`?serverId=${await localServer(owner)}`), ['api', 'shop-front', 'worker']);
	assert.deepEqual(await names(`?serverId=${NIL}`), []);
	assert.deepEqual(await names('?status=CREATED'), ['api', 'shop-front', 'worker']);
	assert.deepEqual(await names('?status=RUNNING'), []);
	assert.deepEqual(await names('?name=worker'), ['worker']);
	assert.deepEqual(await names(`?projectId=${theirs.id}`), []);
	assert.deepEqual(await names(`?projectId=${web.id}&environmentId=${web.env}`), ['api']);
	// Pages, oldest first.
	const seen = [];
	let cursor = null;
	for (let i = 0; i < 5; i++) {
		const res = await call(srv, 'GET', `/applications?limit=1&order=asc${cursor ? `&cursor=${cursor}` : ''}`, owner);
		assert.equal(res.status, 200, res.text);
		seen.push(...res.json().data.map((a) => a.name));
		cursor = res.json().pagination.nextCursor;
		if (!cursor) break;
	}
	assert.deepEqual(seen, ['api', 'worker', 'shop-front']);
	await ok(call(srv, 'DELETE', `/applications/${shopApp.id}`, owner), 204);
	// Bad parameters.
	const q = (s) => fields(call(srv, 'GET', `/applications?${s}`, owner));
	assert.ok((await q('projectId=web')).projectId);
	assert.ok((await q('environmentId=1')).environmentId);
	assert.ok((await q('serverId=local')).serverId);
	assert.ok((await q('status=running')).status);
	assert.ok((await q('name=Bad_Name')).name);
	assert.deepEqual((await q('project=web')).project, ['is not a known parameter']);
	assert.ok((await q('limit=0')).limit);
	assert.ok((await q('order=sideways')).order);
});

// ------------------------------------------------------------ update

test('update_changes_only_the_members_given_and_null_clears', async () => {
	const a = await newApp('patchy', { cpuLimitMillicores: 500, memoryLimitMb: 256, dockerfilePath: 'Dockerfile', startCommand: ['x'] });
	const path = `/applications/${a.id}`;
	const u = await ok(call(srv, 'PATCH', path, owner, { body: { port: 8081, deployStrategy: 'BLUE_GREEN', description: 'now' } }));
	assert.equal(u.port, 8081);
	assert.equal(u.deployStrategy, 'BLUE_GREEN');
	assert.equal(u.description, 'now');
	assert.equal(u.cpuLimitMillicores, 500);
	assert.equal(u.dockerfilePath, 'Dockerfile');
	assert.deepEqual(u.startCommand, ['x']);
	assert.equal(u.createdAt, a.createdAt);
	const cleared = await ok(call(srv, 'PATCH', path, owner, {
		body: { cpuLimitMillicores: null, memoryLimitMb: null, dockerfilePath: null, startCommand: null, sourceKind: 'UPLOAD' },
	}));
	assert.equal(cleared.cpuLimitMillicores, null);
	assert.equal(cleared.memoryLimitMb, null);
	assert.equal(cleared.dockerfilePath, null);
	assert.equal(cleared.startCommand, null);
	assert.equal(cleared.sourceKind, 'UPLOAD');
	assert.equal(cleared.port, 8081);
	const renamed = await ok(call(srv, 'PATCH', path, owner, { body: { name: 'patched', healthCheckPath: '/ready', healthCheckRetries: 3 } }));
	assert.equal(renamed.name, 'patched');
	assert.equal(renamed.healthCheckPath, '/ready');
	assert.equal(renamed.healthCheckRetries, 3);
	assert.deepEqual(await ok(call(srv, 'GET', path, owner)), renamed);
	// An empty body changes nothing but answers the object.
	const same = await ok(call(srv, 'PATCH', path, owner, { body: {} }));
	assert.equal(same.name, 'patched');
});

test('each_member_patched_alone_changes_that_member_only', async () => {
	const a = await newApp('one-by-one');
	const path = `/applications/${a.id}`;
	const changes = {
		name: 'one-by-one-b', description: 'd', environmentId: staging.id, sourceKind: 'UPLOAD',
		dockerfilePath: 'Dockerfile.dev', buildContext: 'app', startCommand: ['./run', '--port=1'], port: 1,
		healthCheckPath: '/up', healthCheckExpectedStatus: 599, healthCheckTimeoutSeconds: 1,
		healthCheckRetries: 100, deployStrategy: 'BLUE_GREEN', imageRetentionCount: 1,
		cpuLimitMillicores: 256000, memoryLimitMb: 16,
	};
	let before = a;
	for (const [k, v] of Object.entries(changes)) {
		const after = await ok(call(srv, 'PATCH', path, owner, { body: { [k]: v } }));
		const want = { ...before, [k]: v, updatedAt: after.updatedAt };
		if (k === 'environmentId') want.projectId = web.id;
		assert.deepEqual(after, want, k);
		before = after;
	}
});

test('update_moves_between_environments_and_the_project_follows', async () => {
	const a = await newApp('mover');
	const path = `/applications/${a.id}`;
	const moved = await ok(call(srv, 'PATCH', path, owner, { body: { environmentId: shop.env } }));
	assert.equal(moved.environmentId, shop.env);
	assert.equal(moved.projectId, shop.id);
	assert.deepEqual(await fields(call(srv, 'PATCH', path, owner, { body: { environmentId: theirs.env } })), { environmentId: ['does not exist'] });
	assert.deepEqual(await fields(call(srv, 'PATCH', path, owner, { body: { environmentId: NIL } })), { environmentId: ['does not exist'] });
	const back = await ok(call(srv, 'PATCH', path, owner, { body: { environmentId: staging.id } }));
	assert.equal(back.projectId, web.id);
	assert.equal(back.environmentId, staging.id);
});

test('update_refuses_bad_members_a_server_change_and_a_taken_name', async () => {
	const a = await newApp('strict');
	const path = `/applications/${a.id}`;
	const patch = (body) => fields(call(srv, 'PATCH', path, owner, { body }));
	assert.deepEqual((await patch({ serverId: await localServer(owner) })).serverId, ['cannot be changed']);
	assert.ok((await patch({ port: 0 })).port);
	assert.ok((await patch({ name: null })).name);
	assert.ok((await patch({ environmentId: null })).environmentId);
	assert.ok((await patch({ imageRetentionCount: 51 })).imageRetentionCount);
	assert.ok((await patch({ startCommand: [] })).startCommand);
	assert.ok((await patch({ buildContext: '../up' })).buildContext);
	assert.deepEqual((await patch({ status: 'RUNNING' })).status, ['is not a known field']);
	h.assertError(await call(srv, 'PATCH', path, owner, { body: { name: 'api' } }), 409, 'APPLICATION_EXISTS');
	h.assertError(await call(srv, 'PATCH', `/applications/${theirApp.id}`, owner, { body: { name: 'stolen' } }), 404, 'NOT_FOUND');
	h.assertError(await call(srv, 'PATCH', `/applications/${NIL}`, owner, { body: {} }), 404, 'NOT_FOUND');
	assert.equal((await ok(call(srv, 'GET', `/applications/${theirApp.id}`, other))).name, 'their-app');
	assert.equal((await ok(call(srv, 'GET', path, owner))).name, 'strict');
});

// ------------------------------------------------------------ lifecycle

test('start_stop_restart_queue_lifecycle_jobs_and_a_repeat_answers_the_queued_one', async () => {
	const a = await newApp('runner');
	const jobs = {};
	for (const verb of ['start', 'stop', 'restart']) {
		const res = await call(srv, 'POST', `/applications/${a.id}/${verb}`, owner);
		assert.equal(res.status, 202, res.text);
		const j = res.json().data;
		assert.match(j.id, UUID);
		assert.deepEqual({ ...j, id: undefined, createdAt: undefined }, {
			id: undefined, createdAt: undefined, queue: 'lifecycle', kind: `application.${verb}`, status: 'QUEUED',
			targetType: 'application', targetId: a.id, attempts: 0, startedAt: null, finishedAt: null, errorMessage: null,
		});
		assert.match(j.createdAt, TS);
		assert.equal(res.headers.location, `/jobs/${j.id}`);
		jobs[verb] = j.id;
		const again = await ok(call(srv, 'POST', `/applications/${a.id}/${verb}`, owner), 202);
		assert.equal(again.id, j.id, `${verb} again answers the queued job`);
	}
	assert.equal(new Set(Object.values(jobs)).size, 3);
	const rows = await sql(`SELECT kind || ' ' || queue || ' ' || status || ' ' || created_by FROM jobs WHERE target_id = '${a.id}' ORDER BY created_at`);
	assert.deepEqual(rows.split('\n'), ['start', 'stop', 'restart'].map((v) => `application.${v} lifecycle QUEUED ${owner.user.id}`));
	// Once the runner has taken it, asking again queues a new one.
	await sql(`UPDATE jobs SET status = 'RUNNING' WHERE id = '${jobs.start}'`);
	const fresh = await ok(call(srv, 'POST', `/applications/${a.id}/start`, owner), 202);
	assert.notEqual(fresh.id, jobs.start);
	const audit = await sql(`SELECT count(*) FROM audit_logs WHERE action = 'application.start' AND target_id = '${a.id}'`);
	assert.equal(audit, '3');
});

test('lifecycle_routes_of_another_organization_are_404_and_queue_nothing', async () => {
	for (const verb of ['start', 'stop', 'restart']) {
		h.assertError(await call(srv, 'POST', `/applications/${theirApp.id}/${verb}`, owner), 404, 'NOT_FOUND');
		h.assertError(await call(srv, 'POST', `/applications/${NIL}/${verb}`, owner), 404, 'NOT_FOUND');
		h.assertError(await call(srv, 'POST', `/applications/nope/${verb}`, owner), 404, 'NOT_FOUND');
	}
	assert.equal(await sql(`SELECT count(*) FROM jobs WHERE target_id = '${theirApp.id}'`), '0');
});

// ------------------------------------------------------------ volumes

test('volumes_create_get_list_update_delete', async () => {
	const a = await newApp('stateful');
	const base = `/applications/${a.id}/volumes`;
	assert.deepEqual(await ok(call(srv, 'GET', base, owner)), []);
	const v = await ok(call(srv, 'POST', base, owner, { body: { name: 'data', mountPath: '/var/lib/data' } }), 201);
	assert.match(v.id, UUID);
	assert.equal(v.name, 'data');
	assert.equal(v.applicationId, a.id);
	assert.equal(v.mountPath, '/var/lib/data');
	assert.equal(v.hostPath, null);
	assert.match(v.createdAt, TS);
	assert.match(v.updatedAt, TS);
	assert.deepEqual(await ok(call(srv, 'GET', `${base}/${v.id}`, owner)), v);
	const cache = await ok(call(srv, 'POST', base, owner, { body: { name: 'cache', mountPath: '/cache', hostPath: null } }), 201);
	assert.deepEqual((await ok(call(srv, 'GET', `${base}?order=asc`, owner))).map((x) => x.name), ['data', 'cache']);
	assert.deepEqual((await ok(call(srv, 'GET', `${base}?name=cache`, owner))).map((x) => x.id), [cache.id]);
	const page = (await call(srv, 'GET', `${base}?limit=1`, owner)).json();
	assert.deepEqual(page.data.map((x) => x.name), ['cache']);
	assert.ok(page.pagination.nextCursor);
	const next = (await call(srv, 'GET', `${base}?limit=1&cursor=${page.pagination.nextCursor}`, owner)).json();
	assert.deepEqual(next.data.map((x) => x.name), ['data']);
	assert.equal(next.pagination.nextCursor, null);
	const moved = await ok(call(srv, 'PATCH', `${base}/${v.id}`, owner, { body: { mountPath: '/srv/data' } }));
	assert.equal(moved.mountPath, '/srv/data');
	assert.equal(moved.name, 'data');
	await ok(call(srv, 'DELETE', `${base}/${cache.id}`, owner), 204);
	h.assertError(await call(srv, 'DELETE', `${base}/${cache.id}`, owner), 404, 'NOT_FOUND');
	h.assertError(await call(srv, 'GET', `${base}/${cache.id}`, owner), 404, 'NOT_FOUND');
	const job = await sql(`SELECT kind || ' ' || status || ' ' || payload::text || ' ' || created_by FROM jobs WHERE target_id = '${cache.id}'`);
	const [kind, status, ...rest] = job.split(' ');
	assert.equal(kind, 'volume.delete');
	assert.equal(status, 'QUEUED');
	assert.ok(rest.join(' ').endsWith(owner.user.id));
	const payload = JSON.parse(rest.join(' ').slice(0, -owner.user.id.length - 1));
	assert.deepEqual(payload, { applicationId: a.id, serverId: await localServer(owner), name: 'cache' });
	assert.deepEqual((await ok(call(srv, 'GET', base, owner))).map((x) => x.name), ['data']);
});

test('volume_members_are_validated_one_rule_each', async () => {
	const a = await newApp('vol-rules');
	const base = `/applications/${a.id}/volumes`;
	const post = (body) => fields(call(srv, 'POST', base, owner, { body }));
	const f0 = await post({});
	assert.deepEqual(f0.name, ['is required']);
	assert.deepEqual(f0.mountPath, ['is required']);
	for (const name of ['Data', 'da_ta', '', 'x'.repeat(64), 5]) {
		assert.deepEqual(Object.keys(await post({ name, mountPath: '/d' })), ['name'], `name ${name}`);
	}
	for (const mountPath of ['data', '/', '/proc/x', '/sys', '/dev/shm', '/a/../b', '/a/./b', '/a//b', '/a/', '/a b', `/${'x'.repeat(255)}`, null]) {
		assert.deepEqual(Object.keys(await post({ name: 'd', mountPath })), ['mountPath'], `mountPath ${mountPath}`);
	}
	// Host paths are checked for the operator, who may set them.
	for (const hostPath of ['relative', '/', '/etc', '/etc/ssl', '/var/run/docker.sock', '/var', '/proc/1', '/a/../etc']) {
		assert.deepEqual(Object.keys(await post({ name: 'd', mountPath: '/d', hostPath })), ['hostPath'], `hostPath ${hostPath}`);
	}
	assert.deepEqual((await post({ name: 'd', mountPath: '/d', size: 10 })).size, ['is not a known field']);
	const v = await ok(call(srv, 'POST', base, owner, { body: { name: 'd', mountPath: '/d' } }), 201);
	const patch = (body) => fields(call(srv, 'PATCH', `${base}/${v.id}`, owner, { body }));
	assert.deepEqual((await patch({ name: 'e' })).name, ['cannot be changed']);
	assert.ok((await patch({ mountPath: '/proc' })).mountPath);
	assert.ok((await patch({ mountPath: null })).mountPath);
	assert.ok((await patch({ hostPath: '/boot' })).hostPath);
	assert.deepEqual((await patch({ id: v.id })).id, ['is not a known field']);
	assert.ok((await fields(call(srv, 'GET', `${base}?name=Bad`, owner))).name);
	assert.ok((await fields(call(srv, 'GET', `${base}?what=1`, owner))).what);
});

test('volume_name_and_mount_path_are_unique_in_the_application', async () => {
	const a = await newApp('vol-unique');
	const b = await newApp('vol-unique-2');
	const base = `/applications/${a.id}/volumes`;
	const v = await ok(call(srv, 'POST', base, owner, { body: { name: 'data', mountPath: '/data' } }), 201);
	const w = await ok(call(srv, 'POST', base, owner, { body: { name: 'logs', mountPath: '/logs' } }), 201);
	h.assertError(await call(srv, 'POST', base, owner, { body: { name: 'data', mountPath: '/other' } }), 409, 'VOLUME_EXISTS');
	h.assertError(await call(srv, 'POST', base, owner, { body: { name: 'other', mountPath: '/data' } }), 409, 'VOLUME_MOUNT_PATH_EXISTS');
	h.assertError(await call(srv, 'PATCH', `${base}/${w.id}`, owner, { body: { mountPath: '/data' } }), 409, 'VOLUME_MOUNT_PATH_EXISTS');
	// Its own mount path again is no conflict; another application's names are its own.
	assert.equal((await ok(call(srv, 'PATCH', `${base}/${v.id}`, owner, { body: { mountPath: '/data' } }))).mountPath, '/data');
	await ok(call(srv, 'POST', `/applications/${b.id}/volumes`, owner, { body: { name: 'data', mountPath: '/data' } }), 201);
});

test('at_most_20_volumes_per_application_409_VOLUME_LIMIT_REACHED', async () => {
	const a = await newApp('vol-many');
	const base = `/applications/${a.id}/volumes`;
	for (let i = 0; i < 20; i++) {
		await ok(call(srv, 'POST', base, owner, { body: { name: `v${i}`, mountPath: `/v${i}` } }), 201);
	}
	h.assertError(await call(srv, 'POST', base, owner, { body: { name: 'v20', mountPath: '/v20' } }), 409, 'VOLUME_LIMIT_REACHED');
	assert.equal(await sql(`SELECT count(*) FROM volumes WHERE application_id = '${a.id}'`), '20');
	const first = (await ok(call(srv, 'GET', `${base}?order=asc&limit=1`, owner)))[0];
	await ok(call(srv, 'DELETE', `${base}/${first.id}`, owner), 204);
	await ok(call(srv, 'POST', base, owner, { body: { name: 'v20', mountPath: '/v20' } }), 201);
});

test('host_paths_are_refused_403_to_a_non_operator_and_accepted_for_the_operator', async () => {
	const a = await newApp('binder');
	const base = `/applications/${a.id}/volumes`;
	const refused = h.assertError(await call(srv, 'POST', base, plain, { body: { name: 'h', mountPath: '/h', hostPath: '/srv/h' } }), 403, 'FORBIDDEN');
	assert.equal(refused.message, 'Host paths require the operator role.');
	// Even an invalid body: the host path is refused first, whatever else.
	h.assertError(await call(srv, 'POST', base, plain, { body: { hostPath: 'x' } }), 403, 'FORBIDDEN');
	assert.equal(await sql(`SELECT count(*) FROM volumes WHERE application_id = '${a.id}'`), '0');
	// A member may create named volumes (hostPath null is none).
	const named = await ok(call(srv, 'POST', base, plain, { body: { name: 'named', mountPath: '/named', hostPath: null } }), 201);
	assert.equal(named.hostPath, null);
	const bind = await ok(call(srv, 'POST', base, owner, { body: { name: 'h', mountPath: '/h', hostPath: '/srv/h' } }), 201);
	assert.equal(bind.hostPath, '/srv/h');
	// Changing a host path, or clearing it, is the operator's too.
	h.assertError(await call(srv, 'PATCH', `${base}/${bind.id}`, plain, { body: { hostPath: '/srv/other' } }), 403, 'FORBIDDEN');
	h.assertError(await call(srv, 'PATCH', `${base}/${bind.id}`, plain, { body: { hostPath: null } }), 403, 'FORBIDDEN');
	h.assertError(await call(srv, 'PATCH', `${base}/${named.id}`, plain, { body: { hostPath: '/srv/n' } }), 403, 'FORBIDDEN');
	assert.equal((await ok(call(srv, 'GET', `${base}/${bind.id}`, plain))).hostPath, '/srv/h');
	assert.equal((await ok(call(srv, 'PATCH', `${base}/${bind.id}`, plain, { body: { mountPath: '/h2' } }))).hostPath, '/srv/h');
	const changed = await ok(call(srv, 'PATCH', `${base}/${bind.id}`, owner, { body: { hostPath: '/srv/h3' } }));
	assert.equal(changed.hostPath, '/srv/h3');
	const cleared = await ok(call(srv, 'PATCH', `${base}/${bind.id}`, owner, { body: { hostPath: null } }));
	assert.equal(cleared.hostPath, null);
	const reset = await ok(call(srv, 'PATCH', `${base}/${bind.id}`, owner, { body: { hostPath: '/srv/h' } }));
	assert.equal(reset.hostPath, '/srv/h');
	// Deleting a bind mount queues nothing: a host directory is never removed.
	await ok(call(srv, 'DELETE', `${base}/${bind.id}`, plain), 204);
	assert.equal(await sql(`SELECT count(*) FROM jobs WHERE target_id = '${bind.id}'`), '0');
});

test('volumes_of_another_organizations_application_are_404', async () => {
	const tv = await ok(call(srv, 'POST', `/applications/${theirApp.id}/volumes`, other, { body: { name: 'tv', mountPath: '/tv' } }), 201);
	const base = `/applications/${theirApp.id}/volumes`;
	const mine = await newApp('vol-404');
	for (const [m, p, body] of [
		['GET', base],
		['POST', base, { name: 'x', mountPath: '/x' }],
		['GET', `${base}/${tv.id}`],
		['PATCH', `${base}/${tv.id}`, { mountPath: '/y' }],
		['DELETE', `${base}/${tv.id}`],
		// Their volume under my application is not found either.
		['GET', `/applications/${mine.id}/volumes/${tv.id}`],
		['PATCH', `/applications/${mine.id}/volumes/${tv.id}`, { mountPath: '/y' }],
		['DELETE', `/applications/${mine.id}/volumes/${tv.id}`],
		['GET', `/applications/${NIL}/volumes`],
		['POST', `/applications/${NIL}/volumes`, { name: 'x', mountPath: '/x' }],
		['GET', `/applications/${mine.id}/volumes/not-a-uuid`],
	]) {
		h.assertError(await call(srv, m, p, owner, { body }), 404, 'NOT_FOUND');
	}
	assert.deepEqual((await ok(call(srv, 'GET', base, other))).map((v) => [v.name, v.mountPath]), [['tv', '/tv']]);
});

// ------------------------------------------------------------ delete

test('delete_removes_the_application_with_its_volumes_and_queues_the_runners_job', async () => {
	const a = await newApp('doomed');
	const base = `/applications/${a.id}/volumes`;
	await ok(call(srv, 'POST', base, owner, { body: { name: 'zeta', mountPath: '/z' } }), 201);
	await ok(call(srv, 'POST', base, owner, { body: { name: 'alpha', mountPath: '/a' } }), 201);
	await ok(call(srv, 'POST', base, owner, { body: { name: 'bound', mountPath: '/b', hostPath: '/srv/bound' } }), 201);
	const start = await ok(call(srv, 'POST', `/applications/${a.id}/start`, owner), 202);
	h.assertError(await call(srv, 'DELETE', `/applications/${a.id}`, other), 404, 'NOT_FOUND');
	await ok(call(srv, 'DELETE', `/applications/${a.id}`, owner), 204);
	h.assertError(await call(srv, 'GET', `/applications/${a.id}`, owner), 404, 'NOT_FOUND');
	h.assertError(await call(srv, 'DELETE', `/applications/${a.id}`, owner), 404, 'NOT_FOUND');
	h.assertError(await call(srv, 'GET', base, owner), 404, 'NOT_FOUND');
	h.assertError(await call(srv, 'POST', `/applications/${a.id}/start`, owner), 404, 'NOT_FOUND');
	assert.equal(await sql(`SELECT count(*) FROM volumes WHERE application_id = '${a.id}'`), '0');
	assert.equal(await sql(`SELECT status FROM jobs WHERE id = '${start.id}'`), 'CANCELLED');
	const job = await sql(`SELECT queue || ' ' || status || ' ' || target_type || ' ' || created_by FROM jobs WHERE target_id = '${a.id}' AND kind = 'application.delete'`);
	assert.equal(job, `lifecycle QUEUED application ${owner.user.id}`);
	const payload = JSON.parse(await sql(`SELECT payload::text FROM jobs WHERE target_id = '${a.id}' AND kind = 'application.delete'`));
	assert.deepEqual(payload, { serverId: await localServer(owner), name: 'doomed', volumes: ['alpha', 'zeta'] });
	const audit = await sql(`SELECT metadata::text FROM audit_logs WHERE action = 'application.deleted' AND target_id = '${a.id}'`);
	assert.deepEqual(JSON.parse(audit), { name: 'doomed' });
	// The name is free again.
	await newApp('doomed');
});

// ------------------------------------------------------------ quota

test('the_free_plan_allows_5_applications_then_409_QUOTA_EXCEEDED', async () => {
	const free = await signup(srv, 'free@example.com', 'Free');
	const p = await project(free, 'apps');
	const made = [];
	for (let i = 1; i <= 5; i++) made.push(await newApp(`app-${i}`, {}, free, p.env));
	const refused = h.assertError(await create({ name: 'app-6', environmentId: p.env }, free), 409, 'QUOTA_EXCEEDED');
	assert.match(refused.message, /5 applications/);
	// The quota is checked first: even a body naming another organization's
	// environment is refused for the quota.
	h.assertError(await create({ name: 'app-6', environmentId: web.env }, free), 409, 'QUOTA_EXCEEDED');
	assert.equal(await sql(`SELECT count(*) FROM applications WHERE organization_id = '${free.org.id}'`), '5');
	// Deleting one makes room.
	await ok(call(srv, 'DELETE', `/applications/${made[0].id}`, free), 204);
	await newApp('app-6', {}, free, p.env);
	// The operator's organization is on the unlimited plan.
	assert.ok(Number(await sql(`SELECT count(*) FROM applications WHERE organization_id = '${owner.org.id}'`)) > 5);
});

test('anonymous_callers_are_401', async () => {
	for (const [m, p] of [['GET', '/applications'], ['POST', `/applications/${NIL}/start`], ['GET', `/applications/${NIL}/volumes`]]) {
		h.assertError(await call(srv, m, p, {}), 401, 'UNAUTHENTICATED');
	}
});
