// GET /deployments/:id/logs and GET /deployments/:id/live against the
// built stewardd.
//
// The pipeline that writes logs is not what is tested here (the writer's own
// behaviour: scrubbing, the cap, the tail, is tests/unit/test_deploy_log.c;
// live streaming from a writer, N readers sharing one chunk, slow readers,
// splice and sendfile bodies: tests/unit/test_hub.c). So each deployment
// below is a row inserted straight into PostgreSQL (`insertDeployment`) and
// its log a file written straight into STEWARD_DATA_DIR/logs/<id>.log
// (`writeLog`), as the writer leaves them. The server runs without job
// runners (STEWARD_RUNNERS=false), so nothing else touches those rows; a
// deployment "running" here runs in no process of this server, which is
// the case of a reader served by another replica: /live polls the file and
// the row.

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import * as h from './harness.mjs';
import { call, ok, setup, signup } from './identity.mjs';
import { deploymentRows } from './deployment_rows.mjs';

h.stewarddPath();
const pg = await h.startPostgres();
const srv = await h.startStewardd({ db: pg, env: { SIGNUP_ENABLED: 'true', STEWARD_RUNNERS: 'false' } });
after(h.cleanupAll);

const sql = (q) => pg.psql(q, srv.dbName);

const owner = await setup(srv);
const other = await signup(srv, 'other@example.com', 'Other');

async function application(who, name) {
	const p = await ok(call(srv, 'POST', '/projects', who, { body: { name } }), 201);
	return ok(call(srv, 'POST', '/applications', who, { body: { name, environmentId: p.environments[0].id } }), 201);
}
const app = await application(owner, 'web');
// One deployment per application in flight: the running ones use their own.
const runningApp = await application(owner, 'running');
const elsewhereApp = await application(owner, 'elsewhere');
const theirApp = await application(other, 'theirs');

const { insertDeployment, logPath, writeLog } = deploymentRows(pg, srv);

// The events of an SSE body: [{event, id, data}], comments skipped.
function events(text) {
	const out = [];
	for (const block of text.split('\n\n')) {
		if (!block) continue;
		const e = { event: 'message', id: null, data: [] };
		let any = false;
		for (const line of block.split('\n')) {
			if (line.startsWith(':')) continue;
			any = true;
			const i = line.indexOf(':');
			const field = i < 0 ? line : line.slice(0, i);
			let value = i < 0 ? '' : line.slice(i + 1);
			if (value.startsWith(' ')) value = value.slice(1);
			if (field === 'event') e.event = value;
			else if (field === 'id') e.id = value;
			else if (field === 'data') e.data.push(value);
		}
		if (any) out.push({ ...e, data: e.data.join('\n') });
	}
	return out;
}
// The log a client rebuilds from the "log" events (each event is whole lines).
const logOf = (evs) => evs.filter((e) => e.event === 'log').map((e) => e.data + '\n').join('');

const sample = 'Step 1/4 : FROM steward-test/base\n ---> 1a2b3c\nÜnïcödé ✓ output\n' + 'x'.repeat(300) + '\n==> done\n';

// ------------------------------------------------------------ /logs

test('logs_answer_the_file_bytes_as_utf8_text', async () => {
	const id = await insertDeployment(owner, app.id, { bytes: Buffer.byteLength(sample) });
	writeLog(id, sample);
	const res = await call(srv, 'GET', `/deployments/${id}/logs`, owner);
	assert.equal(res.status, 200, res.text);
	assert.equal(res.headers['content-type'], 'text/plain; charset=utf-8');
	assert.equal(res.headers['content-length'], String(Buffer.byteLength(sample)));
	assert.equal(res.headers['accept-ranges'], 'bytes');
	assert.equal(res.headers['cache-control'], 'no-store');
	assert.equal(res.headers['x-content-type-options'], 'nosniff');
	assert.ok(res.headers['x-request-id']);
	assert.ok(res.body.equals(Buffer.from(sample)));
});

test('a_large_log_arrives_byte_for_byte', async () => {
	const id = await insertDeployment(owner, app.id);
	// 5 MiB of varied bytes (not valid UTF-8 on purpose: /logs sends what the file holds).
	const big = Buffer.alloc(5 * 1024 * 1024 + 123);
	for (let i = 0; i < big.length; i++) big[i] = (i * 31 + (i >> 12)) & 0xff;
	writeLog(id, big);
	const res = await call(srv, 'GET', `/deployments/${id}/logs`, owner);
	assert.equal(res.status, 200);
	assert.equal(res.body.length, big.length);
	assert.ok(res.body.equals(big));
});

test('head_answers_the_length_alone', async () => {
	const id = await insertDeployment(owner, app.id);
	writeLog(id, sample);
	const res = await call(srv, 'HEAD', `/deployments/${id}/logs`, owner);
	assert.equal(res.status, 200);
	assert.equal(res.headers['content-length'], String(Buffer.byteLength(sample)));
	assert.equal(res.body.length, 0);
});

