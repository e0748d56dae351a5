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
// destroy or change are random UUIDs (so an admitted request finds
// nothing, 404). The one exception, signing out, is followed by signing in
// again.
//
// Reads name real objects: one of every resource is made in organization A
// (and another set in B) through the API (resources.mjs), so a GET of A's
// object answers 200 to A's roles and 404 to B's OWNER, and no answer to
// one organization shows the ids of the other's objects.

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import * as h from './harness.mjs';
import { PASSWORD, call, ok, cookieOf, setup, signup, member, issueToken } from './identity.mjs';
import { populate, fillPath, paramCollections, startSink } from './resources.mjs';

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

// One of every resource in each organization.
const docs = (await h.request(srv.port, 'GET', '/docs')).json();
const sink = await startSink(); // the git host's API and webhook targets
const fxA = await populate(srv, P.operator, { docs, prefix: 'a', pg, dbName: srv.dbName, sink: sink.url });
const fxB = await populate(srv, P.other, { docs, prefix: 'b', pg, dbName: srv.dbName, sink: sink.url });
// The ids of the objects made (not the organization's and user's, below).
const objectIds = (fx) => Object.entries(fx.ids).filter(([c]) => c !== 'organizations' && c !== 'users' && c !== 'variables').map(([, v]) => v);

// What must never reach the other organization's principals.
const aSecrets = [A, openInvitation, memberToken.id, ...['member', 'admin', 'owner', 'operator'].flatMap((r) => [P[r].user.id, P[r].email]), ...objectIds(fxA)];
const bSecrets = [P.other.org.id, P.other.user.id, P.other.email, bMember.user.id, bMember.email, ...objectIds(fxB)];
for (const r of ['member', 'admin', 'owner', 'operator']) {
	P[r].sessionId = (await ok(call(srv, 'GET', '/auth/session', P[r]))).credential.id;
	aSecrets.push(P[r].sessionId);
}

// ---- path parameters

// Fills a path template. Objects that a request could read are A's; ids
// that a request would delete or change are random (nothing to destroy).
function fill(method, template) {
	return fillPath(template, method === 'GET' ? fxA.ids : {}, (collection, name) => {
		if (collection === 'organizations' && name === 'id') return A;
		if (collection === 'users' && name === 'id') return P.owner.user.id;
		if (collection === 'api-tokens' && name === 'id') return memberToken.id;
		if (name === 'userId' && method === 'PATCH') return P.member.user.id;
		return undefined;
	});
}
// A GET whose every path parameter names one of A's objects.
const readsObjectOfA = (method, template) => method === 'GET' && template.includes('{') &&
	paramCollections(template).every((c) => c in fxA.ids);

// ---- expected statuses

// 'pass': admitted (neither 401 nor 403, and no server error); a number:
// exactly that status.
const PASS = 'pass';

// The rule of an access level. scoped: the path names an object of A.
// read: a GET of one of A's objects, which A's admitted roles get (200).
function rule(access, scoped, read = false) {
	const other = scoped ? 404 : PASS;
	const a = read ? 200 : PASS;
	switch (access) {
	case 'Public': return { anonymous: PASS, other: PASS, member: PASS, admin: PASS, owner: PASS, operator: PASS };
	case 'Session': return { anonymous: 401, other, member: a, admin: a, owner: a, operator: a };
	case 'Owner': return { anonymous: 401, other, member: 403, admin: 403, owner: a, operator: a };
	case 'Owner/Admin': return { anonymous: 401, other, member: 403, admin: a, owner: a, operator: a };
	case 'Operator': return { anonymous: 401, other: 403, member: 403, admin: 403, owner: 403, operator: a };
	}
	throw new Error(`unknown access level ${access}`);
}

