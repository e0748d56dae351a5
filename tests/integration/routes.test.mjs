// The public routes of issue 2: /health, /setup-status, /setup, /signup,
// /docs, and JSON input handling. Tests run in file order: validation
// before setup, setup, then what changes after it; the database-down test
// is last because it stops the shared cluster.

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import * as h from './harness.mjs';
const { TS, UUID } = h;

h.stewarddPath();
const pg = await h.startPostgres();
const [srv, signupSrv, prodSrv, devSrv] = await Promise.all([
	h.startStewardd({ db: pg }),
	h.startStewardd({ db: pg, env: { SIGNUP_ENABLED: 'true' } }),
	h.startStewardd({ db: pg, env: { STEWARD_ENV: 'production' } }),
	h.startStewardd({ db: pg, env: { STEWARD_ENV: 'development' } }),
]);
after(h.cleanupAll);


const get = (s, p, o) => h.request(s.port, 'GET', p, o);
const post = (s, p, body, o = {}) => h.request(s.port, 'POST', p, { body, ...o });

// POSTs a setup body expected to fail validation; returns fields.
async function setupFields(body, s = srv) {
	const res = await post(s, '/setup', body);
	const e = h.assertError(res, 422, 'VALIDATION_FAILED');
	assert.ok(e.fields && typeof e.fields === 'object', `fields map: ${res.text}`);
	for (const [k, v] of Object.entries(e.fields)) {
		assert.ok(Array.isArray(v) && v.length > 0 && v.every((m) => typeof m === 'string' && m.length > 0), `fields.${k} is a list of messages`);
	}
	return e.fields;
}

function keysDeep(v, out = []) {
	if (v && typeof v === 'object') {
		for (const [k, x] of Object.entries(v)) {
			out.push(k);
			keysDeep(x, out);
		}
	}
	return out;
}

// Sends the same bytes to two targets and asserts the whole responses are
// byte-identical. Retries (up to 3 tries) only if they differ in Date alone.
async function assertSameAsUnknownPath(s, method, target, { body, unknown = '/no-such-path' } = {}) {
	const headers = { 'X-Request-Id': 'same-bytes-1', Connection: 'close' };
	if (body !== undefined) headers['Content-Type'] = 'application/json';
	for (let attempt = 1; ; attempt++) {
		const [a, b] = await Promise.all([
			h.raw(s.port, h.buildRequest(s.port, method, target, { headers, body })),
			h.raw(s.port, h.buildRequest(s.port, method, unknown, { headers, body })),
		]);
		assert.ok(a.responses.length >= 1 && b.responses.length >= 1, `responses:\n${a.text}\n---\n${b.text}`);
		if (a.data.equals(b.data)) {
			assert.equal(a.responses[0].status, 404);
			return;
		}
		const noDate = (x) => x.text.replace(/\r\nDate: [^\r]*/i, '');
		if (noDate(a) === noDate(b) && attempt < 3) continue;
		assert.equal(a.text, b.text, `${method} ${target} differs from ${method} ${unknown}`);
	}
}

// ---------------------------------------------------------------- health

test('health_is_200_with_database_ok', async () => {
	const res = await get(srv, '/health');
	assert.equal(res.status, 200);
	assert.match(String(res.headers['content-type']), /^application\/json\b/);
	assert.deepEqual(res.json(), { data: { status: 'ok', database: 'ok' } });
	h.assertCommonHeaders(res);
});

test('head_works_on_every_get_route', async () => {
	for (const p of ['/health', '/setup-status', '/docs']) {
		const g = await get(srv, p);
		const hd = await h.request(srv.port, 'HEAD', p);
		assert.equal(hd.status, g.status, `HEAD ${p}`);
		assert.equal(hd.body.length, 0);
		assert.equal(hd.headers['content-length'], String(g.body.length), `HEAD ${p} Content-Length`);
		assert.equal(hd.headers['content-type'], g.headers['content-type']);
	}
});

// ---------------------------------------------------------------- setup: before

test('setup_status_is_true_before_setup', async () => {
	const res = await get(srv, '/setup-status');
	assert.equal(res.status, 200);
	assert.deepEqual(res.json(), { data: { setupRequired: true } });
});

test('setup_with_empty_object_lists_every_required_field', async () => {
	const f = await setupFields({});
	for (const k of ['email', 'password', 'name', 'organizationName']) assert.ok(f[k], `fields.${k}: ${JSON.stringify(f)}`);
});

