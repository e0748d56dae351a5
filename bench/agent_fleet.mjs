#!/usr/bin/env node
// The agent channel's costs (bench/METHODOLOGY.md, "Agents"), against a
// scratch PostgreSQL and the stewardd given, in one run:
//   1. steward-agent's idle RSS with its journal open, connected and
//      welcomed (no peer agent is installed here: the reference is the
//      published figure of Coolify's Sentinel, 4.7 MB);
//   2. a no-op command's round trip (host.facts: INSERT into agent_commands
//      -> the holder sends it -> the agent answers -> the NOTIFY of its
//      result), p50 and p99 over BENCH_RTT_COUNT;
//   3. BENCH_AGENTS idle agents (bench_agent_fleet: hello, heartbeats at the
//      default 10 s): the RSS they add to stewardd, and stewardd's and
//      PostgreSQL's CPU over BENCH_AGENTS_WINDOW_S with them, against the
//      same window with none (the peer measured in the same run), for
//      protocol 2 (the agents' heartbeats) and protocol 1 (the control
//      plane's, echoed) in turn, BENCH_AGENTS_ROUNDS times;
//   4. a reconnect storm: stewardd stopped (SIGTERM: goaway with a retry
//      hint) and started again on the same address under BENCH_STORM_AGENTS
//      agents: each agent's time from its drop to its next welcome, and the
//      welcomes per 500 ms; then the same after a SIGKILL (no hint: the
//      agents' backoff alone);
//   5. a build context's stream (BENCH_STREAM_MIB MiB of random bytes)
//      through the remote driver, the holder's session and the socket to a
//      real steward-agent, against a plain loopback TCP copy of the same tar
//      stream in the same run (bench_agent_stream, BENCH_AGENT_STREAM).
//
//   STEWARDD=build-bench/stewardd STEWARD_AGENT=build-bench/steward-agent \
//   BENCH_AGENT_FLEET=build-bench/bench/bench_agent_fleet node bench/agent_fleet.mjs
//
// Settings: BENCH_AGENTS (10000), BENCH_AGENTS_WINDOW_S (30), BENCH_AGENTS_ROUNDS (1),
// BENCH_STORM_AGENTS (1000), BENCH_RTT_COUNT (500), BENCH_STREAM_MIB (256),
// BENCH_AGENT_BEFORE (a second steward-agent measured alternately in part 1),
// BENCH_IDLE_ROUNDS (1: agents of each binary in part 1, the median reported),
// BENCH_AGENTS_PARTS (the parts to run, of "idle,rtt,fleet,storm,stream";
// all by default), BENCH_RESULTS (bench/results/agents.md). Every wait is bounded; exits 77 saying why
// when PostgreSQL or a binary is missing.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import * as h from '../tests/integration/harness.mjs';
import { setup, call, ok } from '../tests/integration/identity.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const num = (name, dflt, max) => {
	const v = Number(process.env[name] || dflt);
	if (!Number.isInteger(v) || v < 1 || v > max) { console.error(`${name} must be 1..${max}`); process.exit(2); }
	return v;
};
const AGENTS = num('BENCH_AGENTS', 10000, 20000);
const WINDOW_S = num('BENCH_AGENTS_WINDOW_S', 30, 300);
const STORM = num('BENCH_STORM_AGENTS', 1000, 5000);
const RTT_COUNT = num('BENCH_RTT_COUNT', 500, 100000);
const ROUNDS = num('BENCH_AGENTS_ROUNDS', 1, 10);
const STREAM_MIB = num('BENCH_STREAM_MIB', 256, 4096);
const PARTS = new Set((process.env.BENCH_AGENTS_PARTS || 'idle,rtt,fleet,storm,stream').split(','));
for (const p of PARTS)
	if (!['idle', 'rtt', 'fleet', 'storm', 'stream'].includes(p)) { console.error(`BENCH_AGENTS_PARTS: no part ${p}`); process.exit(2); }
const OUT = process.env.BENCH_RESULTS || path.join(here, 'results', 'agents.md');
for (const v of ['STEWARD_AGENT', 'BENCH_AGENT_FLEET', ...(PARTS.has('stream') ? ['BENCH_AGENT_STREAM'] : [])]) {
	if (!process.env[v] || !fs.existsSync(process.env[v])) h.skip(`${v} is not set to a built binary`);
}
h.stewarddPath();
const TICK = 100; // USER_HZ on Linux
const PAGE_KB = 4;