//                                                        anonymous other member admin owner operator
const T = (anonymous, other, member, admin, owner, operator) => ({ anonymous, other, member, admin, owner, operator });
const TABLE = {
	'GET /health':                                         T(200, 200, 200, 200, 200, 200),
	'GET /setup-status':                                   T(200, 200, 200, 200, 200, 200),
	// Public to the guard, but only an agent token opens it: a user's
	// session or API token is refused like no credential at all.
	'GET /agent/connect':                                  T(401, 401, 401, 401, 401, 401),
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
	// The resources (issue 4). Reads name one of A's objects (200 to A's
	// roles, 404 to B's OWNER); changes name random ids (404), or stop at
	// the {} body first (422, the same for every id: nothing is revealed).
	'GET /projects':                                       T(401, 200, 200, 200, 200, 200),
	'POST /projects':                                      T(401, 422, 422, 422, 422, 422),
	'GET /projects/{id}':                                  T(401, 404, 200, 200, 200, 200),
	'PATCH /projects/{id}':                                T(401, 404, 404, 404, 404, 404),
	'DELETE /projects/{id}':                               T(401, 404, 404, 404, 404, 404),
	'GET /projects/{id}/environments':                     T(401, 404, 200, 200, 200, 200),
	'POST /projects/{id}/environments':                    T(401, 422, 422, 422, 422, 422),
	'GET /projects/{id}/environments/{environmentId}':     T(401, 404, 200, 200, 200, 200),
	'PATCH /projects/{id}/environments/{environmentId}':   T(401, 404, 404, 404, 404, 404),
	'DELETE /projects/{id}/environments/{environmentId}':  T(401, 404, 404, 404, 404, 404),
	'GET /applications':                                   T(401, 200, 200, 200, 200, 200),
	'POST /applications':                                  T(401, 422, 422, 422, 422, 422),
	'GET /applications/{id}':                              T(401, 404, 200, 200, 200, 200),
	'PATCH /applications/{id}':                            T(401, 404, 404, 404, 404, 404),
	'DELETE /applications/{id}':                           T(401, 404, 404, 404, 404, 404),
	'POST /applications/{id}/start':                       T(401, 404, 404, 404, 404, 404),
	'POST /applications/{id}/stop':                        T(401, 404, 404, 404, 404, 404),
	'POST /applications/{id}/restart':                     T(401, 404, 404, 404, 404, 404),
	'GET /applications/{id}/volumes':                      T(401, 404, 200, 200, 200, 200),
	'POST /applications/{id}/volumes':                     T(401, 422, 422, 422, 422, 422),
	'GET /applications/{id}/volumes/{volumeId}':           T(401, 404, 200, 200, 200, 200),
	'PATCH /applications/{id}/volumes/{volumeId}':         T(401, 404, 404, 404, 404, 404),
	'DELETE /applications/{id}/volumes/{volumeId}':        T(401, 404, 404, 404, 404, 404),
	'GET /applications/{id}/domains':                      T(401, 404, 200, 200, 200, 200),
	'POST /applications/{id}/domains':                     T(401, 422, 422, 422, 422, 422),
	'GET /applications/{id}/domains/{domainId}':           T(401, 404, 200, 200, 200, 200),
	'DELETE /applications/{id}/domains/{domainId}':        T(401, 404, 404, 404, 404, 404),
	'POST /domains/{domainId}/verify':                     T(401, 404, 404, 404, 404, 404),
	'GET /applications/{id}/variables':                    T(401, 404, 200, 200, 200, 200),
	'PATCH /applications/{id}/variables':                  T(401, 422, 422, 422, 422, 422),
	'GET /applications/{id}/variables/{key}':              T(401, 404, 200, 200, 200, 200),
	'PUT /applications/{id}/variables/{key}':              T(401, 422, 422, 422, 422, 422),
	'DELETE /applications/{id}/variables/{key}':           T(401, 404, 404, 404, 404, 404),
	'GET /applications/{id}/git-source':                   T(401, 404, 200, 200, 200, 200),
	'PUT /applications/{id}/git-source':                   T(401, 422, 422, 422, 422, 422),
	'PATCH /applications/{id}/git-source':                 T(401, 404, 404, 404, 404, 404),
	'DELETE /applications/{id}/git-source':                T(401, 404, 404, 404, 404, 404),
	'POST /applications/{id}/git-source/deploy-key':       T(401, 404, 404, 404, 404, 404),
	'POST /applications/{id}/git-source/webhook-secret':   T(401, 404, 404, 404, 404, 404),
	'GET /git-credentials':                                T(401, 200, 200, 200, 200, 200),
	'POST /git-credentials':                               T(401, 422, 422, 422, 422, 422),
	'GET /git-credentials/{id}':                           T(401, 404, 200, 200, 200, 200),
	'PATCH /git-credentials/{id}':                         T(401, 404, 404, 404, 404, 404),
	'DELETE /git-credentials/{id}':                        T(401, 404, 404, 404, 404, 404),
	'GET /git-credentials/{id}/repositories':              T(401, 404, 200, 200, 200, 200),
	'GET /servers':                                        T(401, 200, 200, 200, 200, 200),
	'POST /servers':                                       T(401, 422, 422, 422, 422, 422),
	'GET /servers/{id}':                                   T(401, 404, 200, 200, 200, 200),
	// Read live through the server's driver: the fixtures' application and
	// server are remote ones, whose agents are not connected (409).
	'GET /applications/{id}/containers':                   T(401, 404, 409, 409, 409, 409),
	'GET /applications/{id}/logs':                         T(401, 404, 409, 409, 409, 409),
	'GET /servers/{id}/containers':                        T(401, 404, 409, 409, 409, 409),
	'GET /servers/{id}/sample':                            T(401, 404, 409, 409, 409, 409),
	// History is read from PostgreSQL, whatever the server's agent does.
	'GET /servers/{id}/metrics':                           T(401, 404, 200, 200, 200, 200),
	// Streamed from the local sampler only: the fixtures' server is remote.
	'GET /servers/{id}/live':                              T(401, 404, 409, 409, 409, 409),
	'GET /applications/{id}/metrics':                      T(401, 404, 200, 200, 200, 200),
	'GET /proxy':                                          T(401, 200, 200, 200, 200, 200),
	'PATCH /servers/{id}':                                 T(401, 404, 404, 404, 404, 404),
	'DELETE /servers/{id}':                                T(401, 404, 404, 404, 404, 404),
	'POST /servers/{id}/agent-token':                      T(401, 404, 404, 404, 404, 404),
	'GET /services':                                       T(401, 200, 200, 200, 200, 200),
	'POST /services':                                      T(401, 422, 422, 422, 422, 422),
	'GET /services/{id}':                                  T(401, 404, 200, 200, 200, 200),
	'PATCH /services/{id}':                                T(401, 404, 404, 404, 404, 404),
	'DELETE /services/{id}':                               T(401, 404, 404, 404, 404, 404),
	'POST /services/{id}/start':                           T(401, 404, 404, 404, 404, 404),
	'POST /services/{id}/stop':                            T(401, 404, 404, 404, 404, 404),
	'POST /services/{id}/restart':                         T(401, 404, 404, 404, 404, 404),
	'GET /services/{id}/connection':                       T(401, 404, 200, 200, 200, 200),
	'GET /services/{id}/backups':                          T(401, 404, 200, 200, 200, 200),
	'POST /services/{id}/backups':                         T(401, 404, 404, 404, 404, 404),
	// The fixtures' backup is QUEUED: no file to send (409).
	'GET /services/{id}/backups/{backupId}/download':      T(401, 404, 409, 409, 409, 409),
	'POST /services/{id}/backups/{backupId}/restore':      T(401, 404, 404, 404, 404, 404),
	'GET /services/{id}/backups/schedule':                 T(401, 404, 200, 200, 200, 200),
	'PUT /services/{id}/backups/schedule':                 T(401, 422, 422, 422, 422, 422),
	'GET /alerts/summary':                                 T(401, 200, 200, 200, 200, 200),
	'GET /alerts/rules':                                   T(401, 200, 200, 200, 200, 200),
	'POST /alerts/rules':                                  T(401, 422, 422, 422, 422, 422),
	'GET /alerts/rules/{ruleId}':                          T(401, 404, 200, 200, 200, 200),
	'PATCH /alerts/rules/{ruleId}':                        T(401, 404, 404, 404, 404, 404),
	'DELETE /alerts/rules/{ruleId}':                       T(401, 404, 404, 404, 404, 404),
	'GET /alerts':                                         T(401, 200, 200, 200, 200, 200),
	'GET /alerts/{id}':                                    T(401, 404, 200, 200, 200, 200),
	'POST /alerts/{id}/resolve':                           T(401, 404, 404, 404, 404, 404),
	'GET /notification-channels':                          T(401, 200, 200, 200, 200, 200),
	'POST /notification-channels':                         T(401, 422, 422, 422, 422, 422),
	'GET /notification-channels/{id}':                     T(401, 404, 200, 200, 200, 200),
	'PATCH /notification-channels/{id}':                   T(401, 404, 404, 404, 404, 404),
	'DELETE /notification-channels/{id}':                  T(401, 404, 404, 404, 404, 404),
	'POST /notification-channels/{id}/test':               T(401, 404, 404, 404, 404, 404),
	'GET /plans':                                          T(401, 200, 200, 200, 200, 200),
	'GET /subscription':                                   T(401, 200, 200, 200, 200, 200),
	'PUT /subscription':                                   T(401, 403, 403, 403, 403, 422),
};

