// Shared helpers for tests that need the Docker engine and Caddy. Node 20,
// no dependencies; nothing is ever pulled from a registry and all traffic
// stays on the machine (unix sockets and 127.0.0.1).
//
//   startDocker() -> {socket, host, own}
//       The engine to use: $DOCKER_HOST (unix://) or /var/run/docker.sock
//       when it answers GET /_ping; otherwise a private
//       `dockerd --bridge=none --iptables=false` with its own data root,
//       exec root and socket in a temporary directory (root only), stopped
//       and removed when the process exits (SW_TEST_PRIVATE_DOCKERD=1:
//       always the private one). No /usr/sbin/dockerd: prints
//       "SKIP: <why>" and exits 77. `host` is the DOCKER_HOST value for
//       stewardd or a C test. Memoised: every caller shares one engine.
//   startSecondDocker() -> {socket, host, own, request(...), baseImage()}
//       Another private dockerd beside the first (a second server on this
//       machine; root only): its own socket, data root, exec root and pid
//       file. request is dockerRequest on its socket; baseImage() imports
//       the base image into it.
//   dockerRequest(method, path, body?, {headers, timeoutMs, raw}?)
//       -> {status, headers, body (Buffer), text, json()}
//       One Engine API call on that socket; path is relative to /v1.41
//       ("/containers/json?all=1"). body: a Buffer or string is sent as is
//       (give Content-Type), an object as JSON.
//   baseImage() -> "steward-test/base:latest"
//       A tiny local image, imported once (POST /images/create?fromSrc=-)
//       from a tar built here: /bin/busybox (busybox-static) with a link for
//       every applet (sh, httpd, wget, cat, echo, sleep, env, ls, ...),
//       /tmp, /etc/passwd and /etc/group. No busybox-static: SKIP, 77.
//       Build FROM it; e.g. a web server: CMD ["httpd", "-f", "-p", "8080", "-h", "/www"].
//   startCaddy({internalTls}?) -> {adminUrl, adminPort, httpPort, httpsPort,
//       httpListen, env, dir, proc, log(), request(method, path, body?), stop()}
//       /usr/bin/caddy run with a JSON config in a temporary directory:
//       admin API on 127.0.0.1:<free port>, apps.http.http_port and
//       https_port on free ports, no servers (Steward's driver creates its
//       server "steward" listening on CADDY_HTTP_LISTEN). `env` holds
//       CADDY_ADMIN_URL and CADDY_HTTP_LISTEN=127.0.0.1:<httpPort> for
//       stewardd: the http_port is Caddy's HTTP port, so no automatic HTTPS
//       there and never ACME. internalTls: true adds a TLS automation policy
//       with Caddy's internal issuer (its CA's root is not installed
//       anywhere): set CADDY_HTTP_LISTEN to 127.0.0.1:<httpsPort> to be
//       served with internal certificates. Its storage, data and autosaved
//       config stay in the directory. No caddy: SKIP, 77.
//   httpGet(port, path, {host, timeoutMs}?) -> {status, headers, body, text}
//       A plain GET to 127.0.0.1:port with that Host header (through Caddy).
//   removeByLabel(label) -> removes every container, then every image,
//       carrying label ("key=value"): cleanup after a test. Errors ignored.
//   dockerSkip(why): prints "SKIP: why" and exits 77.

