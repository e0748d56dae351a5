// GET /applications/:id/logs with a real container on a private dockerd: a
// container of an application prints known lines (one holding a variable's
// value, one a value too short to mask, one on stderr); the answer has them
// in order with the value as ***, and with follow=true an SSE stream
// carries them, then a line printed after the stream started, then an
// `end` event when the container stops. Errors: an application without a
// container (409 NO_CONTAINER), bad parameters (422 naming each), another
// organization's application (404).

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import * as h from './harness.mjs';
import { call, ok, setup, signup } from './identity.mjs';
import { startDocker, baseImage, removeByLabel, dockerRequest } from './docker.mjs';

h.stewarddPath();
const engine = await startDocker();
const image = await baseImage();
const pg = await h.startPostgres();
const srv = await h.startStewardd({
	db: pg,
	env: { DOCKER_HOST: engine.host, SIGNUP_ENABLED: 'true', METRICS_EBPF: '0' },
});
const sql = async (q) => (await pg.psql(q, srv.dbName)).trim();

const owner = await setup(srv);
const other = await signup(srv, 'other@example.com', 'Other');
const server = await sql(`SELECT id FROM servers WHERE organization_id = '${owner.org.id}' AND is_local`);
const project = await sql(`INSERT INTO projects (organization_id, name) VALUES ('${owner.org.id}', 'p') RETURNING id`);
const env = await sql(`INSERT INTO environments (organization_id, project_id, name) VALUES ('${owner.org.id}', '${project}', 'production') RETURNING id`);
async function application(name) {
	return sql(`INSERT INTO applications (organization_id, project_id, environment_id, server_id, name)
		VALUES ('${owner.org.id}', '${project}', '${env}', '${server}', '${name}') RETURNING id`);
}
const app = await application('talker');
const empty = await application('empty');
after(async () => {
	await removeByLabel(`steward.application=${app}`);
	await h.cleanupAll();
});

const SECRET = 'sk-live-0123456789abcdef';
const SHORT = 'abc'; // under the 4-byte minimum: never masked, as in build logs
await ok(call(srv, 'PUT', `/applications/${app}/variables/API_KEY`, owner, { body: { value: SECRET } }), 201);
await ok(call(srv, 'PUT', `/applications/${app}/variables/TINY`, owner, { body: { value: SHORT } }), 201);

// The container prints, waits for /tmp/go (made by an exec), prints again,
// then waits for /tmp/stop and exits.
const script = [
	'echo "first line"',
	`echo "the key is ${SECRET} here"`,
	`echo "short ${SHORT} stays"`,
	'echo "to stderr" >&2',
	'while [ ! -e /tmp/go ]; do sleep 0.05; done',
	`echo "after follow ${SECRET}"`,
	'while [ ! -e /tmp/stop ]; do sleep 0.05; done',
	'echo "bye"',
].join('; ');
const create = await dockerRequest('POST', '/containers/create', {
	Image: image,
	Cmd: ['sh', '-c', script],
	Labels: { 'steward.application': app },
	HostConfig: { NetworkMode: 'none' },
});
assert.equal(create.status, 201, create.text);
const container = create.json().Id;
assert.equal((await dockerRequest('POST', `/containers/${container}/start`)).status, 204);

async function touch(file) {
	const ex = await dockerRequest('POST', `/containers/${container}/exec`, { Cmd: ['touch', file] });
	assert.equal(ex.status, 201, ex.text);
	const st = await dockerRequest('POST', `/exec/${ex.json().Id}/start`, { Detach: true });
	assert.equal(st.status, 200, st.text);
}

// The events of an SSE body: [{event, data}], comments skipped.
function events(text) {
	const out = [];
	for (const block of text.split('\n\n')) {
		const e = { event: 'message', data: [] };
		let any = false;
		for (const line of block.split('\n')) {
			if (!line || line.startsWith(':')) continue;
			any = true;
			const i = line.indexOf(':');
			const field = line.slice(0, i);
			const value = line.slice(i + 2);
			if (field === 'event') e.event = value;
			else if (field === 'data') e.data.push(value);
		}
		if (any) out.push({ event: e.event, data: e.data.join('\n') });
	}
	return out;
}

async function linesNow(query = '') {
	return ok(call(srv, 'GET', `/applications/${app}/logs${query}`, owner));
}

