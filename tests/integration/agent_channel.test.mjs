// The control plane's side of the agent channel, with the real
// steward-agent binary and raw sockets: /agent/connect refuses a missing,
// unknown or rotated token with 401 before any upgrade; the server goes
// PENDING -> ONLINE with the hello's facts on its record, OFFLINE when the
// agent dies or stops answering heartbeats (protocol 1) or sending its own
// (protocol 2, where the control plane sends none); rotation and deletion cut a
// live agent within a second, also when another stewardd replica on the
// same PostgreSQL holds it (LISTEN/NOTIFY); protocol violations close with
// the right code. Heartbeats every 300 ms (STEWARD_AGENT_HEARTBEAT_MS, a
// test setting honoured only with STEWARD_ENV=test).

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import * as h from './harness.mjs';
import { call, ok, setup } from './identity.mjs';
const { TS, SLACK } = h;

const buildDir = process.env.SW_BUILD_DIR;
if (!buildDir) h.skip('SW_BUILD_DIR is not set (ctest sets it)');
const AGENT = path.join(buildDir, 'steward-agent');
if (!fs.existsSync(AGENT)) h.skip(`${AGENT} does not exist (cmake --build ... --target steward-agent)`);

let WebSocket = null;
try {
	({ WebSocket } = createRequire(import.meta.url)('ws'));
} catch {
	// the npm ws test below is skipped: npm ci --prefix tests/integration
}

const HB = 300;
h.stewarddPath();
const pg = await h.startPostgres();
const env = { STEWARD_THREADS: 2, STEWARD_AGENT_HEARTBEAT_MS: HB };
const srv = await h.startStewardd({ db: pg, env });
after(h.cleanupAll);
const owner = await setup(srv);

async function addServer(name) {
	const s = await ok(call(srv, 'POST', '/servers', owner, { body: { name } }), 201);
	return s;
}
const getServer = (id, on = srv) => ok(call(on, 'GET', `/servers/${id}`, owner));

async function waitStatus(id, status, timeoutMs) {
	const t0 = Date.now();
	let s;
	while (Date.now() - t0 < timeoutMs) {
		s = await getServer(id);
		if (s.status === status) return { server: s, ms: Date.now() - t0 };
		await h.sleep(50);
	}
	assert.fail(`server ${id} is ${s?.status}, not ${status}, after ${timeoutMs} ms`);
}

// The real agent, started from the agentCommand line POST /servers gave.
const agents = [];
function startAgent(command, over = {}) {
	const m = /^STEWARD_URL='([^']+)' STEWARD_AGENT_TOKEN='(sta_[A-Za-z0-9_-]{43})' steward-agent$/.exec(command);
	assert.ok(m, `agentCommand: ${command}`);
	const dataDir = h.makeTempDir('sw-agent-');
	const proc = spawn(AGENT, [], {
		env: { PATH: process.env.PATH, STEWARD_URL: m[1], STEWARD_AGENT_TOKEN: m[2], STEWARD_AGENT_DATA_DIR: dataDir,
			ASAN_OPTIONS: process.env.ASAN_OPTIONS || '', ...over },
		stdio: ['ignore', 'pipe', 'pipe'],
	});
	const a = { proc, lines: [], waiters: [] };
	for (const stream of [proc.stdout, proc.stderr]) {
		let partial = '';
		stream.setEncoding('utf8');
		stream.on('data', (chunk) => {
			const parts = (partial + chunk).split('\n');
			partial = parts.pop();
			for (const line of parts) {
				a.lines.push({ line, t: Date.now() });
				if (process.env.SW_TEST_VERBOSE) process.stderr.write(`[agent] ${line}\n`);
				for (const w of a.waiters.slice()) w();
			}
		});
	}
	a.waitLine = (re, timeoutMs, from = 0) => new Promise((resolve, reject) => {
		const check = () => {
			const hit = a.lines.slice(from).find((l) => re.test(l.line));
			if (hit) {
				a.waiters.splice(a.waiters.indexOf(check), 1);
				clearTimeout(timer);
				resolve(hit);
			}
		};
		const timer = setTimeout(() => {
			a.waiters.splice(a.waiters.indexOf(check), 1);
			reject(new Error(`agent: no line ${re} in ${timeoutMs} ms:\n${a.lines.map((l) => l.line).join('\n')}`));
		}, timeoutMs);
		a.waiters.push(check);
		check();
	});
	a.exited = new Promise((resolve) => proc.once('exit', (code, signal) => resolve({ code, signal })));
	agents.push(a);
	return a;
}
after(async () => {
	for (const a of agents) if (a.proc.exitCode === null && a.proc.signalCode === null) a.proc.kill('SIGKILL');
});