import assert from 'node:assert/strict';
import { spawn, execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import * as h from './harness.mjs';
import { freePort, sleep } from './harness.mjs';

export const BASE_IMAGE = 'steward-test/base:latest';
const API = '/v1.41';
const DOCKERD = '/usr/sbin/dockerd';
const CADDY = '/usr/bin/caddy';
const BUSYBOX = '/bin/busybox';

export const dockerSkip = h.skip;

// ---------------------------------------------------------------------------
// What we started, stopped on any exit (synchronously: 'exit' handlers
// cannot wait otherwise).

const started = []; // {proc, dir, graceMs}

const alive = h.processAlive;
const sleepSync = h.sleepSync;

// Stops every one of list at once: SIGTERM to all, then each waited for
// within its grace from then (SIGKILL past it), then their directories
// removed. (One by one, a file with two dockerds and a Caddy waited for
// each shutdown in turn.)
function stopSync(list) {
	const running = (s) => s.proc.pid !== undefined && s.proc.exitCode === null && s.proc.signalCode === null && alive(s.proc.pid);
	const live = list.filter(running);
	const t0 = Date.now();
	for (const s of live) {
		try {
			process.kill(s.proc.pid, 'SIGTERM');
		} catch {}
	}
	for (const s of live) {
		const pid = s.proc.pid;
		while (alive(pid) && Date.now() < t0 + s.graceMs) sleepSync(25);
		if (alive(pid)) {
			try {
				process.kill(pid, 'SIGKILL');
			} catch {}
			const last = Date.now() + 2000;
			while (alive(pid) && Date.now() < last) sleepSync(25);
		}
	}
	for (const s of list) {
		// A dockerd that died hard can leave its mounts: never delete through one.
		const mounts = fs
			.readFileSync('/proc/self/mounts', 'utf8')
			.split('\n')
			.map((l) => l.split(' ')[1])
			.filter((m) => m && (m === s.dir || m.startsWith(`${s.dir}/`)))
			.sort((x, y) => y.length - x.length);
		for (const m of mounts) spawnSync('umount', ['-l', m]);
		try {
			fs.rmSync(s.dir, { recursive: true, force: true });
		} catch {}
	}
}

function cleanup() {
	stopSync(started.splice(0).reverse());
}
process.on('exit', cleanup);
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
	process.on(sig, () => {
		cleanup();
		process.exit(128 + os.constants.signals[sig]);
	});
}

function tempDir(prefix) {
	// Unix socket paths must stay under 108 bytes.
	return fs.mkdtempSync(path.join('/tmp', prefix));
}

// ---------------------------------------------------------------------------
// The engine

let engine = null;

function rawRequest(socketPath, method, target, body, { headers = {}, timeoutMs = 60000 } = {}) {
	return new Promise((resolve, reject) => {
		let payload = body;
		const h = { ...headers };
		if (payload !== undefined && payload !== null && !Buffer.isBuffer(payload) && typeof payload !== 'string') {
			payload = JSON.stringify(payload);
			h['Content-Type'] = 'application/json';
		}
		if (payload !== undefined && payload !== null) h['Content-Length'] = Buffer.byteLength(payload);
		const req = http.request({ socketPath, method, path: target, headers: h, timeout: timeoutMs }, (res) => {
			const chunks = [];
			res.on('data', (c) => chunks.push(c));
			res.on('end', () => {
				const buf = Buffer.concat(chunks);
				resolve({
					status: res.statusCode,
					headers: res.headers,
					body: buf,
					text: buf.toString('utf8'),
					json: () => JSON.parse(buf.toString('utf8')),
				});
			});
			res.on('error', reject);
		});
		req.on('timeout', () => req.destroy(new Error(`${method} ${target}: no answer in ${timeoutMs} ms`)));
		req.on('error', reject);
		if (payload !== undefined && payload !== null) req.write(payload);
		req.end();
	});
}

async function ping(socketPath) {
	try {
		const r = await rawRequest(socketPath, 'GET', '/_ping', null, { timeoutMs: 2000 });
		return r.status === 200;
	} catch {
		return false;
	}
}

export async function startDocker() {
	if (!engine) engine = findOrStartEngine();
	return engine;
}

async function findOrStartEngine() {
	const candidates = [];
	const env = process.env.DOCKER_HOST;
	if (process.env.SW_TEST_PRIVATE_DOCKERD !== '1') {
		if (env && env.startsWith('unix://')) candidates.push(env.slice(7));
		candidates.push('/var/run/docker.sock');
	}
	for (const socket of candidates) {
		if (fs.existsSync(socket) && (await ping(socket))) return { socket, host: `unix://${socket}`, own: false };
	}
	return spawnDockerd();
}

