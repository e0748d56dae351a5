// API tokens: issued once with st_, stored as a hash, listed without
// values, presented as Bearer, revoked (and expired) effective on the very
// next request on any connection and thread, last use recorded, exempt from
// the CSRF origin check, bounded per user.

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import * as h from './harness.mjs';
const { TS } = h;
import { call, ok, setup, member, issueToken } from './identity.mjs';

h.stewarddPath();
const pg = await h.startPostgres();
const srv = await h.startStewardd({ db: pg, env: { STEWARD_THREADS: 2 } });
after(h.cleanupAll);

const TOKEN = /^st_[A-Za-z0-9_-]{43}$/;
const owner = await setup(srv);
const sql = (q) => pg.psql(q, srv.dbName);

async function listed(who, id) {
	const list = await ok(call(srv, 'GET', '/api-tokens', who));
	return list.find((t) => t.id === id);
}

test('issue_returns_st_token_once_and_only_its_hash_is_stored', async () => {
	const t = await issueToken(srv, owner, 'deploy bot');
	assert.match(t.token, TOKEN);
	assert.equal(t.prefix, t.token.slice(0, 11));
	assert.equal(t.name, 'deploy bot');
	assert.match(t.createdAt, TS);
	assert.equal(t.expiresAt, null);
	assert.equal(t.lastUsedAt, null);
	assert.equal(t.revokedAt, null);
	const res = await call(srv, 'GET', '/api-tokens', owner);
	assert.equal(res.status, 200);
	assert.ok(!res.text.includes(t.token), 'the list never shows the value');
	const item = res.json().data.find((x) => x.id === t.id);
	assert.deepEqual(Object.keys(item).sort(), ['createdAt', 'expiresAt', 'id', 'lastUsedAt', 'name', 'prefix', 'revokedAt']);
	const dump = await pg.dump(srv.dbName);
	assert.ok(!dump.includes(t.token) && !dump.includes(t.token.slice(3)), 'the database holds no token value');
	const audit = await sql(`SELECT metadata::text FROM audit_logs WHERE action = 'api_token.issued' AND target_id = '${t.id}'`);
	assert.match(audit, /deploy bot/);
});

test('bearer_token_authenticates_as_its_owner', async () => {
	const t = await issueToken(srv, owner);
	const s = await ok(call(srv, 'GET', '/auth/session', { token: t.token }));
	assert.equal(s.user.id, owner.user.id);
	assert.equal(s.organization.id, owner.org.id);
	assert.equal(s.organization.role, 'OWNER');
	assert.deepEqual(s.credential, { type: 'API_TOKEN', id: t.id });
});

test('unknown_or_malformed_bearer_is_401', async () => {
	for (const value of ['Bearer st_' + 'A'.repeat(43), 'Bearer nope', 'Basic abc', 'Bearer ']) {
		const res = await h.request(srv.port, 'GET', '/auth/session', { headers: { Authorization: value } });
		h.assertError(res, 401, 'UNAUTHENTICATED');
	}
});

test('a_token_cannot_issue_tokens', async () => {
	const t = await issueToken(srv, owner);
	h.assertError(await call(srv, 'POST', '/api-tokens', { token: t.token }, { body: { name: 'child' } }), 403, 'SESSION_REQUIRED');
});

test('issue_validation_failures_are_422_per_field', async () => {
	const cases = [
		[{}, 'name'],
		[{ name: '' }, 'name'],
		[{ name: 'x'.repeat(101) }, 'name'],
		[{ name: 7 }, 'name'],
		[{ name: 'a', scope: 'all' }, 'scope'],
		[{ name: 'a', expiresInDays: 0 }, 'expiresInDays'],
		[{ name: 'a', expiresInDays: 366 }, 'expiresInDays'],
		[{ name: 'a', expiresInDays: 1.5 }, 'expiresInDays'],
		[{ name: 'a', expiresInDays: '7' }, 'expiresInDays'],
	];
	for (const [body, field] of cases) {
		const e = h.assertError(await call(srv, 'POST', '/api-tokens', owner, { body }), 422, 'VALIDATION_FAILED');
		assert.ok(e.fields[field], `${JSON.stringify(body)}: fields.${field} in ${JSON.stringify(e)}`);
	}
});