// ---- a raw WebSocket client ----

function frame(opcode, payload, { mask = true, fin = true, len = null } = {}) {
	const data = Buffer.from(payload);
	const n = len ?? data.length;
	let head;
	if (n < 126) head = Buffer.from([(fin ? 0x80 : 0) | opcode, (mask ? 0x80 : 0) | n]);
	else if (n < 65536) {
		head = Buffer.alloc(4);
		head[0] = (fin ? 0x80 : 0) | opcode;
		head[1] = (mask ? 0x80 : 0) | 126;
		head.writeUInt16BE(n, 2);
	} else {
		head = Buffer.alloc(10);
		head[0] = (fin ? 0x80 : 0) | opcode;
		head[1] = (mask ? 0x80 : 0) | 127;
		head.writeBigUInt64BE(BigInt(n), 2);
	}
	if (!mask) return Buffer.concat([head, data]);
	const key = crypto.randomBytes(4);
	const masked = Buffer.from(data.map((b, i) => b ^ key[i % 4]));
	return Buffer.concat([head, key, masked]);
}
const text = (obj) => frame(0x1, typeof obj === 'string' ? obj : JSON.stringify(obj));

// Dials /agent/connect; resolves once the answer's head is in.
function dial(port, headers) {
	return new Promise((resolve, reject) => {
		const sock = net.connect(port, '127.0.0.1');
		const c = { sock, buf: Buffer.alloc(0), closed: false, status: 0, head: '', waiters: [] };
		const key = crypto.randomBytes(16).toString('base64');
		c.accept = crypto.createHash('sha1').update(key + '258EAFA5-E914-47DA-95CA-C5AB0DC85B11').digest('base64');
		const lines = ['GET /agent/connect HTTP/1.1', `Host: 127.0.0.1:${port}`, 'Upgrade: websocket', 'Connection: Upgrade',
			`Sec-WebSocket-Key: ${key}`, 'Sec-WebSocket-Version: 13'];
		for (const [k, v] of Object.entries(headers)) if (v !== null) lines.push(`${k}: ${v}`);
		sock.on('connect', () => sock.write(lines.join('\r\n') + '\r\n\r\n'));
		sock.on('data', (d) => {
			c.buf = Buffer.concat([c.buf, d]);
			if (!c.status) {
				const end = c.buf.indexOf('\r\n\r\n');
				if (end < 0) return;
				c.head = c.buf.subarray(0, end).toString();
				c.status = Number(/^HTTP\/1\.1 (\d{3})/.exec(c.head)[1]);
				c.buf = c.buf.subarray(end + 4);
				resolve(c);
			}
			for (const w of c.waiters.slice()) w();
		});
		sock.on('close', () => {
			c.closed = true;
			if (!c.status) resolve(c);
			for (const w of c.waiters.slice()) w();
		});
		sock.on('error', () => {});
		setTimeout(() => reject(new Error('no answer to the upgrade')), 5000).unref();
	});
}

// The frames the server sent so far: {opcode, payload}.
function frames(c) {
	const out = [];
	let b = c.buf;
	while (b.length >= 2) {
		let n = b[1] & 0x7f;
		let off = 2;
		if (n === 126) { if (b.length < 4) break; n = b.readUInt16BE(2); off = 4; }
		else if (n === 127) { if (b.length < 10) break; n = Number(b.readBigUInt64BE(2)); off = 10; }
		assert.equal(b[1] & 0x80, 0, 'a server frame is never masked');
		if (b.length < off + n) break;
		out.push({ opcode: b[0] & 0x0f, payload: b.subarray(off, off + n) });
		b = b.subarray(off + n);
	}
	return out;
}

function waitFor(c, pred, timeoutMs, what) {
	return new Promise((resolve, reject) => {
		const check = () => {
			const v = pred();
			if (v) {
				c.waiters.splice(c.waiters.indexOf(check), 1);
				clearTimeout(timer);
				resolve(v);
			}
		};
		const timer = setTimeout(() => {
			c.waiters.splice(c.waiters.indexOf(check), 1);
			reject(new Error(`${what}: not within ${timeoutMs} ms (closed=${c.closed}, frames=${JSON.stringify(frames(c).map((f) => [f.opcode, f.payload.toString()]))})`));
		}, timeoutMs);
		c.waiters.push(check);
		check();
	});
}