// A private dockerd of its own (root only): its socket, data root, exec
// root and pid file in a temporary directory, --bridge=none
// --iptables=false. Stopped and removed at exit; --shutdown-timeout=1: the
// containers a test leaves running are killed 1 s after their SIGTERM
// when it stops (a container that ignores it, such as sleep as PID 1,
// would otherwise hold the file's exit for the default 15 s).
async function spawnDockerd(again = null) {
	if (!fs.existsSync(DOCKERD)) dockerSkip(`no Docker engine answers and ${DOCKERD} is missing (apt-get install docker.io)`);
	if (process.getuid() !== 0) dockerSkip('no Docker engine answers and starting dockerd needs root');
	const dir = again || tempDir('swd-');
	const socket = path.join(dir, 'docker.sock');
	fs.writeFileSync(path.join(dir, 'daemon.json'), '{}\n');
	const log = fs.openSync(path.join(dir, 'dockerd.log'), 'a');
	const proc = spawn(
		DOCKERD,
		[
			'--config-file', path.join(dir, 'daemon.json'),
			'--data-root', path.join(dir, 'data'),
			'--exec-root', path.join(dir, 'exec'),
			'--pidfile', path.join(dir, 'dockerd.pid'),
			'--host', `unix://${socket}`,
			'--bridge=none',
			'--iptables=false',
			'--shutdown-timeout=1',
		],
		{ stdio: ['ignore', log, log] },
	);
	fs.closeSync(log);
	proc.unref(); // stopped by the exit handler: it must not keep node alive
	started.push({ proc, dir, graceMs: 15000 });
	const deadline = Date.now() + 60000;
	while (Date.now() < deadline) {
		if (proc.exitCode !== null || proc.signalCode !== null) break;
		if (fs.existsSync(socket) && (await ping(socket))) return { socket, host: `unix://${socket}`, own: true, proc, dir };
		await sleep(200);
	}
	const tail = fs.readFileSync(path.join(dir, 'dockerd.log'), 'utf8').split('\n').slice(-8).join('\n');
	dockerSkip(`dockerd did not start here:\n${tail}`);
}

// Another engine beside the first (a second server on this machine), never
// the one startDocker() answers: {socket, host, request(method, path, body?,
// opts?), baseImage()} with request as dockerRequest on its socket.
//
// restart(): the engine stopped (SIGTERM, as a host's service manager
// does; its containers are stopped with it) and started again on the same
// socket and data root, resolving once it answers.
export async function startSecondDocker() {
	const first = await startDocker();
	const e = await spawnDockerd();
	assert.notEqual(e.socket, first.socket);
	e.request = (method, apiPath, body, opts = {}) => rawRequest(e.socket, method, API + apiPath, body, opts);
	e.baseImage = () => importBase(e.request);
	e.restart = async () => {
		const { pid } = e.proc;
		process.kill(pid, 'SIGTERM');
		const deadline = Date.now() + 30000;
		while (alive(pid) && Date.now() < deadline) await sleep(50);
		assert.ok(!alive(pid), 'dockerd stopped within 30 s of its SIGTERM');
		const again = await spawnDockerd(e.dir);
		e.proc = again.proc;
	};
	return e;
}

export async function dockerRequest(method, apiPath, body, opts = {}) {
	const { socket } = await startDocker();
	return rawRequest(socket, method, API + apiPath, body, opts);
}

// ---------------------------------------------------------------------------
// The base image

// One ustar entry: header (+ data padded to 512). type '0' file, '2'
// symlink, '5' directory.
function tarEntry(name, { type = '0', mode = 0o644, data = Buffer.alloc(0), link = '' } = {}) {
	const h = Buffer.alloc(512);
	const put = (s, off, len) => h.write(s, off, len, 'utf8');
	const oct = (n, off, len) => put(n.toString(8).padStart(len - 1, '0') + '\0', off, len);
	if (Buffer.byteLength(name) > 100) throw new Error(`tar name too long: ${name}`);
	put(name, 0, 100);
	oct(mode, 100, 8);
	oct(0, 108, 8);
	oct(0, 116, 8);
	oct(type === '0' ? data.length : 0, 124, 12);
	oct(Math.floor(Date.now() / 1000), 136, 12);
	h.fill(' ', 148, 156);
	put(type, 156, 1);
	put(link, 157, 100);
	put('ustar\0', 257, 6);
	put('00', 263, 2);
	let sum = 0;
	for (const b of h) sum += b;
	put(sum.toString(8).padStart(6, '0') + '\0 ', 148, 8);
	const parts = [h];
	if (type === '0' && data.length) {
		parts.push(data, Buffer.alloc((512 - (data.length % 512)) % 512));
	}
	return Buffer.concat(parts);
}

