// Integration harness: a scratch PostgreSQL cluster, stewardd on a free
// loopback port, and clients that speak raw bytes (so that malformed requests
// reach the server exactly as written) or run curl. Node 20, no dependencies.
//
// A machine that cannot run these tests (no PostgreSQL binaries, no built
// stewardd) makes the file exit 77 with the reason. Children and temporary
// directories are removed when the process exits, however it exits.

import assert from 'node:assert/strict';
import { spawn, execFile, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

export const SKIP = 77;
// Shapes every answer keeps: RFC 3339 UTC timestamps with milliseconds,
// UUIDs, and an id that names nothing.
export const TS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
export const NIL = '00000000-0000-0000-0000-000000000000';

// Timing slack: CI machines have 2 cores and may run sanitizer builds.
export const SLACK = Number(process.env.SW_TEST_SLACK || 3);

export function sleep(ms) {
	return new Promise((resolve) => setTimeout(resolve, ms));
}

// p, or an Error "timed out waiting for <what>" after ms. The timer is
// cleared when p settles: a pending one would keep node (and the test
// file) alive until it fires.
export function withTimeout(p, ms, what) {
	let t;
	return Promise.race([p, new Promise((_, rej) => { t = setTimeout(() => rej(new Error(`timed out waiting for ${what}`)), ms); })])
		.finally(() => clearTimeout(t));
}

// Prints "SKIP: why" and ends the file with exit 77 (CTest: skipped).
export function skip(why) {
	process.stdout.write(`SKIP: ${why}\n`);
	process.exit(SKIP);
}

// Skips (77) unless file exists, naming the Debian package that brings it.
export function need(file, pkg) {
	if (!fs.existsSync(file)) skip(`${file} not found (apt-get install ${pkg})`);
}

// ---------------------------------------------------------------------------
// Cleanup of everything we started, on any exit.

const children = new Set(); // {proc, graceful: signal name}
const tempDirs = new Set();

export function processAlive(pid) {
	// A zombie is dead for our purpose: nothing reaps it while we spin.
	try {
		const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
		const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
		return state !== 'Z' && state !== 'X';
	} catch {
		return false;
	}
}

export function sleepSync(ms) {
	Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

function cleanupSync() {
	// stewardd first (gracefully, so an embedded PostgreSQL is stopped by it),
	// then the clusters.
	const order = [...children].sort((a, b) => (a.kind === 'postgres') - (b.kind === 'postgres'));
	for (const c of order) {
		const pid = c.proc.pid;
		if (pid === undefined || c.proc.exitCode !== null || c.proc.signalCode !== null) continue;
		if (!processAlive(pid)) continue;
		try {
			process.kill(pid, c.graceful);
		} catch {
			continue;
		}
		const deadline = Date.now() + 5000;
		while (processAlive(pid) && Date.now() < deadline) sleepSync(20);
		if (processAlive(pid)) {
			try {
				process.kill(pid, 'SIGKILL');
			} catch {}
		}
	}
	children.clear();
	for (const d of tempDirs) {
		try {
			fs.rmSync(d, { recursive: true, force: true });
		} catch {}
	}
	tempDirs.clear();
}

process.on('exit', cleanupSync);
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
	process.on(sig, () => {
		cleanupSync();
		process.exit(128 + os.constants.signals[sig]);
	});
}

// Async cleanup for test files' after() hooks: stops servers in order and
// waits for them, then removes the directories.
// Fails (throws) if any stewardd started by this file reported a sanitizer
// error, so that a report is never lost in captured output.
export async function cleanupAll() {
	const list = [...children];
	const servers = list.filter((c) => c.kind !== 'postgres');
	const clusters = list.filter((c) => c.kind === 'postgres');
	await Promise.all(servers.map((c) => c.stop()));
	await Promise.all(clusters.map((c) => c.stop()));
	cleanupSync();
	const reports = [];
	for (const log of allServerLogs) {
		const text = log.text();
		const i = text.search(SANITIZER_REPORT);
		if (i >= 0) reports.push(text.slice(Math.max(0, i - 200), i + 4000));
	}
	if (reports.length) throw new Error(`sanitizer report from stewardd:\n${reports.join('\n-----\n')}`);
}

export const SANITIZER_REPORT = /ERROR: (AddressSanitizer|LeakSanitizer|ThreadSanitizer)|WARNING: ThreadSanitizer|runtime error: /;
const allServerLogs = [];

export function makeTempDir(prefix) {
	// Unix socket paths are limited to 107 bytes: keep the base short.
	let base = os.tmpdir();
	if (base.length > 40) base = '/tmp';
	const d = fs.mkdtempSync(path.join(base, prefix));
	tempDirs.add(d);
	return d;
}

function lookupUser(name) {
	const passwd = fs.readFileSync('/etc/passwd', 'utf8');
	for (const line of passwd.split('\n')) {
		const f = line.split(':');
		if (f[0] === name) return { uid: Number(f[2]), gid: Number(f[3]), home: f[5] };
	}
	return null;
}

function execFileP(file, args, opts = {}) {
	return new Promise((resolve) => {
		execFile(file, args, { maxBuffer: 64 * 1024 * 1024, ...opts }, (err, stdout, stderr) => {
			const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
			resolve({ code, stdout, stderr, error: err && typeof err.code !== 'number' ? err : null, signal: err?.signal ?? null });
		});
	});
}

// Collects a child's output as lines, with a way to wait for one.
class LineLog {
	constructor() {
		this.lines = []; // {stream, line, t}
		this.waiters = new Set();
		this.partial = { stdout: '', stderr: '' };
	}
	attach(proc) {
		for (const stream of ['stdout', 'stderr']) {
			proc[stream].setEncoding('utf8');
			proc[stream].on('data', (chunk) => this.feed(stream, chunk));
			proc[stream].on('end', () => {
				if (this.partial[stream]) this.push(stream, this.partial[stream]);
				this.partial[stream] = '';
			});
		}
	}
	feed(stream, chunk) {
		const text = this.partial[stream] + chunk;
		const parts = text.split('\n');
		this.partial[stream] = parts.pop();
		for (const p of parts) this.push(stream, p);
	}
	push(stream, line) {
		const entry = { stream, line, t: Date.now() };
		this.lines.push(entry);
		if (process.env.SW_TEST_VERBOSE) process.stderr.write(`[${stream}] ${line}\n`);
		for (const w of this.waiters) w();
	}
	// Index to pass as `from` so that only later lines count.
	mark() {
		return this.lines.length;
	}
	text(from = 0) {
		// Includes a line still being written.
		return this.lines.slice(from).map((l) => l.line).join('\n') + '\n' + this.partial.stdout + this.partial.stderr;
	}
	all(from = 0) {
		return this.lines.slice(from).map((l) => l.line);
	}
	find(re, from = 0) {
		for (let i = from; i < this.lines.length; i++) if (re.test(this.lines[i].line)) return this.lines[i].line;
		return null;
	}
	// Resolves with the first line (at index >= from) matching re; rejects on timeout.
	waitForLine(re, timeoutMs = 5000, { from = 0 } = {}) {
		return new Promise((resolve, reject) => {
			const check = () => {
				const hit = this.find(re, from);
				if (hit !== null) {
					done();
					resolve(hit);
					return true;
				}
				return false;
			};
			const timer = setTimeout(() => {
				done();
				reject(new Error(`no log line matching ${re} within ${timeoutMs} ms; last lines:\n${this.all().slice(-20).join('\n')}`));
			}, timeoutMs);
			const done = () => {
				clearTimeout(timer);
				this.waiters.delete(check);
			};
			if (!check()) this.waiters.add(check);
		});
	}
}

function waitExit(proc, timeoutMs) {
	return new Promise((resolve) => {
		if (proc.exitCode !== null || proc.signalCode !== null) {
			resolve(true);
			return;
		}
		const timer = setTimeout(() => {
			proc.off('exit', onExit);
			resolve(false);
		}, timeoutMs);
		const onExit = () => {
			clearTimeout(timer);
			resolve(true);
		};
		proc.once('exit', onExit);
	});
}

// ---------------------------------------------------------------------------
// Scratch PostgreSQL.

function findPostgresBin() {
	const root = '/usr/lib/postgresql';
	let versions = [];
	try {
		versions = fs.readdirSync(root).filter((v) => /^\d+(\.\d+)?$/.test(v));
	} catch {}
	versions.sort((a, b) => parseFloat(b) - parseFloat(a));
	for (const v of versions) {
		const bin = path.join(root, v, 'bin');
		if (fs.existsSync(path.join(bin, 'initdb')) && fs.existsSync(path.join(bin, 'postgres'))) return bin;
	}
	return null;
}

let dbCounter = 0;

// Starts a private cluster on a unix socket in a fresh temporary directory.
// Exits the process with 77 when PostgreSQL is not installed.
export async function startPostgres() {
	const bin = findPostgresBin();
	if (!bin) skip('PostgreSQL server binaries not found under /usr/lib/postgresql/*/bin (apt-get install postgresql)');
	const psqlBin = fs.existsSync(path.join(bin, 'psql')) ? path.join(bin, 'psql') : 'psql';

	const dir = makeTempDir('sw-pg-');
	const data = path.join(dir, 'data');
	const spawnOpts = { cwd: dir, env: { PATH: process.env.PATH || '/usr/bin:/bin', LC_ALL: 'C', LANG: 'C' } };
	if (process.getuid && process.getuid() === 0) {
		// PostgreSQL refuses to run as root.
		const pg = lookupUser('postgres');
		if (!pg) skip('running as root and there is no "postgres" system user to run PostgreSQL as');
		fs.chownSync(dir, pg.uid, pg.gid);
		spawnOpts.uid = pg.uid;
		spawnOpts.gid = pg.gid;
		spawnOpts.env.HOME = dir;
	}

	const init = spawnSync(path.join(bin, 'initdb'),
		['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--locale=C', '--no-sync', '--no-instructions'],
		{ ...spawnOpts, encoding: 'utf8' });
	if (init.status !== 0) {
		throw new Error(`initdb failed (${init.status ?? init.error}):\n${init.stdout}\n${init.stderr}`);
	}

	const port = 20000 + Math.floor(Math.random() * 40000);
	const log = new LineLog();
	let proc = null;
	const entry = { kind: 'postgres', graceful: 'SIGQUIT', proc: null, stop: () => stop() };

	async function start() {
		if (proc && proc.exitCode === null && proc.signalCode === null) return;
		const from = log.mark();
		proc = spawn(path.join(bin, 'postgres'), [
			'-D', data,
			'-k', dir,
			'-p', String(port),
			'-c', "listen_addresses=",
			'-c', 'fsync=off',
			'-c', 'synchronous_commit=off',
			'-c', 'full_page_writes=off',
			'-c', 'max_connections=300',
			'-c', 'shared_buffers=16MB',
			'-c', 'log_min_messages=warning',
			'-c', 'logging_collector=off',
		], { ...spawnOpts, stdio: ['ignore', 'pipe', 'pipe'] });
		entry.proc = proc;
		children.add(entry);
		log.attach(proc);
		const exited = new Promise((resolve) => proc.once('exit', (code, sig) => resolve({ code, sig })));
		const ready = log.waitForLine(/database system is ready to accept connections/, 30000, { from });
		const r = await Promise.race([ready.then(() => null), exited]);
		if (r) throw new Error(`postgres exited (${r.code ?? r.sig}) during start:\n${log.text(from)}`);
		// LOG messages pass log_min_messages=warning; confirm with a query.
		await waitQueryable();
	}

	async function waitQueryable() {
		const deadline = Date.now() + 30000;
		for (;;) {
			const r = await execFileP(psqlBin, ['-X', '-q', '-h', dir, '-p', String(port), '-U', 'postgres', '-d', 'postgres', '-c', 'select 1']);
			if (r.code === 0) return;
			if (Date.now() > deadline) throw new Error(`postgres not answering: ${r.stderr}`);
			await sleep(50);
		}
	}

	async function stop() {
		if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
		proc.kill('SIGINT'); // fast shutdown: ends sessions
		if (!(await waitExit(proc, 20000))) {
			proc.kill('SIGQUIT');
			await waitExit(proc, 10000);
		}
		children.delete(entry);
	}

	// The data of one database as SQL text (pg_dump --data-only), for
	// checks that must not depend on the schema (e.g. how passwords are stored).
	async function dump(dbname) {
		const r = await execFileP(path.join(bin, 'pg_dump'), ['-h', dir, '-p', String(port), '-U', 'postgres', '--data-only', '-d', dbname]);
		if (r.code !== 0) throw new Error(`pg_dump failed: ${r.stderr}`);
		return r.stdout;
	}

	async function psql(sql, dbname = 'postgres') {
		const r = await execFileP(psqlBin, ['-X', '-q', '-A', '-t', '-v', 'ON_ERROR_STOP=1', '-h', dir, '-p', String(port), '-U', 'postgres', '-d', dbname, '-c', sql]);
		if (r.code !== 0) throw new Error(`psql failed: ${r.stderr}`);
		return r.stdout;
	}

	function dbUrl(name) {
		return `postgresql:///${name}?host=${encodeURIComponent(dir)}&port=${port}&user=postgres`;
	}

	async function createDatabase(name) {
		if (!/^[a-z_][a-z0-9_]{0,62}$/.test(name)) throw new Error(`bad database name ${name}`);
		await psql(`CREATE DATABASE "${name}"`);
		return dbUrl(name);
	}

	await start();
	return {
		url: dbUrl('postgres'),
		dir,
		port,
		log,
		dbUrl,
		createDatabase,
		psql,
		dump,
		start,
		stop,
		// A fresh database for one stewardd instance.
		async freshDatabase() {
			dbCounter += 1;
			return createDatabase(`sw_${process.pid}_${dbCounter}`);
		},
	};
}

// ---------------------------------------------------------------------------
// stewardd.

export function stewarddPath() {
	const p = process.env.STEWARDD;
	if (!p) skip('STEWARDD is not set (path to the built stewardd; ctest sets it)');
	if (!fs.existsSync(p)) skip(`STEWARDD=${p} does not exist (build it first)`);
	return p;
}

export function freePort() {
	return new Promise((resolve, reject) => {
		const srv = net.createServer();
		srv.once('error', reject);
		srv.listen(0, '127.0.0.1', () => {
			const { port } = srv.address();
			srv.close(() => resolve(port));
		});
	});
}

const CLEARED_ENV = /^(STEWARD_.*|DATABASE_URL|SIGNUP_ENABLED|CORS_ALLOWED_ORIGINS|PUBLIC_BASE_URL|AUTH_TRUSTED_ORIGINS)$/;

// Starts stewardd on a free loopback port. With `db` (from startPostgres())
// and no DATABASE_URL in env, it gets a fresh database of its own. An env
// value of null removes the variable (e.g. {DATABASE_URL: null} for the
// embedded cluster). Resolves once GET /health answers with any status.
// port: listen there (a restart where clients, such as an agent, dial the
// old address); else a free one.
export async function startStewardd({ env = {}, db = null, healthTimeoutMs = 20000, waitHealth = true, port: fixedPort = 0 } = {}) {
	const bin = stewarddPath();
	const base = {};
	for (const [k, v] of Object.entries(process.env)) if (!CLEARED_ENV.test(k)) base[k] = v;
	base.STEWARD_ENV = 'test';
	// Job runners only where a test asks for them (STEWARD_RUNNERS: 'true'):
	// elsewhere queued work must stay queued for the test to see it.
	base.STEWARD_RUNNERS = 'false';
	// Every test client is 127.0.0.1, and a test file sends far more
	// requests than one client would: the global limit per address is
	// raised here, and lowered by the test of the limit itself.
	base.STEWARD_RATE_LIMIT_PER_MINUTE = '100000000';
	let dbName = null;
	if (db && !('DATABASE_URL' in env)) {
		base.DATABASE_URL = await db.freshDatabase();
		dbName = /^postgresql:\/\/\/([^?]+)/.exec(base.DATABASE_URL)[1];
	}
	if (!('STEWARD_DATA_DIR' in env)) base.STEWARD_DATA_DIR = makeTempDir('sw-data-');

	let lastErr = null;
	for (let attempt = 0; attempt < 3; attempt++) {
		const port = fixedPort || await freePort();
		const full = { ...base, STEWARD_LISTEN: `127.0.0.1:${port}` };
		for (const [k, v] of Object.entries(env)) {
			if (v === null || v === undefined) delete full[k];
			else full[k] = String(v);
		}
		const logs = new LineLog();
		allServerLogs.push(logs);
		const proc = spawn(bin, [], { env: full, stdio: ['ignore', 'pipe', 'pipe'] });
		logs.attach(proc);
		const exitP = new Promise((resolve) => proc.once('exit', (code, signal) => resolve({ code, signal })));
		const entry = {
			kind: 'stewardd',
			graceful: 'SIGTERM',
			proc,
			stop: async () => {
				if (proc.exitCode === null && proc.signalCode === null) {
					proc.kill('SIGTERM');
					if (!(await waitExit(proc, 20000))) proc.kill('SIGKILL');
				}
				await exitP;
				children.delete(entry);
			},
		};
		children.add(entry);
		const server = {
			port,
			url: `http://127.0.0.1:${port}`,
			proc,
			logs,
			env: full,
			dbName, // this instance's database on the scratch cluster, if any
			exited: exitP,
			// Sends the signal and resolves with the exit code (null if the
			// process died of a signal; see proc.signalCode). Kills it and
			// rejects if it does not exit within timeoutMs.
			async stop(signal = 'SIGTERM', timeoutMs = 20000) {
				if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal);
				if (!(await waitExit(proc, timeoutMs))) {
					proc.kill('SIGKILL');
					await exitP;
					children.delete(entry);
					throw new Error(`stewardd did not exit within ${timeoutMs} ms of ${signal}`);
				}
				const r = await exitP;
				children.delete(entry);
				return r.code;
			},
			kill() {
				if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
				children.delete(entry);
			},
		};
		if (!waitHealth) return server;
		const deadline = Date.now() + healthTimeoutMs;
		let exited = null;
		exitP.then((r) => (exited = r));
		// Healthy means every loop thread's pool is connected: on a loaded
		// machine that can take longer than the server's own start-up
		// bound, so wait for a run of 200s (new connections spread over
		// the threads). waitHealth: 'any' accepts any answer instead.
		let healthy = 0;
		for (;;) {
			if (exited) break;
			try {
				// Only this stewardd's own answer counts (every answer of
				// stewardd carries X-Request-Id): another test's listener may
				// hold the port freePort() gave us, and answer /health itself
				// while this stewardd is still starting (its embedded
				// PostgreSQL first), before its bind fails with EADDRINUSE.
				const r = await request(port, 'GET', '/health', { timeoutMs: 2000 });
				const ours = r && r.status && r.headers && r.headers['x-request-id'];
				if (ours && waitHealth === 'any') return server;
				healthy = ours && r.status === 200 ? healthy + 1 : 0;
				if (healthy >= 4) return server;
				if (healthy) continue;
			} catch {}
			if (Date.now() > deadline) {
				server.kill();
				throw new Error(`stewardd did not answer GET /health within ${healthTimeoutMs} ms; output:\n${logs.text()}`);
			}
			await sleep(100);
		}
		children.delete(entry);
		lastErr = new Error(`stewardd exited (${exited.code ?? exited.signal}) before answering; output:\n${logs.text()}`);
		// The port may have been taken between freePort() and bind: retry
		// only in that case.
		if (!/in use|EADDRINUSE/i.test(logs.text())) throw lastErr;
	}
	throw lastErr;
}