test('setup_without_email_is_422_on_email', async () => {
	const f = await setupFields(h.setupBody({ email: undefined }));
	assert.ok(f.email, JSON.stringify(f));
	assert.deepEqual(Object.keys(f), ['email'], 'only the missing field is reported');
});

test('setup_with_invalid_email_is_422_on_email', async () => {
	for (const email of ['no-at-sign', 'a@', '@example.com', 'a b@example.com', 'a@b@example.com', '']) {
		const f = await setupFields(h.setupBody({ email }));
		assert.ok(f.email, `${JSON.stringify(email)}: ${JSON.stringify(f)}`);
	}
});

test('setup_with_email_over_254_characters_is_422_on_email', async () => {
	const email = `${'a'.repeat(64)}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(62)}`;
	assert.equal(email.length, 255);
	const f = await setupFields(h.setupBody({ email }));
	assert.ok(f.email, JSON.stringify(f));
});

test('setup_with_email_of_254_characters_has_no_email_error', async () => {
	const email = `${'a'.repeat(64)}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(61)}`;
	assert.equal(email.length, 254);
	const f = await setupFields(h.setupBody({ email, password: 'short' }));
	assert.ok(!f.email, `254 characters is allowed: ${JSON.stringify(f)}`);
	assert.ok(f.password);
});

test('setup_with_email_of_wrong_type_is_422_on_email', async () => {
	const f = await setupFields(h.setupBody({ email: 42 }));
	assert.ok(f.email, JSON.stringify(f));
});

test('setup_with_short_password_is_422_on_password', async () => {
	const f = await setupFields(h.setupBody({ password: '123456789' }));
	assert.ok(f.password, JSON.stringify(f));
	assert.deepEqual(Object.keys(f), ['password']);
});

test('password_length_counts_characters_not_bytes', async () => {
	// Nine characters, eighteen bytes: still too short.
	const f = await setupFields(h.setupBody({ password: 'é'.repeat(9) }));
	assert.ok(f.password, JSON.stringify(f));
	// 256 characters (512 bytes) is allowed.
	const g = await setupFields(h.setupBody({ password: 'é'.repeat(256), email: 'bad' }));
	assert.ok(!g.password, `256 characters is allowed: ${JSON.stringify(g)}`);
});

test('setup_with_password_over_256_characters_is_422_on_password', async () => {
	const f = await setupFields(h.setupBody({ password: 'p'.repeat(257) }));
	assert.ok(f.password, JSON.stringify(f));
});

test('setup_with_password_of_10_characters_has_no_password_error', async () => {
	const f = await setupFields(h.setupBody({ password: '0123456789', email: 'bad' }));
	assert.ok(!f.password, JSON.stringify(f));
	assert.ok(f.email);
});

test('setup_with_empty_name_is_422_on_name', async () => {
	const f = await setupFields(h.setupBody({ name: '' }));
	assert.ok(f.name, JSON.stringify(f));
});

test('setup_with_name_over_100_characters_is_422_on_name', async () => {
	const f = await setupFields(h.setupBody({ name: 'n'.repeat(101) }));
	assert.ok(f.name, JSON.stringify(f));
	const g = await setupFields(h.setupBody({ name: 'n'.repeat(100), email: 'bad' }));
	assert.ok(!g.name, `100 characters is allowed: ${JSON.stringify(g)}`);
});

test('setup_without_organization_name_is_422_on_organization_name', async () => {
	const f = await setupFields(h.setupBody({ organizationName: undefined }));
	assert.ok(f.organizationName, JSON.stringify(f));
});

test('setup_with_organization_name_over_100_characters_is_422', async () => {
	const f = await setupFields(h.setupBody({ organizationName: 'o'.repeat(101) }));
	assert.ok(f.organizationName, JSON.stringify(f));
});

test('setup_with_unknown_field_is_422_is_not_a_known_field', async () => {
	const f = await setupFields(h.setupBody({ isOperator: false }));
	assert.ok(f.isOperator, JSON.stringify(f));
	assert.ok(f.isOperator.includes('is not a known field'), JSON.stringify(f));
});

