// The frame layer on the server side (src/agent/ws.c, driven by the small
// echo server tests/integration/ws_echo.c) against the npm ws package as
// a real client nobody here wrote, then against raw sockets for what a
// well-behaved client never sends: unmasked frames, close codes that must
// not be on the wire, reserved bits, fragmented control frames, a frame
// announcing more than the message cap. The cap here is 1024 bytes.

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { createRequire } from 'node:module';
import { skip, SLACK } from './harness.mjs';

const buildDir = process.env.SW_BUILD_DIR;
if (!buildDir) skip('SW_BUILD_DIR is not set (ctest sets it)');
const ECHO = path.join(buildDir, 'tests', 'sw_ws_echo');
if (!fs.existsSync(ECHO)) skip(`${ECHO} does not exist (cmake --build ... --target sw_ws_echo)`);
let WebSocket;
try {
	WebSocket = createRequire(import.meta.url)('ws');
} catch {
	skip('the npm package ws is missing: npm ci --prefix tests/integration');
}

const server = spawn(ECHO, ['1024'], { stdio: ['ignore', 'pipe', 'inherit'] });
let out = '';
server.stdout.on('data', (d) => { out += d; });
after(() => {
	server.kill('SIGKILL');
	if (/runtime error: |AddressSanitizer/.test(out)) throw new Error(out);
});
const port = await new Promise((resolve, reject) => {
	const t = setTimeout(() => reject(new Error('sw_ws_echo did not start')), 5000 * SLACK);
	server.stdout.on('data', () => {
		const m = out.match(/^port (\d+)$/m);
		if (m) { clearTimeout(t); resolve(Number(m[1])); }
	});
});

function open() {
	return new Promise((resolve, reject) => {
		const ws = new WebSocket(`ws://127.0.0.1:${port}/`);
		ws.messages = [];
		ws.pongs = [];
		ws.on('message', (d, isBinary) => ws.messages.push({ data: Buffer.from(d), isBinary }));
		ws.on('pong', (d) => ws.pongs.push(d.toString()));
		ws.on('error', () => {});
		ws.closed = new Promise((r) => ws.on('close', (code) => r(code)));
		ws.once('open', () => resolve(ws));
		ws.once('error', reject);
	});
}

async function until(cond, what) {
	const end = Date.now() + 5000 * SLACK;
	while (!cond()) {
		if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
		await new Promise((r) => setTimeout(r, 10));
	}
}

test('ws client: a text and a binary message are echoed', async () => {
	const ws = await open();
	ws.send('héllo wörld');
	ws.send(Buffer.from([0, 1, 2, 255]));
	await until(() => ws.messages.length === 2, 'two echoes');
	assert.equal(ws.messages[0].data.toString(), 'héllo wörld');
	assert.equal(ws.messages[0].isBinary, false);
	assert.deepEqual([...ws.messages[1].data], [0, 1, 2, 255]);
	assert.equal(ws.messages[1].isBinary, true);
	ws.close(1000);
	assert.equal(await ws.closed, 1000);
});

test('ws client: fragments with pings between them make one message; the cap holds exactly', async () => {
	const ws = await open();
	const text = '€'.repeat(100); // 300 bytes; a fragment boundary falls inside a character
	const bytes = Buffer.from(text);
	ws.send(bytes.subarray(0, 7), { fin: false, binary: false });
	ws.ping('one');
	ws.send(bytes.subarray(7, 200), { fin: false, binary: false });
	ws.ping('two');
	ws.send(bytes.subarray(200), { fin: true, binary: false });
	ws.send(Buffer.alloc(1024, 0x61), { binary: true }); // exactly at the cap
	await until(() => ws.messages.length === 2 && ws.pongs.length === 2, 'the echoes and pongs');
	assert.equal(ws.messages[0].data.toString(), text);
	assert.equal(ws.messages[1].data.length, 1024);
	assert.deepEqual(ws.pongs, ['one', 'two']);
	ws.close(4000, 'done');
	assert.equal(await ws.closed, 4000);
});

test('ws client: a message over the cap, even in fragments, is closed with 1009', async () => {
	const ws = await open();
	ws.send(Buffer.alloc(600, 0x61), { fin: false });
	ws.send(Buffer.alloc(600, 0x61), { fin: true });
	assert.equal(await ws.closed, 1009);
	assert.equal(ws.messages.length, 0);
});

test('ws client: invalid UTF-8 in a text message, cut across fragments, is closed with 1007', async () => {
	const ws = await open();
	ws.send(Buffer.from([0x61, 0xf0, 0x9f]), { fin: false, binary: false });
	ws.send(Buffer.from([0x98]), { fin: true, binary: false }); // a 4-byte sequence cut short
	assert.equal(await ws.closed, 1007);
});