// Resolves with the close code the server sent, once it closed the socket.
async function closeCode(c, timeoutMs = 5000) {
	const f = await waitFor(c, () => frames(c).find((x) => x.opcode === 0x8), timeoutMs, 'a close frame');
	await waitFor(c, () => c.closed, timeoutMs, 'the socket closed');
	return f.payload.length >= 2 ? f.payload.readUInt16BE(0) : 1005;
}

const messages = (c) => frames(c).filter((f) => f.opcode === 0x1).map((f) => JSON.parse(f.payload.toString()));

const HELLO = {
	type: 'hello', agentVersion: 'raw/1', protocolMin: 1, protocolMax: 1, bootId: 'boot-1',
	host: { os: 'Raw OS', kernel: '6.1.0', arch: 'x86_64', hostname: 'raw-host', cores: 2, memoryBytes: 1024 },
	capabilities: [],
};

// ---- the tests ----

test('POST /servers answers the line that starts the agent; the server is PENDING until its hello', async () => {
	const s = await addServer('web-1');
	assert.equal(s.status, 'PENDING');
	assert.equal(s.agentCommand, `STEWARD_URL='http://127.0.0.1:${srv.port}' STEWARD_AGENT_TOKEN='${s.agentToken}' steward-agent`);
	for (const k of ['agentVersion', 'agentProtocol', 'agentBootId', 'hostFacts', 'agentCapabilities', 'lastSeenAt'])
		assert.equal(s[k], null, k);
	const got = await getServer(s.id);
	assert.equal(got.agentCommand, undefined, 'the token and its command line are shown once');
	assert.equal(got.agentToken, undefined);
	// A connection that upgraded but never said hello leaves it PENDING.
	const c = await dial(srv.port, { 'x-agent-token': s.agentToken });
	assert.equal(c.status, 101);
	assert.match(c.head, new RegExp(`sec-websocket-accept: ${c.accept.replace(/[+/]/g, '\\$&')}`, 'i'));
	assert.equal((await getServer(s.id)).status, 'PENDING');
	c.sock.destroy();
});

test('missing, unknown, cookie or query tokens: 401 in the envelope, no 101, connection closed', async () => {
	const s = await addServer('web-2');
	const well = 'sta_' + 'A'.repeat(43);
	const cases = [
		['missing', {}, '/agent/connect'],
		['malformed', { 'x-agent-token': 'sta_short' }, '/agent/connect'],
		['unknown', { 'x-agent-token': well }, '/agent/connect'],
		['a cookie', { Cookie: `steward_session=${s.agentToken}; agent_token=${s.agentToken}` }, '/agent/connect'],
		['the query', {}, `/agent/connect?token=${s.agentToken}&x-agent-token=${s.agentToken}`],
		['a user session', { Authorization: `Bearer ${owner.token || 'st_x'}`, Cookie: `steward_session=${owner.cookie}` }, '/agent/connect'],
	];
	for (const [why, headers, target] of cases) {
		const key = crypto.randomBytes(16).toString('base64');
		const hs = { Upgrade: 'websocket', Connection: 'Upgrade', 'Sec-WebSocket-Key': key, 'Sec-WebSocket-Version': '13', ...headers };
		const r = await h.raw(srv.port, h.buildRequest(srv.port, 'GET', target, { headers: hs }));
		assert.ok(!/^HTTP\/1\.1 101/m.test(r.text), `${why}: no 101`);
		h.assertRefusedAndClosed(r, 401, 'UNAUTHENTICATED');
	}
	// The right token without a WebSocket upgrade: 400, no 101, closed.
	const r = await h.raw(srv.port, h.buildRequest(srv.port, 'GET', '/agent/connect', { headers: { 'x-agent-token': s.agentToken } }));
	h.assertRefusedAndClosed(r, 400, 'BAD_REQUEST');
	assert.equal((await getServer(s.id)).status, 'PENDING');
});