// ---------------------------------------------------------------------------
// Clients.

// One TCP connection with everything it has read, for exchanges that need
// several steps (write part, wait, write more, count responses).
export class Conn {
	static open(port, { host = '127.0.0.1', timeoutMs = 5000 } = {}) {
		return new Promise((resolve, reject) => {
			const sock = net.connect({ port, host });
			const timer = setTimeout(() => {
				sock.destroy();
				reject(new Error(`connect to ${host}:${port} timed out`));
			}, timeoutMs);
			sock.once('connect', () => {
				clearTimeout(timer);
				resolve(new Conn(sock));
			});
			sock.once('error', (e) => {
				clearTimeout(timer);
				reject(e);
			});
		});
	}

	constructor(sock) {
		this.sock = sock;
		this.chunks = [];
		this.length = 0;
		this.closed = false; // the server ended or reset the connection
		this.reset = false;
		this.closedAt = null;
		this.openedAt = Date.now();
		this.error = null;
		this.listeners = new Set();
		sock.setNoDelay(true);
		sock.on('data', (d) => {
			this.chunks.push(d);
			this.length += d.length;
			this.notify();
		});
		const onClose = () => {
			if (!this.closed) {
				this.closed = true;
				this.closedAt = Date.now();
			}
			this.notify();
		};
		sock.on('end', onClose);
		sock.on('close', onClose);
		sock.on('error', (e) => {
			this.error = e;
			if (e.code === 'ECONNRESET' || e.code === 'EPIPE') this.reset = true;
			onClose();
		});
	}