test('the lines of the running container, in order, the variable value scrubbed', async () => {
	let res = null;
	for (let i = 0; i < 100; i++) {
		res = await linesNow();
		if (res.lines.length >= 4) break;
		await h.sleep(100);
	}
	assert.equal(res.applicationId, app);
	assert.deepEqual(res.containers.map((c) => [c.id, c.state]), [[container, 'running']]);
	assert.equal(res.truncated, false);
	const texts = res.lines.map((l) => l.text);
	const out = res.lines.filter((l) => l.stream === 'stdout').map((l) => l.text);
	assert.deepEqual(out, ['first line', 'the key is *** here', `short ${SHORT} stays`]);
	assert.deepEqual(res.lines.filter((l) => l.stream === 'stderr').map((l) => l.text), ['to stderr']);
	for (const l of res.lines) {
		assert.equal(l.containerId, container);
		assert.match(l.time, h.TS);
	}
	assert.ok(!JSON.stringify(res).includes(SECRET), 'the value never leaves the server');
	assert.ok(texts.indexOf('first line') < texts.indexOf('the key is *** here'));

	// The engine reads stdout and stderr apart, so which of the last two
	// it wrote last is its own.
	const tail = await linesNow('?tail=1');
	assert.equal(tail.lines.length, 1);
	assert.ok([`short ${SHORT} stays`, 'to stderr'].includes(tail.lines[0].text), tail.lines[0].text);
	const none = await linesNow('?tail=0');
	assert.deepEqual(none.lines, []);
	// since is exact (the engine's own is whole seconds): every line of that
	// millisecond on, and none before it.
	const since = res.lines.at(-1).time;
	const from = await linesNow(`?since=${since}`);
	assert.deepEqual(from.lines.map((l) => l.text), res.lines.filter((l) => l.time >= since).map((l) => l.text));
	const future = await linesNow(`?since=${new Date(Date.now() + 3600000).toISOString()}`);
	assert.deepEqual(future.lines, []);
});

test('follow=true streams the lines, then new ones, then the end when the container stops', { timeout: 60000 }, async () => {
	const c = await h.Conn.open(srv.port);
	await c.write(`GET /applications/${app}/logs?follow=true&tail=100 HTTP/1.1\r\nCookie: steward_session=${owner.cookie}\r\nHost: x\r\n\r\n`);
	assert.ok(await c.waitFor(() => c.text().includes('to stderr'), 10000 * h.SLACK), c.text());
	assert.ok(c.text().includes('text/event-stream'), c.text());
	assert.ok(!c.text().includes('after follow'));
	await touch('/tmp/go');
	assert.ok(await c.waitFor(() => c.text().includes('after follow'), 10000 * h.SLACK), c.text());
	await touch('/tmp/stop');
	const [res] = await c.responses(1, 15000 * h.SLACK);
	c.destroy();
	const body = res.text;
	assert.ok(!body.includes(SECRET), 'scrubbed on the stream too');
	const evs = events(body);
	const logs = evs.filter((e) => e.event === 'log').map((e) => JSON.parse(e.data));
	assert.deepEqual(logs.filter((l) => l.stream === 'stdout').map((l) => l.text),
		['first line', 'the key is *** here', `short ${SHORT} stays`, 'after follow ***', 'bye']);
	const end = evs.at(-1);
	assert.equal(end.event, 'end');
	assert.deepEqual(JSON.parse(end.data), { containerId: container, error: null });
});

test('a stopped application answers its newest container\'s lines', async () => {
	// The engine ends a follow as the program exits, and records the
	// container's state just after.
	let res = null;
	for (let i = 0; i < 100; i++) {
		res = await linesNow();
		if (res.containers[0]?.state !== 'running') break;
		await h.sleep(100);
	}
	assert.deepEqual(res.containers.map((c) => [c.id, c.state]), [[container, 'exited']]);
	assert.equal(res.lines.at(-1).text, 'bye');
});

test('an application without a container is 409 NO_CONTAINER', async () => {
	h.assertError(await call(srv, 'GET', `/applications/${empty}/logs`, owner), 409, 'NO_CONTAINER');
	h.assertError(await call(srv, 'GET', `/applications/${empty}/logs?follow=true`, owner), 409, 'NO_CONTAINER');
});

test('bad parameters are 422 with a field error each', async () => {
	const cases = [
		['?tail=-1', ['tail']],
		['?tail=5001', ['tail']],
		['?tail=01', ['tail']],
		['?tail=x', ['tail']],
		['?since=yesterday', ['since']],
		['?follow=yes', ['follow']],
		['?lines=3', ['lines']],
		['?tail=x&since=y&follow=1', ['follow', 'since', 'tail']],
	];
	for (const [q, fields] of cases) {
		const res = await call(srv, 'GET', `/applications/${app}/logs${q}`, owner);
		assert.deepEqual(Object.keys(h.assertError(res, 422, 'VALIDATION_FAILED').fields).sort(), fields, q);
	}
	h.assertError(await call(srv, 'GET', `/applications/not-a-uuid/logs`, owner), 404, 'NOT_FOUND');
});

test('another organization\'s application is not found', async () => {
	h.assertError(await call(srv, 'GET', `/applications/${app}/logs`, other), 404, 'NOT_FOUND');
});

test('the document describes the route, its parameters and events', async () => {
	const doc = (await h.request(srv.port, 'GET', '/docs')).json();
	const op = doc.paths['/applications/{id}/logs'].get;
	assert.deepEqual(op.parameters.filter((p) => p.in === 'query').map((p) => p.name), ['tail', 'since', 'follow']);
	for (const word of ['`log`', '`end`', 'NO_CONTAINER', '***', 'text/event-stream']) assert.ok(op.description.includes(word), word);
	assert.ok(op.responses['409'] && op.responses['422'] && op.responses['404']);
	assert.ok(doc.components.schemas.ContainerLogs && doc.components.schemas.ContainerLogLine);
});