test('the real agent: PENDING -> ONLINE with its facts; SIGKILL -> OFFLINE; silence -> dropped after three heartbeats', async () => {
	const s = await addServer('web-3');
	const a = startAgent(s.agentCommand);
	const { server: on } = await waitStatus(s.id, 'ONLINE', 10000 * SLACK);
	await a.waitLine(/agent: connected as [0-9a-f-]{36} \(protocol 2, heartbeat 300 ms\)/, 5000);
	assert.equal(on.agentProtocol, 2);
	assert.match(on.agentVersion, /^\d+\.\d+\.\d+/);
	assert.match(on.agentBootId, /^[0-9a-f-]{36}$/);
	assert.equal(on.agentBootId, fs.readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim());
	const arch = { x64: 'x86_64', arm64: 'aarch64' }[process.arch] ?? process.arch;
	assert.equal(on.hostFacts.arch, arch);
	assert.equal(on.hostFacts.kernel, os.release());
	assert.equal(on.hostFacts.cores, os.cpus().length);
	assert.ok(on.hostFacts.memoryBytes > 0 && Math.abs(on.hostFacts.memoryBytes - os.totalmem()) < 4096 * 1024);
	assert.equal(typeof on.hostFacts.os, 'string');
	assert.equal(typeof on.hostFacts.hostname, 'string');
	assert.ok(Array.isArray(on.agentCapabilities));
	assert.match(on.agentConnectedAt, TS);
	assert.match(on.lastSeenAt, TS);
	// Heartbeats keep lastSeenAt fresh: past four heartbeats it has moved
	// and the server reads ONLINE. (One read may find the holder's write
	// of lastSeenAt late on a loaded machine, and the server OFFLINE for
	// that moment, as the product means it to: a read within the bound
	// must show both.)
	await h.sleep(4 * HB);
	let later;
	for (const t0 = Date.now(); Date.now() - t0 < 10000 * SLACK; await h.sleep(50)) {
		later = await getServer(s.id);
		if (later.status === 'ONLINE' && Date.parse(later.lastSeenAt) > Date.parse(on.lastSeenAt)) break;
	}
	assert.equal(later.status, 'ONLINE');
	assert.ok(Date.parse(later.lastSeenAt) > Date.parse(on.lastSeenAt), 'lastSeenAt moves with the heartbeats');
	const listed = await ok(call(srv, 'GET', '/servers?status=ONLINE', owner));
	assert.ok(listed.some((x) => x.id === s.id));

	a.proc.kill('SIGKILL');
	await a.exited;
	const { server: off, ms } = await waitStatus(s.id, 'OFFLINE', 30000);
	assert.ok(ms < 30000, `OFFLINE after ${ms} ms`);
	assert.equal(off.hostFacts.arch, arch, 'the facts stay on the record');

	// A raw agent that says hello and then never answers: dropped after
	// three unanswered heartbeats, and OFFLINE.
	const c = await dial(srv.port, { 'x-agent-token': s.agentToken });
	assert.equal(c.status, 101);
	c.sock.write(text(HELLO));
	const welcome = await waitFor(c, () => messages(c).find((m) => m.type === 'welcome'), 5000, 'the welcome');
	assert.match(welcome.connectionId, /^[0-9a-f-]{36}$/);
	// Its hello offers protocol 1 only: the welcome chooses 1 (no cancel is
	// ever sent to it), not this control plane's newest.
	assert.equal(welcome.protocol, 1);
	assert.equal(welcome.heartbeatMs, HB);
	const t0 = Date.now();
	await waitStatus(s.id, 'ONLINE', 2000);
	const raw = await getServer(s.id);
	assert.deepEqual(raw.hostFacts, HELLO.host);
	assert.equal(raw.agentVersion, 'raw/1');
	await waitFor(c, () => c.closed, 3 * HB + 2000 * SLACK, 'the silent agent dropped');
	const dropped = Date.now() - t0;
	assert.ok(dropped >= 3 * HB - 50, `dropped after ${dropped} ms`);
	assert.ok(messages(c).filter((m) => m.type === 'heartbeat').length >= 2);
	await waitStatus(s.id, 'OFFLINE', 2000);
});

