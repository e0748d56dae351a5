// Password reset: the request answers the same whoever asks, the mail goes
// out over SMTP (received by a sink on loopback), the token works once and
// not after it expires, sessions are revoked, and without SMTP_URL the
// server says so once and answers the same.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import * as h from './harness.mjs';
import { startSmtpSink } from './smtp_sink.mjs';

const PASSWORD = 'correct horse battery';
const NEW_PASSWORD = 'a brand new passphrase';
const SMTP_PASS = 's3cret!smtp-pw';
const ACCEPTED = '{"data":{"status":"accepted"}}';

let pg, sink, srv, port, origin;

// A stewardd on the scratch cluster, signup on, its first user set up.
async function startWithOwner(env) {
	const s = await h.startStewardd({ db: pg, env: { SIGNUP_ENABLED: 'true', ...env } });
	const r = await h.request(s.port, 'POST', '/setup', { body: h.setupBody({ password: PASSWORD }) });
	assert.equal(r.status, 201, r.text);
	return s;
}

before(async () => {
	pg = await h.startPostgres();
	sink = await startSmtpSink();
	const login = `mailer:${encodeURIComponent(SMTP_PASS)}`;
	srv = await startWithOwner({ STEWARD_THREADS: 2, SMTP_URL: `smtp://${login}@127.0.0.1:${sink.port}`, SMTP_FROM: 'noreply@steward.test' });
	port = srv.port;
	origin = `http://127.0.0.1:${port}`;
});
after(async () => {
	await h.cleanupAll();
	await sink?.close();
});

function cookieOf(res) {
	const c = [].concat(res.headers['set-cookie'] || []).find((v) => v.startsWith('steward_session='));
	return c ? c.split(';')[0] : null;
}

// A fresh account per test, so that no test spends another's allowance of
// 5 reset mails per e-mail address. (All tests share the server's 20
// requests per client address an hour: this file makes 16.)
async function newUser(local) {
	const email = `${local}@example.com`;
	const r = await h.request(port, 'POST', '/signup', { body: { email, password: PASSWORD, name: local } });
	assert.equal(r.status, 201, r.text);
	return { email, cookie: cookieOf(r), id: r.json().data.user.id };
}

function requestReset(email, { p = port, rid } = {}) {
	const headers = rid ? { 'X-Request-Id': rid } : {};
	return h.request(p, 'POST', '/auth/password-reset', { body: { email }, headers });
}

function confirm(token, newPassword = NEW_PASSWORD) {
	return h.request(port, 'POST', '/auth/password-reset/confirm', { body: { token, newPassword } });
}

function signIn(email, password) {
	return h.request(port, 'POST', '/auth/sign-in', { body: { email, password } });
}

const mailsTo = (email) => sink.messages.filter((m) => m.to.includes(email));

function tokenOf(mail) {
	const m = /\/reset-password\?token=([A-Za-z0-9_-]{43})\n/.exec(mail.body);
	assert.ok(m, `a reset link in the mail:\n${mail.body}`);
	return m[1];
}

// Requests a reset and returns the token from the mail that arrives.
async function mailedToken(email) {
	const before = mailsTo(email).length;
	const r = await requestReset(email);
	assert.equal(r.status, 202, r.text);
	await sink.waitForMessage(() => mailsTo(email).length > before);
	return tokenOf(mailsTo(email)[before]);
}

const sha256 = (s) => crypto.createHash('sha256').update(s).digest('hex');

test('request_answers_byte_identically_for_a_known_and_an_unknown_address', async () => {
	const u = await newUser('ida');
	const unknown = 'nobody-here@example.com';
	const a = await requestReset(u.email, { rid: 'same-request-id' });
	const b = await requestReset(unknown, { rid: 'same-request-id' });
	assert.equal(a.status, 202);
	assert.equal(b.status, 202);
	assert.equal(a.text, ACCEPTED);
	assert.deepEqual(a.body, b.body, 'identical bodies');
	for (const k of ['content-type', 'content-length', 'x-request-id', 'set-cookie'])
		assert.equal(a.headers[k], b.headers[k], `header ${k}`);
	// The mail goes to the account only.
	await sink.waitForMessage((m) => m.to.includes(u.email));
	await h.sleep(500);
	assert.equal(mailsTo(unknown).length, 0, 'no mail for an address without an account');
	// The audit log records the request for the account only.
	const rows = await pg.psql(`SELECT action || ' ' || target_id FROM audit_logs WHERE action = 'auth.password.reset_requested'`, srv.dbName);
	assert.ok(rows.includes(u.id), rows);
	assert.ok(!rows.includes(unknown));
});

