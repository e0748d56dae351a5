// GET /applications/:id/logs of an application on a REMOTE server: the real
// steward-agent reads the container's log from its own engine (a second
// dockerd) with the local driver's call (container.logs), the lines come
// back as the command's output, and the control plane scrubs them with the
// same scrubber as a local read. A container of the application on the
// remote engine prints known lines, one holding a variable's value: the
// answer has them in order with the value as ***; tail and since work;
// follow=true streams the lines written after the reader connects
// (container.logs with follow on the agent, its output crossing as the
// command's chunks) and closing the reader cancels the agent's command
// (its log says so, the row ends); a follow ends with the container; an
// agent follows at most 4 logs at once (a fifth ends saying so); a log of more than 4 MiB (5,000 lines of 1,000
// bytes) arrives through the channel's output chunks cut at the same cap,
// truncated: true, its lines whole and in order; a follow goes on while
// the server reads OFFLINE only because the holder's lastSeenAt write is
// held up (a row lock taken here: the session lives, the agent is not
// gone); with the agent gone, 409 SERVER_NOT_CONNECTED.

import { test, after } from 'node:test';
import { spawn } from 'node:child_process';
import assert from 'node:assert/strict';
import * as h from './harness.mjs';
import { ok } from './identity.mjs';
import { world, BASE_IMAGE } from './deploy_world.mjs';
import { agentBinary, remoteWorld } from './remote_world.mjs';

agentBinary();
const w = await world({ STEWARD_AGENT_HEARTBEAT_MS: 500, METRICS_EBPF: '0' }, { tsan: true });
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

// The events of an SSE body: [{event, data}], comments skipped.
function events(text) {
	const out = [];
	for (const block of text.split('\n\n')) {
		let event = 'message', any = false;
		const data = [];
		for (const line of block.split('\n')) {
			if (!line || line.startsWith(':')) continue;
			any = true;
			const i = line.indexOf(':');
			if (line.slice(0, i) === 'event') event = line.slice(i + 2);
			else if (line.slice(0, i) === 'data') data.push(line.slice(i + 2));
		}
		if (any) out.push({ event, data: data.join('\n') });
	}
	return out;
}

// A container of its own application that prints, waits for /tmp/go (made
// by an exec on the second engine), prints again, waits for /tmp/stop.
const followApp = await ok(w.call('POST', '/applications', { body: { name: 'far-follow', environmentId: project.environments[0].id, serverId: server.id } }), 201);
await ok(w.call('PUT', `/applications/${followApp.id}/variables/API_KEY`, { body: { value: SECRET } }), 201);
const followCreate = await second.request('POST', '/containers/create', {
	Image: BASE_IMAGE, Labels: { 'steward.application': followApp.id }, HostConfig: { NetworkMode: 'none' },
	Cmd: ['sh', '-c', [
		'echo "before follow"',
		'while [ ! -e /tmp/go ]; do sleep 0.05; done',
		`echo "after follow ${SECRET}"`,
		'while [ ! -e /tmp/stop ]; do sleep 0.05; done',
		'echo "bye"',
	].join('; ')],
});
assert.equal(followCreate.status, 201, followCreate.text);
const followContainer = followCreate.json().Id;
assert.equal((await second.request('POST', `/containers/${followContainer}/start`)).status, 204);
async function touch(file) {
	const ex = await second.request('POST', `/containers/${followContainer}/exec`, { Cmd: ['touch', file] });
	assert.equal(ex.status, 201, ex.text);
	const st = await second.request('POST', `/exec/${ex.json().Id}/start`, { Detach: true });
	assert.equal(st.status, 200, st.text);
}
const followRequest = (query) => `GET /applications/${followApp.id}/logs?follow=true${query} HTTP/1.1\r\nCookie: steward_session=${w.owner.cookie}\r\nHost: x\r\n\r\n`;
const logCommands = async () => (await w.sql(`SELECT id || ' ' || status FROM agent_commands WHERE server_id = '${server.id}' AND kind = 'container.logs' ORDER BY created_at`)).trim().split('\n').filter(Boolean).map((l) => l.split(' '));