test('one_range_answers_206_with_content_range', async () => {
	const id = await insertDeployment(owner, app.id);
	writeLog(id, sample);
	const all = Buffer.from(sample);
	const size = all.length;
	const cases = [
		['bytes=0-9', 0, 9],
		['bytes=10-', 10, size - 1],
		['bytes=-7', size - 7, size - 1],
		[`bytes=5-${size + 100}`, 5, size - 1],
		// Numbers of any size (RFC 9110: recipients anticipate large numerals), leading zeros.
		['bytes=0-99999999999999999999999999', 0, size - 1],
		['bytes=-99999999999999999999999999', 0, size - 1],
		['bytes=0003-0009', 3, 9],
	];
	for (const [range, a, b] of cases) {
		const res = await call(srv, 'GET', `/deployments/${id}/logs`, owner, { headers: { Range: range } });
		assert.equal(res.status, 206, `${range}: ${res.text}`);
		assert.equal(res.headers['content-range'], `bytes ${a}-${b}/${size}`, range);
		assert.ok(res.body.equals(all.subarray(a, b + 1)), range);
	}
	const past = await call(srv, 'GET', `/deployments/${id}/logs`, owner, { headers: { Range: `bytes=${size}-` } });
	h.assertError(past, 416, 'RANGE_NOT_SATISFIABLE');
	assert.equal(past.headers['content-range'], `bytes */${size}`);
	for (const range of ['bytes=18446744073709551616-', 'bytes=99999999999999999999999999-']) {
		const huge = await call(srv, 'GET', `/deployments/${id}/logs`, owner, { headers: { Range: range } });
		h.assertError(huge, 416, 'RANGE_NOT_SATISFIABLE');
	}
	// Several ranges, a malformed one, or If-Range: the whole log.
	for (const headers of [{ Range: 'bytes=0-1,5-6' }, { Range: 'bytes=9-3' }, { Range: 'items=0-3' }, { Range: 'bytes=0-3', 'If-Range': '"x"' }]) {
		const res = await call(srv, 'GET', `/deployments/${id}/logs`, owner, { headers });
		assert.equal(res.status, 200, JSON.stringify(headers));
		assert.ok(res.body.equals(all));
	}
});

test('a_deployment_without_a_log_yet_answers_an_empty_body', async () => {
	const id = await insertDeployment(owner, app.id, { status: 'QUEUED' });
	const res = await call(srv, 'GET', `/deployments/${id}/logs`, owner);
	assert.equal(res.status, 200);
	assert.equal(res.body.length, 0);
});

test('a_running_deployment_answers_what_is_written_so_far', async () => {
	const id = await insertDeployment(owner, runningApp.id, { status: 'BUILDING' });
	writeLog(id, 'line one\n');
	assert.equal((await call(srv, 'GET', `/deployments/${id}/logs`, owner)).text, 'line one\n');
	fs.appendFileSync(logPath(id), 'line two\n');
	assert.equal((await call(srv, 'GET', `/deployments/${id}/logs`, owner)).text, 'line one\nline two\n');
});

test('another_organizations_deployment_is_not_found', async () => {
	const theirs = await insertDeployment(other, theirApp.id);
	writeLog(theirs, 'their secret build output\n');
	for (const route of ['logs', 'live']) {
		h.assertError(await call(srv, 'GET', `/deployments/${theirs}/${route}`, owner), 404, 'NOT_FOUND');
		h.assertError(await call(srv, 'GET', `/deployments/${randomUUID()}/${route}`, owner), 404, 'NOT_FOUND');
		h.assertError(await call(srv, 'GET', `/deployments/not-a-uuid/${route}`, owner), 404, 'NOT_FOUND');
		h.assertError(await call(srv, 'GET', `/deployments/${theirs}/${route}`), 401, 'UNAUTHENTICATED');
	}
	// Its owner reads it.
	assert.equal((await call(srv, 'GET', `/deployments/${theirs}/logs`, other)).text, 'their secret build output\n');
});

// ------------------------------------------------------------ /live

test('live_of_an_ended_deployment_is_the_whole_log_then_the_status_event', async () => {
	const id = await insertDeployment(owner, app.id, { status: 'FAILED', error: 'The health check never passed.' });
	writeLog(id, sample);
	const res = await call(srv, 'GET', `/deployments/${id}/live`, owner);
	assert.equal(res.status, 200, res.text);
	assert.equal(res.headers['content-type'], 'text/event-stream; charset=utf-8');
	assert.equal(res.headers['transfer-encoding'], 'chunked');
	assert.equal(res.headers['cache-control'], 'no-store');
	const evs = events(res.text);
	assert.equal(logOf(evs), sample);
	const last = evs.at(-1);
	assert.equal(last.event, 'status');
	assert.deepEqual(JSON.parse(last.data), { status: 'FAILED', errorMessage: 'The health check never passed.' });
	// Every log event's id is the byte offset after its lines.
	let offset = 0;
	for (const e of evs.filter((x) => x.event === 'log')) {
		offset += Buffer.byteLength(e.data + '\n');
		assert.equal(e.id, String(offset));
	}
	assert.equal(offset, Buffer.byteLength(sample));
});

