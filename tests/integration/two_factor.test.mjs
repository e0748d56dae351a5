// Two-factor authentication (TOTP): enrolment with the password,
// confirmation and recovery codes, the sign-in challenge, verification
// with a code or a recovery code, replay, clock drift, failure limits,
// rate limits, disabling, and the audit trail. Codes are computed here
// with node:crypto from the base32 key the server returns (RFC 6238:
// HMAC-SHA-1, 6 digits, 30-second steps).
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import * as h from './harness.mjs';
import { awayFromBoundary, base32Decode, stepNow, totp } from './totp.mjs';

const PASSWORD = 'correct horse battery';
let pg, main;

before(async () => {
	pg = await h.startPostgres();
	main = await server();
});
after(async () => {
	await h.cleanupAll();
});

// A stewardd with signup on and its first user set up. Rate limits are
// per process, so tests that exhaust them get their own.
async function server() {
	const s = await h.startStewardd({ db: pg, env: { SIGNUP_ENABLED: 'true' } });
	const r = await h.request(s.port, 'POST', '/setup', { body: h.setupBody({ password: PASSWORD }) });
	assert.equal(r.status, 201, r.text);
	return { port: s.port, origin: `http://127.0.0.1:${s.port}`, dbName: s.dbName };
}

// ---- TOTP in the test (totp.mjs) ----

// A code matching none of the steps the server accepts now.
function wrongCode(secret) {
	const T = stepNow();
	const taken = new Set([-2, -1, 0, 1, 2].map((d) => totp(secret, T + d)));
	for (let i = 0; ; i++) {
		const c = String(i * 7919 % 1000000).padStart(6, '0');
		if (!taken.has(c)) return c;
	}
}

// ---- HTTP helpers ----

function cookieOf(res) {
	const set = [].concat(res.headers['set-cookie'] || []);
	const c = set.find((v) => v.startsWith('steward_session='));
	return c ? c.split(';')[0] : null;
}

let userCounter = 0;

// A new account (signup), signed in: {email, cookie, id}.
async function newUser(s = main) {
	userCounter += 1;
	const email = `user${userCounter}@example.com`;
	const r = await h.request(s.port, 'POST', '/signup', {
		body: { email, password: PASSWORD, name: `User ${userCounter}` },
	});
	assert.equal(r.status, 201, r.text);
	return { s, email, cookie: cookieOf(r), id: r.json().data.user.id };
}

function call(u, method, path, body) {
	return h.request(u.s.port, method, path, {
		headers: { Cookie: u.cookie, Origin: u.s.origin },
		body,
	});
}

function signIn(u, password = PASSWORD) {
	return h.request(u.s.port, 'POST', '/auth/sign-in', { body: { email: u.email, password } });
}

function verify(s, body) {
	return h.request(s.port, 'POST', '/auth/two-factor/verify', { body });
}

async function challengeOf(u) {
	const r = await signIn(u);
	assert.equal(r.status, 200, r.text);
	assert.equal(cookieOf(r), null, 'no session cookie before the second factor');
	const d = r.json().data;
	assert.equal(d.twoFactorRequired, true, r.text);
	return d.challenge;
}

// Enrols and confirms with the code of step T + confirmOffset:
// {secret, recoveryCodes, confirmStep}.
async function enable(u, confirmOffset = 0) {
	const e = await call(u, 'POST', '/auth/two-factor', { password: PASSWORD });
	assert.equal(e.status, 200, e.text);
	const secret = e.json().data.secret;
	const confirmStep = stepNow() + confirmOffset;
	const c = await call(u, 'POST', '/auth/two-factor/confirm', { code: totp(secret, confirmStep) });
	assert.equal(c.status, 200, c.text);
	return { secret, recoveryCodes: c.json().data.recoveryCodes, confirmStep };
}

async function auditActions(s, userId) {
	const out = await pg.psql(`SELECT action || ' ' || metadata::text FROM audit_logs WHERE actor_user_id = '${userId}' ORDER BY id`, s.dbName);
	return out.trim().split('\n');
}

// ---- the tests ----

