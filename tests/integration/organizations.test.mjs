// Organizations, members, invitations, users, the audit log: every route's
// success and validation failures, the last-owner rule, invitations (accept
// creates the user and signs in; single use; expiry; bound to the address),
// role changes and removals effective at once, users' sessions, audit
// filters and pages. Tests run in file order and share one organization.

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import * as h from './harness.mjs';
const { TS, UUID, NIL } = h;
import { PASSWORD, call, ok, cookieOf, setup, invite, accept, member, issueToken } from './identity.mjs';

h.stewarddPath();
const pg = await h.startPostgres();
const srv = await h.startStewardd({ db: pg });
after(h.cleanupAll);

const sql = (q) => pg.psql(q, srv.dbName);

const owner = await setup(srv);
const org = `/organizations/${owner.org.id}`;
let admin; // set by the invitation tests
let plain; // a MEMBER

async function fields(p) {
	return h.assertError(await p, 422, 'VALIDATION_FAILED').fields;
}

async function signIn(email) {
	const res = await h.request(srv.port, 'POST', '/auth/sign-in', { body: { email, password: PASSWORD } });
	assert.equal(res.status, 200, res.text);
	return { cookie: cookieOf(res), ...res.json().data };
}

// ------------------------------------------------------------ organization

test('get_organization_answers_the_callers_own', async () => {
	const o = await ok(call(srv, 'GET', org, owner));
	assert.equal(o.id, owner.org.id);
	assert.equal(o.name, 'Acme');
	assert.match(o.createdAt, TS);
	assert.match(o.updatedAt, TS);
});

test('another_or_malformed_organization_id_is_404', async () => {
	for (const p of [`/organizations/${NIL}`, '/organizations/acme', `/organizations/${NIL}/members`,
		`/organizations/${NIL}/invitations`]) {
		h.assertError(await call(srv, 'GET', p, owner), 404, 'NOT_FOUND');
	}
	h.assertError(await call(srv, 'PATCH', `/organizations/${NIL}`, owner, { body: { name: 'x' } }), 404, 'NOT_FOUND');
});

test('rename_validates_and_renames', async () => {
	assert.ok((await fields(call(srv, 'PATCH', org, owner, { body: {} }))).name);
	assert.ok((await fields(call(srv, 'PATCH', org, owner, { body: { name: '  ' } }))).name);
	assert.ok((await fields(call(srv, 'PATCH', org, owner, { body: { name: 'x'.repeat(101) } }))).name);
	assert.ok((await fields(call(srv, 'PATCH', org, owner, { body: { name: 'a', plan: 'pro' } }))).plan);
	const o = await ok(call(srv, 'PATCH', org, owner, { body: { name: '  Acme Corp ' } }));
	assert.equal(o.name, 'Acme Corp');
	assert.equal((await ok(call(srv, 'GET', org, owner))).name, 'Acme Corp');
	const meta = await sql(`SELECT metadata::text FROM audit_logs WHERE action = 'organization.renamed'`);
	assert.deepEqual(JSON.parse(meta), { from: 'Acme', to: 'Acme Corp' });
});

// ------------------------------------------------------------ invitations

test('invite_validates_its_fields', async () => {
	const path = `${org}/invitations`;
	const f1 = await fields(call(srv, 'POST', path, owner, { body: {} }));
	assert.ok(f1.email && f1.role);
	assert.ok((await fields(call(srv, 'POST', path, owner, { body: { email: 'no-at', role: 'MEMBER' } }))).email);
	assert.ok((await fields(call(srv, 'POST', path, owner, { body: { email: 'a@example.com', role: 'GOD' } }))).role);
	assert.ok((await fields(call(srv, 'POST', path, owner, { body: { email: 'a@example.com', role: 'member' } }))).role);
});