function cpuTicks(pid) {
	try {
		const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
		return Number(f[11]) + Number(f[12]); // utime, stime
	} catch { return 0; }
}
function rssKb(pid) {
	const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
	return Number(m[1]);
}
// The postmaster of our scratch cluster and its children (backends etc.).
function pgPids(pg) {
	const master = Number(fs.readFileSync(path.join(pg.dir, 'data', 'postmaster.pid'), 'utf8').split('\n')[0]);
	const pids = [master];
	for (const d of fs.readdirSync('/proc')) {
		if (!/^\d+$/.test(d)) continue;
		try {
			const ppid = Number(fs.readFileSync(`/proc/${d}/stat`, 'utf8').split(') ')[1].split(' ')[1]);
			if (ppid === master) pids.push(Number(d));
		} catch {}
	}
	return pids;
}
const pgTicks = (pg) => pgPids(pg).reduce((s, p) => s + cpuTicks(p), 0);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Runs bench_agent_fleet; lines() yields its stdout lines as they come.
function fleet(port, tokensFile, n, holdS, maxS, env = {}) {
	const proc = spawn(process.env.BENCH_AGENT_FLEET, [String(port), tokensFile, String(n), String(holdS), String(maxS)],
		{ env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'inherit'] });
	const queue = [];
	let wake = null;
	readline.createInterface({ input: proc.stdout }).on('line', (l) => { queue.push(l); if (wake) wake(); });
	const exited = new Promise((r) => proc.once('exit', r));
	proc.next = async (re, timeoutMs) => {
		const deadline = Date.now() + timeoutMs;
		for (;;) {
			const i = queue.findIndex((l) => re.test(l));
			if (i >= 0) return queue.splice(i, 1)[0];
			if (proc.exitCode !== null) throw new Error(`bench_agent_fleet exited (${proc.exitCode}) before ${re}`);
			if (Date.now() > deadline) throw new Error(`bench_agent_fleet: no ${re} within ${timeoutMs} ms`);
			await Promise.race([new Promise((r) => (wake = r)), sleep(200)]);
		}
	};
	proc.done = async () => { proc.stdin.end(); await exited; };
	return proc;
}

const pg = await h.startPostgres();
const baseEnv = { STEWARD_RUNNERS: 'false', STEWARD_LOG_LEVEL: 'warn' };
let srv = await h.startStewardd({ db: pg, env: baseEnv });
// The database made for the first stewardd: the restarts of part 4 reuse
// it through DATABASE_URL (and so know no name of their own).
const dbName = srv.dbName;
const sql = async (q) => (await pg.psql(q, dbName)).trim();
const owner = await setup(srv);
const org = await sql('SELECT id FROM organizations LIMIT 1');
const N = Math.max(AGENTS, STORM);
// Servers and tokens made in SQL (10,000 POST /servers would measure the
// API): canonical sta_ tokens derived from a counter, stored as their SHA-256.
const TOKEN = "'sta_' || translate(rtrim(encode(sha256(('bench-agent-' || i)::text::bytea), 'base64'), '='), '+/', '-_')";
await sql(`INSERT INTO servers (organization_id, name, agent_token_hash, agent_token_prefix, agent_token_created_at)
	SELECT '${org}', 'bench-' || i, sha256(convert_to(t, 'UTF8')), left(t, 12), now()
	FROM (SELECT i, ${TOKEN} AS t FROM generate_series(1, ${N}) i) x`);
const tokensFile = path.join(h.makeTempDir('sw-bench-agents-'), 'tokens');
fs.writeFileSync(tokensFile, (await sql(`SELECT ${TOKEN} FROM generate_series(1, ${N}) i ORDER BY i`)) + '\n');
const firstServer = await sql("SELECT id FROM servers WHERE name = 'bench-1'");
const rows = [];
const say = (s) => console.error(`[agents] ${s}`);

// A real steward-agent for a new server, connected and welcomed; its
// Docker socket is absent (nobody serves it) and so is its Caddy.
async function realAgent(name, bin = process.env.STEWARD_AGENT) {
	const made = await ok(call(srv, 'POST', '/servers', owner, { body: { name, host: '127.0.0.1' } }), 201);
	const [, url, token] = /^STEWARD_URL='([^']+)' STEWARD_AGENT_TOKEN='(sta_[A-Za-z0-9_-]{43})'/.exec(made.agentCommand);
	const dataDir = h.makeTempDir('sw-bench-agent-');
	const agent = spawn(bin, [], {
		env: { PATH: process.env.PATH, STEWARD_URL: url, STEWARD_AGENT_TOKEN: token, STEWARD_AGENT_DATA_DIR: dataDir,
			DOCKER_HOST: `unix://${path.join(dataDir, 'no-docker.sock')}`, CADDY_ADMIN_URL: 'http://127.0.0.1:9' },
		stdio: 'ignore',
	});
	const deadline = Date.now() + 30000;
	while ((await sql(`SELECT status FROM servers WHERE id = '${made.id}'`)) !== 'ONLINE') {
		if (Date.now() > deadline) throw new Error('steward-agent never came ONLINE');
		await sleep(100);
	}
	return { agent, dataDir, serverId: made.id };
}