	get data() {
		if (this.chunks.length > 1) this.chunks = [Buffer.concat(this.chunks)];
		return this.chunks[0] || Buffer.alloc(0);
	}

	text() {
		return this.data.toString('latin1');
	}

	notify() {
		for (const l of this.listeners) l();
	}

	write(bytes) {
		return new Promise((resolve) => {
			if (this.sock.destroyed) {
				resolve(false);
				return;
			}
			this.sock.write(typeof bytes === 'string' ? Buffer.from(bytes, 'latin1') : bytes, (err) => resolve(!err));
		});
	}

	// Resolves true once pred(this) holds, false after timeoutMs or once the
	// connection closed without it holding.
	waitFor(pred, timeoutMs = 5000) {
		return new Promise((resolve) => {
			const check = () => {
				if (pred(this)) {
					done();
					resolve(true);
				} else if (this.closed) {
					done();
					resolve(pred(this));
				}
			};
			const timer = setTimeout(() => {
				done();
				resolve(false);
			}, timeoutMs);
			const done = () => {
				clearTimeout(timer);
				this.listeners.delete(check);
			};
			this.listeners.add(check);
			check();
		});
	}

	// True if the server closed the connection within timeoutMs.
	async waitClosed(timeoutMs = 5000) {
		return this.waitFor((c) => c.closed, timeoutMs);
	}

