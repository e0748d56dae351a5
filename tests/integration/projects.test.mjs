// Projects and their environments: list, create, get, update, delete, the
// default environment "production", 409 PROJECT_EXISTS / PROJECT_NOT_EMPTY
// (and the environment's), 404 across organizations, pages (limit, cursor,
// order), filters and query-string refusals. These routes are the generic
// resource handlers (src/api/resource.c): the page and query rules tested
// here hold for every list of the resource API.

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import * as h from './harness.mjs';
const { TS, UUID, NIL } = h;
import { call, ok, setup, signup } from './identity.mjs';

h.stewarddPath();
const pg = await h.startPostgres();
const srv = await h.startStewardd({ db: pg, env: { SIGNUP_ENABLED: 'true' } });
after(h.cleanupAll);

const sql = (q) => pg.psql(q, srv.dbName);

const owner = await setup(srv);
const other = await signup(srv, 'other@example.com', 'Other');

async function fields(p) {
	return h.assertError(await p, 422, 'VALIDATION_FAILED').fields;
}
const create = (who, body) => call(srv, 'POST', '/projects', who, { body });
const newProject = (name, who = owner) => ok(create(who, { name }), 201);

// ------------------------------------------------------------ projects

test('create_answers_the_project_with_its_production_environment', async () => {
	const p = await newProject('web');
	assert.match(p.id, UUID);
	assert.equal(p.name, 'web');
	assert.equal(p.description, '');
	assert.equal(p.applicationCount, 0);
	assert.equal(p.environments.length, 1);
	assert.equal(p.environments[0].name, 'production');
	assert.match(p.environments[0].id, UUID);
	assert.match(p.createdAt, TS);
	assert.match(p.updatedAt, TS);
	const got = await ok(call(srv, 'GET', `/projects/${p.id}`, owner));
	assert.deepEqual(got, p);
	const audit = await sql(`SELECT metadata::text FROM audit_logs WHERE action = 'project.created' AND target_id = '${p.id}'`);
	assert.deepEqual(JSON.parse(audit), { name: 'web' });
});

test('create_with_a_description', async () => {
	const p = await ok(create(owner, { name: 'docs', description: 'The documentation site — ünïcode ok' }), 201);
	assert.equal(p.description, 'The documentation site — ünïcode ok');
});

test('create_refuses_each_bad_member', async () => {
	assert.ok((await fields(create(owner, {}))).name);
	for (const name of ['', 'Web', 'web_app', '1web', 'web-', 'we--b', 'a'.repeat(64), 'we b', 7, null]) {
		assert.ok((await fields(create(owner, { name }))).name, `name ${JSON.stringify(name)}`);
	}
	assert.ok((await fields(create(owner, { name: 'ok', description: 'x'.repeat(501) }))).description);
	assert.ok((await fields(create(owner, { name: 'ok', description: 'a\u0007b' }))).description);
	assert.ok((await fields(create(owner, { name: 'ok', description: 5 }))).description);
	const f = await fields(create(owner, { name: 'ok', color: 'blue' }));
	assert.deepEqual(f.color, ['is not a known field']);
});

test('a_taken_name_is_409_PROJECT_EXISTS_within_the_organization_only', async () => {
	await newProject('taken');
	h.assertError(await create(owner, { name: 'taken' }), 409, 'PROJECT_EXISTS');
	await newProject('taken', other);
});

test('update_changes_only_the_members_given', async () => {
	const p = await ok(create(owner, { name: 'before', description: 'keep me' }), 201);
	const u = await ok(call(srv, 'PATCH', `/projects/${p.id}`, owner, { body: { name: 'after' } }));
	assert.equal(u.name, 'after');
	assert.equal(u.description, 'keep me');
	assert.deepEqual(u.environments, p.environments);
	assert.ok(u.updatedAt >= p.updatedAt);
	const d = await ok(call(srv, 'PATCH', `/projects/${p.id}`, owner, { body: { description: '' } }));
	assert.equal(d.name, 'after');
	assert.equal(d.description, '');
	assert.ok((await fields(call(srv, 'PATCH', `/projects/${p.id}`, owner, { body: { name: 'Bad' } }))).name);
	assert.ok((await fields(call(srv, 'PATCH', `/projects/${p.id}`, owner, { body: { name: null } }))).name);
	assert.ok((await fields(call(srv, 'PATCH', `/projects/${p.id}`, owner, { body: { id: NIL } }))).id);
	h.assertError(await call(srv, 'PATCH', `/projects/${p.id}`, owner, { body: { name: 'web' } }), 409, 'PROJECT_EXISTS');
});