// ---- 1. steward-agent idle ----
// RSS per mapping from /proc/PID/smaps: each file by its base name, the
// anonymous ones as [heap], [stack] or "anon"; MB, largest first.
function rssByMapping(pid) {
	const by = new Map();
	let name = null;
	for (const line of fs.readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
		const head = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \d+\s*(.*)$/.exec(line);
		if (head) { name = head[1] ? path.basename(head[1]) : 'anon'; continue; }
		const m = /^Rss:\s+(\d+) kB/.exec(line);
		if (m) by.set(name, (by.get(name) || 0) + Number(m[1]));
	}
	return [...by].filter(([, k]) => k > 0).sort((a, b) => b[1] - a[1])
		.map(([n, k]) => `${n} ${(k / 1024).toFixed(2)}`).join(', ');
}

async function idleAgent(bin, i) {
	const { agent, dataDir } = await realAgent(`real-agent-${i}`, bin);
	const journalOpen = fs.readdirSync(`/proc/${agent.pid}/fd`).some((fd) => {
		try { return fs.readlinkSync(`/proc/${agent.pid}/fd/${fd}`).startsWith(dataDir); } catch { return false; }
	});
	await sleep(3000); // settled: a few heartbeats answered
	const status = fs.readFileSync(`/proc/${agent.pid}/status`, 'utf8') + fs.readFileSync(`/proc/${agent.pid}/smaps_rollup`, 'utf8');
	const kb = (k) => Number(new RegExp(`${k}:\\s+(\\d+) kB`).exec(status)[1]);
	const maps = rssByMapping(agent.pid);
	const mapped = fs.readFileSync(`/proc/${agent.pid}/maps`, 'utf8');
	agent.kill('SIGTERM');
	return { journalOpen, rss: kb('VmRSS'), maps, crypto: /lib(ssl|crypto)\.so/.test(mapped),
		text: `${(kb('VmRSS') / 1024).toFixed(2)} MB (anon ${(kb('RssAnon') / 1024).toFixed(2)}, file ${(kb('RssFile') / 1024).toFixed(2)}; peak ${(kb('VmHWM') / 1024).toFixed(2)}; PSS ${(kb('Pss') / 1024).toFixed(2)})` };
}

if (PARTS.has('idle')) {
	// BENCH_AGENT_BEFORE: another steward-agent (the build before a change),
	// measured alternately with STEWARD_AGENT in the same run.
	const bins = [['', process.env.STEWARD_AGENT]];
	if (process.env.BENCH_AGENT_BEFORE) bins.unshift([' (before: BENCH_AGENT_BEFORE)', process.env.BENCH_AGENT_BEFORE]);
	const ROUNDS = num('BENCH_IDLE_ROUNDS', 1, 10);
	const got = new Map(bins.map(([label]) => [label, []]));
	for (let r = 0, i = 0; r < ROUNDS; r++)
		for (const [label, bin] of bins) got.get(label).push(await idleAgent(bin, i++));
	for (const [label] of bins) {
		const runs = got.get(label).sort((a, b) => a.rss - b.rss), med = runs[runs.length >> 1];
		rows.push([`steward-agent idle RSS${label} (connected, journal open: ${med.journalOpen ? 'yes' : 'NO'})`, med.text,
			'<= 3 MB', `Coolify Sentinel 4.7 MB (published; no peer installed here); median of ${runs.length} (${runs.map((x) => (x.rss / 1024).toFixed(2)).join(', ')}); libssl/libcrypto mapped: ${med.crypto ? 'yes' : 'no'}; per mapping (MB): ${med.maps}`]);
		say(rows.at(-1).join(' | '));
	}
}

