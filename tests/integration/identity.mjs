// Principals for the identity tests: the session cookie of a response,
// requests as a cookie (with the server's own Origin, as a browser sends it)
// or as an API token, and organizations populated through the API itself
// (setup, invitations, sign-up). Shared by tokens, organizations and
// authz_matrix.

import assert from 'node:assert/strict';
import * as h from './harness.mjs';

export const PASSWORD = 'correct horse battery';

export function cookieOf(res) {
	const m = /steward_session=([^;]+)/.exec([].concat(res.headers['set-cookie'] || [])[0] || '');
	assert.ok(m, `a session cookie in ${res.head}`);
	return m[1];
}

// who: {cookie} or {token} or nothing (anonymous). A cookie request carries
// Origin unless origin is false.
export function call(srv, method, path, who = {}, { body, origin = true, headers = {} } = {}) {
	const hs = { ...headers };
	if (who.cookie) hs.Cookie = `steward_session=${who.cookie}`;
	if (who.token) hs.Authorization = `Bearer ${who.token}`;
	if (who.cookie && origin && !('Origin' in hs)) hs.Origin = srv.url;
	return h.request(srv.port, method, path, { headers: hs, body });
}

// Expects status; returns data (or the response for a body-less status).
export async function ok(p, status = 200) {
	const res = await p;
	assert.equal(res.status, status, `${res.head}\n\n${res.text}`);
	return res.status === 204 ? res : res.json().data;
}

function principal(res) {
	const d = res.json().data;
	return { cookie: cookieOf(res), user: d.user, org: d.organization, email: d.user.email };
}

// POST /setup: the operator, OWNER of the first organization.
export async function setup(srv, email = 'owner@example.com', organizationName = 'Acme') {
	const res = await h.request(srv.port, 'POST', '/setup', {
		body: { email, password: PASSWORD, name: 'Olive Owner', organizationName },
	});
	assert.equal(res.status, 201, res.text);
	return principal(res);
}

// POST /signup (SIGNUP_ENABLED): the OWNER of a new organization.
export async function signup(srv, email, organizationName) {
	const res = await h.request(srv.port, 'POST', '/signup', {
		body: { email, password: PASSWORD, name: 'Sam Signup', organizationName },
	});
	assert.equal(res.status, 201, res.text);
	return principal(res);
}

// An OWNER invites email with role; returns the invitation (with token).
export function invite(srv, owner, email, role) {
	return ok(call(srv, 'POST', `/organizations/${owner.org.id}/invitations`, owner, { body: { email, role } }), 201);
}

export async function accept(srv, token, name = 'Ivy Invitee') {
	const res = await h.request(srv.port, 'POST', '/invitations/accept', { body: { token, name, password: PASSWORD } });
	assert.equal(res.status, 201, res.text);
	return principal(res);
}

// A new member of owner's organization with role, signed in.
export async function member(srv, owner, email, role) {
	return accept(srv, (await invite(srv, owner, email, role)).token);
}

export async function issueToken(srv, who, name = 'ci') {
	return ok(call(srv, 'POST', '/api-tokens', who, { body: { name } }), 201);
}

// An application on the organization's local server, made in the database
// (the metrics tests need only its id and its server's): {server, project,
// env, app} ids. sql(query) answers the trimmed text of psql.
export async function localApplication(sql, orgId, name) {
	const server = await sql(`SELECT id FROM servers WHERE organization_id = '${orgId}' AND is_local`);
	const project = await sql(`INSERT INTO projects (organization_id, name) VALUES ('${orgId}', 'p') RETURNING id`);
	const env = await sql(`INSERT INTO environments (organization_id, project_id, name) VALUES ('${orgId}', '${project}', 'production') RETURNING id`);
	const app = await sql(`INSERT INTO applications (organization_id, project_id, environment_id, server_id, name)
	VALUES ('${orgId}', '${project}', '${env}', '${server}', '${name}') RETURNING id`);
	return { server, project, env, app };
}
