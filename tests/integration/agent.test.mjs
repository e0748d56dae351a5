// steward-agent against a control plane played by the npm `ws` package: a
// WebSocket implementation nobody here wrote. It checks the agent's
// handshake (path, x-agent-token, no cookie), its hello and host facts,
// heartbeats (protocol 1 echoed; protocol 2 its own), fragmented messages
// with a ping between the fragments (our client-side frame reader against
// ws's writer; ws's server-side reader checks every masked frame the agent
// sends), commands answered from the journal, reconnection after a drop and
// after a goaway's retry hint, and the slow back-off after a 401.
// Everything listens on 127.0.0.1.

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { createRequire } from 'node:module';
import { makeTempDir, skip, sleep, SLACK, cleanupAll, withTimeout } from './harness.mjs';

const buildDir = process.env.SW_BUILD_DIR;
if (!buildDir) skip('SW_BUILD_DIR is not set (ctest sets it)');
const AGENT = path.join(buildDir, 'steward-agent');
if (!fs.existsSync(AGENT)) skip(`${AGENT} does not exist (cmake --build ... --target steward-agent)`);
const require = createRequire(import.meta.url);
let WebSocketServer;
try {
	({ WebSocketServer } = require('ws'));
} catch {
	skip('the npm package ws is missing: npm ci --prefix tests/integration');
}

const TOKEN = 'sta_' + 'A'.repeat(43);
const WRONG = 'sta_' + 'B'.repeat(42) + 'A';

// A control plane: it accepts upgrades on /base/agent/connect with the
// right token (401 otherwise) and hands each socket to the test.
function controlPlane() {
	const wss = new WebSocketServer({ noServer: true });
	const cp = { upgrades: [], sockets: [], waiters: [], rejected: 0 };
	const server = http.createServer((req, res) => res.writeHead(404).end());
	server.on('upgrade', (req, socket, head) => {
		cp.upgrades.push({ url: req.url, headers: req.headers, at: Date.now() });
		if (cp.busy) {
			cp.busy--;
			socket.end('HTTP/1.1 503 Service Unavailable\r\nretry-after: 3\r\nconnection: close\r\ncontent-length: 0\r\n\r\n');
			return;
		}
		if (req.url !== '/base/agent/connect' || req.headers['x-agent-token'] !== TOKEN) {
			cp.rejected++;
			socket.end('HTTP/1.1 401 Unauthorized\r\ncontent-type: application/json\r\nconnection: close\r\ncontent-length: 2\r\n\r\n{}');
			return;
		}
		wss.handleUpgrade(req, socket, head, (ws) => {
			const conn = { ws, messages: [], msgWaiters: [], pongs: [], closed: null, at: Date.now() };
			ws.on('message', (data, isBinary) => {
				const m = { isBinary, json: JSON.parse(data.toString()) };
				const w = conn.msgWaiters.shift();
				if (w) w(m);
				else conn.messages.push(m);
			});
			ws.on('pong', (d) => conn.pongs.push(d.toString()));
			ws.on('close', (code) => { conn.closed = code; });
			ws.on('error', (e) => { conn.error = e; });
			const w = cp.waiters.shift();
			if (w) w(conn);
			else cp.sockets.push(conn);
		});
	});
	cp.close = () => new Promise((r) => { wss.close(); server.closeAllConnections(); server.close(r); });
	cp.listen = () => new Promise((r) => server.listen(0, '127.0.0.1', () => { cp.port = server.address().port; r(); }));
	return cp;
}

function nextConnection(cp, ms = 5000 * SLACK) {
	if (cp.sockets.length) return Promise.resolve(cp.sockets.shift());
	return withTimeout(new Promise((r) => cp.waiters.push(r)), ms, 'the agent to connect');
}

function nextMessage(conn, ms = 5000 * SLACK) {
	if (conn.messages.length) return Promise.resolve(conn.messages.shift());
	return withTimeout(new Promise((r) => conn.msgWaiters.push(r)), ms, 'a message from the agent');
}

