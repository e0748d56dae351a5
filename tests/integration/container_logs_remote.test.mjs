// GET /applications/:id/logs of an application on a REMOTE server: the real
// steward-agent reads the container's log from its own engine (a second
// dockerd) with the local driver's call (container.logs), the lines come
// back as the command's output, and the control plane scrubs them with the
// same scrubber as a local read. A container of the application on the
// remote engine prints known lines, one holding a variable's value: the
// answer has them in order with the value as ***; tail and since work;
// follow=true on a remote server is 409 SERVER_NOT_CONNECTED with a
// sentence saying so; a log of more than 4 MiB (5,000 lines of 1,000
// bytes) arrives through the channel's output chunks cut at the same cap,
// truncated: true, its lines whole and in order; with the agent gone, 409
// SERVER_NOT_CONNECTED.

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import * as h from './harness.mjs';
import { ok } from './identity.mjs';
import { world, BASE_IMAGE } from './deploy_world.mjs';
import { agentBinary, remoteWorld } from './remote_world.mjs';

agentBinary();
const w = await world({ STEWARD_AGENT_HEARTBEAT_MS: 500, METRICS_EBPF: '0' });
const { second, server, startAgent } = await remoteWorld(w);
after(async () => { await h.cleanupAll(); });

const agent = startAgent();
async function waitStatus(status, timeoutMs = 15000) {
	const deadline = Date.now() + timeoutMs * h.SLACK;
	for (;;) {
		const s = await ok(w.call('GET', `/servers/${server.id}`));
		if (s.status === status) return s;
		if (Date.now() > deadline) assert.fail(`the server is ${s.status}, not ${status}; agent:\n${agent.log()}`);
		await h.sleep(100);
	}
}
await waitStatus('ONLINE');

const project = await ok(w.call('POST', '/projects', { body: { name: 'remote-logs' } }), 201);
const app = await ok(w.call('POST', '/applications', { body: { name: 'far-talker', environmentId: project.environments[0].id, serverId: server.id } }), 201);
const SECRET = 'sk-remote-0123456789abcdef';
await ok(w.call('PUT', `/applications/${app.id}/variables/API_KEY`, { body: { value: SECRET } }), 201);

// The container prints its lines, then waits (sleep) so it stays running.
const script = [
	'echo "first line"',
	`echo "the key is ${SECRET} here"`,
	'echo "to stderr" >&2',
	'sleep 1.2',
	'echo "later line"',
	'exec sleep 600',
].join('; ');
const create = await second.request('POST', '/containers/create', {
	Image: BASE_IMAGE, Cmd: ['sh', '-c', script], Labels: { 'steward.application': app.id },
	HostConfig: { NetworkMode: 'none' },
});
assert.equal(create.status, 201, create.text);
const container = create.json().Id;
assert.equal((await second.request('POST', `/containers/${container}/start`)).status, 204);

const linesNow = (query = '') => ok(w.call('GET', `/applications/${app.id}/logs${query}`));

test('the remote container\'s lines come through its agent, the variable value scrubbed; tail and since work', { timeout: 60000 }, async () => {
	let res = null;
	const deadline = Date.now() + 20000 * h.SLACK;
	for (;;) {
		res = await linesNow();
		if (res.lines.some((l) => l.text === 'later line') || Date.now() > deadline) break;
		await h.sleep(100);
	}
	assert.equal(res.applicationId, app.id);
	assert.deepEqual(res.containers.map((c) => [c.id, c.state]), [[container, 'running']]);
	assert.equal(res.truncated, false);
	assert.deepEqual(res.lines.filter((l) => l.stream === 'stdout').map((l) => l.text),
		['first line', 'the key is *** here', 'later line']);
	assert.deepEqual(res.lines.filter((l) => l.stream === 'stderr').map((l) => l.text), ['to stderr']);
	for (const l of res.lines) {
		assert.equal(l.containerId, container);
		assert.match(l.time, h.TS);
	}
	assert.ok(!JSON.stringify(res).includes(SECRET), 'the value never leaves the control plane');

	const tail = await linesNow('?tail=1');
	assert.deepEqual(tail.lines.map((l) => l.text), ['later line']);
	assert.deepEqual((await linesNow('?tail=0')).lines, []);
	// since: the lines of that millisecond on, none before (the 1.2 s pause
	// puts the last line in a later second than the first three).
	const since = res.lines.at(-1).time;
	const from = await linesNow(`?since=${since}`);
	assert.deepEqual(from.lines.map((l) => l.text), res.lines.filter((l) => l.time >= since).map((l) => l.text));
	assert.deepEqual(from.lines.map((l) => l.text), ['later line']);
	const future = await linesNow(`?since=${new Date(Date.now() + 3600000).toISOString()}`);
	assert.deepEqual(future.lines, []);
});

test('follow=true on a remote server is 409 SERVER_NOT_CONNECTED, saying it is not available yet', async () => {
	const res = await w.call('GET', `/applications/${app.id}/logs?follow=true`);
	const body = h.assertError(res, 409, 'SERVER_NOT_CONNECTED');
	assert.match(body.message, /Following a remote server's container logs is not available yet/);
});

test('a log over 4 MiB comes through the channel whole up to the cap, truncated', { timeout: 120000 }, async () => {
	const big = await ok(w.call('POST', '/applications', { body: { name: 'far-big', environmentId: project.environments[0].id, serverId: server.id } }), 201);
	const LINES = 5000;
	const c = await second.request('POST', '/containers/create', {
		Image: BASE_IMAGE, Labels: { 'steward.application': big.id }, HostConfig: { NetworkMode: 'none' },
		Cmd: ['sh', '-c', `L=$(printf '%994s' '' | tr ' ' x); i=0; while [ $i -lt ${LINES} ]; do echo "$(printf '%05d' $i) $L"; i=$((i+1)); done; echo done; exec sleep 600`],
	});
	assert.equal(c.status, 201, c.text);
	assert.equal((await second.request('POST', `/containers/${c.json().Id}/start`)).status, 204);
	// Written: the last line is there once tail=1 shows it.
	const deadline = Date.now() + 30000 * h.SLACK;
	for (;;) {
		const last = await ok(w.call('GET', `/applications/${big.id}/logs?tail=1`));
		if (last.lines[0]?.text === 'done') break;
		assert.ok(Date.now() < deadline, 'the container wrote its lines');
		await h.sleep(100);
	}
	const res = await ok(w.call('GET', `/applications/${big.id}/logs?tail=5000`));
	assert.equal(res.truncated, true);
	// The cap counts each line's JSON object, separators left out.
	const bytes = res.lines.reduce((n, l) => n + JSON.stringify(l).length, 0);
	assert.ok(bytes <= 4 * 1024 * 1024, `${bytes} bytes of lines`);
	assert.ok(res.lines.length > 3000 && res.lines.length < 5000, `${res.lines.length} lines`);
	// tail=5000 of 5001 lines: from line 00001 on, each whole, in order.
	res.lines.forEach((l, i) => assert.equal(l.text, `${String(i + 1).padStart(5, '0')} ${'x'.repeat(994)}`));
});

test('with the agent gone, 409 SERVER_NOT_CONNECTED', { timeout: 60000 }, async () => {
	agent.kill('SIGKILL');
	await waitStatus('OFFLINE', 30000);
	h.assertError(await w.call('GET', `/applications/${app.id}/logs`), 409, 'SERVER_NOT_CONNECTED');
});
