// Servers: the local server every organization has (listed, no agent token,
// never deleted), servers added with an agent token shown only by POST
// /servers and POST /servers/:id/agent-token and stored as its SHA-256,
// rotation, strict validation of every field and filter, the plan's
// servers quota, 404 across organizations, and DELETE refused while an
// application or a service is assigned.

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import * as h from './harness.mjs';
const { TS, UUID } = h;
import { call, ok, setup, signup } from './identity.mjs';

h.stewarddPath();
const pg = await h.startPostgres();
const srv = await h.startStewardd({ db: pg, env: { STEWARD_THREADS: 2, SIGNUP_ENABLED: 'true' } });
after(h.cleanupAll);

const sql = (q) => pg.psql(q, srv.dbName);
const TOKEN = /^sta_[A-Za-z0-9_-]{43}$/;
const SERVER_KEYS = ['agentBootId', 'agentCapabilities', 'agentConnectedAt', 'agentProtocol', 'agentTokenCreatedAt',
	'agentTokenPrefix', 'agentVersion', 'applicationCount', 'createdAt', 'description', 'host', 'hostFacts', 'id',
	'isLocal', 'lastSeenAt', 'name', 'serviceCount', 'status', 'updatedAt'];
const RANDOM_ID = '6f1c1f0e-8d2a-4a57-9d7e-3f0b6c7b2a11';

const owner = await setup(srv); // the operator's organization: the unlimited plan
const other = await signup(srv, 'other@example.com', 'Other'); // the free plan: 2 servers

const sha256 = (s) => crypto.createHash('sha256').update(s).digest('hex');
const create = (who, body) => call(srv, 'POST', '/servers', who, { body });

async function fieldErrors(p) {
	const res = await p;
	return h.assertError(res, 422, 'VALIDATION_FAILED').fields;
}

async function localOf(who) {
	const list = await ok(call(srv, 'GET', '/servers', who));
	return list.find((s) => s.isLocal);
}

test('every_organization_lists_its_local_server_without_a_token', async () => {
	for (const who of [owner, other]) {
		const local = await localOf(who);
		assert.ok(local, 'the local server is listed');
		assert.deepEqual(Object.keys(local).sort(), SERVER_KEYS);
		assert.equal(local.name, 'local');
		assert.equal(local.status, 'ONLINE');
		assert.equal(local.agentTokenPrefix, null);
		assert.equal(local.agentTokenCreatedAt, null);
		assert.equal(local.host, null);
		assert.match(local.id, UUID);
		assert.match(local.createdAt, TS);
		assert.deepEqual(await ok(call(srv, 'GET', `/servers/${local.id}`, who)), local);
	}
	assert.notEqual((await localOf(owner)).id, (await localOf(other)).id);
});

test('create_answers_the_agent_token_once_and_stores_only_its_hash', async () => {
	const res = await create(owner, { name: 'web-1', description: 'Frontend box', host: '10.0.0.5' });
	assert.equal(res.status, 201, res.text);
	const s = res.json().data;
	assert.match(s.agentToken, TOKEN);
	assert.equal(s.agentTokenPrefix, s.agentToken.slice(0, 12));
	assert.deepEqual(Object.keys(s).sort(), [...SERVER_KEYS, 'agentCommand', 'agentToken'].sort());
	assert.equal(s.agentCommand, `STEWARD_URL='${srv.url}' STEWARD_AGENT_TOKEN='${s.agentToken}' steward-agent`);
	assert.equal(s.name, 'web-1');
	assert.equal(s.description, 'Frontend box');
	assert.equal(s.host, '10.0.0.5');
	assert.equal(s.isLocal, false);
	assert.equal(s.status, 'PENDING');
	assert.equal(s.applicationCount, 0);
	assert.equal(s.serviceCount, 0);
	assert.match(s.agentTokenCreatedAt, TS);
	assert.equal(s.agentConnectedAt, null);
	assert.equal(s.lastSeenAt, null);

	const get = await call(srv, 'GET', `/servers/${s.id}`, owner);
	assert.equal(get.status, 200);
	assert.ok(!get.text.includes(s.agentToken) && !('agentToken' in get.json().data), 'GET has no token');
	const { agentToken, agentCommand, ...rest } = s;
	assert.deepEqual(get.json().data, rest);
	const list = await call(srv, 'GET', '/servers', owner);
	assert.ok(!list.text.includes(agentToken), 'the list has no token');
	assert.ok(list.json().data.some((x) => x.id === s.id));

	assert.equal((await sql(`SELECT encode(agent_token_hash, 'hex') FROM servers WHERE id = '${s.id}'`)).trim(), sha256(agentToken));
	const dump = await pg.dump(srv.dbName);
	assert.ok(!dump.includes(agentToken.slice(4)), 'the database holds no token value');
	assert.match(await sql(`SELECT metadata::text FROM audit_logs WHERE action = 'server.created' AND target_id = '${s.id}'`), /web-1/);
	assert.ok(!srv.logs.text().includes(agentToken), 'no log line holds the token');
});