test('an agent answering heartbeats stays ONLINE; ping is answered with pong', async () => {
	const s = await addServer('web-4');
	const c = await dial(srv.port, { 'x-agent-token': s.agentToken });
	c.sock.write(text(HELLO));
	await waitFor(c, () => messages(c).find((m) => m.type === 'welcome'), 5000, 'the welcome');
	let answered = 0;
	const stop = Date.now() + 6 * HB;
	while (Date.now() < stop) {
		const beats = messages(c).filter((m) => m.type === 'heartbeat');
		for (const b of beats.slice(answered)) c.sock.write(text({ type: 'heartbeat', seq: b.seq }));
		answered = beats.length;
		await h.sleep(HB / 3);
	}
	assert.ok(answered >= 4, `${answered} heartbeats`);
	assert.equal(c.closed, false);
	assert.equal((await getServer(s.id)).status, 'ONLINE');
	c.sock.write(frame(0x9, 'are you there'));
	await waitFor(c, () => frames(c).find((f) => f.opcode === 0xa && f.payload.toString() === 'are you there'), 2000, 'the pong');
	c.sock.write(frame(0x8, Buffer.from([0x03, 0xe8])));
	assert.equal(await closeCode(c), 1000);
	await waitStatus(s.id, 'OFFLINE', 2000);
});

test('protocol 2: the agent sends the heartbeats, the control plane none; a seq that does not grow is closed 1008; silence drops it', async () => {
	const s = await addServer('web-13');
	const c = await dial(srv.port, { 'x-agent-token': s.agentToken });
	c.sock.write(text({ ...HELLO, protocolMax: 2 }));
	const welcome = await waitFor(c, () => messages(c).find((m) => m.type === 'welcome'), 5000, 'the welcome');
	assert.equal(welcome.protocol, 2);
	assert.equal(welcome.heartbeatMs, HB);
	const on = (await waitStatus(s.id, 'ONLINE', 2000)).server;
	assert.equal(on.agentProtocol, 2);
	// Heartbeats for eight intervals, well past the three that drop a
	// silent agent: still ONLINE, lastSeenAt moves, and nothing came back.
	let seq = 0;
	const stop = Date.now() + 8 * HB;
	while (Date.now() < stop) {
		c.sock.write(text({ type: 'heartbeat', seq: ++seq }));
		await h.sleep(HB / 2);
	}
	assert.equal(c.closed, false);
	const later = await getServer(s.id);
	assert.equal(later.status, 'ONLINE');
	assert.ok(Date.parse(later.lastSeenAt) > Date.parse(on.lastSeenAt), 'lastSeenAt moves with the heartbeats');
	assert.deepEqual(frames(c).map((f) => f.opcode), [0x1], 'the welcome is all the control plane sent');
	// Silent from now: dropped after three intervals, and OFFLINE.
	await waitFor(c, () => c.closed, 3 * HB + 2000 * SLACK, 'the silent agent dropped');
	await waitStatus(s.id, 'OFFLINE', 2000);

	// A heartbeat whose seq does not grow: 1008.
	const d = await dial(srv.port, { 'x-agent-token': s.agentToken });
	d.sock.write(text({ ...HELLO, protocolMax: 2 }));
	await waitFor(d, () => messages(d).find((m) => m.type === 'welcome'), 5000, 'the welcome');
	d.sock.write(text({ type: 'heartbeat', seq: 5 }));
	d.sock.write(text({ type: 'heartbeat', seq: 5 }));
	assert.equal(await closeCode(d), 1008);
	await waitStatus(s.id, 'OFFLINE', 2000);
});

test('a newer session of the same server takes over; the older one ends and does not mark it OFFLINE', async () => {
	const s = await addServer('web-12');
	const answer = (c) => {
		for (const b of messages(c).filter((m) => m.type === 'heartbeat').slice(c.answered ?? 0))
			c.sock.write(text({ type: 'heartbeat', seq: b.seq }));
		c.answered = messages(c).filter((m) => m.type === 'heartbeat').length;
	};
	const first = await dial(srv.port, { 'x-agent-token': s.agentToken });
	first.sock.write(text(HELLO));
	const w1 = await waitFor(first, () => messages(first).find((m) => m.type === 'welcome'), 5000, 'the first welcome');
	const second = await dial(srv.port, { 'x-agent-token': s.agentToken });
	second.sock.write(text({ ...HELLO, bootId: 'boot-2' }));
	const w2 = await waitFor(second, () => messages(second).find((m) => m.type === 'welcome'), 5000, 'the second welcome');
	assert.notEqual(w1.connectionId, w2.connectionId);
	const t0 = Date.now();
	while (!first.closed && Date.now() - t0 < 3 * HB + 2000 * SLACK) {
		answer(first);
		answer(second);
		await h.sleep(HB / 4);
	}
	assert.equal(await closeCode(first), 1008, 'the older session ends at its next heartbeat');
	for (let i = 0; i < 4; i++) {
		answer(second);
		await h.sleep(HB / 2);
	}
	const on = await getServer(s.id);
	assert.equal(on.status, 'ONLINE', 'the older session did not mark the server OFFLINE');
	assert.equal(on.agentBootId, 'boot-2');
	second.sock.destroy();
	await waitStatus(s.id, 'OFFLINE', 2000);
});