const agents = [];
function startAgent(port, token, extra = {}) {
	const data = makeTempDir('sw-agent-');
	const proc = spawn(AGENT, [], {
		env: {
			PATH: process.env.PATH,
			STEWARD_URL: `http://127.0.0.1:${port}/base/`,
			STEWARD_AGENT_TOKEN: token,
			STEWARD_AGENT_DATA_DIR: data,
			METRICS_EBPF: '0',
			...extra,
		},
		stdio: ['ignore', 'pipe', 'pipe'],
	});
	let log = '';
	proc.stdout.on('data', (d) => { log += d; });
	proc.stderr.on('data', (d) => { log += d; });
	const a = { proc, data, log: () => log };
	agents.push(a);
	return a;
}

after(async () => {
	for (const a of agents) if (a.proc.exitCode === null) a.proc.kill('SIGTERM');
	await sleep(200);
	for (const a of agents) {
		if (a.proc.exitCode === null) a.proc.kill('SIGKILL');
		if (/ERROR: AddressSanitizer|runtime error: /.test(a.log())) throw new Error(`sanitizer report from steward-agent:\n${a.log()}`);
	}
	await cleanupAll();
});

const cp = controlPlane();
await cp.listen();

test('a bad setting stops the agent with a message naming the variable', async () => {
	for (const [env, name] of [
		[{ STEWARD_URL: 'http://10.1.2.3:8080' }, 'STEWARD_URL'],
		[{ STEWARD_URL: 'ftp://127.0.0.1' }, 'STEWARD_URL'],
		[{ STEWARD_AGENT_TOKEN: 'st_nope' }, 'STEWARD_AGENT_TOKEN'],
		[{ DOCKER_HOST: 'tcp://127.0.0.1:2375' }, 'DOCKER_HOST'],
		[{ HOST_PROC_PATH: '/does/not/exist' }, 'HOST_PROC_PATH'],
		[{ STEWARD_CA_FILE: '/does/not/exist.pem' }, 'STEWARD_CA_FILE'],
	]) {
		const a = startAgent(cp.port, TOKEN, env);
		const code = await new Promise((r) => a.proc.on('exit', r));
		assert.equal(code, 2, a.log());
		assert.match(a.log(), new RegExp(name), a.log());
	}
	assert.equal(cp.upgrades.length, 0);
});

let agent, conn, hello;

test('the agent dials with its token and says hello with the host facts', async () => {
	agent = startAgent(cp.port, TOKEN);
	conn = await nextConnection(cp);
	const up = cp.upgrades.at(-1);
	assert.equal(up.url, '/base/agent/connect');
	assert.equal(up.headers['x-agent-token'], TOKEN);
	assert.equal(up.headers.cookie, undefined);
	assert.equal(up.headers.authorization, undefined);
	const m = await nextMessage(conn);
	assert.equal(m.isBinary, false);
	hello = m.json;
	assert.equal(hello.type, 'hello');
	assert.match(hello.agentVersion, /^\d+\.\d+\.\d+$/);
	assert.equal(hello.protocolMin, 1);
	assert.equal(hello.protocolMax, 2);
	assert.match(hello.bootId, /^[0-9a-f-]{36}$/);
	assert.equal(hello.bootId, fs.readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim());
	assert.ok(hello.host.os.length > 0);
	assert.equal(hello.host.kernel, fs.readFileSync('/proc/sys/kernel/osrelease', 'utf8').trim());
	assert.ok(hello.host.arch.length > 0);
	assert.ok(hello.host.hostname.length > 0);
	assert.ok(hello.host.cores >= 1);
	assert.ok(hello.host.memoryBytes > 1 << 20);
	// Capabilities are the command kinds this build runs, in the set's
	// order: the driver's (the service tools and logs included),
	// metrics.sample and host.facts.
	assert.deepEqual(hello.capabilities, ['image.build', 'image.exists', 'image.list', 'image.remove', 'container.create',
		'container.start', 'container.stop', 'container.remove', 'container.list', 'container.inspect', 'container.logs', 'volume.create',
		'volume.remove', 'caddy.route.set', 'caddy.route.remove', 'caddy.state', 'service.dump',
		'service.restore', 'metrics.sample', 'host.facts', 'volume.list',
		'container.file', 'container.probe', 'port.free']);
});

