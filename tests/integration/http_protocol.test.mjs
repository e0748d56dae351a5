// HTTP/1.1 behaviour that well-formed clients rely on: keep-alive,
// pipelining, HTTP/1.0, HEAD, Expect: 100-continue, chunked bodies with
// extensions and trailers, the router's 404 and 405, request ids, and curl.

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import * as h from './harness.mjs';

h.stewarddPath();
const pg = await h.startPostgres();
const srv = await h.startStewardd({ db: pg });
after(h.cleanupAll);

const HOST = 'Host: 127.0.0.1\r\n';
const RID = /^[A-Za-z0-9._:-]{1,64}$/;

test('keep_alive_serves_many_requests_on_one_socket', async () => {
	const c = await h.Conn.open(srv.port);
	try {
		for (let i = 1; i <= 50; i++) {
			await c.write(`GET /health HTTP/1.1\r\n${HOST}X-Request-Id: ka-${i}\r\n\r\n`);
			const rs = await c.responses(i, 5000);
			const r = rs[i - 1];
			assert.equal(r.status, 200);
			assert.equal(r.headers['x-request-id'], `ka-${i}`);
			assert.ok(!/close/i.test(String(r.headers.connection || '')), 'no Connection: close on keep-alive');
		}
		assert.ok(!c.closed, 'connection still open');
	} finally {
		c.destroy();
	}
});

test('twenty_pipelined_requests_in_one_write_are_answered_in_order', async () => {
	const targets = ['/health', '/setup-status', '/no-such-path', '/health', '/setup-status'];
	const expected = [200, 200, 404, 200, 200];
	let bytes = '';
	for (let i = 0; i < 20; i++) bytes += `GET ${targets[i % 5]} HTTP/1.1\r\n${HOST}X-Request-Id: pipe-${i}\r\n\r\n`;
	const c = await h.Conn.open(srv.port);
	try {
		await c.write(bytes);
		const rs = await c.responses(20, 10000);
		assert.equal(rs.length, 20);
		for (let i = 0; i < 20; i++) {
			assert.equal(rs[i].headers['x-request-id'], `pipe-${i}`, `response ${i} out of order`);
			assert.equal(rs[i].status, expected[i % 5], `response ${i}`);
		}
		assert.equal(rs.rest.length, 0, 'no stray bytes');
		assert.ok(!c.closed);
	} finally {
		c.destroy();
	}
});

