// The authorization matrix: every route of GET /docs (so a new route is
// covered the day it is added) against anonymous, an OWNER of another
// organization, and a MEMBER, ADMIN, OWNER and the operator of organization
// A, each with the expected status; and no response to one organization's
// principal carries the other organization's ids or addresses.
//
// Expected statuses: an explicit table for the routes known when this file
// was written, and for any other route the rule of its access level
// (x-steward-access). The table must agree with the rule, so it cannot
// drift into allowing what the access level forbids.
//
// Requests are harmless by construction: bodies are {} (so an admitted
// request stops at validation, 422), and ids of things a request could
// destroy are random UUIDs (so an admitted request finds nothing, 404).
// The one exception, signing out, is followed by signing in again.

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import * as h from './harness.mjs';
import { PASSWORD, call, ok, cookieOf, setup, signup, member, issueToken } from './identity.mjs';

h.stewarddPath();
const pg = await h.startPostgres();
const srv = await h.startStewardd({ db: pg, env: { SIGNUP_ENABLED: 'true' } });
after(h.cleanupAll);

// ---- two organizations, populated through the API

const operator = await setup(srv, 'operator@a.example', 'Org A'); // OWNER of A and the operator
const P = {
	anonymous: {},
	other: await signup(srv, 'owner@b.example', 'Org B'), // OWNER of B
	member: await member(srv, operator, 'member@a.example', 'MEMBER'),
	admin: await member(srv, operator, 'admin@a.example', 'ADMIN'),
	owner: await member(srv, operator, 'owner@a.example', 'OWNER'),
	operator,
};
const ROLES = Object.keys(P);
const A = operator.org.id;
const memberToken = await issueToken(srv, P.member, 'matrix');
const bMember = await member(srv, P.other, 'member@b.example', 'MEMBER');
const openInvitation = (await ok(call(srv, 'POST', `/organizations/${A}/invitations`, P.operator,
	{ body: { email: 'pending@a.example', role: 'MEMBER' } }), 201)).id;

// What must never reach the other organization's principals.
const aSecrets = [A, openInvitation, memberToken.id, ...['member', 'admin', 'owner', 'operator'].flatMap((r) => [P[r].user.id, P[r].email])];
const bSecrets = [P.other.org.id, P.other.user.id, P.other.email, bMember.user.id, bMember.email];
for (const r of ['member', 'admin', 'owner', 'operator']) {
	P[r].sessionId = (await ok(call(srv, 'GET', '/auth/session', P[r]))).credential.id;
	aSecrets.push(P[r].sessionId);
}

// ---- path parameters

// Fills a path template. Objects that a request could read are A's; ids
// that a request would delete or change are random (nothing to destroy).
function fill(method, template) {
	return template.replace(/\{(\w+)\}/g, (_, name, offset) => {
		const before = template.slice(0, offset);
		if (before === '/organizations/' && name === 'id') return A;
		if (before === '/users/' && name === 'id') return P.owner.user.id;
		if (before === '/api-tokens/' && name === 'id') return memberToken.id;
		if (name === 'userId' && method === 'PATCH') return P.member.user.id;
		return randomUUID();
	});
}

// ---- expected statuses

// 'pass': admitted (neither 401 nor 403, and no server error); a number:
// exactly that status.
const PASS = 'pass';

// The rule of an access level. scoped: the path names an object of A.
function rule(access, scoped) {
	const other = scoped ? 404 : PASS;
	switch (access) {
	case 'Public': return { anonymous: PASS, other: PASS, member: PASS, admin: PASS, owner: PASS, operator: PASS };
	case 'Session': return { anonymous: 401, other, member: PASS, admin: PASS, owner: PASS, operator: PASS };
	case 'Owner': return { anonymous: 401, other, member: 403, admin: 403, owner: PASS, operator: PASS };
	case 'Owner/Admin': return { anonymous: 401, other, member: 403, admin: PASS, owner: PASS, operator: PASS };
	case 'Operator': return { anonymous: 401, other: 403, member: 403, admin: 403, owner: 403, operator: PASS };
	}
	throw new Error(`unknown access level ${access}`);
}

//                                                        anonymous other member admin owner operator
const T = (anonymous, other, member, admin, owner, operator) => ({ anonymous, other, member, admin, owner, operator });
const TABLE = {
	'GET /health':                                         T(200, 200, 200, 200, 200, 200),
	'GET /setup-status':                                   T(200, 200, 200, 200, 200, 200),
	'POST /setup':                                         T(422, 422, 422, 422, 422, 422),
	'POST /signup':                                        T(422, 422, 422, 422, 422, 422),
	'GET /docs':                                           T(200, 200, 200, 200, 200, 200),
	'POST /auth/sign-in':                                  T(422, 422, 422, 422, 422, 422),
	'POST /auth/sign-out':                                 T(401, 204, 204, 204, 204, 204),
	'GET /auth/session':                                   T(401, 200, 200, 200, 200, 200),
	'GET /auth/sessions':                                  T(401, 200, 200, 200, 200, 200),
	'DELETE /auth/sessions/{id}':                          T(401, 404, 404, 404, 404, 404),
	'POST /auth/password':                                 T(401, 422, 422, 422, 422, 422),
	'POST /api-tokens':                                    T(401, 422, 422, 422, 422, 422),
	'GET /api-tokens':                                     T(401, 200, 200, 200, 200, 200),
	'DELETE /api-tokens/{id}':                             T(401, 404, 204, 404, 404, 404),
	'GET /organizations/{id}':                             T(401, 404, 200, 200, 200, 200),
	'PATCH /organizations/{id}':                           T(401, 404, 403, 403, 422, 422),
	'GET /organizations/{id}/members':                     T(401, 404, 200, 200, 200, 200),
	'PATCH /organizations/{id}/members/{userId}':          T(401, 404, 403, 403, 422, 422),
	'DELETE /organizations/{id}/members/{userId}':         T(401, 404, 403, 403, 404, 404),
	'GET /organizations/{id}/invitations':                 T(401, 404, 200, 200, 200, 200),
	'POST /organizations/{id}/invitations':                T(401, 404, 403, 403, 422, 422),
	'DELETE /organizations/{id}/invitations/{invitationId}': T(401, 404, 403, 403, 404, 404),
	'POST /invitations/accept':                            T(422, 422, 422, 422, 422, 422),
	'GET /users':                                          T(401, 200, 200, 200, 200, 200),
	'GET /users/{id}/sessions':                            T(401, 404, 403, 200, 200, 200),
	'DELETE /users/{id}/sessions/{sessionId}':             T(401, 404, 403, 404, 404, 404),
	'GET /audit-logs':                                     T(401, 403, 403, 403, 403, 200),
};