test('heartbeats are answered with their sequence number', async () => {
	conn.ws.send(JSON.stringify({ type: 'welcome', connectionId: 'conn-1', protocol: 1, heartbeatMs: 1000 }));
	for (const seq of [1, 2, 3]) {
		conn.ws.send(JSON.stringify({ type: 'heartbeat', seq }));
		const m = await nextMessage(conn);
		assert.deepEqual(m.json, { type: 'heartbeat', seq });
	}
});

test('a message in fragments with a ping between them is read whole', async () => {
	const text = JSON.stringify({ type: 'heartbeat', seq: 77 });
	conn.ws.send(text.slice(0, 5), { fin: false });
	conn.ws.ping('between');
	conn.ws.send(text.slice(5, 12), { fin: false });
	conn.ws.send(text.slice(12), { fin: true });
	const m = await nextMessage(conn);
	assert.deepEqual(m.json, { type: 'heartbeat', seq: 77 });
	assert.deepEqual(conn.pongs, ['between']);
	assert.equal(conn.error, undefined);
});

test('commands: answered and journaled; a resend is answered without running again', async () => {
	// Every kind of the set is run by this build now, so the command that
	// is answered at once, with no ack (nothing started), is one that
	// expired on its way; its answer is journaled like any other.
	const cmd = { type: 'command', id: 'cmd-1', kind: 'container.logs', expiresAt: Date.now() - 1000, payload: { name: 'db' } };
	conn.ws.send(JSON.stringify(cmd));
	const first = (await nextMessage(conn)).json;
	assert.equal(first.type, 'result');
	assert.equal(first.id, 'cmd-1');
	assert.equal(first.ok, false);
	assert.equal(first.error.code, 'EXPIRED');
	// The same command again: the recorded result, and no second ack.
	conn.ws.send(JSON.stringify(cmd));
	assert.deepEqual((await nextMessage(conn)).json, first);
	// The same id for another command: refused.
	conn.ws.send(JSON.stringify({ ...cmd, kind: 'container.list', payload: {} }));
	const reused = (await nextMessage(conn)).json;
	assert.equal(reused.error.code, 'ID_REUSED');
	// Outside the closed set: refused by name, never run.
	conn.ws.send(JSON.stringify({ ...cmd, id: 'cmd-2', kind: 'shell.exec', payload: { argv: ['sh'] } }));
	const refused = (await nextMessage(conn)).json;
	assert.equal(refused.id, 'cmd-2');
	assert.equal(refused.error.code, 'INVALID_COMMAND');
	// Expired before it arrived.
	conn.ws.send(JSON.stringify({ ...cmd, id: 'cmd-3', expiresAt: Date.now() - 1000 }));
	const expired = (await nextMessage(conn)).json;
	assert.equal(expired.error.code, 'EXPIRED');
	assert.ok(fs.statSync(path.join(agent.data, 'journal.log')).size > 0);
});