test('numbers_past_int64_or_a_double_are_422_on_their_member_not_400', async () => {
	const send = (text) => call(srv, 'POST', '/api-tokens', owner, { body: text, headers: { 'Content-Type': 'application/json' } });
	for (const n of ['9223372036854775808', '-9223372036854775809', '99999999999999999999999999', '1e400', '-1E+400']) {
		const e = h.assertError(await send(`{"name": "a", "expiresInDays": ${n}}`), 422, 'VALIDATION_FAILED');
		assert.deepEqual(Object.keys(e.fields), ['expiresInDays'], n);
		assert.match(e.fields.expiresInDays[0], /out of range/, n);
	}
	// -0 is the JSON number zero (out of this field's range, like 0); 1e-400 is a real (not whole days).
	for (const n of ['-0', '1e-400', '9223372036854775807']) {
		const e = h.assertError(await send(`{"name": "a", "expiresInDays": ${n}}`), 422, 'VALIDATION_FAILED');
		assert.deepEqual(e.fields, { expiresInDays: ['must be a whole number of days from 1 to 365'] }, n);
	}
	// A leading zero is not JSON at all.
	h.assertError(await send('{"name": "a", "expiresInDays": 07}'), 400, 'INVALID_JSON');
	h.assertError(await send('{"name": "a", "expiresInDays": 1e400,}'), 400, 'INVALID_JSON');
});

test('expires_in_days_sets_the_expiry', async () => {
	const t = await ok(call(srv, 'POST', '/api-tokens', owner, { body: { name: 'week', expiresInDays: 7 } }), 201);
	const days = (Date.parse(t.expiresAt) - Date.parse(t.createdAt)) / 86400000;
	assert.ok(Math.abs(days - 7) < 0.001, `${t.createdAt} .. ${t.expiresAt}`);
	await ok(call(srv, 'GET', '/auth/session', { token: t.token }));
});

test('revoked_token_fails_on_its_very_next_request_on_every_connection', async () => {
	const t = await issueToken(srv, owner);
	// Warm the principal cache on a keep-alive connection and on others.
	const c = await h.Conn.open(srv.port);
	const get = h.buildRequest(srv.port, 'GET', '/auth/session', { headers: { Authorization: `Bearer ${t.token}` } });
	await c.write(get);
	assert.equal((await c.responses(1))[0].status, 200);
	await Promise.all(Array.from({ length: 8 }, () => ok(call(srv, 'GET', '/auth/session', { token: t.token }))));

	await ok(call(srv, 'DELETE', `/api-tokens/${t.id}`, owner), 204);

	await c.write(get);
	const after1 = (await c.responses(2))[1];
	h.assertError(after1, 401, 'UNAUTHENTICATED');
	c.destroy();
	// Fresh connections land on both server threads.
	const rs = await Promise.all(Array.from({ length: 16 }, () => call(srv, 'GET', '/auth/session', { token: t.token })));
	for (const r of rs) h.assertError(r, 401, 'UNAUTHENTICATED');

	const item = await listed(owner, t.id);
	assert.match(item.revokedAt, TS, 'the record stays, marked revoked');
	// Idempotent: revoking again is 204, with one audit record.
	await ok(call(srv, 'DELETE', `/api-tokens/${t.id}`, owner), 204);
	const n = await sql(`SELECT count(*) FROM audit_logs WHERE action = 'api_token.revoked' AND target_id = '${t.id}'`);
	assert.equal(n.trim(), '1');
});

test('a_token_revoked_through_itself_fails_next', async () => {
	const t = await issueToken(srv, owner);
	await ok(call(srv, 'DELETE', `/api-tokens/${t.id}`, { token: t.token }), 204);
	h.assertError(await call(srv, 'GET', '/api-tokens', { token: t.token }), 401, 'UNAUTHENTICATED');
});

test('expired_token_is_401', async () => {
	const t = await issueToken(srv, owner);
	await sql(`UPDATE api_tokens SET expires_at = now() - interval '1 second' WHERE id = '${t.id}'`);
	h.assertError(await call(srv, 'GET', '/auth/session', { token: t.token }), 401, 'UNAUTHENTICATED');
});

test('a_cached_token_stops_at_its_expiry', async () => {
	const t = await issueToken(srv, owner);
	await sql(`UPDATE api_tokens SET expires_at = now() + interval '3 seconds' WHERE id = '${t.id}'`);
	await ok(call(srv, 'GET', '/auth/session', { token: t.token }));
	// Until the expiry has passed (the same host clock as stewardd's), not
	// a fixed time that a slow first call could eat into.
	while ((await sql(`SELECT expires_at < now() FROM api_tokens WHERE id = '${t.id}'`)).trim() !== 't') await h.sleep(100);
	h.assertError(await call(srv, 'GET', '/auth/session', { token: t.token }), 401, 'UNAUTHENTICATED');
});