test('enrolment_needs_the_password_and_returns_the_key_and_its_otpauth_uri', async () => {
	const u = await newUser();
	const wrong = await call(u, 'POST', '/auth/two-factor', { password: 'not the password' });
	const err = h.assertError(wrong, 422, 'VALIDATION_FAILED');
	assert.ok(err.fields.password, wrong.text);
	h.assertError(await call(u, 'POST', '/auth/two-factor', {}), 422, 'VALIDATION_FAILED');
	h.assertError(await call(u, 'POST', '/auth/two-factor', { password: PASSWORD, extra: 1 }), 422, 'VALIDATION_FAILED');
	const anonymous = await h.request(main.port, 'POST', '/auth/two-factor', { body: { password: PASSWORD } });
	h.assertError(anonymous, 401, 'UNAUTHENTICATED');

	const r = await call(u, 'POST', '/auth/two-factor', { password: PASSWORD });
	assert.equal(r.status, 200, r.text);
	const d = r.json().data;
	assert.match(d.secret, /^[A-Z2-7]{32}$/);
	assert.equal(d.confirmed, false);
	const uri = new URL(d.otpauthUri);
	assert.equal(uri.protocol, 'otpauth:');
	assert.equal(decodeURIComponent(uri.pathname), `/Steward:${u.email}`);
	assert.equal(uri.searchParams.get('secret'), d.secret);
	assert.equal(uri.searchParams.get('issuer'), 'Steward');
	assert.equal(uri.searchParams.get('algorithm'), 'SHA1');
	assert.equal(uri.searchParams.get('digits'), '6');
	assert.equal(uri.searchParams.get('period'), '30');

	// At rest the key is sealed under the master key: neither its bytes
	// (hex) nor its base32 form is in the row.
	const row = (await pg.psql(`SELECT coalesce(encode(secret, 'hex'), '-') || ' ' || secret_sealed FROM two_factor WHERE user_id = '${u.id}'`, main.dbName)).trim();
	const [plain, sealed] = row.split(' ');
	assert.equal(plain, '-', row);
	assert.match(sealed, /^v1\.[0-9a-f]{8}\./);
	const keyHex = base32Decode(d.secret).toString('hex');
	assert.ok(!sealed.includes(keyHex) && !sealed.includes(d.secret), 'the key is not stored in the clear');

	const st = await call(u, 'GET', '/auth/two-factor');
	assert.deepEqual(st.json().data, { enabled: false, pending: true, enabledAt: null, recoveryCodesRemaining: 0 });
	// Pending changes nothing for sign-in.
	const s = await signIn(u);
	assert.equal(s.status, 200);
	assert.ok(cookieOf(s), 'a pending enrolment does not ask for a code');

	// Enrolling again replaces the pending key: the old one no longer confirms.
	const again = await call(u, 'POST', '/auth/two-factor', { password: PASSWORD });
	assert.equal(again.status, 200, again.text);
	assert.notEqual(again.json().data.secret, d.secret);
	await awayFromBoundary();
	const stale = await call(u, 'POST', '/auth/two-factor/confirm', { code: totp(d.secret, stepNow()) });
	h.assertError(stale, 422, 'VALIDATION_FAILED');
});