test('live_resumes_after_last_event_id', async () => {
	const id = await insertDeployment(owner, app.id, { status: 'SUCCEEDED' });
	writeLog(id, 'first\nsecond\nthird\n');
	const from = async (lastId) => {
		const res = await call(srv, 'GET', `/deployments/${id}/live`, owner, { headers: { 'Last-Event-ID': lastId } });
		assert.equal(res.status, 200);
		const evs = events(res.text);
		assert.deepEqual(JSON.parse(evs.at(-1).data), { status: 'SUCCEEDED', errorMessage: null });
		return logOf(evs);
	};
	assert.equal(await from('6'), 'second\nthird\n');
	assert.equal(await from('8'), 'third\n'); // inside "second": the next line
	assert.equal(await from('19'), '');
	assert.equal(await from(''), 'first\nsecond\nthird\n', 'an empty id starts over');
});

test('a_last_event_id_that_is_not_an_id_the_stream_sent_is_422', async () => {
	const id = await insertDeployment(owner, app.id, { status: 'SUCCEEDED' });
	writeLog(id, 'first\n');
	for (const lastId of ['not a number', '-0', '+6', '006', '9223372036854775808', '99999999999999999999999', '1e3']) {
		const res = await call(srv, 'GET', `/deployments/${id}/live`, owner, { headers: { 'Last-Event-ID': lastId } });
		assert.deepEqual(Object.keys(h.assertError(res, 422, 'VALIDATION_FAILED').fields), ['Last-Event-ID'], lastId);
	}
	const ok = await call(srv, 'GET', `/deployments/${id}/live`, owner, { headers: { 'Last-Event-ID': '9223372036854775807' } });
	assert.equal(ok.status, 200, 'the largest id is one: past the end, only the status follows');
});

test('live_of_a_deployment_running_elsewhere_follows_the_file_until_the_row_ends', async () => {
	const id = await insertDeployment(owner, elsewhereApp.id, { status: 'BUILDING' });
	writeLog(id, 'cloning\n');
	const c = await h.Conn.open(srv.port);
	const headers = [`Cookie: steward_session=${owner.cookie}`, 'Host: x'];
	await c.write(`GET /deployments/${id}/live HTTP/1.1\r\n${headers.join('\r\n')}\r\n\r\n`);
	assert.ok(await c.waitFor(() => c.data.includes('data: cloning'), 5000 * h.SLACK), c.data.toString());
	fs.appendFileSync(logPath(id), 'building\nhalf a li');
	assert.ok(await c.waitFor(() => c.data.includes('data: building'), 5000 * h.SLACK), c.data.toString());
	assert.ok(!c.data.includes('half a li'), 'only whole lines are sent');
	fs.appendFileSync(logPath(id), 'ne\nDeployment succeeded.\n');
	await sql(`UPDATE deployments SET status = 'SUCCEEDED', finished_at = now() WHERE id = '${id}'`);
	const [res] = await c.responses(1, 5000 * h.SLACK);
	c.destroy();
	const evs = events(res.text);
	assert.equal(logOf(evs), fs.readFileSync(logPath(id), 'utf8'));
	assert.deepEqual(JSON.parse(evs.at(-1).data), { status: 'SUCCEEDED', errorMessage: null });
});

test('head_of_live_answers_the_stream_headers_alone', async () => {
	const id = await insertDeployment(owner, app.id);
	writeLog(id, sample);
	const res = await call(srv, 'HEAD', `/deployments/${id}/live`, owner);
	assert.equal(res.status, 200);
	assert.equal(res.headers['content-type'], 'text/event-stream; charset=utf-8');
	assert.equal(res.body.length, 0);
});

test('the_document_describes_both_routes_their_media_types_and_the_events', async () => {
	const doc = (await h.request(srv.port, 'GET', '/docs')).json();
	const logs = doc.paths['/deployments/{id}/logs'].get;
	assert.ok(logs.responses['200'].content['text/plain; charset=utf-8']);
	assert.ok(logs.responses['206'].content['text/plain; charset=utf-8']);
	assert.ok(logs.responses['416'] && logs.responses['404']);
	const live = doc.paths['/deployments/{id}/live'].get;
	assert.ok(live.responses['200'].content['text/event-stream']);
	for (const word of ['`log`', '`status`', 'errorMessage', 'Last-Event-ID', ': ping']) assert.ok(live.description.includes(word), word);
});