test('rotating_the_agent_token_replaces_it_at_once', async () => {
	const s = await ok(create(owner, { name: 'rotate-me' }), 201);
	const res = await call(srv, 'POST', `/servers/${s.id}/agent-token`, owner);
	assert.equal(res.status, 200, res.text);
	const r = res.json().data;
	assert.match(r.agentToken, TOKEN);
	assert.notEqual(r.agentToken, s.agentToken);
	assert.equal(r.agentTokenPrefix, r.agentToken.slice(0, 12));
	assert.equal(r.id, s.id);
	const stored = (await sql(`SELECT encode(agent_token_hash, 'hex') FROM servers WHERE id = '${s.id}'`)).trim();
	assert.equal(stored, sha256(r.agentToken), 'the new token is the one stored');
	assert.equal((await sql(`SELECT count(*) FROM servers WHERE agent_token_hash = decode('${sha256(s.agentToken)}', 'hex')`)).trim(), '0',
		'the old token matches no server any more');
	const get = await call(srv, 'GET', `/servers/${s.id}`, owner);
	assert.ok(!get.text.includes(r.agentToken));
	assert.equal(get.json().data.agentTokenPrefix, r.agentTokenPrefix);
	assert.match(await sql(`SELECT count(*) FROM audit_logs WHERE action = 'server.agent_token.rotated' AND target_id = '${s.id}'`), /^1/);
});

test('the_local_server_gets_no_token_and_is_never_deleted', async () => {
	const local = await localOf(owner);
	h.assertError(await call(srv, 'POST', `/servers/${local.id}/agent-token`, owner), 409, 'LOCAL_SERVER');
	h.assertError(await call(srv, 'DELETE', `/servers/${local.id}`, owner), 409, 'LOCAL_SERVER');
	assert.deepEqual(await localOf(owner), local);
	// It can be described like any other.
	const patched = await ok(call(srv, 'PATCH', `/servers/${local.id}`, owner, { body: { description: 'The control plane host' } }));
	assert.equal(patched.description, 'The control plane host');
	assert.equal(patched.isLocal, true);
});

test('host_accepts_hostnames_and_canonical_ip_literals_only', async () => {
	const good = ['db.example.com', 'xn--bcher-kva.example', '192.168.1.10', '2001:db8::1', '::ffff:10.0.0.1', null];
	for (const [i, host] of good.entries()) {
		const s = await ok(create(owner, { name: `host-ok-${i}`, host }), 201);
		assert.equal(s.host, host);
	}
	const bad = ['10.0.0.256', '010.0.0.1', '10.1', '2001:DB8::1', '2001:db8:0:0:0:0:0:1', '[::1]', 'fe80::1%eth0',
		'localhost', 'Db.example.com', 'a..example.com', 'http://x.example.com', 'x.example.com:22', ' db.example.com',
		'-a.example.com', '', 'a'.repeat(64) + '.example.com'];
	for (const host of bad) {
		const f = await fieldErrors(create(owner, { name: 'host-bad', host }));
		assert.deepEqual(Object.keys(f), ['host'], `host ${JSON.stringify(host)}: ${JSON.stringify(f)}`);
	}
	assert.deepEqual(await fieldErrors(create(owner, { name: 'host-bad', host: 17 })), { host: ['must be a string'] });
});