test('invitation_accept_creates_the_user_and_signs_in_with_the_invited_address', async () => {
	const inv = await invite(srv, owner, 'Ada.Admin@Example.com', 'ADMIN');
	assert.match(inv.id, UUID);
	assert.equal(inv.email, 'ada.admin@example.com', 'stored lower-case');
	assert.equal(inv.role, 'ADMIN');
	assert.equal(inv.invitedBy, owner.user.id);
	assert.match(inv.token, /^[A-Za-z0-9_-]{43}$/);
	const days = (Date.parse(inv.expiresAt) - Date.parse(inv.createdAt)) / 86400000;
	assert.ok(Math.abs(days - 7) < 0.001);
	// Listed for members, never with the token.
	const listRes = await call(srv, 'GET', `${org}/invitations`, owner);
	assert.ok(!listRes.text.includes(inv.token));
	assert.ok(listRes.json().data.some((x) => x.id === inv.id && !('token' in x)));

	const res = await h.request(srv.port, 'POST', '/invitations/accept', { body: { token: inv.token, name: 'Ada', password: PASSWORD } });
	assert.equal(res.status, 201, res.text);
	const d = res.json().data;
	assert.equal(d.user.email, 'ada.admin@example.com');
	assert.equal(d.user.isOperator, false);
	assert.equal(d.organization.id, owner.org.id);
	assert.equal(d.organization.role, 'ADMIN');
	assert.equal(d.session.method, 'INVITATION');
	admin = { cookie: cookieOf(res), user: d.user, org: d.organization };
	assert.equal((await ok(call(srv, 'GET', '/auth/session', admin))).user.id, d.user.id);
	// The password belongs to the invited address.
	await signIn('ada.admin@example.com');
	// The invitation is no longer open.
	const open = await ok(call(srv, 'GET', `${org}/invitations`, owner));
	assert.ok(!open.some((x) => x.id === inv.id));
	const dump = await pg.dump(srv.dbName);
	assert.ok(!dump.includes(inv.token), 'only the hash of the invitation token is stored');
	const audit = await sql(`SELECT count(*) FROM audit_logs WHERE action = 'invitation.accepted' AND actor_user_id = '${d.user.id}'`);
	assert.equal(audit.trim(), '1');
});

test('an_invitation_works_once', async () => {
	const inv = await invite(srv, owner, 'mo.member@example.com', 'MEMBER');
	plain = await accept(srv, inv.token, 'Mo');
	assert.equal(plain.org.role, 'MEMBER');
	const again = await fields(h.request(srv.port, 'POST', '/invitations/accept', { body: { token: inv.token, name: 'Eve', password: PASSWORD } }));
	assert.ok(again.token);
});

test('concurrent_accepts_of_one_invitation_create_one_user', async () => {
	const inv = await invite(srv, owner, 'race@example.com', 'MEMBER');
	const rs = await Promise.all(Array.from({ length: 5 }, (_, i) => h.request(srv.port, 'POST', '/invitations/accept',
		{ body: { token: inv.token, name: `Racer ${i}`, password: PASSWORD } })));
	assert.deepEqual(rs.map((r) => r.status).sort(), [201, 422, 422, 422, 422]);
	assert.equal((await sql(`SELECT count(*) FROM users WHERE email = 'race@example.com'`)).trim(), '1');
});

test('accept_refuses_bad_fields_and_closed_invitations', async () => {
	const post = (body) => h.request(srv.port, 'POST', '/invitations/accept', { body });
	const f = await fields(post({}));
	assert.ok(f.token && f.name && f.password);
	assert.ok((await fields(post({ token: 'short', name: 'A', password: PASSWORD }))).token);
	assert.ok((await fields(post({ token: 'A'.repeat(43), name: 'A', password: PASSWORD }))).token, 'unknown token');
	const weak = await invite(srv, owner, 'weak@example.com', 'MEMBER');
	assert.ok((await fields(post({ token: weak.token, name: 'A', password: 'short' }))).password);
	assert.ok((await fields(post({ token: weak.token, name: 'A', password: PASSWORD, email: 'other@example.com' }))).email,
		'the address comes from the invitation, not the request');
	// Expired.
	await sql(`UPDATE invitations SET expires_at = now() - interval '1 second' WHERE id = '${weak.id}'`);
	assert.ok((await fields(post({ token: weak.token, name: 'A', password: PASSWORD }))).token);
	// Cancelled.
	const c = await invite(srv, owner, 'cancelled@example.com', 'MEMBER');
	await ok(call(srv, 'DELETE', `${org}/invitations/${c.id}`, owner), 204);
	assert.ok((await fields(post({ token: c.token, name: 'A', password: PASSWORD }))).token);
});

test('invite_conflicts_are_409', async () => {
	const path = `${org}/invitations`;
	h.assertError(await call(srv, 'POST', path, owner, { body: { email: 'ADA.admin@example.com', role: 'MEMBER' } }), 409, 'ALREADY_MEMBER');
	await invite(srv, owner, 'twice@example.com', 'MEMBER');
	h.assertError(await call(srv, 'POST', path, owner, { body: { email: 'twice@example.com', role: 'ADMIN' } }), 409, 'INVITATION_PENDING');
	// An expired invitation no longer blocks a new one.
	await sql(`UPDATE invitations SET expires_at = now() - interval '1 second' WHERE email = 'twice@example.com'`);
	await invite(srv, owner, 'twice@example.com', 'ADMIN');
});