// ---- 2. round trip of a no-op command ----
if (PARTS.has('rtt')) {
	const f = fleet(srv.port, tokensFile, 1, 1, 120, { BENCH_RTT: `${srv.env.DATABASE_URL}|${firstServer}|${RTT_COUNT}` });
	const line = await f.next(/^rtt /, 120000);
	await f.done();
	const [, n, p50, p99, max] = /^rtt (\d+) p50 (\d+) p99 (\d+) max (\d+)/.exec(line).map(Number);
	rows.push([`no-op command round trip (host.facts, ${n} in a row)`, `p50 ${(p50 / 1000).toFixed(2)} ms, p99 ${(p99 / 1000).toFixed(2)} ms, max ${(max / 1000).toFixed(2)} ms`, 'p99 <= 2 ms', 'INSERT to result NOTIFY, one replica']);
	say(rows.at(-1).join(' | '));
}

// ---- 3. idle agents ----
// Protocol 2 (only the agents send heartbeats) and protocol 1 (the control
// plane's heartbeats, echoed) against the same stewardd, one after the
// other, BENCH_AGENTS_ROUNDS times (2, 1, 2, 1, ...). The RSS is the first
// pass's (later ones start from an allocator that has grown already).
if (PARTS.has('fleet')) {
	const pid = srv.proc.pid;
	let c0 = cpuTicks(pid), p0 = pgTicks(pg);
	await sleep(WINDOW_S * 1000);
	const idleCpu = (cpuTicks(pid) - c0) / TICK / WINDOW_S * 100, idlePg = (pgTicks(pg) - p0) / TICK / WINDOW_S * 100;
	const passes = [];
	for (let r = 0; r < ROUNDS; r++) passes.push(2, 1);
	const got = { 1: [], 2: [] };
	for (const [i, protocol] of passes.entries()) {
		const rss0 = rssKb(pid);
		const f = fleet(srv.port, tokensFile, AGENTS, WINDOW_S + 15, WINDOW_S + 300, { BENCH_PROTOCOL_MAX: String(protocol) });
		const online = await f.next(/^online /, 300000);
		const connectMs = Number(online.split(' ')[2]);
		await sleep(12000); // past one heartbeat interval: every session has had one
		const rss1 = rssKb(pid);
		c0 = cpuTicks(pid); p0 = pgTicks(pg);
		await sleep(WINDOW_S * 1000);
		const cpu = (cpuTicks(pid) - c0) / TICK / WINDOW_S * 100, pgCpu = (pgTicks(pg) - p0) / TICK / WINDOW_S * 100;
		const hb = await f.next(/^heartbeats /, (WINDOW_S + 60) * 1000);
		await f.done();
		got[protocol].push({ cpu, pgCpu, hb });
		say(`pass ${i + 1}, protocol ${protocol}: stewardd ${cpu.toFixed(2)}%, PostgreSQL ${pgCpu.toFixed(2)}%, ${hb}`);
		if (i === 0) rows.push([`${AGENTS} idle agents: RSS added to stewardd`, `${((rss1 - rss0) / 1024).toFixed(1)} MB (${((rss1 - rss0) * 1024 / AGENTS).toFixed(0)} B each; ${(rss0 / 1024).toFixed(1)} -> ${(rss1 / 1024).toFixed(1)} MB)`, '<= 40 MB', `protocol ${protocol}; all welcomed in ${(connectMs / 1000).toFixed(1)} s`]);
	}
	const list = (p, k) => got[p].map((g) => g[k].toFixed(2)).join(', ');
	const mean = (p, k) => got[p].reduce((a, g) => a + g[k], 0) / got[p].length;
	rows.push([`${AGENTS} idle agents: stewardd CPU, protocol 2 (agents' heartbeats every 10 s, not answered)`, `${mean(2, 'cpu').toFixed(2)}% of a core (passes: ${list(2, 'cpu')}; none connected: ${idleCpu.toFixed(2)}%)`, '< 1% of a core', `over ${WINDOW_S} s each; ${got[2].map((g) => g.hb).join('; ')}`]);
	rows.push([`${AGENTS} idle agents: stewardd CPU, protocol 1 (control plane's heartbeats, echoed), same run`, `${mean(1, 'cpu').toFixed(2)}% of a core (passes: ${list(1, 'cpu')}); protocol 2 / protocol 1 = ${(mean(2, 'cpu') / mean(1, 'cpu')).toFixed(2)}`, '-', `over ${WINDOW_S} s each; ${got[1].map((g) => g.hb).join('; ')}`]);
	rows.push([`${AGENTS} idle agents: PostgreSQL CPU`, `protocol 2 ${mean(2, 'pgCpu').toFixed(2)}%, protocol 1 ${mean(1, 'pgCpu').toFixed(2)}% of a core (none connected: ${idlePg.toFixed(2)}%)`, '-', 'lastSeenAt: one UPDATE per loop thread per half interval']);
	for (const r of rows.slice(-4)) say(r.join(' | '));
}