test('last_used_at_is_recorded', async () => {
	const t = await issueToken(srv, owner);
	assert.equal((await listed(owner, t.id)).lastUsedAt, null);
	await ok(call(srv, 'GET', '/auth/session', { token: t.token }));
	let used = null;
	for (let i = 0; i < 50 && !used; i++) {
		used = (await listed(owner, t.id)).lastUsedAt;
		if (!used) await h.sleep(20);
	}
	assert.match(String(used), TS);
});

test('token_requests_are_exempt_from_the_csrf_origin_check', async () => {
	const t = await issueToken(srv, owner);
	const other = await issueToken(srv, owner);
	// POST and DELETE with no Origin and no Referer.
	const inv = await ok(call(srv, 'POST', `/organizations/${owner.org.id}/invitations`, { token: t.token },
		{ body: { email: 'csrf-exempt@example.com', role: 'MEMBER' } }), 201);
	assert.equal(inv.email, 'csrf-exempt@example.com');
	await ok(call(srv, 'DELETE', `/api-tokens/${other.id}`, { token: t.token }), 204);
	// The same with the cookie is refused.
	h.assertError(await call(srv, 'DELETE', `/api-tokens/${t.id}`, owner, { origin: false }), 403, 'CSRF_REJECTED');
	h.assertError(await call(srv, 'DELETE', `/api-tokens/${t.id}`, owner, { headers: { Origin: 'http://evil.example' } }), 403, 'CSRF_REJECTED');
});

test('tokens_of_another_user_are_invisible_and_404', async () => {
	const m = await member(srv, owner, 'tok-member@example.com', 'MEMBER');
	const mine = await issueToken(srv, m, 'member token');
	const list = await ok(call(srv, 'GET', '/api-tokens', owner));
	assert.ok(!list.some((x) => x.id === mine.id));
	h.assertError(await call(srv, 'DELETE', `/api-tokens/${mine.id}`, owner), 404, 'NOT_FOUND');
	h.assertError(await call(srv, 'DELETE', '/api-tokens/not-a-uuid', owner), 404, 'NOT_FOUND');
	h.assertError(await call(srv, 'DELETE', '/api-tokens/00000000-0000-0000-0000-000000000000', owner), 404, 'NOT_FOUND');
	// The member's token still works: the owner revoked nothing.
	await ok(call(srv, 'GET', '/auth/session', { token: mine.token }));
	// A token acts with its owner's role.
	h.assertError(await call(srv, 'PATCH', `/organizations/${owner.org.id}`, { token: mine.token }, { body: { name: 'x' } }), 403, 'FORBIDDEN');
});

test('live_tokens_per_user_are_bounded', async () => {
	const m = await member(srv, owner, 'tok-many@example.com', 'MEMBER');
	const made = [];
	for (let i = 0; i < 100; i++) made.push(await issueToken(srv, m, `t${i}`));
	h.assertError(await call(srv, 'POST', '/api-tokens', m, { body: { name: 'one too many' } }), 409, 'TOKEN_LIMIT_REACHED');
	await ok(call(srv, 'DELETE', `/api-tokens/${made[0].id}`, m), 204);
	await issueToken(srv, m, 'after a revoke');
	const list = await ok(call(srv, 'GET', '/api-tokens', m));
	assert.equal(list.length, 101);
	assert.equal(list[100].id, made[0].id, 'revoked tokens come after live ones');
});

test('anonymous_token_routes_are_401', async () => {
	h.assertError(await call(srv, 'GET', '/api-tokens'), 401, 'UNAUTHENTICATED');
	h.assertError(await call(srv, 'POST', '/api-tokens', {}, { body: { name: 'x' } }), 401, 'UNAUTHENTICATED');
});

// A second stewardd on the same database caches the token independently;
// the revoke must reach it through the "steward_auth" notification.
test('a_revoke_reaches_another_process_at_once', async () => {
	const srv2 = await h.startStewardd({ env: { DATABASE_URL: srv.env.DATABASE_URL, STEWARD_THREADS: 1 } });
	const t = await issueToken(srv, owner);
	await ok(call(srv2, 'GET', '/auth/session', { token: t.token }));
	await ok(call(srv, 'DELETE', `/api-tokens/${t.id}`, owner), 204);
	let status = 0;
	// The notification is asynchronous: allow it a moment, far below the cache's 60 s.
	for (let i = 0; i < 20 && status !== 401; i++) {
		if (i) await h.sleep(25);
		status = (await call(srv2, 'GET', '/auth/session', { token: t.token })).status;
	}
	assert.equal(status, 401);
	await srv2.stop();
});