test('each_invalid_field_is_a_field_error', async () => {
	assert.deepEqual(await fieldErrors(create(owner, {})), { name: ['is required'] });
	for (const name of ['Web', 'web_1', '1web', 'web-', 'we--b', 'a'.repeat(64), '']) {
		const f = await fieldErrors(create(owner, { name }));
		assert.deepEqual(Object.keys(f), ['name'], `name ${JSON.stringify(name)}`);
	}
	assert.deepEqual(await fieldErrors(create(owner, { name: 5 })), { name: ['must be a string'] });
	assert.deepEqual(await fieldErrors(create(owner, { name: 'ok-name', extra: 1 })), { extra: ['is not a known field'] });
	assert.deepEqual(Object.keys(await fieldErrors(create(owner, { name: 'ok-name', description: 'x'.repeat(501) }))), ['description']);
	assert.deepEqual(Object.keys(await fieldErrors(create(owner, { name: 'ok-name', description: 'a\u0007b' }))), ['description']);
	assert.deepEqual(await fieldErrors(create(owner, { name: 'ok-name', description: null })), { description: ['must not be null'] });
	assert.deepEqual(await fieldErrors(create(owner, { name: 'ok-name', agentToken: 'sta_x' })), { agentToken: ['is not a known field'] });
	// Several at once.
	const f = await fieldErrors(create(owner, { name: 'Bad', host: 'nope', isLocal: true }));
	assert.deepEqual(Object.keys(f).sort(), ['host', 'isLocal', 'name']);
	// PATCH reads the same rules.
	const s = await ok(create(owner, { name: 'patch-rules' }), 201);
	assert.deepEqual(Object.keys(await fieldErrors(call(srv, 'PATCH', `/servers/${s.id}`, owner, { body: { name: 'Bad Name' } }))), ['name']);
	assert.deepEqual(Object.keys(await fieldErrors(call(srv, 'PATCH', `/servers/${s.id}`, owner, { body: { host: '1.2.3' } }))), ['host']);
	assert.deepEqual(await fieldErrors(call(srv, 'PATCH', `/servers/${s.id}`, owner, { body: { status: 'ONLINE' } })), { status: ['is not a known field'] });
	// Filters.
	assert.deepEqual(Object.keys(await fieldErrors(call(srv, 'GET', '/servers?status=UP', owner))), ['status']);
	assert.deepEqual(Object.keys(await fieldErrors(call(srv, 'GET', '/servers?name=Bad%20Name', owner))), ['name']);
	assert.deepEqual(Object.keys(await fieldErrors(call(srv, 'GET', '/servers?limit=0', owner))), ['limit']);
	assert.deepEqual(Object.keys(await fieldErrors(call(srv, 'GET', '/servers?order=up', owner))), ['order']);
	assert.deepEqual(Object.keys(await fieldErrors(call(srv, 'GET', '/servers?colour=red', owner))), ['colour']);
});

test('patch_changes_only_the_members_given_and_names_are_unique', async () => {
	const s = await ok(create(owner, { name: 'edit-me', description: 'before', host: 'edit.example.com' }), 201);
	const a = await ok(call(srv, 'PATCH', `/servers/${s.id}`, owner, { body: { description: 'after' } }));
	assert.equal(a.description, 'after');
	assert.equal(a.name, 'edit-me');
	assert.equal(a.host, 'edit.example.com');
	assert.ok(a.updatedAt >= s.updatedAt);
	const b = await ok(call(srv, 'PATCH', `/servers/${s.id}`, owner, { body: { name: 'edited', host: null } }));
	assert.equal(b.name, 'edited');
	assert.equal(b.host, null);
	assert.equal(b.description, 'after');
	assert.equal(b.agentTokenPrefix, s.agentTokenPrefix, 'the token is untouched');
	assert.deepEqual(await ok(call(srv, 'PATCH', `/servers/${s.id}`, owner, { body: {} })), await ok(call(srv, 'GET', `/servers/${s.id}`, owner)));
	await ok(create(owner, { name: 'taken' }), 201);
	h.assertError(await create(owner, { name: 'taken' }), 409, 'SERVER_EXISTS');
	h.assertError(await call(srv, 'PATCH', `/servers/${s.id}`, owner, { body: { name: 'taken' } }), 409, 'SERVER_EXISTS');
	h.assertError(await call(srv, 'PATCH', `/servers/${s.id}`, owner, { body: { name: 'local' } }), 409, 'SERVER_EXISTS');
	// The same name in another organization is fine.
	const theirs = await ok(create(other, { name: 'taken' }), 201);
	await ok(call(srv, 'DELETE', `/servers/${theirs.id}`, other), 204);
});

test('list_filters_and_pages', async () => {
	const made = [];
	for (const name of ['page-a', 'page-b', 'page-c']) made.push(await ok(create(owner, { name }), 201));
	const byName = await ok(call(srv, 'GET', '/servers?name=page-b', owner));
	assert.deepEqual(byName.map((s) => s.id), [made[1].id]);
	const pending = await ok(call(srv, 'GET', '/servers?status=PENDING&limit=200', owner));
	assert.ok(pending.length >= 3 && pending.every((s) => s.status === 'PENDING'));
	const online = await ok(call(srv, 'GET', '/servers?status=ONLINE', owner));
	assert.deepEqual(online.map((s) => s.name), ['local']);
	// Two pages of one, newest first, then the rest.
	const p1 = await call(srv, 'GET', '/servers?limit=1', owner);
	const j1 = p1.json();
	assert.equal(j1.data.length, 1);
	assert.equal(j1.data[0].id, made[2].id);
	assert.equal(typeof j1.pagination.nextCursor, 'string');
	const j2 = (await call(srv, 'GET', `/servers?limit=1&cursor=${encodeURIComponent(j1.pagination.nextCursor)}`, owner)).json();
	assert.equal(j2.data[0].id, made[1].id);
	const asc = await ok(call(srv, 'GET', '/servers?order=asc&limit=1', owner));
	assert.equal(asc[0].name, 'local', 'the local server is the oldest');
});