test('mail_is_addressed_to_the_account_and_carries_a_link_to_the_server', async () => {
	const u = await newUser('mia');
	const token = await mailedToken(u.email);
	const mail = mailsTo(u.email)[0];
	assert.deepEqual(mail.to, [u.email], 'envelope recipient');
	assert.equal(mail.from, 'noreply@steward.test', 'envelope sender is SMTP_FROM');
	assert.equal(mail.headers.to, `<${u.email}>`);
	assert.equal(mail.headers.from, 'Steward <noreply@steward.test>');
	assert.match(mail.headers.subject, /password/i);
	assert.match(mail.headers['message-id'], /^<[A-Za-z0-9]+@steward\.test>$/);
	assert.ok(mail.headers.date);
	assert.ok(mail.body.includes(`${origin}/reset-password?token=${token}\n`), mail.body);
	assert.deepEqual(mail.auth, { user: 'mailer', pass: SMTP_PASS }, 'credentials of SMTP_URL used for AUTH');
	// Only the hash is stored; neither the token nor the SMTP password is logged.
	const stored = await pg.psql(`SELECT encode(token_hash, 'hex') FROM password_reset_tokens WHERE user_id = '${u.id}'`, srv.dbName);
	assert.equal(stored.trim(), sha256(token));
	assert.ok(!(await pg.dump(srv.dbName)).includes(token), 'token not stored in clear');
	const logs = srv.logs.text();
	assert.ok(!logs.includes(token), 'token not logged');
	assert.ok(!logs.includes(SMTP_PASS) && !logs.includes(encodeURIComponent(SMTP_PASS)), 'SMTP password not logged');
	assert.match(logs, new RegExp(`mail server=smtp://127\\.0\\.0\\.1:${sink.port} from=noreply@steward\\.test`));
});

test('a_reset_token_works_once_sets_the_password_and_revokes_sessions', async () => {
	const u = await newUser('rex');
	const other = cookieOf(await signIn(u.email, PASSWORD));
	assert.equal((await h.request(port, 'GET', '/auth/session', { headers: { Cookie: u.cookie } })).status, 200);
	const token = await mailedToken(u.email);

	const r = await confirm(token);
	assert.equal(r.status, 204, r.text);
	assert.equal(cookieOf(r), null, 'confirm does not sign in');

	h.assertError(await signIn(u.email, PASSWORD), 401, 'INVALID_CREDENTIALS');
	assert.equal((await signIn(u.email, NEW_PASSWORD)).status, 200, 'the new password signs in');
	for (const c of [u.cookie, other])
		h.assertError(await h.request(port, 'GET', '/auth/session', { headers: { Cookie: c } }), 401, 'UNAUTHENTICATED');

	const again = await confirm(token, 'yet another passphrase');
	const e = h.assertError(again, 422, 'VALIDATION_FAILED');
	assert.deepEqual(e.fields.token, ['is invalid or has expired']);
	assert.equal((await signIn(u.email, NEW_PASSWORD)).status, 200, 'the second use changed nothing');

	const audit = await pg.psql(`SELECT actor_user_id || ' ' || metadata::text FROM audit_logs WHERE action = 'auth.password.reset' AND target_id = '${u.id}'`, srv.dbName);
	assert.match(audit, new RegExp(`^${u.id} \\{"sessionsRevoked": 2\\}`));
});

test('of_concurrent_confirms_with_one_token_exactly_one_succeeds', async () => {
	const u = await newUser('cora');
	const token = await mailedToken(u.email);
	const rs = await Promise.all([1, 2, 3, 4, 5].map((i) => confirm(token, `racing passphrase ${i}`)));
	const ok = rs.filter((r) => r.status === 204);
	assert.equal(ok.length, 1, rs.map((r) => r.status).join(','));
	for (const r of rs.filter((x) => x.status !== 204)) h.assertError(r, 422, 'VALIDATION_FAILED');
	const winner = rs.indexOf(ok[0]) + 1;
	assert.equal((await signIn(u.email, `racing passphrase ${winner}`)).status, 200);
});

test('an_expired_token_fails_and_leaves_the_password', async () => {
	const u = await newUser('eve');
	const token = await mailedToken(u.email);
	await pg.psql(`UPDATE password_reset_tokens SET expires_at = now() - interval '1 second' WHERE token_hash = decode('${sha256(token)}', 'hex')`, srv.dbName);
	const e = h.assertError(await confirm(token), 422, 'VALIDATION_FAILED');
	assert.deepEqual(e.fields.token, ['is invalid or has expired']);
	assert.equal((await signIn(u.email, PASSWORD)).status, 200);
	assert.equal((await h.request(port, 'GET', '/auth/session', { headers: { Cookie: u.cookie } })).status, 200, 'sessions untouched');
});

test('a_new_request_replaces_the_earlier_link', async () => {
	const u = await newUser('neo');
	const first = await mailedToken(u.email);
	const second = await mailedToken(u.email);
	assert.notEqual(first, second);
	h.assertError(await confirm(first), 422, 'VALIDATION_FAILED');
	assert.equal((await confirm(second)).status, 204);
});