const admitted = (status) => status !== 401 && status !== 403 && status < 500;
const matches = (want, status) => (want === PASS ? admitted(status) : status === want);

// ---- the routes of the document

const docs = (await h.request(srv.port, 'GET', '/docs')).json();
const routes = [];
for (const [path, item] of Object.entries(docs.paths)) {
	for (const [m, op] of Object.entries(item)) {
		const method = m.toUpperCase();
		const scoped = /^\/(organizations|users)\/\{id\}/.test(path);
		routes.push({ key: `${method} ${path}`, method, path, access: op['x-steward-access'], body: !!op.requestBody, scoped });
	}
}

test('the_document_lists_every_route_of_the_table', () => {
	const keys = new Set(routes.map((r) => r.key));
	for (const k of Object.keys(TABLE)) assert.ok(keys.has(k), `${k} is in the table but not served`);
	assert.ok(routes.length >= Object.keys(TABLE).length);
});

// Routes whose handler asks more than the access level, and why (the
// table may refuse there what the rule admits, never the reverse).
const STRICTER = {
	'GET /users/{id}/sessions': "another member's sessions need OWNER or ADMIN",
	'DELETE /users/{id}/sessions/{sessionId}': "another member's sessions need OWNER or ADMIN",
};

test('the_table_agrees_with_the_access_levels', () => {
	for (const r of routes) {
		const want = TABLE[r.key];
		if (!want) continue;
		const byRule = rule(r.access, r.scoped);
		for (const role of ROLES) {
			const a = want[role] === PASS || admitted(want[role]);
			const b = byRule[role] === PASS || admitted(byRule[role]);
			if (a !== b && !a && STRICTER[r.key]) continue;
			assert.equal(a, b, `${r.key} for ${role}: table ${want[role]}, ${r.access} rule ${byRule[role]}`);
		}
	}
});

// A signed-out principal signs in again, so later routes see it alive.
async function stillSignedIn(role) {
	const p = P[role];
	if ((await call(srv, 'GET', '/auth/session', p)).status === 200) return;
	const res = await h.request(srv.port, 'POST', '/auth/sign-in', { body: { email: p.email, password: PASSWORD } });
	assert.equal(res.status, 200, `signing ${role} in again: ${res.text}`);
	p.cookie = cookieOf(res);
}

for (const r of routes) {
	const want = TABLE[r.key] || rule(r.access, r.scoped);
	const source = TABLE[r.key] ? 'table' : `${r.access} rule`;
	test(`${r.key} (${source})`, async () => {
		for (const role of ROLES) {
			const path = fill(r.method, r.path);
			const res = await call(srv, r.method, path, P[role], { body: r.body ? {} : undefined });
			assert.ok(matches(want[role], res.status),
				`${r.method} ${path} as ${role}: expected ${want[role]}, got ${res.status} ${res.text.slice(0, 300)}`);
			if (res.status === 401 || res.status === 403 || res.status === 404) h.assertError(res, res.status);
			// No leak across organizations (the operator's audit log spans
			// the installation by design).
			const foreign = role === 'anonymous' || role === 'other' ? aSecrets : r.key === 'GET /audit-logs' && role === 'operator' ? [] : bSecrets;
			for (const s of foreign) assert.ok(!res.text.includes(s), `${r.key} as ${role} reveals ${s}: ${res.text.slice(0, 500)}`);
			if (role !== 'anonymous' && r.method !== 'GET' && res.status < 300) await stillSignedIn(role);
		}
	});
}

test('a_principal_of_another_organization_sees_only_its_own', async () => {
	const users = await ok(call(srv, 'GET', '/users', P.other));
	assert.deepEqual(users.map((u) => u.email).sort(), ['member@b.example', 'owner@b.example']);
	const usersA = await ok(call(srv, 'GET', '/users', P.member));
	assert.deepEqual(usersA.map((u) => u.email).sort(), ['admin@a.example', 'member@a.example', 'operator@a.example', 'owner@a.example']);
	// B's own organization routes work for B, with B's data only.
	const bOrg = P.other.org.id;
	await ok(call(srv, 'GET', `/organizations/${bOrg}`, P.other));
	const members = await call(srv, 'GET', `/organizations/${bOrg}/members`, P.other);
	for (const s of aSecrets) assert.ok(!members.text.includes(s));
	// And a token of B is held to the same rules as B's cookie.
	const t = await issueToken(srv, P.other, 'b-token');
	h.assertError(await call(srv, 'GET', `/organizations/${A}`, { token: t.token }), 404, 'NOT_FOUND');
	h.assertError(await call(srv, 'GET', `/users/${P.owner.user.id}/sessions`, { token: t.token }), 404, 'NOT_FOUND');
	h.assertError(await call(srv, 'GET', '/audit-logs', { token: t.token }), 403, 'FORBIDDEN');
});