test('confirm_refuses_a_wrong_code_then_enables_with_ten_single_use_recovery_codes', async () => {
	const u = await newUser();
	h.assertError(await call(u, 'POST', '/auth/two-factor/confirm', { code: '123456' }), 409, 'TWO_FACTOR_NOT_STARTED');
	const e = await call(u, 'POST', '/auth/two-factor', { password: PASSWORD });
	const secret = e.json().data.secret;
	await awayFromBoundary();
	const wrong = await call(u, 'POST', '/auth/two-factor/confirm', { code: wrongCode(secret) });
	assert.ok(h.assertError(wrong, 422, 'VALIDATION_FAILED').fields.code, wrong.text);
	h.assertError(await call(u, 'POST', '/auth/two-factor/confirm', { code: 'abcdef' }), 422, 'VALIDATION_FAILED');

	const code = totp(secret, stepNow());
	// "123 456", as apps show it, is accepted too.
	const ok = await call(u, 'POST', '/auth/two-factor/confirm', { code: `${code.slice(0, 3)} ${code.slice(3)}` });
	assert.equal(ok.status, 200, ok.text);
	const codes = ok.json().data.recoveryCodes;
	assert.equal(codes.length, 10);
	for (const c of codes) assert.match(c, /^[a-km-np-z2-9]{5}-[a-km-np-z2-9]{5}$/);
	assert.equal(new Set(codes).size, 10);

	h.assertError(await call(u, 'POST', '/auth/two-factor/confirm', { code }), 409, 'TWO_FACTOR_ENABLED');
	h.assertError(await call(u, 'POST', '/auth/two-factor', { password: PASSWORD }), 409, 'TWO_FACTOR_ENABLED');
	const st = (await call(u, 'GET', '/auth/two-factor')).json().data;
	assert.equal(st.enabled, true);
	assert.equal(st.pending, false);
	assert.equal(st.recoveryCodesRemaining, 10);
	assert.match(st.enabledAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

	// Only hashes of the recovery codes are stored.
	const dump = await pg.dump(main.dbName);
	for (const c of codes) assert.ok(!dump.includes(c), 'a recovery code is stored in clear');
});

test('a_totp_code_works_once_even_with_a_fresh_challenge', async () => {
	const u = await newUser();
	await awayFromBoundary();
	// Confirmed with last step's code (one step of drift), so the current
	// code is still unused.
	const { secret } = await enable(u, -1);
	const challenge = await challengeOf(u);
	const code = totp(secret, stepNow());
	const r = await verify(main, { challenge, code });
	assert.equal(r.status, 200, r.text);
	assert.equal(r.json().data.session.method, 'TWO_FACTOR');
	const cookie = cookieOf(r);
	assert.ok(cookie, 'the session cookie is set');
	const me = await h.request(main.port, 'GET', '/auth/session', { headers: { Cookie: cookie } });
	assert.equal(me.status, 200, me.text);
	assert.equal(me.json().data.user.email, u.email);

	// The challenge is consumed.
	h.assertError(await verify(main, { challenge, code }), 401, 'CHALLENGE_INVALID');
	// The same code with a fresh challenge: refused.
	const fresh = await challengeOf(u);
	const replay = await verify(main, { challenge: fresh, code });
	h.assertError(replay, 401, 'INVALID_CODE');
	assert.equal(cookieOf(replay), null);
	// The code used by confirmation is refused too.
	h.assertError(await verify(main, { challenge: fresh, code: totp(secret, stepNow() - 1) }), 401, 'INVALID_CODE');
	// The next step's code (one step of drift ahead) still works on it.
	const next = await verify(main, { challenge: fresh, code: totp(secret, stepNow() + 1) });
	assert.equal(next.status, 200, next.text);
});

test('concurrent_verifications_with_the_same_code_issue_one_session', async () => {
	const u = await newUser();
	await awayFromBoundary();
	const { secret } = await enable(u, -1);
	const challenges = [await challengeOf(u), await challengeOf(u), await challengeOf(u)];
	const code = totp(secret, stepNow());
	const results = await Promise.all(challenges.map((challenge) => verify(main, { challenge, code })));
	const statuses = results.map((r) => r.status).sort();
	assert.deepEqual(statuses, [200, 401, 401], results.map((r) => r.text).join('\n'));
});

test('a_code_one_step_old_is_accepted_and_two_steps_old_is_not', async () => {
	const u = await newUser();
	await awayFromBoundary();
	const { secret } = await enable(u);
	// Forget the step confirmation used, so that only the window decides.
	await pg.psql(`UPDATE two_factor SET last_used_step = -1 WHERE user_id = '${u.id}'`, main.dbName);
	const challenge = await challengeOf(u);
	const T = stepNow();
	h.assertError(await verify(main, { challenge, code: totp(secret, T - 2) }), 401, 'INVALID_CODE');
	h.assertError(await verify(main, { challenge, code: totp(secret, T + 2) }), 401, 'INVALID_CODE');
	const r = await verify(main, { challenge, code: totp(secret, T - 1) });
	assert.equal(r.status, 200, r.text);
});

test('a_recovery_code_works_once', async () => {
	const u = await newUser();
	const { recoveryCodes } = await enable(u);
	const typed = recoveryCodes[3].replace('-', ' ').toUpperCase(); // as someone might type it
	const r = await verify(main, { challenge: await challengeOf(u), recoveryCode: typed });
	assert.equal(r.status, 200, r.text);
	assert.equal(r.json().data.session.method, 'TWO_FACTOR');
	assert.ok(cookieOf(r));
	const st = (await call(u, 'GET', '/auth/two-factor')).json().data;
	assert.equal(st.recoveryCodesRemaining, 9);
	const again = await verify(main, { challenge: await challengeOf(u), recoveryCode: recoveryCodes[3] });
	h.assertError(again, 401, 'INVALID_CODE');
	h.assertError(await verify(main, { challenge: await challengeOf(u), recoveryCode: 'not-a-code' }), 401, 'INVALID_CODE');
	// Another user's recovery code is not this user's.
	const other = await newUser();
	const o = await enable(other);
	h.assertError(await verify(main, { challenge: await challengeOf(u), recoveryCode: o.recoveryCodes[0] }), 401, 'INVALID_CODE');
});

test('verify_refuses_unknown_expired_and_malformed_challenges_with_401', async () => {
	const u = await newUser();
	const { secret } = await enable(u);
	const unknown = crypto.randomBytes(32).toString('base64url');
	h.assertError(await verify(main, { challenge: unknown, code: '123456' }), 401, 'CHALLENGE_INVALID');
	h.assertError(await verify(main, { challenge: 'short', code: '123456' }), 401, 'CHALLENGE_INVALID');
	const challenge = await challengeOf(u);
	await pg.psql(`UPDATE two_factor_challenges SET expires_at = now() - interval '1 second' WHERE user_id = '${u.id}'`, main.dbName);
	await awayFromBoundary();
	h.assertError(await verify(main, { challenge, code: totp(secret, stepNow() + 1) }), 401, 'CHALLENGE_INVALID');
});

test('verify_validates_its_body', async () => {
	const bad = [
		{ challenge: 'x' },
		{ challenge: 'x', code: '123456', recoveryCode: 'abcde-fghjk' },
		{ code: '123456' },
		{ challenge: 'x', code: 123456 },
		{ challenge: 'x', code: '1'.repeat(100) },
		{ challenge: 'x', code: '123456', other: true },
	];
	for (const body of bad) h.assertError(await verify(main, body), 422, 'VALIDATION_FAILED');
});

test('five_wrong_codes_burn_the_challenge', async () => {
	const s = await server();
	const u = await newUser(s);
	const { secret } = await enable(u, -1);
	await awayFromBoundary();
	const challenge = await challengeOf(u);
	for (let i = 1; i <= 4; i++) h.assertError(await verify(s, { challenge, code: wrongCode(secret) }), 401, 'INVALID_CODE');
	h.assertError(await verify(s, { challenge, code: wrongCode(secret) }), 401, 'CHALLENGE_INVALID');
	// The sixth, with the right code, finds no challenge.
	h.assertError(await verify(s, { challenge, code: totp(secret, stepNow()) }), 401, 'CHALLENGE_INVALID');
});

test('verify_is_rate_limited_per_account_with_retry_after', async () => {
	const s = await server();
	const u = await newUser(s);
	const { secret } = await enable(u, -1);
	await awayFromBoundary();
	const a = await challengeOf(u);
	for (let i = 0; i < 4; i++) h.assertError(await verify(s, { challenge: a, code: wrongCode(secret) }), 401, 'INVALID_CODE');
	const b = await challengeOf(u);
	h.assertError(await verify(s, { challenge: b, code: wrongCode(secret) }), 401, 'INVALID_CODE');
	const limited = await verify(s, { challenge: b, code: totp(secret, stepNow()) });
	h.assertError(limited, 429, 'RATE_LIMITED');
	assert.match(String(limited.headers['retry-after']), /^[1-9][0-9]*$/);
	assert.equal(cookieOf(limited), null);
	// Another account is not affected.
	const v = await newUser(s);
	const other = await enable(v, -1);
	const ok = await verify(s, { challenge: await challengeOf(v), code: totp(other.secret, stepNow()) });
	assert.equal(ok.status, 200, ok.text);
});

test('verify_is_rate_limited_per_address', async () => {
	const s = await server();
	const unknown = crypto.randomBytes(32).toString('base64url');
	for (let i = 0; i < 30; i++) h.assertError(await verify(s, { challenge: unknown, code: '123456' }), 401, 'CHALLENGE_INVALID');
	const limited = await verify(s, { challenge: unknown, code: '123456' });
	h.assertError(limited, 429, 'RATE_LIMITED');
	assert.match(String(limited.headers['retry-after']), /^[1-9][0-9]*$/);
});

test('disable_needs_the_password_and_then_sign_in_issues_a_session', async () => {
	const u = await newUser();
	await enable(u);
	const pending = await challengeOf(u);
	const wrong = await call(u, 'DELETE', '/auth/two-factor', { password: 'not the password' });
	assert.ok(h.assertError(wrong, 422, 'VALIDATION_FAILED').fields.password);
	const no = await h.request(main.port, 'DELETE', '/auth/two-factor', { headers: { Cookie: u.cookie }, body: { password: PASSWORD } });
	h.assertError(no, 403, 'CSRF_REJECTED');
	const r = await call(u, 'DELETE', '/auth/two-factor', { password: PASSWORD });
	assert.equal(r.status, 204, r.text);
	const st = (await call(u, 'GET', '/auth/two-factor')).json().data;
	assert.deepEqual(st, { enabled: false, pending: false, enabledAt: null, recoveryCodesRemaining: 0 });
	const s = await signIn(u);
	assert.equal(s.status, 200, s.text);
	assert.equal(s.json().data.session.method, 'PASSWORD');
	assert.ok(cookieOf(s));
	// A challenge issued before disabling is dead.
	h.assertError(await verify(main, { challenge: pending, recoveryCode: 'abcde-fghjk' }), 401, 'CHALLENGE_INVALID');
	h.assertError(await call(u, 'DELETE', '/auth/two-factor', { password: PASSWORD }), 409, 'TWO_FACTOR_NOT_ENABLED');
	// Enrolling again works, with a new key.
	const again = await call(u, 'POST', '/auth/two-factor', { password: PASSWORD });
	assert.equal(again.status, 200, again.text);
});

test('the_audit_log_records_two_factor_changes_without_secrets', async () => {
	const u = await newUser();
	const wrong = await call(u, 'POST', '/auth/two-factor', { password: 'not the password' });
	assert.equal(wrong.status, 422);
	await awayFromBoundary();
	const { secret, recoveryCodes } = await enable(u, -1);
	const challenge = await challengeOf(u);
	await verify(main, { challenge, code: wrongCode(secret) });
	assert.equal((await verify(main, { challenge, code: totp(secret, stepNow()) })).status, 200);
	assert.equal((await verify(main, { challenge: await challengeOf(u), recoveryCode: recoveryCodes[0] })).status, 200);
	assert.equal((await call(u, 'DELETE', '/auth/two-factor', { password: PASSWORD })).status, 204);
	await h.sleep(200); // audit records are written in the background
	const lines = await auditActions(main, u.id);
	const actions = lines.map((l) => l.split(' ')[0]);
	for (const a of ['auth.two_factor.reauthentication_failed', 'auth.two_factor.enrolment_started',
		'auth.two_factor.enabled', 'auth.two_factor.verify_failed', 'auth.two_factor.verified',
		'auth.two_factor.recovery_code_used', 'auth.two_factor.disabled']) {
		assert.ok(actions.includes(a), `${a} in ${actions.join(', ')}`);
	}
	const text = lines.join('\n');
	assert.ok(!text.includes(secret), 'the key is not in the audit log');
	for (const c of recoveryCodes) assert.ok(!text.includes(c), 'a recovery code is not in the audit log');
	assert.ok(!text.includes(challenge), 'the challenge is not in the audit log');
	assert.match(text, /auth\.two_factor\.recovery_code_used \{"recoveryCodesRemaining": 9\}/);
});

test('the_openapi_document_lists_the_two_factor_routes', async () => {
	const r = await h.request(main.port, 'GET', '/docs');
	assert.equal(r.status, 200);
	const doc = r.json();
	assert.ok(doc.paths['/auth/two-factor'].post);
	assert.ok(doc.paths['/auth/two-factor'].delete);
	assert.ok(doc.paths['/auth/two-factor'].get);
	assert.ok(doc.paths['/auth/two-factor/confirm'].post);
	assert.equal(doc.paths['/auth/two-factor/verify'].post['x-steward-access'], 'Public');
	assert.ok(doc.components.schemas.TwoFactorChallenge);
});
