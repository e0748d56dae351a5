// Access log: one line per request with request id, method, path (never
// the query string), status, bytes and duration; no secret, cookie or
// token ever reaches stdout or stderr.

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import * as h from './harness.mjs';

h.stewarddPath();
const pg = await h.startPostgres();
const srv = await h.startStewardd({ db: pg });
after(h.cleanupAll);

const HOST = 'Host: 127.0.0.1\r\n';

function accessLines(s, rid) {
	const re = new RegExp(`\\baccess\\b.*\\brid=${rid.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(\\s|$)`);
	return s.logs.all().filter((l) => re.test(l));
}

function field(line, key) {
	const m = new RegExp(`(?:^|\\s)${key}=(\\S*)`).exec(line);
	return m ? m[1] : null;
}

async function waitAccess(s, rid) {
	await s.logs.waitForLine(new RegExp(`\\baccess\\b.*\\brid=${rid}(\\s|$)`), 3000 * h.SLACK);
	await h.sleep(100); // a duplicate would come in the same flush
	return accessLines(s, rid);
}

test('one_access_line_per_request_with_its_fields', async () => {
	const cases = [
		['GET', '/health', 200, 'acc-get-1'],
		['GET', '/no-such-path', 404, 'acc-404-1'],
		['DELETE', '/health', 405, 'acc-405-1'],
		['POST', '/setup', 422, 'acc-422-1'],
	];
	for (const [method, p, status, rid] of cases) {
		const res = await h.request(srv.port, method, p, { headers: { 'X-Request-Id': rid }, body: method === 'POST' ? { email: 'x' } : undefined });
		assert.equal(res.status, status);
		const lines = await waitAccess(srv, rid);
		assert.equal(lines.length, 1, `exactly one access line for ${rid}: ${lines.join('\n')}`);
		const l = lines[0];
		assert.match(l, /^\S+\s+INFO\s+access\s/, l);
		assert.equal(field(l, 'method'), method, l);
		assert.equal(field(l, 'path'), p, l);
		assert.equal(field(l, 'status'), String(status), l);
		assert.match(field(l, 'bytes') ?? '', /^\d+$/, l);
		assert.ok(Number(field(l, 'bytes')) >= res.body.length, `bytes=${field(l, 'bytes')} covers the body of ${res.body.length}`);
		assert.match(field(l, 'dur_us') ?? '', /^\d+$/, l);
	}
});

test('pipelined_requests_get_one_line_each', async () => {
	let bytes = '';
	for (let i = 0; i < 10; i++) bytes += `GET /health HTTP/1.1\r\n${HOST}X-Request-Id: acc-pipe-${i}\r\n\r\n`;
	const r = await h.raw(srv.port, bytes, { untilResponses: 10 });
	assert.equal(r.responses.length, 10);
	for (let i = 0; i < 10; i++) {
		const lines = await waitAccess(srv, `acc-pipe-${i}`);
		assert.equal(lines.length, 1, `acc-pipe-${i}`);
	}
});

test('access_line_path_has_no_query_string', async () => {
	const res = await h.request(srv.port, 'GET', '/health?foo=bar&x=1', { headers: { 'X-Request-Id': 'acc-query-1' } });
	assert.equal(res.status, 200);
	const [l] = await waitAccess(srv, 'acc-query-1');
	assert.equal(field(l, 'path'), '/health', l);
	assert.ok(!l.includes('foo'), l);
});

test('generated_request_id_is_logged', async () => {
	const res = await h.request(srv.port, 'GET', '/health');
	const rid = res.headers['x-request-id'];
	const lines = await waitAccess(srv, rid);
	assert.equal(lines.length, 1);
});