test('another_organizations_project_is_404_on_every_route', async () => {
	const theirs = await newProject('theirs', other);
	const env = theirs.environments[0].id;
	for (const [m, p, body] of [
		['GET', `/projects/${theirs.id}`],
		['PATCH', `/projects/${theirs.id}`, { name: 'mine' }],
		['DELETE', `/projects/${theirs.id}`],
		['GET', `/projects/${theirs.id}/environments`],
		['POST', `/projects/${theirs.id}/environments`, { name: 'staging' }],
		['GET', `/projects/${theirs.id}/environments/${env}`],
		['PATCH', `/projects/${theirs.id}/environments/${env}`, { name: 'x' }],
		['DELETE', `/projects/${theirs.id}/environments/${env}`],
		['GET', `/projects/${NIL}`],
		['GET', '/projects/not-a-uuid'],
		['GET', `/projects/${NIL}/environments`],
	]) {
		h.assertError(await call(srv, m, p, owner, { body }), 404, 'NOT_FOUND');
	}
	// Nothing changed.
	const still = await ok(call(srv, 'GET', `/projects/${theirs.id}`, other));
	assert.equal(still.name, 'theirs');
	assert.deepEqual(still.environments.map((e) => e.name), ['production']);
	const mine = await ok(call(srv, 'GET', '/projects', owner));
	assert.ok(!mine.some((p) => p.id === theirs.id));
});

test('delete_is_204_then_404', async () => {
	const p = await newProject('short-lived');
	await ok(call(srv, 'DELETE', `/projects/${p.id}`, owner), 204);
	h.assertError(await call(srv, 'DELETE', `/projects/${p.id}`, owner), 404, 'NOT_FOUND');
	h.assertError(await call(srv, 'GET', `/projects/${p.id}`, owner), 404, 'NOT_FOUND');
	assert.equal((await sql(`SELECT count(*) FROM environments WHERE project_id = '${p.id}'`)).trim(), '0');
});

test('a_project_holding_an_application_is_409_PROJECT_NOT_EMPTY', async () => {
	const p = await newProject('busy');
	const envId = p.environments[0].id;
	const app = await ok(call(srv, 'POST', '/applications', owner, { body: { name: 'busy-app', environmentId: envId } }), 201);
	h.assertError(await call(srv, 'DELETE', `/projects/${p.id}`, owner), 409, 'PROJECT_NOT_EMPTY');
	h.assertError(await call(srv, 'DELETE', `/projects/${p.id}/environments/${envId}`, owner), 409, 'ENVIRONMENT_NOT_EMPTY');
	const got = await ok(call(srv, 'GET', `/projects/${p.id}`, owner));
	assert.equal(got.applicationCount, 1);
	const env = await ok(call(srv, 'GET', `/projects/${p.id}/environments/${envId}`, owner));
	assert.equal(env.applicationCount, 1);
	await ok(call(srv, 'DELETE', `/applications/${app.id}`, owner), 204);
	await ok(call(srv, 'DELETE', `/projects/${p.id}`, owner), 204);
});

// ------------------------------------------------------------ lists