// True when the ELF file has no program interpreter (statically linked).
function isStatic(file) {
	const b = fs.readFileSync(file);
	if (b.readUInt32BE(0) !== 0x7f454c46 || b[4] !== 2) return false; // ELF64 only
	const phoff = Number(b.readBigUInt64LE(32));
	const phentsize = b.readUInt16LE(54);
	const phnum = b.readUInt16LE(56);
	for (let i = 0; i < phnum; i++) if (b.readUInt32LE(phoff + i * phentsize) === 3) return false; // PT_INTERP
	return true;
}

export function busyboxTar() {
	if (!fs.existsSync(BUSYBOX)) dockerSkip(`${BUSYBOX} is missing (apt-get install busybox-static)`);
	if (!isStatic(BUSYBOX)) dockerSkip(`${BUSYBOX} is not statically linked (apt-get install busybox-static)`);
	const applets = execFileSync(BUSYBOX, ['--list'], { encoding: 'utf8' })
		.split('\n')
		.map((s) => s.trim())
		.filter((s) => /^[a-z0-9_.[-]+$/.test(s) && s !== 'busybox');
	const parts = [
		tarEntry('bin/', { type: '5', mode: 0o755 }),
		tarEntry('bin/busybox', { mode: 0o755, data: fs.readFileSync(BUSYBOX) }),
		...applets.map((a) => tarEntry(`bin/${a}`, { type: '2', mode: 0o777, link: 'busybox' })),
		tarEntry('tmp/', { type: '5', mode: 0o1777 }),
		tarEntry('etc/', { type: '5', mode: 0o755 }),
		tarEntry('etc/passwd', { data: Buffer.from('root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n') }),
		tarEntry('etc/group', { data: Buffer.from('root:x:0:\nnogroup:x:65534:\n') }),
		tarEntry('root/', { type: '5', mode: 0o700 }),
		Buffer.alloc(1024),
	];
	return Buffer.concat(parts);
}

let base = null;

export function baseImage() {
	if (!base) base = startDocker().then(() => importBase(dockerRequest));
	return base;
}

async function importBase(request) {
	const have = await request('GET', `/images/${BASE_IMAGE}/json`);
	if (have.status === 200) return BASE_IMAGE;
	const tar = busyboxTar();
	const [repo, tag] = BASE_IMAGE.split(':');
	const q = new URLSearchParams({ fromSrc: '-', repo, tag });
	q.append('changes', 'ENV PATH=/bin');
	const r = await request('POST', `/images/create?${q}`, tar, {
		headers: { 'Content-Type': 'application/x-tar' },
		timeoutMs: 120000,
	});
	const failed = r.status !== 200 || /"error"/.test(r.text);
	if (failed) throw new Error(`importing ${BASE_IMAGE} failed: ${r.status} ${r.text}`);
	return BASE_IMAGE;
}

// ---------------------------------------------------------------------------
// Caddy

function caddyRequest(adminPort, method, p, body) {
	return new Promise((resolve, reject) => {
		const payload = body === undefined ? null : typeof body === 'string' ? body : JSON.stringify(body);
		const headers = payload === null ? {} : { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(payload) };
		const req = http.request({ host: '127.0.0.1', port: adminPort, method, path: p, headers, timeout: 10000 }, (res) => {
			const chunks = [];
			res.on('data', (c) => chunks.push(c));
			res.on('end', () => {
				const text = Buffer.concat(chunks).toString('utf8');
				resolve({ status: res.statusCode, text, json: () => JSON.parse(text) });
			});
		});
		req.on('timeout', () => req.destroy(new Error(`Caddy admin ${method} ${p}: no answer`)));
		req.on('error', reject);
		if (payload !== null) req.write(payload);
		req.end();
	});
}

export async function startCaddy({ internalTls = false } = {}) {
	if (!fs.existsSync(CADDY)) dockerSkip(`${CADDY} is missing (apt-get install caddy)`);
	const dir = tempDir('swc-');
	const [adminPort, httpPort, httpsPort] = [await freePort(), await freePort(), await freePort()];
	const config = {
		admin: { listen: `127.0.0.1:${adminPort}` },
		storage: { module: 'file_system', root: path.join(dir, 'storage') },
		apps: { http: { http_port: httpPort, https_port: httpsPort, servers: {} } },
	};
	if (internalTls) {
		config.apps.tls = { automation: { policies: [{ issuers: [{ module: 'internal' }] }] } };
		config.apps.pki = { certificate_authorities: { local: { install_trust: false } } };
	}
	const file = path.join(dir, 'caddy.json');
	fs.writeFileSync(file, JSON.stringify(config, null, 1));
	const logFile = path.join(dir, 'caddy.log');
	const log = fs.openSync(logFile, 'a');
	const env = {
		PATH: process.env.PATH,
		HOME: dir,
		XDG_DATA_HOME: path.join(dir, 'data'),
		XDG_CONFIG_HOME: path.join(dir, 'config'),
	};
	const proc = spawn(CADDY, ['run', '--config', file], { stdio: ['ignore', log, log], env });
	fs.closeSync(log);
	proc.unref();
	const entry = { proc, dir, graceMs: 5000 };
	started.push(entry);
	const deadline = Date.now() + 15000;
	for (;;) {
		if (proc.exitCode !== null || proc.signalCode !== null || Date.now() > deadline)
			throw new Error(`caddy did not start:\n${fs.readFileSync(logFile, 'utf8').slice(-2000)}`);
		try {
			const r = await caddyRequest(adminPort, 'GET', '/config/');
			if (r.status === 200) break;
		} catch {}
		await sleep(100);
	}
	const httpListen = `127.0.0.1:${httpPort}`;
	return {
		adminUrl: `http://127.0.0.1:${adminPort}`,
		adminPort,
		httpPort,
		httpsPort,
		httpListen,
		env: { CADDY_ADMIN_URL: `http://127.0.0.1:${adminPort}`, CADDY_HTTP_LISTEN: httpListen },
		dir,
		proc,
		log: () => fs.readFileSync(logFile, 'utf8'),
		request: (method, p, body) => caddyRequest(adminPort, method, p, body),
		stop: () => {
			const i = started.indexOf(entry);
			if (i >= 0) started.splice(i, 1);
			stopSync([entry]);
		},
	};
}

// ---------------------------------------------------------------------------
// Small helpers

export function httpGet(port, p, { host, timeoutMs = 5000 } = {}) {
	return new Promise((resolve, reject) => {
		const headers = host ? { Host: host } : {};
		const req = http.request({ host: '127.0.0.1', port, method: 'GET', path: p, headers, timeout: timeoutMs, agent: false }, (res) => {
			const chunks = [];
			res.on('data', (c) => chunks.push(c));
			res.on('end', () => {
				const body = Buffer.concat(chunks);
				resolve({ status: res.statusCode, headers: res.headers, body, text: body.toString('utf8') });
			});
		});
		req.on('timeout', () => req.destroy(new Error(`GET ${p} on ${port}: no answer in ${timeoutMs} ms`)));
		req.on('error', reject);
		req.end();
	});
}

export async function removeByLabel(label) {
	const filters = encodeURIComponent(JSON.stringify({ label: [label] }));
	try {
		const cs = await dockerRequest('GET', `/containers/json?all=1&filters=${filters}`);
		for (const c of cs.status === 200 ? cs.json() : []) await dockerRequest('DELETE', `/containers/${c.Id}?force=1&v=1`);
		const is = await dockerRequest('GET', `/images/json?filters=${filters}`);
		for (const i of is.status === 200 ? is.json() : []) {
			for (const t of i.RepoTags || []) if (t !== '<none>:<none>') await dockerRequest('DELETE', `/images/${t}?force=1`);
			await dockerRequest('DELETE', `/images/${i.Id}?force=1`);
		}
	} catch {}
}