test('cancel_is_idempotent_404_elsewhere_and_409_once_accepted', async () => {
	const inv = await invite(srv, owner, 'cancel-me@example.com', 'MEMBER');
	await ok(call(srv, 'DELETE', `${org}/invitations/${inv.id}`, owner), 204);
	await ok(call(srv, 'DELETE', `${org}/invitations/${inv.id}`, owner), 204);
	const n = await sql(`SELECT count(*) FROM audit_logs WHERE action = 'invitation.cancelled' AND target_id = '${inv.id}'`);
	assert.equal(n.trim(), '1');
	h.assertError(await call(srv, 'DELETE', `${org}/invitations/${NIL}`, owner), 404, 'NOT_FOUND');
	h.assertError(await call(srv, 'DELETE', `${org}/invitations/nope`, owner), 404, 'NOT_FOUND');
	const used = (await sql(`SELECT id FROM invitations WHERE accepted_at IS NOT NULL LIMIT 1`)).trim();
	h.assertError(await call(srv, 'DELETE', `${org}/invitations/${used}`, owner), 409, 'INVITATION_ACCEPTED');
});

test('only_an_owner_invites_or_cancels', async () => {
	h.assertError(await call(srv, 'POST', `${org}/invitations`, admin, { body: { email: 'x@example.com', role: 'MEMBER' } }), 403, 'FORBIDDEN');
	h.assertError(await call(srv, 'DELETE', `${org}/invitations/${NIL}`, plain), 403, 'FORBIDDEN');
	await ok(call(srv, 'GET', `${org}/invitations`, plain));
});

// ------------------------------------------------------------ members and users