test('protocol violations from a raw client close with the right code', async () => {
	const s = await addServer('web-5');
	const cases = [
		['an unmasked frame', frame(0x1, JSON.stringify(HELLO), { mask: false }), 1002],
		['invalid UTF-8 in a text frame', frame(0x1, Buffer.from([0x7b, 0xc3, 0x28, 0x7d])), 1007],
		['a frame announcing more than 1 MiB', frame(0x2, Buffer.alloc(8), { len: 2 * 1024 * 1024 }).subarray(0, 14 + 8), 1009],
		['a reserved opcode', frame(0x3, 'x'), 1002],
		['a binary message', frame(0x2, 'hello'), 1003],
		['not a hello first', text({ type: 'heartbeat', seq: 0 }), 1008],
		['a hello with an unknown member', text({ ...HELLO, shell: 'rm -rf /' }), 1008],
		['a protocol range we do not speak', text({ ...HELLO, protocolMin: 7, protocolMax: 9 }), 1008],
		['a close with a code that may not be sent', frame(0x8, Buffer.from([0x03, 0xed])), 1002],
	];
	for (const [why, bytes, code] of cases) {
		const c = await dial(srv.port, { 'x-agent-token': s.agentToken });
		assert.equal(c.status, 101, why);
		c.sock.write(bytes);
		assert.equal(await closeCode(c), code, why);
	}
	assert.equal((await getServer(s.id)).status, 'PENDING', 'nothing was recorded');
});

test('rotation cuts the live agent within a second and its next handshake is refused with 401', async () => {
	const s = await addServer('web-6');
	const a = startAgent(s.agentCommand);
	await waitStatus(s.id, 'ONLINE', 10000 * SLACK);
	const from = srv.logs.mark();
	const fromAgent = a.lines.length;
	const t0 = Date.now();
	const rotated = await ok(call(srv, 'POST', `/servers/${s.id}/agent-token`, owner));
	assert.notEqual(rotated.agentToken, s.agentToken);
	assert.ok(rotated.agentCommand.includes(rotated.agentToken));
	const cut = await srv.logs.waitForLine(new RegExp(`agent session closed server=${s.id} .*code=1008`), 1000 * SLACK, { from });
	assert.ok(cut, 'the session was closed');
	const seen = await a.waitLine(/agent: (the control plane sent|reconnecting)/, 1000 * SLACK, fromAgent);
	assert.ok(seen.t - t0 < 1000 * SLACK, `the agent saw the cut after ${seen.t - t0} ms`);
	await a.waitLine(/refused the token \(HTTP 401\)/, 10000 * SLACK, fromAgent);
	await waitStatus(s.id, 'OFFLINE', 2000);
	// The old token is refused on a raw socket too.
	const c = await dial(srv.port, { 'x-agent-token': s.agentToken });
	assert.equal(c.status, 401);
	await waitFor(c, () => c.closed, 2000, 'closed after the 401');
	a.proc.kill('SIGTERM');
	await a.exited;
});

test('deleting a server cuts its live session within a second', async () => {
	const s = await addServer('web-7');
	const c = await dial(srv.port, { 'x-agent-token': s.agentToken });
	c.sock.write(text(HELLO));
	await waitFor(c, () => messages(c).find((m) => m.type === 'welcome'), 5000, 'the welcome');
	const t0 = Date.now();
	await ok(call(srv, 'DELETE', `/servers/${s.id}`, owner), 204);
	assert.equal(await closeCode(c, 1000 * SLACK), 1008);
	assert.ok(Date.now() - t0 < 1000 * SLACK);
});