test('pipelined_requests_with_bodies_are_split_by_content_length', async () => {
	const body = '{"email":"not-an-email"}';
	let bytes = '';
	for (let i = 0; i < 5; i++) {
		bytes += `POST /setup HTTP/1.1\r\n${HOST}X-Request-Id: pb-${i}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
		bytes += `GET /health HTTP/1.1\r\n${HOST}X-Request-Id: pg-${i}\r\n\r\n`;
	}
	const c = await h.Conn.open(srv.port);
	try {
		await c.write(bytes);
		const rs = await c.responses(10, 10000);
		for (let i = 0; i < 5; i++) {
			assert.equal(rs[2 * i].headers['x-request-id'], `pb-${i}`);
			h.assertError(rs[2 * i], 422, 'VALIDATION_FAILED');
			assert.equal(rs[2 * i + 1].headers['x-request-id'], `pg-${i}`);
			assert.equal(rs[2 * i + 1].status, 200);
		}
	} finally {
		c.destroy();
	}
});

test('pipelined_requests_with_chunked_bodies_are_split_correctly', async () => {
	const body = '{"email":"not-an-email"}';
	let bytes = '';
	for (let i = 0; i < 3; i++) {
		bytes += `POST /setup HTTP/1.1\r\n${HOST}X-Request-Id: cb-${i}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`;
		bytes += `5\r\n${body.slice(0, 5)}\r\n${(body.length - 5).toString(16)}\r\n${body.slice(5)}\r\n0\r\n\r\n`;
		bytes += `GET /health HTTP/1.1\r\n${HOST}X-Request-Id: cg-${i}\r\n\r\n`;
	}
	const c = await h.Conn.open(srv.port);
	try {
		await c.write(bytes);
		const rs = await c.responses(6, 10000);
		for (let i = 0; i < 3; i++) {
			assert.equal(rs[2 * i].headers['x-request-id'], `cb-${i}`);
			h.assertError(rs[2 * i], 422, 'VALIDATION_FAILED');
			assert.equal(rs[2 * i + 1].headers['x-request-id'], `cg-${i}`);
			assert.equal(rs[2 * i + 1].status, 200);
		}
	} finally {
		c.destroy();
	}
});

test('request_split_across_many_small_writes_is_served', async () => {
	const text = `GET /health HTTP/1.1\r\n${HOST}X-Request-Id: split-1\r\n\r\n`;
	const pieces = text.match(/.{1,3}/gs);
	const r = await h.raw(srv.port, pieces, { delayMs: 5, untilResponses: 1 });
	assert.equal(r.responses.length, 1);
	assert.equal(r.responses[0].status, 200);
	assert.equal(r.responses[0].headers['x-request-id'], 'split-1');
});

test('http_1_0_request_is_answered_and_closed', async () => {
	const r = await h.raw(srv.port, 'GET /health HTTP/1.0\r\n\r\n');
	assert.equal(r.responses.length, 1, r.text);
	assert.equal(r.responses[0].status, 200);
	assert.match(r.responses[0].version, /^1\.[01]$/);
	assert.ok(r.closed, 'HTTP/1.0 without keep-alive is closed');
	assert.equal(r.responses.rest.length, 0);
});

test('http_1_0_with_keep_alive_stays_open', async () => {
	const c = await h.Conn.open(srv.port);
	try {
		await c.write('GET /health HTTP/1.0\r\nConnection: keep-alive\r\n\r\n');
		const rs = await c.responses(1, 5000);
		assert.equal(rs[0].status, 200);
		assert.match(String(rs[0].headers.connection || ''), /keep-alive/i, 'HTTP/1.0 keep-alive is confirmed');
		await c.waitClosed(300);
		assert.ok(!c.closed, 'closed despite keep-alive');
		await c.write('GET /health HTTP/1.0\r\nConnection: keep-alive\r\n\r\n');
		const rs2 = await c.responses(2, 5000);
		assert.equal(rs2[1].status, 200);
	} finally {
		c.destroy();
	}
});

test('connection_close_request_gets_connection_close_and_is_closed', async () => {
	const r = await h.raw(srv.port, `GET /health HTTP/1.1\r\n${HOST}Connection: close\r\n\r\nGET /health HTTP/1.1\r\n${HOST}\r\n`);
	assert.equal(r.responses.length, 1, 'the request after Connection: close is not served');
	assert.match(String(r.responses[0].headers.connection), /close/i);
	assert.ok(r.closed);
});

test('head_health_has_content_length_and_no_body', async () => {
	const get = await h.request(srv.port, 'GET', '/health');
	// HEAD followed by GET on one connection: if HEAD sent a body, the GET's
	// response would not parse where it should.
	const c = await h.Conn.open(srv.port);
	try {
		await c.write(`HEAD /health HTTP/1.1\r\n${HOST}X-Request-Id: head-1\r\n\r\nGET /health HTTP/1.1\r\n${HOST}X-Request-Id: head-2\r\n\r\n`);
		const rs = await c.responses(2, 5000, { head: [true, false] });
		assert.equal(rs[0].status, 200);
		assert.equal(rs[0].headers['x-request-id'], 'head-1');
		assert.equal(rs[0].headers['content-length'], String(get.body.length), 'HEAD Content-Length is the GET body length');
		assert.equal(rs[0].headers['content-type'], get.headers['content-type']);
		assert.equal(rs[1].headers['x-request-id'], 'head-2', 'HEAD response carried a body');
		assert.equal(rs[1].status, 200);
	} finally {
		c.destroy();
	}
});

test('expect_100_continue_gets_100_before_the_final_response', async () => {
	const body = '{"email":"not-an-email"}';
	const c = await h.Conn.open(srv.port);
	try {
		await c.write(`POST /setup HTTP/1.1\r\n${HOST}Content-Type: application/json\r\nContent-Length: ${body.length}\r\nExpect: 100-continue\r\n\r\n`);
		const got100 = await c.waitFor((x) => x.text().includes('\r\n\r\n'), 5000);
		assert.ok(got100, 'no interim response');
		assert.match(c.text(), /^HTTP\/1\.1 100 Continue\r\n\r\n$/, 'exactly an interim 100 before the body is sent');
		await c.write(body);
		const rs = await c.responses(1, 5000);
		assert.equal(rs.length, 2);
		assert.equal(rs[0].status, 100);
		h.assertError(rs[1], 422, 'VALIDATION_FAILED');
		assert.ok(rs[1].json().error.fields.email, 'the body sent after 100 was read');
	} finally {
		c.destroy();
	}
});

test('expect_100_continue_with_oversized_length_gets_413_without_100', async () => {
	const r = await h.raw(srv.port, `POST /setup HTTP/1.1\r\n${HOST}Content-Type: application/json\r\nContent-Length: ${64 * 1024 + 1}\r\nExpect: 100-continue\r\n\r\n`);
	assert.ok(!r.text.includes(' 100 '), `no 100 Continue: ${r.text.slice(0, 200)}`);
	h.assertRefusedAndClosed(r, 413, 'PAYLOAD_TOO_LARGE');
	assert.equal(r.responses.length, 1);
});

test('expect_100_continue_on_unknown_path_gets_404_without_100', async () => {
	const r = await h.raw(srv.port, `POST /no-such-path HTTP/1.1\r\n${HOST}Content-Type: application/json\r\nContent-Length: 2\r\nExpect: 100-continue\r\n\r\n`, { untilResponses: 1, timeoutMs: 3000 });
	assert.equal(r.responses.length, 1, r.text);
	h.assertError(r.responses[0], 404, 'NOT_FOUND');
});

test('chunked_body_with_extensions_and_trailers_is_decoded', async () => {
	const body = '{"email":"not-an-email","password":"short"}';
	const a = body.slice(0, 10);
	const b = body.slice(10, 30);
	const c2 = body.slice(30);
	const bytes = `POST /setup HTTP/1.1\r\n${HOST}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n` +
		`${a.length.toString(16)};ext=1\r\n${a}\r\n` +
		`${b.length.toString(16).toUpperCase()};name="quoted value";x\r\n${b}\r\n` +
		`${c2.length.toString(16)}\r\n${c2}\r\n` +
		`0;last=yes\r\nX-Trailer: one\r\nX-Other-Trailer: two\r\n\r\n`;
	const r = await h.raw(srv.port, bytes);
	assert.equal(r.responses.length, 1, r.text);
	const e = h.assertError(r.responses[0], 422, 'VALIDATION_FAILED');
	assert.ok(e.fields && e.fields.email, `email field error: ${r.responses[0].text}`);
	assert.ok(e.fields.password, `password field error: ${r.responses[0].text}`);
});

test('chunked_body_followed_by_a_request_keeps_the_connection', async () => {
	const body = '{"email":"x"}';
	const c = await h.Conn.open(srv.port);
	try {
		await c.write(`POST /setup HTTP/1.1\r\n${HOST}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n${body.length.toString(16)}\r\n${body}\r\n0\r\nX-T: 1\r\n\r\n`);
		const rs = await c.responses(1, 5000);
		assert.equal(rs[0].status, 422);
		await c.write(`GET /health HTTP/1.1\r\n${HOST}\r\n`);
		const rs2 = await c.responses(2, 5000);
		assert.equal(rs2[1].status, 200);
	} finally {
		c.destroy();
	}
});

test('unknown_path_is_404_in_the_envelope', async () => {
	const res = await h.request(srv.port, 'GET', '/no-such-path-zq9');
	const e = h.assertError(res, 404, 'NOT_FOUND');
	h.assertCommonHeaders(res);
	assert.ok(!e.message.includes('zq9'), 'the 404 message does not echo the path');
	assert.ok(!res.text.includes('zq9'), 'the 404 body does not echo the path');
});

test('wrong_method_is_405_with_allow', async () => {
	const res = await h.request(srv.port, 'DELETE', '/health');
	h.assertError(res, 405, 'METHOD_NOT_ALLOWED');
	h.assertCommonHeaders(res);
	const allow = String(res.headers.allow || '').split(',').map((s) => s.trim());
	assert.ok(allow.includes('GET'), `Allow: ${res.headers.allow}`);
	assert.ok(allow.includes('HEAD'), `Allow: ${res.headers.allow}`);
	assert.ok(!allow.includes('DELETE'));
});

test('post_to_get_route_is_405_with_allow', async () => {
	const res = await h.request(srv.port, 'POST', '/setup-status', { body: {} });
	h.assertError(res, 405, 'METHOD_NOT_ALLOWED');
	const allow = String(res.headers.allow || '').split(',').map((s) => s.trim());
	assert.ok(allow.includes('GET') && allow.includes('HEAD'), `Allow: ${res.headers.allow}`);
});

test('get_to_post_route_is_405_with_allow_post', async () => {
	const res = await h.request(srv.port, 'GET', '/setup');
	h.assertError(res, 405, 'METHOD_NOT_ALLOWED');
	const allow = String(res.headers.allow || '').split(',').map((s) => s.trim());
	assert.ok(allow.includes('POST'), `Allow: ${res.headers.allow}`);
	assert.ok(!allow.includes('GET'), `Allow: ${res.headers.allow}`);
});

test('unknown_method_on_known_path_is_405', async () => {
	const res = await h.request(srv.port, 'PURGE', '/health');
	h.assertError(res, 405, 'METHOD_NOT_ALLOWED');
	assert.ok(res.headers.allow, 'Allow present');
});

test('options_is_204_with_allow', async () => {
	const res = await h.request(srv.port, 'OPTIONS', '/health');
	assert.equal(res.status, 204);
	const allow = String(res.headers.allow || '').split(',').map((s) => s.trim());
	assert.ok(allow.includes('GET') && allow.includes('HEAD'), `Allow: ${res.headers.allow}`);
	assert.equal(res.body.length, 0);
	assert.ok(res.headers['x-request-id']);
});

test('trailing_slash_is_404', async () => {
	const res = await h.request(srv.port, 'GET', '/health/');
	h.assertError(res, 404, 'NOT_FOUND');
});

test('path_matching_is_case_sensitive', async () => {
	const res = await h.request(srv.port, 'GET', '/Health');
	h.assertError(res, 404, 'NOT_FOUND');
});

test('query_string_does_not_change_the_route', async () => {
	const res = await h.request(srv.port, 'GET', '/health?verbose=1&x=%20');
	assert.equal(res.status, 200);
});

test('client_request_id_is_echoed', async () => {
	const res = await h.request(srv.port, 'GET', '/health', { headers: { 'X-Request-Id': 'client.id:42-A_b' } });
	assert.equal(res.headers['x-request-id'], 'client.id:42-A_b');
	const nf = await h.request(srv.port, 'GET', '/nope', { headers: { 'X-Request-Id': 'client-404' } });
	assert.equal(nf.headers['x-request-id'], 'client-404');
	assert.equal(nf.json().error.requestId, 'client-404');
});

test('request_id_is_generated_when_absent', async () => {
	const a = await h.request(srv.port, 'GET', '/health');
	const b = await h.request(srv.port, 'GET', '/health');
	assert.match(a.headers['x-request-id'], RID);
	assert.match(b.headers['x-request-id'], RID);
	assert.notEqual(a.headers['x-request-id'], b.headers['x-request-id'], 'ids are unique');
});

test('invalid_client_request_id_is_replaced', async () => {
	for (const bad of ['has space', 'a'.repeat(65), 'semi;colon', '<script>']) {
		const res = await h.request(srv.port, 'GET', '/health', { headers: { 'X-Request-Id': bad } });
		assert.notEqual(res.headers['x-request-id'], bad);
		assert.match(res.headers['x-request-id'], RID);
	}
	const ok = await h.request(srv.port, 'GET', '/health', { headers: { 'X-Request-Id': 'b'.repeat(64) } });
	assert.equal(ok.headers['x-request-id'], 'b'.repeat(64), '64 characters is allowed');
});

test('every_response_carries_the_common_headers', async () => {
	for (const [m, p] of [['GET', '/health'], ['GET', '/setup-status'], ['GET', '/nope'], ['DELETE', '/health'], ['POST', '/setup']]) {
		const res = await h.request(srv.port, m, p, m === 'POST' ? { body: {} } : {});
		h.assertCommonHeaders(res);
		if (res.status >= 400) h.assertError(res, res.status);
	}
});

test('curl_gets_health', { skip: !h.hasCurl() && 'curl is not installed' }, async () => {
	const r = await h.curl(['-sv', '--max-time', '10', `http://127.0.0.1:${srv.port}/health`]);
	assert.equal(r.code, 0, r.stderr);
	assert.match(r.stderr, /< HTTP\/1\.1 200/);
	assert.match(r.stderr, /< x-request-id: /i);
	assert.deepEqual(JSON.parse(r.stdout), { data: { status: 'ok', database: 'ok' } });
});

test('curl_reuses_the_connection_for_two_requests', { skip: !h.hasCurl() && 'curl is not installed' }, async () => {
	const url = `http://127.0.0.1:${srv.port}/health`;
	const r = await h.curl(['-sv', '--max-time', '10', url, url]);
	assert.equal(r.code, 0, r.stderr);
	assert.match(r.stderr, /Re-using existing connection|Reusing existing connection/i);
	assert.equal((r.stderr.match(/< HTTP\/1\.1 200/g) || []).length, 2);
});

test('curl_posts_chunked_json_with_expect', { skip: !h.hasCurl() && 'curl is not installed' }, async () => {
	const r = await h.curl(['-sv', '--max-time', '10', '-H', 'Content-Type: application/json', '-H', 'Transfer-Encoding: chunked',
		'-H', 'Expect: 100-continue', '--data-binary', '{"email":"x"}', `http://127.0.0.1:${srv.port}/setup`]);
	assert.equal(r.code, 0, r.stderr);
	assert.match(r.stderr, /< HTTP\/1\.1 100 Continue/);
	assert.match(r.stderr, /< HTTP\/1\.1 422/);
	assert.equal(JSON.parse(r.stdout).error.code, 'VALIDATION_FAILED');
});
