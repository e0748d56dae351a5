// CORS from CORS_ALLOWED_ORIGINS, preflight included; nothing at all in the
// one-origin case (no CORS_ALLOWED_ORIGINS).

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import * as h from './harness.mjs';

h.stewarddPath();
const pg = await h.startPostgres();
const [corsSrv, plainSrv] = await Promise.all([
	h.startStewardd({ db: pg, env: { CORS_ALLOWED_ORIGINS: 'https://a.example,https://c.example:8443' } }),
	h.startStewardd({ db: pg }),
]);
after(h.cleanupAll);

const A = 'https://a.example';

function acHeaders(res) {
	return Object.keys(res.headers).filter((k) => k.startsWith('access-control-'));
}

function list(v) {
	return String(v || '').split(',').map((s) => s.trim().toLowerCase()).filter(Boolean);
}

function preflight(port, origin, method = 'POST', reqHeaders = 'content-type') {
	const headers = { Origin: origin, 'Access-Control-Request-Method': method };
	if (reqHeaders) headers['Access-Control-Request-Headers'] = reqHeaders;
	return h.request(port, 'OPTIONS', '/setup', { headers });
}

test('preflight_from_allowed_origin_is_204_with_cors_headers', async () => {
	const res = await preflight(corsSrv.port, A);
	assert.equal(res.status, 204, res.head);
	assert.equal(res.headers['access-control-allow-origin'], A);
	assert.ok(list(res.headers['access-control-allow-methods']).includes('post'), `Allow-Methods: ${res.headers['access-control-allow-methods']}`);
	assert.ok(list(res.headers['access-control-allow-headers']).includes('content-type'), `Allow-Headers: ${res.headers['access-control-allow-headers']}`);
	assert.ok(list(res.headers.vary).includes('origin'), `Vary: ${res.headers.vary}`);
	assert.equal(res.headers['access-control-allow-credentials'], 'true');
	assert.equal(res.body.length, 0);
});

test('second_listed_origin_is_allowed', async () => {
	const res = await preflight(corsSrv.port, 'https://c.example:8443');
	assert.equal(res.status, 204);
	assert.equal(res.headers['access-control-allow-origin'], 'https://c.example:8443');
});

test('simple_request_from_allowed_origin_gets_allow_origin', async () => {
	const res = await h.request(corsSrv.port, 'GET', '/health', { headers: { Origin: A } });
	assert.equal(res.status, 200);
	assert.equal(res.headers['access-control-allow-origin'], A);
	assert.equal(res.headers['access-control-allow-credentials'], 'true');
	assert.ok(list(res.headers.vary).includes('origin'), `Vary: ${res.headers.vary}`);
});

test('allowed_origin_error_response_gets_allow_origin', async () => {
	const res = await h.request(corsSrv.port, 'POST', '/setup', { headers: { Origin: A }, body: { email: 'x' } });
	assert.equal(res.status, 422);
	assert.equal(res.headers['access-control-allow-origin'], A, 'a browser must be able to read the error');
});

test('disallowed_origin_gets_no_allow_origin', async () => {
	for (const origin of ['https://evil.example', 'https://a.example.evil', 'http://a.example', 'https://a.example:444', 'null']) {
		const simple = await h.request(corsSrv.port, 'GET', '/health', { headers: { Origin: origin } });
		assert.equal(simple.status, 200);
		assert.equal(simple.headers['access-control-allow-origin'], undefined, `${origin}: ${simple.head}`);
		assert.equal(simple.headers['access-control-allow-credentials'], undefined, origin);
		const pre = await preflight(corsSrv.port, origin);
		assert.equal(pre.headers['access-control-allow-origin'], undefined, `${origin}: ${pre.head}`);
		assert.equal(pre.headers['access-control-allow-credentials'], undefined, origin);
	}
});

test('request_without_origin_on_cors_server_gets_no_allow_origin', async () => {
	const res = await h.request(corsSrv.port, 'GET', '/health');
	assert.equal(res.headers['access-control-allow-origin'], undefined);
});

test('without_cors_allowed_origins_no_access_control_header_is_ever_added', async () => {
	const reqs = [
		['GET', '/health', { Origin: A }],
		['GET', '/no-such-path', { Origin: A }],
		['OPTIONS', '/setup', { Origin: A, 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'content-type' }],
		['OPTIONS', '/health', { Origin: A }],
		['POST', '/setup', { Origin: A }],
	];
	for (const [m, p, headers] of reqs) {
		const res = await h.request(plainSrv.port, m, p, { headers, body: m === 'POST' ? {} : undefined });
		assert.deepEqual(acHeaders(res), [], `${m} ${p}: ${res.head}`);
		assert.ok(!list(res.headers.vary).includes('origin'), `${m} ${p} Vary: ${res.headers.vary}`);
	}
});

test('preflight_without_cors_is_204_with_allow_only', async () => {
	const res = await preflight(plainSrv.port, A);
	assert.equal(res.status, 204);
	assert.ok(list(res.headers.allow).includes('post'), `Allow: ${res.headers.allow}`);
	assert.deepEqual(acHeaders(res), []);
});