	// Waits for n complete final (non-1xx) responses; throws with what was
	// read on timeout. opts go to parseResponses().
	async responses(n, timeoutMs = 5000, opts = {}) {
		const count = () => parseResponses(this.data, { ...opts, eof: this.closed }).filter((r) => r.status >= 200).length;
		const ok = await this.waitFor(() => count() >= n, timeoutMs);
		const all = parseResponses(this.data, { ...opts, eof: this.closed });
		if (!ok) {
			throw new Error(`expected ${n} responses, got ${all.filter((r) => r.status >= 200).length} (closed=${this.closed}) from:\n${this.text().slice(0, 4000)}`);
		}
		return all;
	}

	destroy() {
		this.sock.destroy();
	}
}

// Writes bytes (a string is sent as latin1, so every byte value is
// possible; an array is written piece by piece with delayMs between) and
// reads until the server closes or timeoutMs passes (or, with untilResponses,
// until that many final responses arrived). Returns {data, text, closed,
// reset, responses, elapsedMs}.
export async function raw(port, bytes, { timeoutMs = 5000, delayMs = 0, untilResponses = 0, head = false } = {}) {
	const c = await Conn.open(port);
	const start = Date.now();
	const pieces = Array.isArray(bytes) ? bytes : [bytes];
	for (let i = 0; i < pieces.length; i++) {
		if (i > 0 && delayMs) await sleep(delayMs);
		await c.write(pieces[i]);
	}
	if (untilResponses) {
		await c.waitFor(() => parseResponses(c.data, { head, eof: c.closed }).filter((r) => r.status >= 200).length >= untilResponses, timeoutMs);
	} else {
		await c.waitClosed(timeoutMs);
	}
	const closed = c.closed;
	c.destroy();
	const data = c.data;
	return {
		data,
		text: data.toString('latin1'),
		closed,
		reset: c.reset,
		responses: parseResponses(data, { head, eof: closed }),
		elapsedMs: (closed ? c.closedAt : Date.now()) - start,
	};
}