test('setup_with_body_that_is_not_an_object_is_refused', async () => {
	for (const body of ['[]', '"text"', '42', 'null']) {
		const res = await post(srv, '/setup', body, { headers: { 'Content-Type': 'application/json' } });
		assert.ok(res.status === 400 || res.status === 422, `${body}: ${res.status}`);
		h.assertError(res, res.status, res.status === 400 ? 'INVALID_JSON' : 'VALIDATION_FAILED');
	}
});

test('setup_with_wrong_content_type_is_415', async () => {
	const res = await post(srv, '/setup', JSON.stringify(h.setupBody()), { headers: { 'Content-Type': 'text/plain' } });
	h.assertError(res, 415, 'UNSUPPORTED_MEDIA_TYPE');
});

test('setup_without_content_type_is_415', async () => {
	const res = await post(srv, '/setup', JSON.stringify(h.setupBody()));
	h.assertError(res, 415, 'UNSUPPORTED_MEDIA_TYPE');
});

test('json_content_type_with_charset_is_accepted', async () => {
	const res = await post(srv, '/setup', '{}', { headers: { 'Content-Type': 'application/json; charset=utf-8' } });
	h.assertError(res, 422, 'VALIDATION_FAILED');
});

test('invalid_json_is_400_invalid_json', async () => {
	for (const body of ['{"email":', '{email: "a"}', '{"a":1} trailing', '', "{'a':1}"]) {
		const res = await post(srv, '/setup', body, { headers: { 'Content-Type': 'application/json' } });
		h.assertError(res, 400, 'INVALID_JSON');
	}
});

test('invalid_utf8_in_json_is_400_invalid_json', async () => {
	const body = Buffer.concat([Buffer.from('{"name":"'), Buffer.from([0xc3, 0x28]), Buffer.from('"}')]);
	const res = await post(srv, '/setup', body, { headers: { 'Content-Type': 'application/json' } });
	h.assertError(res, 400, 'INVALID_JSON');
});

test('duplicate_json_key_is_400_invalid_json', async () => {
	const body = '{"email":"a@example.com","email":"b@example.com","password":"correct horse battery","name":"A","organizationName":"B"}';
	const res = await post(srv, '/setup', body, { headers: { 'Content-Type': 'application/json' } });
	h.assertError(res, 400, 'INVALID_JSON');
});

test('nested_duplicate_json_key_is_400_invalid_json', async () => {
	const res = await post(srv, '/setup', '{"x":{"k":1,"k":2}}', { headers: { 'Content-Type': 'application/json' } });
	h.assertError(res, 400, 'INVALID_JSON');
});

function nested(depth) {
	// An object holding arrays: `depth` containers in all.
	return '{"email":' + '['.repeat(depth - 1) + ']'.repeat(depth - 1) + '}';
}

test('json_nested_40_deep_is_400_invalid_json', async () => {
	const res = await post(srv, '/setup', nested(40), { headers: { 'Content-Type': 'application/json' } });
	h.assertError(res, 400, 'INVALID_JSON');
});

test('json_nested_33_deep_is_400_and_32_deep_is_parsed', async () => {
	const over = await post(srv, '/setup', nested(33), { headers: { 'Content-Type': 'application/json' } });
	h.assertError(over, 400, 'INVALID_JSON');
	const at = await post(srv, '/setup', nested(32), { headers: { 'Content-Type': 'application/json' } });
	h.assertError(at, 422, 'VALIDATION_FAILED');
});

test('setup_status_is_still_true_after_refused_setups', async () => {
	const res = await get(srv, '/setup-status');
	assert.deepEqual(res.json(), { data: { setupRequired: true } });
});

// ---------------------------------------------------------------- setup

const OWNER_PASSWORD = 'Tr0ub4dor&3-owner-canary';

test('setup_creates_the_operator_their_organization_and_owner_membership', async () => {
	const res = await post(srv, '/setup', h.setupBody({ email: 'Olive.Owner@Example.COM', password: OWNER_PASSWORD, name: 'Olive Owner', organizationName: 'Acme Corp' }));
	assert.equal(res.status, 201, res.text);
	h.assertCommonHeaders(res);
	const { data } = res.json();
	assert.ok(data && data.user && data.organization, res.text);
	const u = data.user;
	assert.match(u.id, UUID);
	assert.equal(u.email, 'olive.owner@example.com', 'e-mail stored lower-case');
	assert.equal(u.name, 'Olive Owner');
	assert.equal(u.isOperator, true);
	assert.match(u.createdAt, TS);
	const o = data.organization;
	assert.match(o.id, UUID);
	assert.equal(o.name, 'Acme Corp');
	assert.equal(o.role, 'OWNER');
	assert.match(o.createdAt, TS);
	assert.ok(!res.text.includes(OWNER_PASSWORD), 'password in the response');
	for (const k of keysDeep(data)) assert.ok(!/pass|hash|secret|salt/i.test(k), `key ${k} in the response`);
	assert.ok(!/argon2/i.test(res.text));
});