test('members_and_users_list_the_organization_in_pages', async () => {
	const all = await ok(call(srv, 'GET', `${org}/members?order=asc`, plain));
	assert.deepEqual(all.map((m) => m.email).slice(0, 3), ['owner@example.com', 'ada.admin@example.com', 'mo.member@example.com']);
	// The default order, as for every list, is the latest first.
	const latestFirst = await ok(call(srv, 'GET', `${org}/members`, plain));
	assert.deepEqual(latestFirst.map((m) => m.userId), all.map((m) => m.userId).reverse());
	assert.deepEqual(Object.keys(all[0]).sort(), ['email', 'joinedAt', 'name', 'role', 'userId']);
	const seen = [];
	let cursor = null;
	for (let i = 0; i < 10; i++) {
		const res = await call(srv, 'GET', `/users?order=asc&limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, plain);
		assert.equal(res.status, 200, res.text);
		const body = res.json();
		assert.ok(body.data.length <= 2);
		seen.push(...body.data);
		cursor = body.pagination.nextCursor;
		if (!cursor) break;
	}
	assert.deepEqual(seen.map((u) => u.id), all.map((m) => m.userId));
	assert.deepEqual(Object.keys(seen[0]).sort(), ['createdAt', 'email', 'id', 'name', 'role']);
	const p = await call(srv, 'GET', `${org}/members?limit=200`, plain);
	assert.equal(p.json().pagination.nextCursor, null);
});

test('page_parameters_are_validated', async () => {
	for (const [q, field] of [['limit=0', 'limit'], ['limit=201', 'limit'], ['limit=x', 'limit'], ['cursor=abc', 'cursor'],
		[`cursor=1_${'z'.repeat(36)}`, 'cursor'], ['sort=name', 'sort'], ['limit=1&limit=2', 'limit'], ['order=up', 'order']]) {
		assert.ok((await fields(call(srv, 'GET', `/users?${q}`, plain)))[field], q);
	}
});

test('role_changes_take_effect_on_the_next_request', async () => {
	const path = `${org}/members/${plain.user.id}`;
	assert.ok((await fields(call(srv, 'PATCH', path, owner, { body: { role: 'BOSS' } }))).role);
	assert.ok((await fields(call(srv, 'PATCH', path, owner, { body: {} }))).role);
	h.assertError(await call(srv, 'PATCH', `${org}/members/${NIL}`, owner, { body: { role: 'ADMIN' } }), 404, 'NOT_FOUND');
	h.assertError(await call(srv, 'PATCH', path, admin, { body: { role: 'ADMIN' } }), 403, 'FORBIDDEN');
	// The member's principal is cached as MEMBER here.
	h.assertError(await call(srv, 'PATCH', org, plain, { body: { name: 'Mine' } }), 403, 'FORBIDDEN');
	const m = await ok(call(srv, 'PATCH', path, owner, { body: { role: 'OWNER' } }));
	assert.deepEqual([m.userId, m.role], [plain.user.id, 'OWNER']);
	await ok(call(srv, 'PATCH', org, plain, { body: { name: 'Acme Corp' } }));
	await ok(call(srv, 'PATCH', path, owner, { body: { role: 'MEMBER' } }));
	h.assertError(await call(srv, 'PATCH', org, plain, { body: { name: 'Mine' } }), 403, 'FORBIDDEN');
	const meta = await sql(`SELECT metadata::text FROM audit_logs WHERE action = 'membership.role_changed' AND target_id = '${plain.user.id}' ORDER BY id`);
	assert.deepEqual(meta.trim().split('\n').map((l) => JSON.parse(l)), [{ from: 'MEMBER', to: 'OWNER' }, { from: 'OWNER', to: 'MEMBER' }]);
});

test('the_last_owner_can_be_neither_demoted_nor_removed', async () => {
	h.assertError(await call(srv, 'PATCH', `${org}/members/${owner.user.id}`, owner, { body: { role: 'ADMIN' } }), 409, 'LAST_OWNER');
	h.assertError(await call(srv, 'DELETE', `${org}/members/${owner.user.id}`, owner), 409, 'LAST_OWNER');
	// With a second owner, one may step down; then the other is the last.
	const second = await member(srv, owner, 'second.owner@example.com', 'OWNER');
	await ok(call(srv, 'PATCH', `${org}/members/${second.user.id}`, second, { body: { role: 'ADMIN' } }));
	h.assertError(await call(srv, 'PATCH', `${org}/members/${owner.user.id}`, owner, { body: { role: 'MEMBER' } }), 409, 'LAST_OWNER');
	// Two owners demoting each other at once leave one owner.
	await ok(call(srv, 'PATCH', `${org}/members/${second.user.id}`, owner, { body: { role: 'OWNER' } }));
	const [a, b] = await Promise.all([
		call(srv, 'PATCH', `${org}/members/${second.user.id}`, owner, { body: { role: 'MEMBER' } }),
		call(srv, 'PATCH', `${org}/members/${owner.user.id}`, second, { body: { role: 'MEMBER' } }),
	]);
	// The loser is refused by the last-owner rule, or, when its own demotion
	// landed first, by the guard as the MEMBER it now is.
	const statuses = [a.status, b.status].sort();
	assert.ok(statuses[0] === 200 && (statuses[1] === 409 || statuses[1] === 403), String(statuses));
	assert.equal((await sql(`SELECT count(*) FROM memberships WHERE organization_id = '${owner.org.id}' AND role = 'OWNER'`)).trim(), '1');
	// Restore: the setup user is the owner again.
	const ownerIsOwner = (await sql(`SELECT role FROM memberships WHERE user_id = '${owner.user.id}'`)).trim() === 'OWNER';
	if (!ownerIsOwner) {
		await ok(call(srv, 'PATCH', `${org}/members/${owner.user.id}`, second, { body: { role: 'OWNER' } }));
	}
	await ok(call(srv, 'DELETE', `${org}/members/${second.user.id}`, owner), 204);
});

test('removing_a_member_revokes_their_sessions_and_tokens_at_once', async () => {
	const gone = await member(srv, owner, 'leaving@example.com', 'MEMBER');
	const t = await issueToken(srv, gone);
	await ok(call(srv, 'GET', '/auth/session', gone));
	await ok(call(srv, 'GET', '/auth/session', { token: t.token }));
	h.assertError(await call(srv, 'DELETE', `${org}/members/${gone.user.id}`, admin), 403, 'FORBIDDEN');
	await ok(call(srv, 'DELETE', `${org}/members/${gone.user.id}`, owner), 204);
	h.assertError(await call(srv, 'GET', '/auth/session', gone), 401, 'UNAUTHENTICATED');
	h.assertError(await call(srv, 'GET', '/auth/session', { token: t.token }), 401, 'UNAUTHENTICATED');
	h.assertError(await call(srv, 'DELETE', `${org}/members/${gone.user.id}`, owner), 404, 'NOT_FOUND');
	const users = await ok(call(srv, 'GET', '/users', owner));
	assert.ok(!users.some((u) => u.id === gone.user.id));
	const meta = await sql(`SELECT metadata::text FROM audit_logs WHERE action = 'membership.removed' AND target_id = '${gone.user.id}'`);
	assert.deepEqual(JSON.parse(meta), { role: 'MEMBER', sessionsRevoked: 1, tokensRevoked: 1 });
	// The account stays; a new invitation of its address is refused at accept.
	const again = await invite(srv, owner, 'leaving@example.com', 'MEMBER');
	h.assertError(await h.request(srv.port, 'POST', '/invitations/accept', { body: { token: again.token, name: 'Back', password: PASSWORD } }), 409, 'EMAIL_REGISTERED');
});

// ------------------------------------------------------------ users' sessions

test('one_lists_and_revokes_ones_own_sessions', async () => {
	const list = await ok(call(srv, 'GET', `/users/${plain.user.id}/sessions`, plain));
	assert.ok(list.some((s) => s.current));
	const extra = await signIn('mo.member@example.com');
	await ok(call(srv, 'DELETE', `/users/${plain.user.id}/sessions/${extra.session.id}`, plain), 204);
	h.assertError(await call(srv, 'GET', '/auth/session', extra), 401, 'UNAUTHENTICATED');
});

test('owner_and_admin_manage_another_members_sessions_a_member_may_not', async () => {
	const victim = await signIn('mo.member@example.com');
	const list = await ok(call(srv, 'GET', `/users/${plain.user.id}/sessions`, admin));
	assert.ok(list.some((s) => s.id === victim.session.id));
	assert.ok(list.every((s) => s.current === false));
	await ok(call(srv, 'GET', `/users/${plain.user.id}/sessions`, owner));
	h.assertError(await call(srv, 'GET', `/users/${admin.user.id}/sessions`, plain), 403, 'FORBIDDEN');
	const adminSession = (await ok(call(srv, 'GET', '/auth/session', admin))).credential.id;
	h.assertError(await call(srv, 'DELETE', `/users/${admin.user.id}/sessions/${adminSession}`, plain), 403, 'FORBIDDEN');
	h.assertError(await call(srv, 'DELETE', `/users/${plain.user.id}/sessions/${NIL}`, admin), 404, 'NOT_FOUND');
	await ok(call(srv, 'DELETE', `/users/${plain.user.id}/sessions/${victim.session.id}`, admin), 204);
	h.assertError(await call(srv, 'GET', '/auth/session', victim), 401, 'UNAUTHENTICATED');
	await ok(call(srv, 'GET', '/auth/session', plain));
});

test('sessions_of_a_user_outside_the_organization_are_404', async () => {
	h.assertError(await call(srv, 'GET', `/users/${NIL}/sessions`, owner), 404, 'NOT_FOUND');
	h.assertError(await call(srv, 'GET', '/users/nobody/sessions', owner), 404, 'NOT_FOUND');
	const gone = (await sql(`SELECT id FROM users WHERE email = 'leaving@example.com'`)).trim();
	h.assertError(await call(srv, 'GET', `/users/${gone}/sessions`, owner), 404, 'NOT_FOUND');
	h.assertError(await call(srv, 'DELETE', `/users/${gone}/sessions/${NIL}`, owner), 404, 'NOT_FOUND');
});

// ------------------------------------------------------------ audit log

test('audit_logs_are_for_operators', async () => {
	const second = await member(srv, owner, 'not.operator@example.com', 'OWNER');
	h.assertError(await call(srv, 'GET', '/audit-logs', second), 403, 'FORBIDDEN');
	h.assertError(await call(srv, 'GET', '/audit-logs', admin), 403, 'FORBIDDEN');
	h.assertError(await call(srv, 'GET', '/audit-logs'), 401, 'UNAUTHENTICATED');
	await ok(call(srv, 'DELETE', `${org}/members/${second.user.id}`, owner), 204);
});

test('audit_logs_filter_and_page', async () => {
	const get = async (q) => {
		const res = await call(srv, 'GET', `/audit-logs?${q}`, owner);
		assert.equal(res.status, 200, res.text);
		return res.json();
	};
	const first = await get('limit=200');
	assert.ok(first.data.length > 20);
	const r = first.data[0];
	assert.deepEqual(Object.keys(r).sort(), ['action', 'actorUserId', 'createdAt', 'id', 'ip', 'metadata', 'organizationId', 'targetId', 'targetType']);
	const times = first.data.map((x) => Date.parse(x.createdAt));
	assert.deepEqual(times, [...times].sort((a, b) => b - a), 'newest first');
	assert.equal(r.ip, '127.0.0.1');

	const inv = await get('action=invitation');
	assert.ok(inv.data.length > 0 && inv.data.every((x) => x.action.startsWith('invitation.')));
	const exact = await get('action=invitation.cancelled');
	assert.ok(exact.data.length > 0 && exact.data.every((x) => x.action === 'invitation.cancelled'));
	const byActor = await get(`actorUserId=${admin.user.id}`);
	assert.ok(byActor.data.length > 0 && byActor.data.every((x) => x.actorUserId === admin.user.id));
	const byOrg = await get(`organizationId=${owner.org.id}&limit=200`);
	assert.ok(byOrg.data.every((x) => x.organizationId === owner.org.id));
	const none = await get(`organizationId=${NIL}`);
	assert.deepEqual(none.data, []);

	// since inclusive, until exclusive, at millisecond precision.
	const mid = first.data[Math.floor(first.data.length / 2)].createdAt;
	const since = await get(`since=${encodeURIComponent(mid)}&limit=200`);
	const until = await get(`until=${encodeURIComponent(mid)}&limit=200`);
	assert.ok(since.data.every((x) => x.createdAt >= mid) && until.data.every((x) => x.createdAt < mid));
	assert.ok(since.data.length + until.data.length >= first.data.length);
	const offset = mid.replace('Z', '+00:00');
	assert.equal((await get(`since=${encodeURIComponent(offset)}&limit=200`)).data.length, since.data.length);
	// Any date-time RFC 3339 can write is a filter, the first day of year 1 included.
	const all = await get('since=0001-01-01T00:00:00Z&limit=200');
	assert.equal(all.data.length, (await get('limit=200')).data.length);
	assert.deepEqual((await get('until=0001-01-01T00:00:00Z')).data, []);

	// Pages of 3 walk the same records.
	const walked = [];
	let cursor = null;
	for (let i = 0; i < 200; i++) {
		const page = await get(`limit=3&organizationId=${owner.org.id}${cursor ? `&cursor=${cursor}` : ''}`);
		walked.push(...page.data.map((x) => x.id));
		cursor = page.pagination.nextCursor;
		if (!cursor) break;
	}
	assert.deepEqual(walked, byOrg.data.map((x) => x.id).slice(0, walked.length));
	assert.equal(walked.length, Math.min(byOrg.data.length, walked.length));
});

test('audit_log_query_is_validated', async () => {
	for (const [q, field] of [['action=Auth', 'action'], ['action=auth..x', 'action'], ['actorUserId=me', 'actorUserId'],
		['organizationId=1', 'organizationId'], ['since=yesterday', 'since'], ['until=2026-02-30T00:00:00Z', 'until'],
		['since=2026-01-02T00:00:00Z&until=2026-01-01T00:00:00Z', 'until'], ['cursor=1_abc', 'cursor'], ['page=2', 'page'],
		['cursor=1795278155123000_9223372036854775808', 'cursor'], ['cursor=1795278155123000_007', 'cursor'],
		['cursor=9223372036854775808_1', 'cursor'], ['limit=007', 'limit'], ['limit=1e2', 'limit']]) {
		assert.ok((await fields(call(srv, 'GET', `/audit-logs?${q}`, owner)))[field], q);
	}
});

test('the_audit_log_records_who_what_and_never_a_secret', async () => {
	const t = await issueToken(srv, owner, 'audited');
	await ok(call(srv, 'DELETE', `/api-tokens/${t.id}`, owner), 204);
	const inv = await invite(srv, owner, 'secretless@example.com', 'MEMBER');
	await accept(srv, inv.token, 'Secretless');
	const all = await sql(`SELECT action, coalesce(actor_user_id::text, ''), coalesce(ip, ''), metadata::text FROM audit_logs`);
	for (const secret of [t.token, t.token.slice(3), inv.token, PASSWORD]) assert.ok(!all.includes(secret));
	for (const action of ['api_token.issued', 'api_token.revoked', 'invitation.created', 'invitation.accepted',
		'invitation.cancelled', 'membership.role_changed', 'membership.removed', 'organization.renamed', 'auth.session.revoked']) {
		assert.ok(all.includes(action), action);
	}
});