test('image.build input: each chunk acknowledged with its credit, a resent chunk dropped, a gap or a context off its size and SHA-256 refused before any build, the refusal journaled', async () => {
	const data = crypto.randomBytes(1000);
	const sha = crypto.createHash('sha256').update(data).digest('hex');
	const b64 = (buf) => buf.toString('base64');
	const build = (id, contextSha256) => ({ type: 'command', id, kind: 'image.build', expiresAt: Date.now() + 60000,
		payload: { tag: 'steward/x:1', dockerfile: 'Dockerfile', contextBytes: 1000, contextSha256 } });
	const input = (id, seq, buf, last) => JSON.stringify({ type: 'input', id, seq, data: b64(buf), ...(last ? { last } : {}) });

	const wrong = build('build-1', crypto.createHash('sha256').update('other').digest('hex'));
	conn.ws.send(JSON.stringify(wrong));
	assert.deepEqual((await nextMessage(conn)).json, { type: 'ack', id: 'build-1' }, 'journaled and acknowledged on arrival');
	conn.ws.send(input('build-1', 0, data.subarray(0, 600)));
	assert.deepEqual((await nextMessage(conn)).json, { type: 'ack', id: 'build-1', inputTaken: 1 });
	conn.ws.send(input('build-1', 0, data.subarray(0, 600))); // resent: dropped (taken, it would overrun contextBytes)
	conn.ws.send(input('build-1', 1, data.subarray(600), true));
	assert.deepEqual((await nextMessage(conn)).json, { type: 'ack', id: 'build-1', inputTaken: 2 });
	const refused = (await nextMessage(conn)).json;
	assert.equal(refused.type, 'result');
	assert.equal(refused.ok, false);
	assert.equal(refused.error.code, 'BAD_DATA');
	assert.match(refused.error.message, /another size or SHA-256 than its payload says; nothing was run/);
	conn.ws.send(JSON.stringify(wrong));
	assert.deepEqual((await nextMessage(conn)).json, refused, 'the resent command gets its recorded result');

	conn.ws.send(JSON.stringify(build('build-2', sha)));
	assert.equal((await nextMessage(conn)).json.type, 'ack');
	conn.ws.send(input('build-2', 1, data));
	const gap = (await nextMessage(conn)).json;
	assert.equal(gap.error.code, 'BAD_DATA');
	assert.match(gap.error.message, /a chunk of the command's input was lost/);

	// A whole, matching context goes to the engine (none here): the build
	// ran and failed there, its result after its acks.
	conn.ws.send(JSON.stringify(build('build-3', sha)));
	assert.equal((await nextMessage(conn)).json.type, 'ack');
	conn.ws.send(input('build-3', 0, data, true));
	assert.deepEqual((await nextMessage(conn)).json, { type: 'ack', id: 'build-3', inputTaken: 1 });
	let m;
	do m = (await nextMessage(conn, 30000)).json; while (m.type === 'progress');
	assert.equal(m.type, 'result');
	assert.equal(m.id, 'build-3');
	assert.equal(m.ok, false);
});

test('the agent reconnects after the control plane drops it, and keeps its journal', async () => {
	const dropped = Date.now();
	conn.ws.terminate();
	conn = await nextConnection(cp, 10000 * SLACK);
	const waited = Date.now() - dropped;
	assert.ok(waited >= 900, `reconnected after ${waited} ms, before the 1 s floor`);
	const again = (await nextMessage(conn)).json;
	assert.equal(again.type, 'hello');
	assert.equal(again.bootId, hello.bootId);
	conn.ws.send(JSON.stringify({ type: 'welcome', connectionId: 'conn-2', protocol: 1, heartbeatMs: 1000 }));
	// cmd-1 again, now in time: its journaled answer, not a run.
	conn.ws.send(JSON.stringify({ type: 'command', id: 'cmd-1', kind: 'container.logs', expiresAt: Date.now() + 60000, payload: { name: 'db' } }));
	const r = (await nextMessage(conn)).json;
	assert.equal(r.type, 'result');
	assert.equal(r.error.code, 'EXPIRED');
});

test('a silent control plane is noticed after three heartbeat intervals', async () => {
	// heartbeatMs was 1000: nothing for 3 s and the agent dials again.
	const before = Date.now();
	const next = await nextConnection(cp, 15000 * SLACK);
	const waited = Date.now() - before;
	assert.ok(waited >= 3000, `redialed after ${waited} ms`);
	assert.equal((await nextMessage(next)).json.type, 'hello');
	conn = next;
	conn.ws.send(JSON.stringify({ type: 'welcome', connectionId: 'conn-3', protocol: 1, heartbeatMs: 60000 }));
});

test('a goaway with a retry hint: the agent closes with 1001 and returns within the hinted window', async () => {
	const sent = Date.now();
	conn.ws.send(JSON.stringify({ type: 'goaway', retryAfterMs: 4000 }));
	const next = await nextConnection(cp, 15000 * SLACK);
	const waited = Date.now() - sent;
	assert.equal(conn.closed, 1001);
	assert.ok(waited >= 1900 && waited <= 4000 + 1500 * SLACK, `returned after ${waited} ms`);
	assert.equal((await nextMessage(next)).json.type, 'hello');
	conn = next;
});

test('protocol 2: the agent sends its own heartbeats and stays on a control plane that sends nothing', async () => {
	// The hello offered 1 to 2; welcomed with 2 and 300 ms, the agent sends
	// heartbeats 1, 2, 3, ... on this connection. Ten of them span more than
	// the three silent intervals after which protocol 1 dials again.
	const n = cp.upgrades.length;
	conn.ws.send(JSON.stringify({ type: 'welcome', connectionId: 'conn-p2', protocol: 2, heartbeatMs: 300 }));
	for (let seq = 1; seq <= 10; seq++) {
		const m = await nextMessage(conn);
		assert.deepEqual(m.json, { type: 'heartbeat', seq });
	}
	assert.equal(conn.closed, null);
	assert.equal(cp.upgrades.length, n, 'no new dial');
});

test('a protocol error from the control plane gets a close with its code', async () => {
	conn.ws.send(JSON.stringify({ type: 'welcome', connectionId: 'conn-4', protocol: 1, heartbeatMs: 60000 }));
	// Invalid UTF-8 in a text message: ws sends what it is given.
	conn.ws.send(Buffer.from([0x7b, 0xed, 0xa0, 0x80, 0x7d]), { binary: false });
	await withTimeout((async () => { while (conn.closed === null) await sleep(20); })(), 5000 * SLACK, 'the close');
	assert.equal(conn.closed, 1007);
	conn = await nextConnection(cp, 10000 * SLACK);
	assert.equal((await nextMessage(conn)).json.type, 'hello');
});

test('a 503 with Retry-After: the agent returns within the hinted window', async () => {
	cp.busy = 1;
	const n = cp.upgrades.length;
	conn.ws.terminate();
	conn = await nextConnection(cp, 15000 * SLACK);
	assert.equal(cp.upgrades.length, n + 2, 'one refused dial, then the accepted one');
	const waited = cp.upgrades[n + 1].at - cp.upgrades[n].at;
	assert.ok(waited >= 1400 && waited <= 3000 + 1000 * SLACK, `returned ${waited} ms after the 503`);
	assert.equal((await nextMessage(conn)).json.type, 'hello');
	conn.ws.send(JSON.stringify({ type: 'welcome', connectionId: 'conn-5', protocol: 1, heartbeatMs: 60000 }));
});

test('a refused token (401) makes the agent back off for minutes', async () => {
	const before = cp.rejected;
	const a = startAgent(cp.port, WRONG);
	// Until the agent says how long it waits (not a fixed time: a loaded
	// machine may take longer to start it and make the attempt).
	await withTimeout((async () => { while (!/reconnecting in \d+ ms/.test(a.log())) await sleep(20); })(), 10000 * SLACK,
		'the agent to back off');
	assert.equal(cp.rejected - before, 1, 'one attempt, then a long wait');
	assert.match(a.log(), /refused the token/);
	assert.match(a.log(), /reconnecting in (\d{6,}) ms/);
	const ms = Number(a.log().match(/reconnecting in (\d+) ms/)[1]);
	assert.ok(ms >= 120000 && ms <= 600000, `waits ${ms} ms`);
	a.proc.kill('SIGTERM');
	const code = await new Promise((r) => a.proc.on('exit', r));
	assert.equal(code, 0);
});

test('SIGTERM: the agent says goodbye (1001) and exits 0', async () => {
	agent.proc.kill('SIGTERM');
	const code = await new Promise((r) => agent.proc.on('exit', r));
	assert.equal(code, 0);
	await withTimeout((async () => { while (conn.closed === null) await sleep(20); })(), 5000, 'the close');
	assert.equal(conn.closed, 1001);
	await cp.close();
});