test('follow=true on a remote server: lines written after the reader connects arrive, scrubbed; leaving stops the agent\'s command', { timeout: 90000 }, async () => {
	const before = (await logCommands()).length;
	const c = await h.Conn.open(w.srv.port);
	await c.write(followRequest('&tail=100'));
	assert.ok(await c.waitFor(() => c.text().includes('before follow'), 20000 * h.SLACK), c.text());
	assert.ok(c.text().includes('text/event-stream'), c.text());
	assert.ok(!c.text().includes('after follow'));
	await touch('/tmp/go');
	assert.ok(await c.waitFor(() => c.text().includes('after follow'), 20000 * h.SLACK), c.text());
	const body = c.text();
	assert.ok(!body.includes(SECRET), 'scrubbed on the stream too');
	// The stream is still open (chunked): each event is one chunk, its data line whole.
	const logs = [...body.matchAll(/event: log\ndata: (\{[^\n]*\})\n/g)].map((m) => JSON.parse(m[1]));
	assert.deepEqual(logs.map((l) => [l.containerId, l.stream, l.text]),
		[[followContainer, 'stdout', 'before follow'], [followContainer, 'stdout', 'after follow ***']]);
	const cmds = await logCommands();
	assert.equal(cmds.length, before + 1);
	const [id] = cmds.at(-1);
	const deadline = Date.now() + 20000 * h.SLACK;
	// The agent's ack is written on its own (the lines may be stored first).
	while ((await logCommands()).find(([x]) => x === id)[1] !== 'ACKED') {
		assert.ok(Date.now() < deadline, 'the agent is following: its command ACKED');
		await h.sleep(50);
	}

	// The reader leaves: the control plane cancels, the agent's command ends.
	c.destroy();
	while (!(agent.log().includes(`command ${id} cancelled by the control plane`) &&
		agent.log().includes(`container.logs follow of ${followContainer} ended by its cancel`))) {
		assert.ok(Date.now() < deadline, `the agent stopped following; its log:\n${agent.log()}`);
		await h.sleep(50);
	}
	for (;;) {
		const [, now] = (await logCommands()).find(([x]) => x === id);
		if (now === 'SUCCEEDED' || now === 'FAILED') break;
		assert.ok(Date.now() < deadline, `the command's row ended (it is ${now})`);
		await h.sleep(50);
	}
});

test('a remote follow ends with the container, with an end event', { timeout: 90000 }, async () => {
	const c = await h.Conn.open(w.srv.port);
	await c.write(followRequest('&tail=0'));
	// The agent follows once the command row is ACKED.
	const deadline = Date.now() + 20000 * h.SLACK;
	for (;;) {
		const cmds = await logCommands();
		if (cmds.at(-1)[1] === 'ACKED') break;
		assert.ok(Date.now() < deadline, 'the agent took the follow');
		await h.sleep(50);
	}
	await touch('/tmp/stop');
	const [res] = await c.responses(1, 20000 * h.SLACK);
	c.destroy();
	const evs = events(res.text);
	assert.deepEqual(evs.filter((e) => e.event === 'log').map((e) => JSON.parse(e.data).text), ['bye']);
	assert.equal(evs.at(-1).event, 'end');
	assert.deepEqual(JSON.parse(evs.at(-1).data), { containerId: followContainer, error: null });
});