function decodeChunked(buf, off) {
	// Returns {body, end} or null if incomplete.
	const parts = [];
	let p = off;
	for (;;) {
		const eol = buf.indexOf('\r\n', p, 'latin1');
		if (eol < 0) return null;
		const size = parseInt(buf.toString('latin1', p, eol).split(';')[0].trim(), 16);
		if (Number.isNaN(size)) throw new Error(`bad chunk size line in response: ${buf.toString('latin1', p, eol)}`);
		p = eol + 2;
		if (size === 0) {
			// trailers until an empty line
			for (;;) {
				const e = buf.indexOf('\r\n', p, 'latin1');
				if (e < 0) return null;
				const empty = e === p;
				p = e + 2;
				if (empty) return { body: Buffer.concat(parts), end: p };
			}
		}
		if (buf.length < p + size + 2) return null;
		parts.push(buf.subarray(p, p + size));
		p += size + 2;
	}
}

// Splits a byte stream into HTTP/1.x responses. Each response: {version,
// status, reason, headers (lower-case names; a repeated header is an array),
// headerList ([name, value] as sent), head (text), body (Buffer), text
// (body as utf8), json() and raw (the response's bytes)}. Interim 1xx
// responses are included. opts.head: true if every request was HEAD, or an
// array of booleans, one per final response. opts.eof: the stream ended, so
// a response delimited by close is complete. The returned array has .rest
// (bytes after the last complete response).
export function parseResponses(buf, opts = {}) {
	if (typeof buf === 'string') buf = Buffer.from(buf, 'latin1');
	const out = [];
	let off = 0;
	let finalIndex = 0;
	while (off < buf.length) {
		const end = buf.indexOf('\r\n\r\n', off, 'latin1');
		if (end < 0) break;
		const head = buf.toString('latin1', off, end);
		const lines = head.split('\r\n');
		const m = /^HTTP\/(\d\.\d) (\d{3})(?: (.*))?$/.exec(lines[0]);
		if (!m) throw new Error(`not an HTTP response at byte ${off}: ${JSON.stringify(lines[0].slice(0, 200))}`);
		const headers = {};
		const headerList = [];
		for (const l of lines.slice(1)) {
			const i = l.indexOf(':');
			const name = l.slice(0, i);
			const value = l.slice(i + 1).trim();
			headerList.push([name, value]);
			const k = name.toLowerCase();
			if (k in headers) headers[k] = [].concat(headers[k], value);
			else headers[k] = value;
		}
		const status = Number(m[2]);
		let p = end + 4;
		let body = Buffer.alloc(0);
		const isHead = status >= 200 && (Array.isArray(opts.head) ? !!opts.head[finalIndex] : !!opts.head);
		if (status < 200 || status === 204 || status === 304 || isHead) {
			// no body
		} else if (headers['transfer-encoding'] && /chunked/i.test([].concat(headers['transfer-encoding']).join(','))) {
			const r = decodeChunked(buf, p);
			if (!r) break;
			body = r.body;
			p = r.end;
		} else if (headers['content-length'] !== undefined) {
			const len = Number([].concat(headers['content-length'])[0]);
			if (buf.length < p + len) break;
			body = buf.subarray(p, p + len);
			p += len;
		} else {
			if (!opts.eof) break;
			body = buf.subarray(p);
			p = buf.length;
		}
		const resp = {
			version: m[1],
			status,
			reason: m[3] ?? '',
			headers,
			headerList,
			head,
			body,
			text: body.toString('utf8'),
			raw: buf.subarray(off, p),
			json() {
				return JSON.parse(this.text);
			},
		};
		out.push(resp);
		if (status >= 200) finalIndex++;
		off = p;
	}
	out.rest = buf.subarray(off);
	return out;
}