test('a_weak_new_password_is_422_and_does_not_spend_the_token', async () => {
	const u = await newUser('wes');
	const token = await mailedToken(u.email);
	const e = h.assertError(await confirm(token, 'short'), 422, 'VALIDATION_FAILED');
	assert.ok(e.fields.newPassword, JSON.stringify(e));
	assert.equal(e.fields.token, undefined);
	assert.equal((await confirm(token)).status, 204, 'the token still works');
});

test('confirm_refuses_malformed_tokens_and_unknown_fields', async () => {
	let e = h.assertError(await confirm('not-a-token'), 422, 'VALIDATION_FAILED');
	assert.deepEqual(e.fields.token, ['is invalid or has expired']);
	e = h.assertError(await confirm('A'.repeat(43)), 422, 'VALIDATION_FAILED');
	assert.deepEqual(e.fields.token, ['is invalid or has expired']);
	const r = await h.request(port, 'POST', '/auth/password-reset/confirm', { body: { newPassword: NEW_PASSWORD, extra: 1 } });
	e = h.assertError(r, 422, 'VALIDATION_FAILED');
	assert.ok(e.fields.token && e.fields.extra);
	e = h.assertError(await requestReset('not-an-address'), 422, 'VALIDATION_FAILED');
	assert.ok(e.fields.email);
});

test('past_five_requests_for_one_address_an_hour_the_answer_stays_202_without_mail', async () => {
	const u = await newUser('flo');
	for (let i = 0; i < 6; i++) {
		const r = await requestReset(u.email);
		assert.equal(r.status, 202);
		assert.equal(r.text, ACCEPTED);
	}
	await sink.waitForMessage(() => mailsTo(u.email).length >= 5);
	await h.sleep(500);
	assert.equal(mailsTo(u.email).length, 5, 'the sixth request sends nothing');
});

test('without_smtp_url_start_up_says_so_once_and_the_request_answers_the_same', async () => {
	const s = await startWithOwner({ SMTP_URL: null });
	await s.logs.waitForLine(/listening address=/);
	const notes = s.logs.all().filter((l) => /SMTP_URL is not set: password-reset mail is not sent/.test(l));
	assert.equal(notes.length, 1, s.logs.text());
	const known = await requestReset('owner@example.com', { p: s.port, rid: 'rid-1' });
	const unknown = await requestReset('ghost@example.com', { p: s.port, rid: 'rid-1' });
	assert.equal(known.status, 202);
	assert.equal(known.text, ACCEPTED);
	assert.deepEqual(known.body, unknown.body);
	assert.equal(s.logs.all().filter((l) => /SMTP_URL/.test(l)).length, 1, 'said once, not per request');
	// The address limit: 20 an hour, then 429 with Retry-After.
	for (let i = 2; i < 20; i++) assert.equal((await requestReset(`x${i}@example.com`, { p: s.port })).status, 202);
	const limited = await requestReset('owner@example.com', { p: s.port });
	h.assertError(limited, 429, 'RATE_LIMITED');
	assert.ok(Number(limited.headers['retry-after']) >= 1);
});

test('an_invalid_smtp_url_is_reported_without_its_password_and_confirm_attempts_are_limited', async () => {
	const s = await h.startStewardd({ db: pg, env: { SMTP_URL: 'http://mailer:hunter2secret@127.0.0.1:25' } });
	await s.logs.waitForLine(/listening address=/);
	const text = s.logs.text();
	assert.match(text, /SMTP_URL must be smtp:\/\/.*password-reset mail is not sent/);
	assert.ok(!text.includes('hunter2secret'));
	assert.equal((await requestReset('owner@example.com', { p: s.port })).text, ACCEPTED);
	// Confirm attempts: 30 per client address per 5 minutes, then 429.
	const attempt = () => h.request(s.port, 'POST', '/auth/password-reset/confirm', { body: { token: 'A'.repeat(43), newPassword: NEW_PASSWORD } });
	for (let i = 0; i < 30; i++) h.assertError(await attempt(), 422, 'VALIDATION_FAILED');
	const limited = await attempt();
	h.assertError(limited, 429, 'RATE_LIMITED');
	assert.ok(Number(limited.headers['retry-after']) >= 1);
});

test('reset_routes_are_public_and_documented', async () => {
	const r = await h.request(port, 'GET', '/docs');
	assert.equal(r.status, 200);
	const doc = r.json();
	const req = doc.paths['/auth/password-reset'].post;
	const conf = doc.paths['/auth/password-reset/confirm'].post;
	assert.equal(req['x-steward-access'], 'Public');
	assert.equal(conf['x-steward-access'], 'Public');
	assert.ok(req.responses['202'] && conf.responses['204']);
	assert.match(conf.description, /is invalid or has expired/);
	for (const s of ['PasswordResetRequest', 'PasswordResetAccepted', 'PasswordResetConfirmRequest'])
		assert.ok(doc.components.schemas[s], s);
});