// ---- 4. reconnect storms ----
for (const signal of PARTS.has('storm') ? ['SIGTERM', 'SIGKILL'] : []) {
	const f = fleet(srv.port, tokensFile, STORM, 0, 300);
	await f.next(/^online /, 120000);
	const port = srv.port;
	if (signal === 'SIGTERM') await srv.stop('SIGTERM');
	else { srv.kill(); await srv.exited; }
	const t0 = Date.now();
	srv = await h.startStewardd({ db: pg, port, env: { ...baseEnv, DATABASE_URL: srv.env.DATABASE_URL, STEWARD_DATA_DIR: srv.env.STEWARD_DATA_DIR } });
	const upMs = Date.now() - t0;
	const storm = await f.next(/^storm /, 240000);
	const accepts = (await f.next(/^accepts/, 1000)).split(' ').slice(1).map(Number);
	await f.done();
	const [, n, p50, p99, max] = /^storm (\d+) p50 (\d+) p99 (\d+) max (\d+)/.exec(storm).map(Number);
	const peak = Math.max(...accepts) * 2;
	rows.push([`reconnect storm, ${n} agents, stewardd ${signal === 'SIGTERM' ? 'stopped (goaway hint)' : 'killed (backoff only)'} and restarted`,
		`drop to welcome p50 ${(p50 / 1000).toFixed(1)} s, p99 ${(p99 / 1000).toFixed(1)} s, max ${(max / 1000).toFixed(1)} s; peak ${peak} welcomes/s`,
		'p99 <= 15 s', `restart took ${(upMs / 1000).toFixed(1)} s; welcomes per 500 ms: ${accepts.join(' ')}`]);
	say(rows.at(-1).join(' | '));
}

// ---- 5. a build context's stream ----
if (PARTS.has('stream')) {
	const { agent, serverId } = await realAgent('stream-agent');
	const work = h.makeTempDir('sw-bench-stream-');
	const proc = spawn(process.env.BENCH_AGENT_STREAM, [srv.env.DATABASE_URL, serverId,
		path.join(srv.env.STEWARD_DATA_DIR, 'master.key'), work, String(STREAM_MIB)], { stdio: ['ignore', 'pipe', 'inherit'] });
	let out = '';
	proc.stdout.on('data', (b) => (out += b));
	const code = await Promise.race([new Promise((r) => proc.once('exit', r)), sleep(600000).then(() => 'timeout')]);
	if (code !== 0) { proc.kill('SIGKILL'); throw new Error(`bench_agent_stream: ${code}`); }
	agent.kill('SIGTERM');
	const runs = { tcp: [], agent: [] };
	for (const l of out.trim().split('\n')) {
		const [k, bytes, us] = l.split(' ');
		runs[k].push(Number(bytes) / Number(us)); // bytes per µs = MB/s
	}
	const med = (a) => [...a].sort((x, y) => x - y)[a.length >> 1];
	const tcp = med(runs.tcp), ag = med(runs.agent);
	rows.push([`build context stream, ${STREAM_MIB} MiB tar (random bytes), remote driver to steward-agent staged and checked`,
		`${ag.toFixed(1)} MB/s (runs: ${runs.agent.map((v) => v.toFixed(1)).join(', ')})`, '-',
		`plain loopback TCP copy of the same tar stream into a file: ${tcp.toFixed(1)} MB/s (runs: ${runs.tcp.map((v) => v.toFixed(1)).join(', ')}); ratio ${(ag / tcp * 100).toFixed(2)}%`]);
	say(rows.at(-1).join(' | '));
}

const stewarddBin = process.env.STEWARDD;
let commit = 'unknown';
try { commit = (await import('node:child_process')).execFileSync('git', ['-C', here, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim(); } catch {}
const report = [
	`# Agents (bench/agent_fleet.mjs)`,
	'',
	`${new Date().toISOString()}, commit ${commit}, ${os.cpus().length} cores (${os.cpus()[0]?.model ?? '?'}), stewardd ${stewarddBin}`,
	'',
	'| measure | figure | goal | notes |',
	'|---|---|---|---|',
	...rows.map((r) => `| ${r.join(' | ')} |`),
	'',
].join('\n');
fs.mkdirSync(path.dirname(OUT), { recursive: true });
fs.writeFileSync(OUT, report);
process.stdout.write(report);
await h.cleanupAll();
process.exit(0);