test('list_pages_walk_with_nextCursor_in_both_orders', async () => {
	const who = await signup(srv, 'pages@example.com', 'Pages');
	const names = ['p-one', 'p-two', 'p-three', 'p-four'];
	for (const n of names) await newProject(n, who);
	const walk = async (order) => {
		const seen = [];
		let cursor = null;
		for (let i = 0; i < 10; i++) {
			const q = `limit=1${order ? `&order=${order}` : ''}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
			const res = await call(srv, 'GET', `/projects?${q}`, who);
			assert.equal(res.status, 200, res.text);
			const body = res.json();
			assert.ok(body.data.length <= 1);
			seen.push(...body.data.map((p) => p.name));
			cursor = body.pagination.nextCursor;
			if (!cursor) break;
			assert.equal(typeof cursor, 'string');
		}
		return seen;
	};
	assert.deepEqual(await walk('asc'), names);
	assert.deepEqual(await walk(null), [...names].reverse());
	assert.deepEqual(await walk('desc'), [...names].reverse());
	const all = await call(srv, 'GET', '/projects', who);
	assert.equal(all.json().pagination.nextCursor, null);
	assert.equal(all.json().data.length, 4);
	const two = (await call(srv, 'GET', '/projects?limit=2&order=asc', who)).json();
	assert.deepEqual(two.data.map((p) => p.name), names.slice(0, 2));
	assert.ok(two.pagination.nextCursor);
});

test('list_filters_by_name', async () => {
	const hits = await ok(call(srv, 'GET', '/projects?name=web', owner));
	assert.deepEqual(hits.map((p) => p.name), ['web']);
	assert.deepEqual(await ok(call(srv, 'GET', '/projects?name=nothing-here', owner)), []);
});

test('list_refuses_bad_query_parameters', async () => {
	const q = async (query) => fields(call(srv, 'GET', `/projects?${query}`, owner));
	assert.deepEqual((await q('colour=red')).colour, ['is not a known parameter']);
	assert.ok((await q('limit=0')).limit);
	assert.ok((await q('limit=201')).limit);
	assert.ok((await q('limit=ten')).limit);
	assert.ok((await q('cursor=nonsense')).cursor);
	assert.ok((await q(`cursor=1_not-a-uuid`)).cursor);
	assert.ok((await q('order=up')).order);
	assert.ok((await q('name=Not_A_Name')).name);
	assert.ok((await q('limit=1&limit=2')).limit);
});

// ------------------------------------------------------------ environments

test('environments_list_create_get_rename_delete', async () => {
	const p = await newProject('shop');
	const base = `/projects/${p.id}/environments`;
	const list = await ok(call(srv, 'GET', base, owner));
	assert.deepEqual(list.map((e) => e.name), ['production']);
	assert.equal(list[0].projectId, p.id);
	const staging = await ok(call(srv, 'POST', base, owner, { body: { name: 'staging' } }), 201);
	assert.match(staging.id, UUID);
	assert.equal(staging.projectId, p.id);
	assert.equal(staging.applicationCount, 0);
	assert.match(staging.createdAt, TS);
	h.assertError(await call(srv, 'POST', base, owner, { body: { name: 'staging' } }), 409, 'ENVIRONMENT_EXISTS');
	assert.ok((await fields(call(srv, 'POST', base, owner, { body: {} }))).name);
	assert.ok((await fields(call(srv, 'POST', base, owner, { body: { name: 'Staging' } }))).name);
	assert.ok((await fields(call(srv, 'POST', base, owner, { body: { name: 'qa', extra: 1 } }))).extra);
	assert.deepEqual(await ok(call(srv, 'GET', `${base}/${staging.id}`, owner)), staging);
	const asc = await ok(call(srv, 'GET', `${base}?order=asc`, owner));
	assert.deepEqual(asc.map((e) => e.name), ['production', 'staging']);
	assert.deepEqual((await ok(call(srv, 'GET', `${base}?name=staging`, owner))).map((e) => e.id), [staging.id]);
	const renamed = await ok(call(srv, 'PATCH', `${base}/${staging.id}`, owner, { body: { name: 'preview' } }));
	assert.equal(renamed.name, 'preview');
	h.assertError(await call(srv, 'PATCH', `${base}/${staging.id}`, owner, { body: { name: 'production' } }), 409, 'ENVIRONMENT_EXISTS');
	assert.ok((await fields(call(srv, 'PATCH', `${base}/${staging.id}`, owner, { body: { name: '' } }))).name);
	const project = await ok(call(srv, 'GET', `/projects/${p.id}`, owner));
	assert.deepEqual(project.environments.map((e) => e.name), ['production', 'preview']);
	await ok(call(srv, 'DELETE', `${base}/${staging.id}`, owner), 204);
	h.assertError(await call(srv, 'DELETE', `${base}/${staging.id}`, owner), 404, 'NOT_FOUND');
	assert.ok((await fields(call(srv, 'GET', `${base}?bogus=1`, owner))).bogus);
});

test('an_environment_is_found_only_under_its_own_project', async () => {
	const a = await newProject('proj-a');
	const b = await newProject('proj-b');
	const envA = a.environments[0].id;
	h.assertError(await call(srv, 'GET', `/projects/${b.id}/environments/${envA}`, owner), 404, 'NOT_FOUND');
	h.assertError(await call(srv, 'PATCH', `/projects/${b.id}/environments/${envA}`, owner, { body: { name: 'x' } }), 404, 'NOT_FOUND');
	h.assertError(await call(srv, 'DELETE', `/projects/${b.id}/environments/${envA}`, owner), 404, 'NOT_FOUND');
	h.assertError(await call(srv, 'GET', `/projects/${a.id}/environments/not-a-uuid`, owner), 404, 'NOT_FOUND');
});

test('an_empty_environment_list_of_an_existing_project_is_200', async () => {
	const p = await newProject('empty-envs');
	await ok(call(srv, 'DELETE', `/projects/${p.id}/environments/${p.environments[0].id}`, owner), 204);
	const res = await call(srv, 'GET', `/projects/${p.id}/environments`, owner);
	assert.equal(res.status, 200, res.text);
	assert.deepEqual(res.json(), { data: [], pagination: { nextCursor: null } });
});

test('anonymous_callers_are_401', async () => {
	h.assertError(await call(srv, 'GET', '/projects', {}), 401, 'UNAUTHENTICATED');
	h.assertError(await call(srv, 'POST', '/projects', {}, { body: { name: 'x' } }), 401, 'UNAUTHENTICATED');
});