// Builds request bytes. headers: object or array of [name, value]; body:
// string/Buffer, or an object sent as JSON (with Content-Type
// application/json unless given). Host and Content-Length are added unless
// given (pass null to leave one out).
export function buildRequest(port, method, target, { headers = {}, body, version = '1.1' } = {}) {
	let list = Array.isArray(headers) ? headers.slice() : Object.entries(headers);
	const has = (n) => list.some(([k]) => k.toLowerCase() === n);
	let bodyBuf = null;
	if (body !== undefined && body !== null) {
		if (Buffer.isBuffer(body)) bodyBuf = body;
		else if (typeof body === 'string') bodyBuf = Buffer.from(body, 'utf8');
		else {
			bodyBuf = Buffer.from(JSON.stringify(body), 'utf8');
			if (!has('content-type')) list.push(['Content-Type', 'application/json']);
		}
	}
	if (!has('host')) list.unshift(['Host', `127.0.0.1:${port}`]);
	if (bodyBuf && !has('content-length') && !has('transfer-encoding')) list.push(['Content-Length', String(bodyBuf.length)]);
	list = list.filter(([, v]) => v !== null && v !== undefined);
	const headText = `${method} ${target} HTTP/${version}\r\n` + list.map(([k, v]) => `${k}: ${v}\r\n`).join('') + '\r\n';
	const headBuf = Buffer.from(headText, 'latin1');
	return bodyBuf ? Buffer.concat([headBuf, bodyBuf]) : headBuf;
}

