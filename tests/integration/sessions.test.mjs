// Sessions: sign-in, the cookie, the current session, listing and
// revoking, sign-out, CSRF, password change, sign-in rate limits.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import * as h from './harness.mjs';

let pg, srv, port, origin;
const PASSWORD = 'correct horse battery';

before(async () => {
	pg = await h.startPostgres();
	srv = await h.startStewardd({ db: pg, env: { STEWARD_THREADS: 2 } });
	port = srv.port;
	origin = `http://127.0.0.1:${port}`;
	const r = await h.request(port, 'POST', '/setup', { body: h.setupBody({ password: PASSWORD }) });
	assert.equal(r.status, 201, r.text);
});
after(async () => {
	await h.cleanupAll();
});

function cookieOf(res) {
	const set = [].concat(res.headers['set-cookie'] || []);
	const c = set.find((v) => v.startsWith('steward_session='));
	return c ? c.split(';')[0] : null;
}

async function signIn(email = 'owner@example.com', password = PASSWORD, headers = {}) {
	return h.request(port, 'POST', '/auth/sign-in', { body: { email, password }, headers });
}

async function session(cookie) {
	return h.request(port, 'GET', '/auth/session', { headers: { Cookie: cookie } });
}

test('setup_signs_the_first_user_in_with_a_session_cookie', async () => {
	const s = await h.startStewardd({ db: pg });
	const r = await h.request(s.port, 'POST', '/setup', { body: h.setupBody() });
	assert.equal(r.status, 201, r.text);
	const set = [].concat(r.headers['set-cookie'] || []).join('\n');
	assert.match(set, /^steward_session=[A-Za-z0-9_-]{43}; /m);
	assert.match(set, /; Path=\//);
	assert.match(set, /; HttpOnly/);
	assert.match(set, /; SameSite=Lax/);
	assert.match(set, /; Max-Age=1209600/);
	assert.doesNotMatch(set, /Secure/, 'no Secure without an https PUBLIC_BASE_URL');
	const body = r.json().data;
	assert.equal(body.session.method, 'SETUP');
	assert.equal(body.organization.role, 'OWNER');
	const me = await h.request(s.port, 'GET', '/auth/session', { headers: { Cookie: cookieOf(r) } });
	assert.equal(me.status, 200, me.text);
	assert.equal(me.json().data.user.email, 'owner@example.com');
});

test('cookie_is_secure_when_the_public_base_url_is_https', async () => {
	const s = await h.startStewardd({ db: pg, env: { PUBLIC_BASE_URL: 'https://steward.example.com' } });
	const r = await h.request(s.port, 'POST', '/setup', { body: h.setupBody() });
	assert.equal(r.status, 201, r.text);
	assert.match([].concat(r.headers['set-cookie']).join('\n'), /; Secure/);
});

test('sign_in_with_the_right_password_issues_a_session', async () => {
	const r = await signIn();
	assert.equal(r.status, 200, r.text);
	const d = r.json().data;
	assert.equal(d.session.method, 'PASSWORD');
	assert.equal(d.user.isOperator, true);
	const text = JSON.stringify(d);
	assert.ok(!text.includes(PASSWORD) && !text.includes('$argon2'), 'no password or hash in the response');
	const me = await session(cookieOf(r));
	assert.equal(me.status, 200);
	assert.equal(me.json().data.credential.type, 'SESSION');
	assert.equal(me.json().data.credential.id, d.session.id);
});

test('wrong_password_and_unknown_email_answer_alike', async () => {
	const a = await signIn('owner@example.com', 'not the password');
	const b = await signIn('nobody@example.com', 'not the password');
	h.assertError(a, 401, 'INVALID_CREDENTIALS');
	h.assertError(b, 401, 'INVALID_CREDENTIALS');
	assert.equal(a.json().error.message, b.json().error.message);
	assert.equal(cookieOf(a), null);
});

test('sign_in_validation_errors_name_the_fields', async () => {
	const r = await h.request(port, 'POST', '/auth/sign-in', { body: { email: 'not-an-email', extra: 1 } });
	const e = h.assertError(r, 422, 'VALIDATION_FAILED');
	assert.ok(e.fields.email);
	assert.ok(e.fields.password);
	assert.ok(e.fields.extra);
});

test('no_credentials_is_401_and_a_dead_cookie_is_cleared', async () => {
	h.assertError(await h.request(port, 'GET', '/auth/session'), 401, 'UNAUTHENTICATED');
	const r = await session('steward_session=' + 'A'.repeat(43));
	h.assertError(r, 401, 'UNAUTHENTICATED');
	assert.match([].concat(r.headers['set-cookie'] || []).join(''), /^steward_session=; .*Max-Age=0/);
	h.assertError(await session('steward_session=short'), 401, 'UNAUTHENTICATED');
	const bad = await h.request(port, 'GET', '/auth/session', { headers: { Authorization: 'Basic abc' } });
	h.assertError(bad, 401, 'UNAUTHENTICATED');
});

test('session_list_marks_the_current_session', async () => {
	const a = cookieOf(await signIn());
	const b = cookieOf(await signIn());
	const r = await h.request(port, 'GET', '/auth/sessions', { headers: { Cookie: a } });
	assert.equal(r.status, 200, r.text);
	const list = r.json().data;
	assert.ok(list.length >= 2);
	assert.equal(list.filter((s) => s.current).length, 1);
	const meB = (await session(b)).json().data.credential.id;
	assert.ok(list.some((s) => s.id === meB && !s.current));
});

test('a_revoked_session_fails_on_the_next_request_in_every_thread', async () => {
	const victim = await signIn();
	const victimCookie = cookieOf(victim);
	const victimId = victim.json().data.session.id;
	// Warm the cache on both threads: several connections.
	for (let i = 0; i < 6; i++) assert.equal((await session(victimCookie)).status, 200);
	const admin = cookieOf(await signIn());
	const del = await h.request(port, 'DELETE', `/auth/sessions/${victimId}`, { headers: { Cookie: admin, Origin: origin } });
	assert.equal(del.status, 204, del.text);
	for (let i = 0; i < 6; i++) h.assertError(await session(victimCookie), 401, 'UNAUTHENTICATED');
	h.assertError(await h.request(port, 'DELETE', `/auth/sessions/${victimId}`, { headers: { Cookie: admin, Origin: origin } }), 404, 'NOT_FOUND');
	h.assertError(await h.request(port, 'DELETE', '/auth/sessions/not-a-uuid', { headers: { Cookie: admin, Origin: origin } }), 404, 'NOT_FOUND');
});

test('sign_out_revokes_the_session_and_clears_the_cookie', async () => {
	const c = cookieOf(await signIn());
	const r = await h.request(port, 'POST', '/auth/sign-out', { headers: { Cookie: c, Origin: origin } });
	assert.equal(r.status, 204, r.text);
	assert.match([].concat(r.headers['set-cookie'] || []).join(''), /steward_session=; .*Max-Age=0/);
	h.assertError(await session(c), 401, 'UNAUTHENTICATED');
});

test('cookie_requests_with_unsafe_methods_need_our_origin', async () => {
	const c = cookieOf(await signIn());
	const post = (headers) => h.request(port, 'POST', '/auth/sign-out', { headers: { Cookie: c, ...headers } });
	h.assertError(await post({}), 403, 'CSRF_REJECTED');
	h.assertError(await post({ Origin: 'https://evil.example' }), 403, 'CSRF_REJECTED');
	h.assertError(await post({ Origin: 'null' }), 403, 'CSRF_REJECTED');
	h.assertError(await post({ Referer: 'https://evil.example/page' }), 403, 'CSRF_REJECTED');
	// Safe methods need nothing.
	assert.equal((await session(c)).status, 200);
	assert.equal((await post({ Referer: `${origin}/settings` })).status, 204);
});

test('trusted_origins_pass_the_csrf_check', async () => {
	const s = await h.startStewardd({ db: pg, env: { AUTH_TRUSTED_ORIGINS: 'https://dash.example.com, https://other.example' } });
	const r = await h.request(s.port, 'POST', '/setup', { body: h.setupBody() });
	const c = cookieOf(r);
	const out = await h.request(s.port, 'POST', '/auth/sign-out', { headers: { Cookie: c, Origin: 'https://dash.example.com' } });
	assert.equal(out.status, 204, out.text);
});

test('password_change_needs_the_current_password', async () => {
	const c = cookieOf(await signIn());
	const r = await h.request(port, 'POST', '/auth/password', {
		headers: { Cookie: c, Origin: origin },
		body: { currentPassword: 'wrong wrong wrong', newPassword: 'another good passphrase' },
	});
	const e = h.assertError(r, 422, 'VALIDATION_FAILED');
	assert.ok(e.fields.currentPassword);
	const weak = await h.request(port, 'POST', '/auth/password', {
		headers: { Cookie: c, Origin: origin },
		body: { currentPassword: PASSWORD, newPassword: 'short' },
	});
	assert.ok(h.assertError(weak, 422, 'VALIDATION_FAILED').fields.newPassword);
});

test('password_change_revokes_every_other_session', async () => {
	const s = await h.startStewardd({ db: pg, env: { STEWARD_THREADS: 2 } });
	const setup = await h.request(s.port, 'POST', '/setup', { body: h.setupBody() });
	const keep = cookieOf(setup);
	const other = cookieOf(await h.request(s.port, 'POST', '/auth/sign-in', { body: { email: 'owner@example.com', password: 'correct horse battery' } }));
	for (let i = 0; i < 4; i++) assert.equal((await h.request(s.port, 'GET', '/auth/session', { headers: { Cookie: other } })).status, 200);
	const r = await h.request(s.port, 'POST', '/auth/password', {
		headers: { Cookie: keep, Origin: `http://127.0.0.1:${s.port}` },
		body: { currentPassword: 'correct horse battery', newPassword: 'a brand new passphrase' },
	});
	assert.equal(r.status, 204, r.text);
	for (let i = 0; i < 4; i++) {
		h.assertError(await h.request(s.port, 'GET', '/auth/session', { headers: { Cookie: other } }), 401, 'UNAUTHENTICATED');
		assert.equal((await h.request(s.port, 'GET', '/auth/session', { headers: { Cookie: keep } })).status, 200);
	}
	const old = await h.request(s.port, 'POST', '/auth/sign-in', { body: { email: 'owner@example.com', password: 'correct horse battery' } });
	h.assertError(old, 401, 'INVALID_CREDENTIALS');
	const fresh = await h.request(s.port, 'POST', '/auth/sign-in', { body: { email: 'owner@example.com', password: 'a brand new passphrase' } });
	assert.equal(fresh.status, 200, fresh.text);
});

test('sign_in_is_limited_per_account_with_retry_after', async () => {
	const s = await h.startStewardd({ db: pg });
	await h.request(s.port, 'POST', '/setup', { body: h.setupBody() });
	let limited = null;
	for (let i = 0; i < 12 && !limited; i++) {
		const r = await h.request(s.port, 'POST', '/auth/sign-in', { body: { email: 'owner@example.com', password: `wrong ${i} attempt` } });
		if (r.status === 429) limited = { r, i };
		else h.assertError(r, 401, 'INVALID_CREDENTIALS');
	}
	assert.ok(limited, 'no 429 within 12 attempts');
	assert.equal(limited.i, 10, 'the 11th attempt is the first refused');
	h.assertError(limited.r, 429, 'RATE_LIMITED');
	assert.ok(Number(limited.r.headers['retry-after']) >= 1);
	// Even the right password is refused while limited.
	const right = await h.request(s.port, 'POST', '/auth/sign-in', { body: { email: 'owner@example.com', password: 'correct horse battery' } });
	h.assertError(right, 429, 'RATE_LIMITED');
});

test('a_revoke_in_one_process_takes_effect_in_another_on_its_next_request', async () => {
	const a = await h.startStewardd({ db: pg });
	const b = await h.startStewardd({ db: pg, env: { DATABASE_URL: a.env.DATABASE_URL } });
	const setup = await h.request(a.port, 'POST', '/setup', { body: h.setupBody() });
	const keep = cookieOf(setup);
	const victim = await h.request(a.port, 'POST', '/auth/sign-in', { body: { email: 'owner@example.com', password: 'correct horse battery' } });
	const victimCookie = cookieOf(victim);
	// Process B resolves and caches the victim's session.
	for (let i = 0; i < 4; i++) assert.equal((await h.request(b.port, 'GET', '/auth/session', { headers: { Cookie: victimCookie } })).status, 200);
	const del = await h.request(a.port, 'DELETE', `/auth/sessions/${victim.json().data.session.id}`, {
		headers: { Cookie: keep, Origin: `http://127.0.0.1:${a.port}` },
	});
	assert.equal(del.status, 204, del.text);
	// The notification crosses processes asynchronously: allow it the
	// time of one round trip to PostgreSQL, then every request must fail.
	await h.sleep(50);
	for (let i = 0; i < 4; i++) h.assertError(await h.request(b.port, 'GET', '/auth/session', { headers: { Cookie: victimCookie } }), 401, 'UNAUTHENTICATED');
});

test('the_cached_account_follows_an_organization_rename_at_once_in_every_process', async () => {
	const a = await h.startStewardd({ db: pg, env: { STEWARD_THREADS: 2 } });
	const b = await h.startStewardd({ db: pg, env: { DATABASE_URL: a.env.DATABASE_URL } });
	const setup = await h.request(a.port, 'POST', '/setup', { body: h.setupBody({ organizationName: 'Before' }) });
	const cookie = cookieOf(setup);
	const org = setup.json().data.organization.id;
	for (const p of [a.port, a.port, a.port, b.port, b.port])
		assert.equal((await h.request(p, 'GET', '/auth/session', { headers: { Cookie: cookie } })).json().data.organization.name, 'Before');
	const r = await h.request(a.port, 'PATCH', `/organizations/${org}`, {
		headers: { Cookie: cookie, Origin: `http://127.0.0.1:${a.port}` },
		body: { name: 'After' },
	});
	assert.equal(r.status, 200, r.text);
	for (let i = 0; i < 4; i++)
		assert.equal((await h.request(a.port, 'GET', '/auth/session', { headers: { Cookie: cookie } })).json().data.organization.name, 'After');
	await h.sleep(50); // the notification crosses to the other process
	for (let i = 0; i < 4; i++)
		assert.equal((await h.request(b.port, 'GET', '/auth/session', { headers: { Cookie: cookie } })).json().data.organization.name, 'After');
});