test('the_free_plan_allows_two_servers_besides_the_local_one', async () => {
	const a = await ok(create(other, { name: 'free-1' }), 201);
	const b = await ok(create(other, { name: 'free-2' }), 201);
	const err = h.assertError(await create(other, { name: 'free-3' }), 409, 'QUOTA_EXCEEDED');
	assert.match(err.message, /2 servers/);
	assert.equal((await ok(call(srv, 'GET', '/servers', other))).length, 3, 'local + 2');
	// Deleting one makes room again.
	await ok(call(srv, 'DELETE', `/servers/${b.id}`, other), 204);
	const c = await ok(create(other, { name: 'free-3' }), 201);
	for (const s of [a, c]) await ok(call(srv, 'DELETE', `/servers/${s.id}`, other), 204);
});

test('another_organizations_server_is_not_found', async () => {
	const s = await ok(create(owner, { name: 'mine-only' }), 201);
	const local = await localOf(owner);
	for (const id of [s.id, local.id, RANDOM_ID]) {
		h.assertError(await call(srv, 'GET', `/servers/${id}`, other), 404, 'NOT_FOUND');
		h.assertError(await call(srv, 'PATCH', `/servers/${id}`, other, { body: { description: 'x' } }), 404, 'NOT_FOUND');
		h.assertError(await call(srv, 'PATCH', `/servers/${id}`, other, { body: {} }), 404, 'NOT_FOUND');
		h.assertError(await call(srv, 'POST', `/servers/${id}/agent-token`, other), 404, 'NOT_FOUND');
		h.assertError(await call(srv, 'DELETE', `/servers/${id}`, other), 404, 'NOT_FOUND');
	}
	h.assertError(await call(srv, 'GET', '/servers/not-a-uuid', owner), 404, 'NOT_FOUND');
	const theirs = await ok(call(srv, 'GET', '/servers?limit=200', other));
	assert.ok(!theirs.some((x) => x.id === s.id || x.id === local.id));
	const after = await ok(call(srv, 'GET', `/servers/${s.id}`, owner));
	assert.equal(after.agentTokenPrefix, s.agentTokenPrefix, 'the other organization rotated nothing');
	assert.equal(after.description, '');
});

// An application assigned to the server: through POST /applications, or,
// should that route not answer 201 in this tree, a row written directly.
async function assignApplication(serverId, name) {
	const project = await ok(call(srv, 'POST', '/projects', owner, { body: { name: `${name}-project` } }), 201);
	const environmentId = project.environments[0].id;
	const res = await call(srv, 'POST', '/applications', owner, { body: { name, environmentId, serverId } });
	if (res.status === 201) {
		const app = res.json().data;
		return { id: app.id, remove: () => ok(call(srv, 'DELETE', `/applications/${app.id}`, owner), 204) };
	}
	const id = (await sql(`INSERT INTO applications (organization_id, project_id, environment_id, server_id, name)
		VALUES ('${owner.org.id}', '${project.id}', '${environmentId}', '${serverId}', '${name}') RETURNING id`)).trim().split('\n')[0];
	return { id, remove: () => sql(`DELETE FROM applications WHERE id = '${id}'`) };
}

test('delete_is_refused_while_an_application_is_assigned_and_works_after', async () => {
	const s = await ok(create(owner, { name: 'busy-app' }), 201);
	const app = await assignApplication(s.id, 'assigned-app');
	assert.equal((await ok(call(srv, 'GET', `/servers/${s.id}`, owner))).applicationCount, 1);
	h.assertError(await call(srv, 'DELETE', `/servers/${s.id}`, owner), 409, 'SERVER_IN_USE');
	assert.equal((await ok(call(srv, 'GET', `/servers/${s.id}`, owner))).id, s.id, 'still there');
	await app.remove();
	await ok(call(srv, 'DELETE', `/servers/${s.id}`, owner), 204);
	h.assertError(await call(srv, 'GET', `/servers/${s.id}`, owner), 404, 'NOT_FOUND');
	h.assertError(await call(srv, 'DELETE', `/servers/${s.id}`, owner), 404, 'NOT_FOUND');
	assert.match(await sql(`SELECT metadata::text FROM audit_logs WHERE action = 'server.deleted' AND target_id = '${s.id}'`), /busy-app/);
});