// One request on its own connection (Connection: close unless headers say
// otherwise); resolves with the final response (plus .closed, .interim).
export async function request(port, method, target, { headers = {}, body, timeoutMs = 10000, version } = {}) {
	const list = Array.isArray(headers) ? headers.slice() : Object.entries(headers);
	if (!list.some(([k]) => k.toLowerCase() === 'connection')) list.push(['Connection', 'close']);
	const bytes = buildRequest(port, method, target, { headers: list, body, version });
	const c = await Conn.open(port);
	try {
		await c.write(bytes);
		const all = await c.responses(1, timeoutMs, { head: method === 'HEAD' });
		const final = all.find((r) => r.status >= 200);
		final.interim = all.filter((r) => r.status < 200);
		// Give the server a moment to close if it means to.
		await c.waitClosed(50);
		final.closed = c.closed;
		return final;
	} finally {
		c.destroy();
	}
}

// Runs curl with an argv array (never a shell); resolves {code, stdout, stderr}.
export function curl(args, { timeoutMs = 15000 } = {}) {
	return execFileP('curl', args, { timeout: timeoutMs, encoding: 'utf8' });
}

export function hasCurl() {
	return spawnSync('curl', ['--version']).status === 0;
}

// ---------------------------------------------------------------------------
// Bodies and assertions shared by the files.