test('password_is_stored_as_argon2id_and_never_in_clear', async () => {
	const dump = await pg.dump(srv.dbName);
	assert.match(dump, /\$argon2id\$v=19\$m=\d+,t=\d+,p=\d+\$/, 'an Argon2id hash is stored');
	assert.ok(!dump.includes(OWNER_PASSWORD), 'the password is not stored in clear');
});

test('setup_status_is_false_after_setup', async () => {
	const res = await get(srv, '/setup-status');
	assert.deepEqual(res.json(), { data: { setupRequired: false } });
});

test('second_setup_is_409_setup_complete', async () => {
	const res = await post(srv, '/setup', h.setupBody({ email: 'second@example.com' }));
	h.assertError(res, 409, 'SETUP_COMPLETE');
});

test('second_setup_with_the_same_body_is_409_setup_complete', async () => {
	const res = await post(srv, '/setup', h.setupBody({ email: 'olive.owner@example.com', password: OWNER_PASSWORD, organizationName: 'Acme Corp' }));
	h.assertError(res, 409, 'SETUP_COMPLETE');
});

// ---------------------------------------------------------------- signup

test('signup_disabled_post_is_byte_identical_to_unknown_path', async () => {
	await assertSameAsUnknownPath(srv, 'POST', '/signup', { body: h.setupBody({ email: 'new@example.com' }) });
});

test('signup_disabled_get_is_byte_identical_to_unknown_path', async () => {
	await assertSameAsUnknownPath(srv, 'GET', '/signup');
});

test('signup_disabled_options_is_byte_identical_to_unknown_path', async () => {
	await assertSameAsUnknownPath(srv, 'OPTIONS', '/signup');
});

test('signup_disabled_post_with_invalid_json_is_byte_identical_to_unknown_path', async () => {
	await assertSameAsUnknownPath(srv, 'POST', '/signup', { body: '{"not json' });
});

test('signup_enabled_before_setup_is_409_setup_required', async () => {
	const res = await post(signupSrv, '/signup', { email: 'early@example.com', password: 'correct horse battery', name: 'Early', organizationName: 'E' });
	h.assertError(res, 409, 'SETUP_REQUIRED');
});

test('signup_enabled_after_setup_creates_a_user_who_is_not_operator', async () => {
	const s = await post(signupSrv, '/setup', h.setupBody({ email: 'op@example.com' }));
	assert.equal(s.status, 201, s.text);
	const res = await post(signupSrv, '/signup', { email: 'New.User@Example.com', password: 'another good password', name: 'New User', organizationName: 'Newco' });
	assert.equal(res.status, 201, res.text);
	const { data } = res.json();
	assert.match(data.user.id, UUID);
	assert.equal(data.user.email, 'new.user@example.com');
	assert.equal(data.user.name, 'New User');
	assert.equal(data.user.isOperator, false);
	assert.match(data.user.createdAt, TS);
	assert.ok(data.organization, res.text);
	assert.equal(data.organization.name, 'Newco');
	assert.equal(data.organization.role, 'OWNER');
	assert.ok(!res.text.includes('another good password'));
});

test('signup_with_registered_email_is_422_is_already_registered', async () => {
	for (const email of ['new.user@example.com', 'NEW.USER@example.com', 'op@example.com']) {
		const res = await post(signupSrv, '/signup', { email, password: 'yet another password', name: 'Dup', organizationName: 'Dupco' });
		const e = h.assertError(res, 422, 'VALIDATION_FAILED');
		assert.ok(e.fields?.email?.includes('is already registered'), `${email}: ${res.text}`);
	}
});

test('signup_with_short_password_is_422_on_password', async () => {
	const res = await post(signupSrv, '/signup', { email: 'short@example.com', password: 'short', name: 'S' });
	const e = h.assertError(res, 422, 'VALIDATION_FAILED');
	assert.ok(e.fields?.password, res.text);
});