test('the npm ws package as the agent: a client nobody here wrote gets its welcome and heartbeats', { skip: !WebSocket }, async () => {
	const s = await addServer('web-10');
	const ws = new WebSocket(`ws://127.0.0.1:${srv.port}/agent/connect`, { headers: { 'x-agent-token': s.agentToken } });
	const got = [];
	let wake = null;
	ws.on('message', (data, isBinary) => {
		assert.equal(isBinary, false);
		const m = JSON.parse(data.toString());
		got.push(m);
		if (m.type === 'heartbeat') ws.send(JSON.stringify(m));
		wake?.();
	});
	const until = (pred, ms) => new Promise((resolve, reject) => {
		const timer = setTimeout(() => reject(new Error(`not within ${ms} ms: ${JSON.stringify(got)}`)), ms);
		wake = () => { if (pred()) { clearTimeout(timer); wake = null; resolve(); } };
		wake();
	});
	await new Promise((resolve, reject) => { ws.once('open', resolve); ws.once('error', reject); });
	ws.send(JSON.stringify({ ...HELLO, agentVersion: 'ws/8' }));
	await until(() => got.filter((m) => m.type === 'heartbeat').length >= 3, 5000 * SLACK);
	assert.equal(got[0].type, 'welcome');
	assert.deepEqual(got.filter((m) => m.type === 'heartbeat').slice(0, 3).map((m) => m.seq), [1, 2, 3]);
	const on = await getServer(s.id);
	assert.equal(on.status, 'ONLINE');
	assert.equal(on.agentVersion, 'ws/8');
	// A refused token: ws sees the 401 and no socket.
	const bad = new WebSocket(`ws://127.0.0.1:${srv.port}/agent/connect`, { headers: { 'x-agent-token': 'sta_' + 'Z'.repeat(43) } });
	const status = await new Promise((resolve) => {
		bad.once('unexpected-response', (req, res) => resolve(res.statusCode));
		bad.once('open', () => resolve(101));
		bad.once('error', () => {});
	});
	assert.equal(status, 401);
	const code = await new Promise((resolve) => { ws.once('close', (c) => resolve(c)); ws.close(1000, 'bye'); });
	assert.equal(code, 1000);
	await waitStatus(s.id, 'OFFLINE', 2000);
});

let replicaB = null;
const replica = async () => (replicaB ??= await h.startStewardd({ env: { ...env, DATABASE_URL: srv.env.DATABASE_URL } }));

test('two replicas on one PostgreSQL: rotation on replica B cuts the agent held by replica A', async () => {
	const b = await replica();
	const s = await addServer('web-8');
	const a = startAgent(s.agentCommand); // dials replica A (srv)
	await waitStatus(s.id, 'ONLINE', 10000 * SLACK);
	assert.equal((await getServer(s.id, b)).status, 'ONLINE', 'replica B reads the same record');
	const from = srv.logs.mark();
	const fromAgent = a.lines.length;
	const t0 = Date.now();
	await ok(call(b, 'POST', `/servers/${s.id}/agent-token`, owner));
	await srv.logs.waitForLine(new RegExp(`agent session closed server=${s.id} .*code=1008`), 1000 * SLACK, { from });
	const seen = await a.waitLine(/agent: (the control plane sent|reconnecting)/, 1000 * SLACK, fromAgent);
	assert.ok(seen.t - t0 < 1000 * SLACK, `cut after ${seen.t - t0} ms`);
	await a.waitLine(/refused the token \(HTTP 401\)/, 10000 * SLACK, fromAgent);
	a.proc.kill('SIGTERM');
	await a.exited;
});