test('delete_is_refused_while_a_service_is_assigned_and_works_after', async () => {
	const s = await ok(create(owner, { name: 'busy-service' }), 201);
	const project = await ok(call(srv, 'POST', '/projects', owner, { body: { name: 'svc-project' } }), 201);
	const svc = await ok(call(srv, 'POST', '/services', owner, {
		body: { name: 'assigned-db', kind: 'REDIS', environmentId: project.environments[0].id, serverId: s.id },
	}), 201);
	assert.equal((await ok(call(srv, 'GET', `/servers/${s.id}`, owner))).serviceCount, 1);
	h.assertError(await call(srv, 'DELETE', `/servers/${s.id}`, owner), 409, 'SERVER_IN_USE');
	await ok(call(srv, 'DELETE', `/services/${svc.id}`, owner), 204);
	await ok(call(srv, 'DELETE', `/servers/${s.id}`, owner), 204);
});

// Ended agent commands do not pile up (the metrics loop sends each agent a
// sample every 15 s): the control plane's own go an hour after they end,
// a user's after 7 days (GET /servers/:id/commands/:commandId reads it
// that long), an unanswered one counted from its expiry; their output
// chunks go with them. The metrics writer purges at start-up and hourly.
// Last in this file: it stops srv so that a new process is the writer.
test('ended_agent_commands_are_purged_by_the_writer_and_nothing_else', async () => {
	const s = await ok(create(owner, { name: 'purged-commands' }), 201);
	const user = owner.user.id;
	const rows = {
		ownOld: ['SUCCEEDED', "now() - interval '2 hours'", "now() - interval '2 hours'", 'NULL'],
		ownRecent: ['FAILED', "now() - interval '10 minutes'", "now() - interval '10 minutes'", 'NULL'],
		ownExpired: ['SENT', "now() - interval '3 hours'", "now() - interval '2 hours'", 'NULL'],
		ownPending: ['QUEUED', 'now()', "now() + interval '5 minutes'", 'NULL'],
		userRecent: ['SUCCEEDED', "now() - interval '2 days'", "now() - interval '2 days'", `'${user}'`],
		userOld: ['FAILED', "now() - interval '8 days'", "now() - interval '8 days'", `'${user}'`],
	};
	const ids = {};
	for (const [name, [status, updated, expires, by] ] of Object.entries(rows))
		ids[name] = (await sql(`INSERT INTO agent_commands (organization_id, server_id, kind, status, updated_at, expires_at, created_by)
			VALUES ('${owner.org.id}', '${s.id}', 'host.facts', '${status}', ${updated}, ${expires}, ${by}) RETURNING id`)).trim();
	await sql(`INSERT INTO agent_command_output (command_id, seq, stream, data) VALUES ('${ids.ownOld}', 0, 'log', 'x')`);
	assert.equal((await ok(call(srv, 'GET', `/servers/${s.id}/commands/${ids.userOld}`, owner))).status, 'FAILED');

	// A new process with srv gone holds the metrics writer's lock.
	await srv.stop();
	const next = await h.startStewardd({ env: { DATABASE_URL: srv.env.DATABASE_URL, STEWARD_THREADS: 2 } });
	const deadline = Date.now() + 20000 * h.SLACK;
	while (!/agents: 3 ended commands removed/.test(next.logs.text())) {
		if (Date.now() > deadline) assert.fail(`no purge logged:\n${next.logs.text()}`);
		await h.sleep(50);
	}
	const left = (await sql(`SELECT id FROM agent_commands WHERE server_id = '${s.id}'`)).trim().split('\n').sort();
	assert.deepEqual(left, [ids.ownRecent, ids.ownPending, ids.userRecent].sort());
	assert.equal((await sql(`SELECT count(*) FROM agent_command_output WHERE command_id = '${ids.ownOld}'`)).trim(), '0');
	h.assertError(await call(next, 'GET', `/servers/${s.id}/commands/${ids.userOld}`, owner), 404, 'NOT_FOUND');
	assert.equal((await ok(call(next, 'GET', `/servers/${s.id}/commands/${ids.userRecent}`, owner))).status, 'SUCCEEDED');
	// Nothing is left to purge: a second call removes nothing.
	assert.equal((await sql('SELECT steward_agent_commands_purge()')).trim(), '0');
});