test('an agent follows at most 4 container logs at once: a fifth follow ends at once saying so; closing the readers ends them all', { timeout: 90000 }, async () => {
	// The first application's container keeps running (sleep 600).
	const req = `GET /applications/${app.id}/logs?follow=true&tail=1 HTTP/1.1\r\nCookie: steward_session=${w.owner.cookie}\r\nHost: x\r\n\r\n`;
	const acked = async () => (await logCommands()).filter(([, st]) => st === 'ACKED').map(([id]) => id);
	const readers = [];
	for (let i = 0; i < 4; i++) {
		const c = await h.Conn.open(w.srv.port);
		await c.write(req);
		readers.push(c);
		assert.ok(await c.waitFor(() => c.text().includes('later line'), 20000 * h.SLACK), c.text());
	}
	const deadline = Date.now() + 20000 * h.SLACK;
	let following;
	while ((following = await acked()).length !== 4) {
		assert.ok(Date.now() < deadline, `four follows on the agent (${following.length})`);
		await h.sleep(50);
	}
	const fifth = await h.Conn.open(w.srv.port);
	await fifth.write(req);
	const [res] = await fifth.responses(1, 20000 * h.SLACK);
	fifth.destroy();
	const end = events(res.text).at(-1);
	assert.equal(end.event, 'end');
	assert.match(JSON.parse(end.data).error, /follows as many container logs as it may/);
	for (const c of readers) c.destroy();
	for (;;) {
		const rows = await logCommands();
		if (following.every((id) => ['SUCCEEDED', 'FAILED'].includes(rows.find(([x]) => x === id)[1])) &&
			following.every((id) => agent.log().includes(`command ${id} cancelled by the control plane`))) break;
		assert.ok(Date.now() < deadline + 20000 * h.SLACK, `the four follows ended; agent:\n${agent.log()}`);
		await h.sleep(50);
	}
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

test('a follow goes on while only the holder\'s lastSeenAt write is held up: the agent is not called gone', { timeout: 90000 }, async () => {
	const ticker = await ok(w.call('POST', '/applications', { body: { name: 'far-ticker', environmentId: project.environments[0].id, serverId: server.id } }), 201);
	const made = await second.request('POST', '/containers/create', {
		Image: BASE_IMAGE, Labels: { 'steward.application': ticker.id }, HostConfig: { NetworkMode: 'none' },
		Cmd: ['sh', '-c', 'i=0; while true; do echo "tick $i"; i=$((i+1)); sleep 0.2; done'],
	});
	assert.equal(made.status, 201, made.text);
	assert.equal((await second.request('POST', `/containers/${made.json().Id}/start`)).status, 204);
	const c = await h.Conn.open(w.srv.port);
	await c.write(`GET /applications/${ticker.id}/logs?follow=true&tail=0 HTTP/1.1\r\nCookie: steward_session=${w.owner.cookie}\r\nHost: x\r\n\r\n`);
	const ticks = () => (c.text().match(/"text":"tick \d+"/g) || []).length;
	assert.ok(await c.waitFor(() => ticks() > 0, 20000 * h.SLACK), c.text());

	// A session here holds the server's row: the holder's lastSeenAt
	// UPDATE waits on it (as behind a commit the disk holds up), so the
	// server reads OFFLINE after three heartbeats while the agent and its
	// session are alive.
	const holder = spawn('psql', ['-XAtq', '-v', 'ON_ERROR_STOP=1', w.srv.env.DATABASE_URL], { stdio: ['pipe', 'pipe', 'pipe'] });
	let out = '';
	holder.stdout.on('data', (d) => { out += d; });
	holder.stderr.on('data', (d) => { out += d; });
	const exited = new Promise((resolve) => holder.once('exit', resolve));
	holder.stdin.write(`BEGIN;\nSELECT 'held' FROM servers WHERE id = '${server.id}' FOR UPDATE;\n`);
	try {
		const deadline = Date.now() + 20000 * h.SLACK;
		while (!out.includes('held')) {
			assert.ok(Date.now() < deadline, `the row held: ${out}`);
			await h.sleep(20);
		}
		await waitStatus('OFFLINE', 20000);
		// Read OFFLINE, the follow's waiter goes on: three more lines come
		// (the old waiter ended the stream at its next poll, "disconnected").
		const seen = ticks();
		assert.ok(await c.waitFor(() => ticks() >= seen + 3, 20000 * h.SLACK), c.text());
		assert.doesNotMatch(c.text(), /event: end/);
		assert.equal((await ok(w.call('GET', `/servers/${server.id}`))).status, 'OFFLINE', 'still read OFFLINE meanwhile');
	} finally {
		holder.stdin.end('COMMIT;\n');
		await exited;
	}
	await waitStatus('ONLINE');
	const after = ticks();
	assert.ok(await c.waitFor(() => ticks() >= after + 3, 20000 * h.SLACK), c.text());
	assert.doesNotMatch(c.text(), /event: end/);
	c.destroy();
});

test('with the agent gone, 409 SERVER_NOT_CONNECTED', { timeout: 60000 }, async () => {
	agent.kill('SIGKILL');
	await waitStatus('OFFLINE', 30000);
	h.assertError(await w.call('GET', `/applications/${app.id}/logs`), 409, 'SERVER_NOT_CONNECTED');
});