// Raw sockets: the handshake by hand, then frames as written.
function rawOpen() {
	return new Promise((resolve, reject) => {
		const s = net.connect(port, '127.0.0.1');
		const key = crypto.randomBytes(16).toString('base64');
		let buf = Buffer.alloc(0);
		s.on('error', reject);
		s.on('data', function onData(d) {
			buf = Buffer.concat([buf, d]);
			const end = buf.indexOf('\r\n\r\n');
			if (end < 0) return;
			s.off('data', onData);
			const head = buf.subarray(0, end).toString();
			const want = crypto.createHash('sha1').update(key + '258EAFA5-E914-47DA-95CA-C5AB0DC85B11').digest('base64');
			assert.match(head, /^HTTP\/1\.1 101 /);
			assert.ok(head.includes(`Sec-WebSocket-Accept: ${want}`), head);
			s.rest = buf.subarray(end + 4);
			resolve(s);
		});
		s.write(`GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n\r\n`);
	});
}

function frame(op, payload, { fin = true, mask = true, rsv = 0, len } = {}) {
	const p = Buffer.from(payload);
	const n = len ?? p.length;
	let head;
	if (n < 126) head = Buffer.from([(fin ? 0x80 : 0) | rsv | op, (mask ? 0x80 : 0) | n]);
	else if (n < 65536) { head = Buffer.from([(fin ? 0x80 : 0) | rsv | op, (mask ? 0x80 : 0) | 126, n >> 8, n & 255]); }
	else { head = Buffer.alloc(10); head[0] = (fin ? 0x80 : 0) | rsv | op; head[1] = (mask ? 0x80 : 0) | 127; head.writeBigUInt64BE(BigInt(n), 2); }
	if (!mask) return Buffer.concat([head, p]);
	const key = crypto.randomBytes(4);
	const body = Buffer.from(p.map((b, i) => b ^ key[i % 4]));
	return Buffer.concat([head, key, body]);
}

// Writes bytes and reads until the server closes; returns the close code
// of the close frame it sent (unmasked, as from a server).
async function closeCodeAfter(bytes) {
	const s = await rawOpen();
	let buf = s.rest;
	s.on('data', (d) => { buf = Buffer.concat([buf, d]); });
	const ended = new Promise((r) => s.on('close', r));
	s.write(bytes);
	let timer;
	await Promise.race([ended, new Promise((r) => { timer = setTimeout(r, 5000 * SLACK); })]);
	clearTimeout(timer);
	s.destroy();
	// Skip data frames the server sent before its close.
	let off = 0;
	while (off + 2 <= buf.length) {
		const op = buf[off] & 0x0f;
		assert.equal(buf[off + 1] & 0x80, 0, 'a server frame is never masked');
		const n = buf[off + 1] & 0x7f;
		assert.ok(n < 126, 'short frames only here');
		if (op === 8) return n >= 2 ? buf.readUInt16BE(off + 2) : 1005;
		off += 2 + n;
	}
	return null;
}

const cases = [
	['an unmasked frame is closed with 1002', frame(1, 'hi', { mask: false }), 1002],
	['a close with 1005 on the wire is closed with 1002', frame(8, Buffer.from([0x03, 0xed])), 1002],
	['a close with 1006 on the wire is closed with 1002', frame(8, Buffer.from([0x03, 0xee])), 1002],
	['a close with 1015 on the wire is closed with 1002', frame(8, Buffer.from([0x03, 0xf7])), 1002],
	['a close with code 999 is closed with 1002', frame(8, Buffer.from([0x03, 0xe7])), 1002],
	['a close with a one-byte payload is closed with 1002', frame(8, Buffer.from([0x03])), 1002],
	['a valid close code is echoed', frame(8, Buffer.from([0x0b, 0xb8, 0x6f, 0x6b])), 3000],
	['an empty close is answered with an empty close', frame(8, Buffer.alloc(0)), 1005],
	['RSV1 without an extension is closed with 1002', frame(1, 'x', { rsv: 0x40 }), 1002],
	['a fragmented ping is closed with 1002', frame(9, 'x', { fin: false }), 1002],
	['a continuation with nothing to continue is closed with 1002', frame(0, 'x'), 1002],
	['a reserved opcode is closed with 1002', frame(3, 'x'), 1002],
	['a frame announcing 2 GiB is closed with 1009 before its payload', frame(2, Buffer.alloc(0), { len: 2 ** 31 }).subarray(0, 14), 1009],
	['a ping between fragments, then a new text frame inside the message, is closed with 1002',
		Buffer.concat([frame(1, 'a', { fin: false }), frame(9, 'p'), frame(1, 'b')]), 1002],
];

for (const [name, bytes, code] of cases) {
	test(`raw socket: ${name}`, async () => {
		assert.equal(await closeCodeAfter(bytes), code);
	});
}