test('signup_with_unknown_field_is_422', async () => {
	const res = await post(signupSrv, '/signup', { email: 'u@example.com', password: 'correct horse battery', name: 'U', isOperator: true });
	const e = h.assertError(res, 422, 'VALIDATION_FAILED');
	assert.ok(e.fields?.isOperator?.includes('is not a known field'), res.text);
});

test('signup_enabled_get_is_405_with_allow_post', async () => {
	const res = await get(signupSrv, '/signup');
	h.assertError(res, 405, 'METHOD_NOT_ALLOWED');
	assert.ok(String(res.headers.allow).split(',').map((x) => x.trim()).includes('POST'), `Allow: ${res.headers.allow}`);
});

// ---------------------------------------------------------------- docs

async function getDocs(s) {
	const res = await get(s, '/docs');
	assert.equal(res.status, 200, res.text.slice(0, 500));
	assert.match(String(res.headers['content-type']), /^application\/(vnd\.oai\.openapi\+)?json\b/);
	return res.json();
}

test('docs_in_test_env_is_openapi_3_1', async () => {
	const doc = await getDocs(srv);
	assert.match(String(doc.openapi), /^3\.1\.\d+$/);
	assert.ok(doc.info && doc.info.title && doc.info.version, 'info.title and info.version');
	assert.ok(doc.paths && typeof doc.paths === 'object');
});

test('docs_list_every_route_with_access_and_shapes', async () => {
	const doc = await getDocs(signupSrv);
	const expect = { '/health': ['get'], '/setup-status': ['get'], '/setup': ['post'], '/signup': ['post'], '/docs': ['get'] };
	for (const [p, methods] of Object.entries(expect)) {
		assert.ok(doc.paths[p], `path ${p} in /docs: ${Object.keys(doc.paths)}`);
		for (const m of methods) {
			const op = doc.paths[p][m];
			assert.ok(op, `${m.toUpperCase()} ${p} in /docs`);
			assert.ok(op.responses && Object.keys(op.responses).length > 0, `${m} ${p} responses`);
			assert.ok(Array.isArray(op.security) || Object.keys(op).some((k) => /^x-.*access/i.test(k)), `${m} ${p} states its access level: ${JSON.stringify(op)}`);
		}
	}
	const setup = doc.paths['/setup'].post;
	for (const code of ['201', '409', '422']) assert.ok(setup.responses[code], `POST /setup documents ${code}`);
	assert.ok(setup.requestBody?.content?.['application/json']?.schema, 'POST /setup request body schema');
	const text = JSON.stringify(doc);
	for (const field of ['email', 'password', 'name', 'organizationName', 'setupRequired', 'isOperator']) {
		assert.ok(text.includes(`"${field}"`), `shape field ${field} documented`);
	}
});

test('docs_in_development_env_is_200', async () => {
	const doc = await getDocs(devSrv);
	assert.match(String(doc.openapi), /^3\.1\.\d+$/);
});

test('docs_in_production_is_byte_identical_to_unknown_path', async () => {
	await assertSameAsUnknownPath(prodSrv, 'GET', '/docs');
});

test('production_server_still_serves_health', async () => {
	const res = await get(prodSrv, '/health');
	assert.equal(res.status, 200);
});

// ---------------------------------------------------------------- database down (last)

test('health_is_503_with_reason_when_the_database_is_down_and_recovers', async () => {
	await pg.stop();
	let res = null;
	const downBy = Date.now() + 3000 * h.SLACK;
	for (;;) {
		res = await get(srv, '/health', { timeoutMs: 10000 });
		if (res.status !== 200 || Date.now() > downBy) break;
		await h.sleep(200);
	}
	const e = h.assertError(res, 503, 'DATABASE_UNAVAILABLE');
	assert.ok(e.message.length > 10, `a reason: ${e.message}`);
	h.assertCommonHeaders(res);
	await pg.start();
	const upBy = Date.now() + 7000 * h.SLACK;
	for (;;) {
		res = await get(srv, '/health', { timeoutMs: 10000 });
		if (res.status === 200 || Date.now() > upBy) break;
		await h.sleep(200);
	}
	assert.equal(res.status, 200, `health did not recover: ${res.text}`);
	assert.deepEqual(res.json(), { data: { status: 'ok', database: 'ok' } });
});