test('a command issued on replica B runs on the agent held by replica A, once, even when resent after a restart', async () => {
	const b = await replica();
	const s = await addServer('web-9');
	const a = startAgent(s.agentCommand); // dials replica A (srv)
	await waitStatus(s.id, 'ONLINE', 10000 * SLACK);
	const issued = await ok(call(b, 'POST', `/servers/${s.id}/commands`, owner, { body: { kind: 'host.facts' } }), 202);
	assert.equal(issued.status, 'QUEUED');
	assert.equal(issued.kind, 'host.facts');
	const path = `/servers/${s.id}/commands/${issued.id}`;
	const finished = async (on, timeoutMs) => {
		const t0 = Date.now();
		for (;;) {
			const c = await ok(call(on, 'GET', path, owner));
			if (c.status === 'SUCCEEDED' || c.status === 'FAILED') return c;
			assert.ok(Date.now() - t0 < timeoutMs, `command still ${c.status} after ${timeoutMs} ms`);
			await h.sleep(50);
		}
	};
	const done = await finished(b, 5000 * SLACK);
	assert.equal(done.status, 'SUCCEEDED', JSON.stringify(done));
	const server = await getServer(s.id);
	assert.equal(done.result.arch, server.hostFacts.arch);
	assert.equal(done.result.hostname, server.hostFacts.hostname);
	assert.equal(done.result.bootId, server.agentBootId);
	const runs = () => a.lines.filter((l) => l.line.includes(`running command ${issued.id} (host.facts)`)).length;
	assert.equal(runs(), 1);
	const sql = (q) => pg.psql(q, srv.dbName);
	assert.equal((await sql(`SELECT count(*) FROM audit_logs WHERE action = 'agent_command.created' AND target_id = '${issued.id}'`)).trim(), '1');
	// Invalid kinds are refused before anything is queued.
	const bad = await call(b, 'POST', `/servers/${s.id}/commands`, owner, { body: { kind: 'container.remove' } });
	h.assertError(bad, 422, 'VALIDATION_FAILED');

	// Replica A dies with the answer unrecorded (as if killed between the
	// agent's result and its write): the command is pending again.
	await sql(`UPDATE agent_commands SET status = 'SENT', result = NULL WHERE id = '${issued.id}'`);
	srv.proc.kill('SIGKILL');
	await srv.exited;
	assert.equal((await ok(call(b, 'GET', path, owner))).status, 'SENT');
	// A again, on its address (the agent's STEWARD_URL); the harness's
	// health wait watches the port it picked, so this one is polled here.
	await h.startStewardd({ waitHealth: false,
		env: { ...env, DATABASE_URL: srv.env.DATABASE_URL, STEWARD_LISTEN: `127.0.0.1:${srv.port}` } });
	const a2 = { port: srv.port, url: srv.url };
	for (const t0 = Date.now(); ;) {
		const res = await h.request(a2.port, 'GET', '/health').catch(() => null);
		if (res?.status === 200) break;
		assert.ok(Date.now() - t0 < 20000 * SLACK, 'replica A is back');
		await h.sleep(100);
	}
	const again = await finished(a2, 20000 * SLACK);
	assert.equal(again.status, 'SUCCEEDED');
	assert.deepEqual(again.result, done.result, 'the journal\'s recorded answer');
	assert.equal(runs(), 1, 'the agent did not run it again');
	a.proc.kill('SIGTERM');
	await a.exited;
});

test('a stopping stewardd tells its agents when to come back (goaway), closes with 1001 and exits 0', async () => {
	const c = await h.startStewardd({ env: { ...env, DATABASE_URL: srv.env.DATABASE_URL } });
	const s = await ok(call(c, 'POST', '/servers', owner, { body: { name: 'web-11' } }), 201);
	const ws = await dial(c.port, { 'x-agent-token': s.agentToken });
	ws.sock.write(text(HELLO));
	await waitFor(ws, () => messages(ws).find((m) => m.type === 'welcome'), 5000, 'the welcome');
	const exit = c.stop('SIGTERM');
	const goaway = await waitFor(ws, () => messages(ws).find((m) => m.type === 'goaway'), 5000, 'the goaway');
	assert.ok(goaway.retryAfterMs >= 2000 && goaway.retryAfterMs < 14000, `retryAfterMs ${goaway.retryAfterMs}`);
	assert.equal(await closeCode(ws), 1001);
	assert.equal(await exit, 0);
});

test('dials are limited per address: 429 with Retry-After, no 101, closed', async () => {
	const b = await replica(); // a process of its own: the limiter is per process
	const dialOnce = () => h.raw(b.port, h.buildRequest(b.port, 'GET', '/agent/connect', { headers: {
		Upgrade: 'websocket', Connection: 'Upgrade', 'Sec-WebSocket-Key': crypto.randomBytes(16).toString('base64'),
		'Sec-WebSocket-Version': '13', 'x-agent-token': 'sta_' + 'Q'.repeat(43) } }));
	let limited = null;
	for (let i = 0; i < 200 && !limited; i++) {
		const r = await dialOnce();
		if (r.responses[0]?.status === 429) limited = r;
		else h.assertRefusedAndClosed(r, 401, 'UNAUTHENTICATED');
	}
	assert.ok(limited, 'limited within 200 dials');
	const res = h.assertRefusedAndClosed(limited, 429, 'RATE_LIMITED');
	assert.ok(Number(res.headers['retry-after']) >= 1);
});