// A valid POST /setup body; fields in `over` replace (undefined removes).
export function setupBody(over = {}) {
	const b = { email: 'owner@example.com', password: 'correct horse battery', name: 'Olive Owner', organizationName: 'Acme', ...over };
	for (const k of Object.keys(b)) if (b[k] === undefined) delete b[k];
	return b;
}


// Asserts the standard error envelope with the given status and code.
export function assertError(res, status, code) {
	assert.equal(res.status, status, `status: ${res.head}\n\n${res.text}`);
	assert.match(String(res.headers['content-type'] || ''), /^application\/json\b/, 'error Content-Type');
	let j;
	try {
		j = res.json();
	} catch (e) {
		assert.fail(`error body is not JSON: ${JSON.stringify(res.text)}`);
	}
	assert.ok(j && typeof j.error === 'object' && j.error !== null, `error envelope: ${res.text}`);
	if (code) assert.equal(j.error.code, code, `error code in ${res.text}`);
	assert.equal(typeof j.error.message, 'string');
	assert.ok(j.error.message.length > 0, 'error message is not empty');
	assert.equal(j.error.requestId, res.headers['x-request-id'], 'requestId matches X-Request-Id');
	return j.error;
}

// The Server-Sent Events of text: [{event, id, data}], comments (": ping") left out.
export function sseEvents(text) {
	const out = [];
	for (const block of text.split('\n\n')) {
		const lines = block.split('\n').filter((l) => l && !l.startsWith(':'));
		if (!lines.length) continue;
		const e = { event: 'message', id: null, data: '' };
		for (const line of lines) {
			const i = line.indexOf(':');
			const v = line.slice(i + 1).replace(/^ /, '');
			if (line.startsWith('event:')) e.event = v;
			else if (line.startsWith('id:')) e.id = v;
			else if (line.startsWith('data:')) e.data += v;
		}
		out.push(e);
	}
	return out;
}

// Asserts the headers every response carries.
export function assertCommonHeaders(res) {
	assert.ok(res.headers['x-request-id'], 'X-Request-Id present');
	assert.ok(res.headers.date, 'Date present');
	assert.match(String(res.headers.date), /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d\d (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} \d\d:\d\d:\d\d GMT$/, 'Date is an IMF-fixdate');
	if (res.status >= 200 && res.status !== 204 && res.status !== 304) {
		assert.ok(res.headers['content-length'] !== undefined, 'Content-Length present');
	}
	assert.equal(res.headers['cache-control'], 'no-store');
	assert.equal(res.headers['x-content-type-options'], 'nosniff');
}

// Asserts a refusal that closes: status, code, Connection: close, and the
// server actually closed the socket (result of raw()).
export function assertRefusedAndClosed(r, status, code) {
	assert.ok(r.responses.length >= 1, `expected a response, got ${JSON.stringify(r.text.slice(0, 500))} (closed=${r.closed})`);
	const res = r.responses[r.responses.length - 1];
	assertError(res, status, code);
	assert.match(String(res.headers.connection || ''), /\bclose\b/i, `Connection: close in ${res.head}`);
	assert.ok(r.closed, 'server closed the connection');
	return res;
}