const admitted = (status) => status !== 401 && status !== 403 && status < 500;
const matches = (want, status) => (want === PASS ? admitted(status) : status === want);

// ---- the routes of the document

const routes = [];
for (const [path, item] of Object.entries(docs.paths)) {
	for (const [m, op] of Object.entries(item)) {
		const method = m.toUpperCase();
		const read = readsObjectOfA(method, path);
		const scoped = /^\/(organizations|users)\/\{id\}/.test(path) || read;
		routes.push({ key: `${method} ${path}`, method, path, access: op['x-steward-access'], body: !!op.requestBody, scoped, read });
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
	'GET /agent/connect': 'an agent token in x-agent-token, never a user\'s credential',
	'GET /users/{id}/sessions': "another member's sessions need OWNER or ADMIN",
	'DELETE /users/{id}/sessions/{sessionId}': "another member's sessions need OWNER or ADMIN",
};

test('the_table_agrees_with_the_access_levels', () => {
	for (const r of routes) {
		const want = TABLE[r.key];
		if (!want) continue;
		const byRule = rule(r.access, r.scoped, r.read);
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
	const want = TABLE[r.key] || rule(r.access, r.scoped, r.read);
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

test('an_object_of_the_other_organization_is_not_found_by_any_role', async () => {
	// Every read of one of B's objects, as each of A's roles (the operator
	// included: operating the installation is not reading its tenants'
	// objects), answers 404; and B's own OWNER reads it (200).
	const reads = routes.filter((r) => r.method === 'GET' && r.path.includes('{') &&
		paramCollections(r.path).every((c) => c in fxB.ids && c !== 'users'));
	assert.ok(reads.length > 0);
	for (const r of reads) {
		const path = fillPath(r.path, fxB.ids);
		for (const role of ['member', 'admin', 'owner', 'operator']) {
			const res = await call(srv, 'GET', path, P[role]);
			h.assertError(res, 404, 'NOT_FOUND');
		}
		const own = await call(srv, 'GET', path, P.other);
		// Live container lists and logs, samples and live metrics of a remote server with
		// no connected agent answer 409 to its own organization; never 404.
		// The fixtures' backup has no file yet (409 BACKUP_NOT_READY).
		const live = r.path.endsWith('/containers') || r.path.endsWith('/sample') || r.path === '/servers/{id}/live' ||
			r.path === '/applications/{id}/logs' ||
			r.path.endsWith('/download');
		if (r.access === 'Session') assert.equal(own.status, live ? 409 : 200, `${r.key} of B's own object as B's OWNER: ${own.text.slice(0, 300)}`);
	}
});

test('operator_only_capabilities_refuse_every_other_role', async () => {
	// Checked in the handler, on a body that asks for them: a host-path
	// volume, a notification channel allowed to reach private addresses,
	// and a plan grant. 403 FORBIDDEN for MEMBER, ADMIN and OWNER (and B's
	// OWNER, for B's own organization), by cookie or token alike; the
	// operator's request is made, then undone.
	const asks = [];
	if (fxA.ids.applications && docs.paths['/applications/{id}/volumes']?.post) {
		asks.push({ what: 'a host-path volume', method: 'POST', path: `/applications/${fxA.ids.applications}/volumes`,
			body: (i) => ({ name: `host-${i}`, mountPath: `/mnt/host-${i}`, hostPath: `/srv/steward-test-${i}` }),
			undo: (d) => call(srv, 'DELETE', `/applications/${fxA.ids.applications}/volumes/${d.id}`, P.operator) });
	}
	if (docs.paths['/notification-channels']?.post) {
		asks.push({ what: 'a channel to private addresses', method: 'POST', path: '/notification-channels',
			body: (i) => ({ name: `private-${i}`, kind: 'WEBHOOK', url: `http://10.0.0.${i + 1}/hook`, allowPrivateTargets: true }),
			undo: (d) => call(srv, 'DELETE', `/notification-channels/${d.id}`, P.operator) });
	}
	if (docs.paths['/subscription']?.put) {
		asks.push({ what: 'a plan grant', method: 'PUT', path: '/subscription',
			body: () => ({ planId: 'team', organizationId: P.other.org.id }),
			undo: () => call(srv, 'PUT', '/subscription', P.operator, { body: { planId: 'free', organizationId: P.other.org.id } }) });
	}
	assert.ok(asks.length > 0);
	let i = 0;
	for (const a of asks) {
		for (const role of ['member', 'admin', 'owner']) {
			for (const who of [P[role], { token: (await issueToken(srv, P[role], `cap-${i}`)).token }]) {
				const res = await call(srv, a.method, a.path, who, { body: a.body(i++) });
				h.assertError(res, 403, 'FORBIDDEN');
				// The handler's own refusal names the role (the guard's, for
				// an Operator route, is its generic one).
				if (a.what !== 'a plan grant') assert.match(res.json().error.message, /operator/i, `${a.what} as ${role}: the message names the operator role`);
			}
		}
		if (a.what !== 'a plan grant') {
			const own = await call(srv, a.method, a.path.replace(fxA.ids.applications || '-', fxB.ids.applications || '-'), P.other, { body: a.body(i++) });
			h.assertError(own, 403, 'FORBIDDEN');
		}
		const res = await call(srv, a.method, a.path, P.operator, { body: a.body(i++) });
		assert.ok(res.status === 200 || res.status === 201, `${a.what} as the operator: ${res.status} ${res.text.slice(0, 300)}`);
		await a.undo(res.json().data);
	}
});