test('refused_request_is_logged_once', async () => {
	const from = srv.logs.mark();
	const r = await h.raw(srv.port, `GET /health HTTP/1.1\r\n${HOST}X-Request-Id: acc-bad-1\r\nX-Fold: a\r\n b\r\n\r\n`);
	assert.equal(r.responses[0].status, 400);
	const rid = r.responses[0].headers['x-request-id'];
	await srv.logs.waitForLine(/\baccess\b.*\bstatus=400\b/, 3000 * h.SLACK, { from });
	await h.sleep(100);
	const lines = srv.logs.all(from).filter((l) => /\baccess\b/.test(l) && /\bstatus=400\b/.test(l));
	assert.equal(lines.length, 1, lines.join('\n'));
	assert.equal(field(lines[0], 'rid'), rid, 'the logged rid is the one in the response');
});

test('no_secret_cookie_or_token_reaches_the_log', async () => {
	// Its own server, with a password in DATABASE_URL (trust authentication
	// ignores it), so that stopping it flushes everything it would log.
	const name = await pg.freshDatabase();
	const url = name.replace('postgresql:///', 'postgresql://postgres:SECRET_CANARY_DBPW@/');
	const s = await h.startStewardd({ env: { DATABASE_URL: url } });
	const port = s.port;
	await h.request(port, 'GET', '/health?token=SECRET_CANARY_QUERY&access_token=SECRET_CANARY_QUERY2', {
		headers: { Authorization: 'Bearer SECRET_CANARY_BEARER', Cookie: 'sid=SECRET_CANARY_COOKIE; other=SECRET_CANARY_COOKIE2', 'X-Api-Key': 'SECRET_CANARY_APIKEY' },
	});
	await h.request(port, 'GET', '/no-such-path?password=SECRET_CANARY_Q404', { headers: { Cookie: 'sid=SECRET_CANARY_COOKIE404' } });
	// Failed and successful setup with a password canary.
	await h.request(port, 'POST', '/setup', { body: h.setupBody({ email: 'bad', password: 'SECRET_CANARY_PW_FAIL' }) });
	await h.request(port, 'POST', '/setup', { body: '{"password":"SECRET_CANARY_PW_BADJSON",', headers: { 'Content-Type': 'application/json' } });
	await h.request(port, 'POST', '/setup', { body: '{"password":"SECRET_CANARY_PW_DUP","password":"x"}', headers: { 'Content-Type': 'application/json' } });
	const ok = await h.request(port, 'POST', '/setup', { body: h.setupBody({ password: 'SECRET_CANARY_PW_OK' }), headers: { Cookie: 'sid=SECRET_CANARY_COOKIE_SETUP' } });
	assert.equal(ok.status, 201, ok.text);
	await h.request(port, 'POST', '/setup', { body: h.setupBody({ password: 'SECRET_CANARY_PW_409' }) });
	// Refusals whose offending line carries a secret.
	await h.raw(port, `GET /health HTTP/1.1\r\n${HOST}Authorization: Bearer SECRET_CANARY_FOLD\r\n more\r\n\r\n`);
	await h.raw(port, `GET /health HTTP/1.1\r\n${HOST}Cookie : sid=SECRET_CANARY_SPACE\r\n\r\n`);
	await h.raw(port, `GET /health?token=SECRET_CANARY_BADVER HTTP/1.7\r\n${HOST}\r\n`);
	await h.raw(port, `GET /x?token=SECRET_CANARY_LONG${'a'.repeat(9000)} HTTP/1.1\r\n${HOST}\r\n`);
	await h.sleep(300);
	const code = await s.stop('SIGTERM');
	assert.equal(code, 0);
	const text = s.logs.text();
	assert.ok(/\baccess\b/.test(text), 'access lines were written');
	const leaks = text.split('\n').filter((l) => /SECRET_CANARY/.test(l));
	assert.deepEqual(leaks, [], 'secrets in the log');
});

test('access_log_off_writes_no_access_lines', async () => {
	const s = await h.startStewardd({ db: pg, env: { STEWARD_ACCESS_LOG: 'off' } });
	const res = await h.request(s.port, 'GET', '/health', { headers: { 'X-Request-Id': 'acc-off-1' } });
	assert.equal(res.status, 200);
	await h.sleep(500);
	await s.stop();
	assert.equal(s.logs.all().filter((l) => /\baccess\b.*\brid=/.test(l)).length, 0, s.logs.text());
});
