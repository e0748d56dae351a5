// Steward's metrics loop against polling the engine's stats endpoint (what
// `docker stats` and the peers do), for the same containers at the same
// rate, counting dockerd's CPU on both sides.
//
// For each count N of running containers (BENCH_METRICS_CONTAINERS, default
// "0 50 200"; each a busybox `sleep` of the tests' base image with host
// networking, labelled with one application so the loop samples it), in the
// same run:
//   stats:   nothing of Steward runs; this script asks the engine
//            GET /containers/{id}/stats?stream=false for every container once
//            a second (one request at a time per container, all in parallel,
//            as `docker stats` keeps one stream per container) for
//            BENCH_METRICS_SECONDS (default 20). Cost: dockerd's CPU plus
//            this script's own.
//   steward: stewardd's metrics loop at one tick a second
//            (METRICS_SAMPLE_INTERVAL_MS=1000, its test setting; the real
//            interval is 15 s) for the same time: Steward's containers come
//            from the engine's event stream (listed once when stewardd
//            starts, left out with its first seconds: 3 s and 10 ms per
//            container), so a tick is the sampler's cgroup reads. Cost:
//            stewardd's whole process CPU (its idle work included: counted
//            against it) plus dockerd's.
// BENCH_METRICS_INTERVAL_MS (default 1000; 15000 is the real interval) sets
// the Steward side's tick, BENCH_METRICS_SECONDS up to 300 then (a few
// 15 s ticks). BENCH_METRICS_STATS=0 leaves the stats side out (Steward's
// cost only, e.g. at 15 s), BENCH_METRICS_PEER=<stewardd> measures that
// build too in the same row, right after (before/after, alternating by
// row), and BENCH_METRICS_PERF=<dir> records `perf record -g` of each
// Steward window there.
// CPU is utime + stime of /proc/<pid>/stat over the window (10 ms
// resolution), stewardd's from `perf stat -e task-clock` when perf is
// there (to the microsecond: a 15 s tick costs about a millisecond). Prints a markdown
// table, per tick and per container, and the ratio; also written to
// bench/results/metrics_vs_stats.md (BENCH_RESULTS). Needs root (a private dockerd) or a
// running engine, and the tests' PostgreSQL (tests/integration/harness.mjs).
//
//   STEWARDD=build/release/stewardd node bench/metrics_vs_stats.mjs

import fs from 'node:fs';
import path from 'node:path';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { spawn } from 'node:child_process';
import * as h from '../tests/integration/harness.mjs';
import { startDocker, baseImage, dockerRequest, removeByLabel } from '../tests/integration/docker.mjs';
import { benchOrganization, taskClockMs } from './bench_world.mjs';

const COUNTS = (process.env.BENCH_METRICS_CONTAINERS || '0 50 200').split(/\s+/).filter(Boolean).map(Number);
const SECONDS = Number(process.env.BENCH_METRICS_SECONDS || 20);
const INTERVAL = Number(process.env.BENCH_METRICS_INTERVAL_MS || 1000);
const STATS = process.env.BENCH_METRICS_STATS !== '0';
const PEER = process.env.BENCH_METRICS_PEER || '';
const PERF = process.env.BENCH_METRICS_PERF || '';
const TICKS = SECONDS * 1000 / INTERVAL;
if (COUNTS.some((n) => !(n >= 0 && n <= 500))) throw new Error('BENCH_METRICS_CONTAINERS: counts of 0..500');
if (!(SECONDS >= 5 && SECONDS <= 300)) throw new Error('BENCH_METRICS_SECONDS: 5..300 (bounded runs)');
if (!(INTERVAL >= 1000 && INTERVAL <= 15000 && TICKS >= 1)) throw new Error('BENCH_METRICS_INTERVAL_MS: 1000..15000, at most BENCH_METRICS_SECONDS');
const here = path.dirname(fileURLToPath(import.meta.url));
const TICK = 10; // ms per clock tick of /proc/<pid>/stat (USER_HZ is 100 on Linux)

h.stewarddPath();
const engine = await startDocker();
const image = await baseImage();
const pg = await h.startPostgres();

// dockerd's pid: the process whose command line names this engine's socket
// (a private one), else the one dockerd.
function dockerdPid() {
	let any = null;
	for (const p of fs.readdirSync('/proc')) {
		if (!/^\d+$/.test(p)) continue;
		let cmd;
		try {
			cmd = fs.readFileSync(`/proc/${p}/cmdline`, 'utf8').split('\0');
		} catch {
			continue;
		}
		if (!path.basename(cmd[0] || '').startsWith('dockerd')) continue;
		if (cmd.some((a) => a.includes(engine.socket))) return Number(p);
		any = Number(p);
	}
	if (!any) throw new Error('no dockerd process found');
	return any;
}
const dpid = dockerdPid();

function cpuMs(pid) {
	const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
	const rest = f.slice(f.lastIndexOf(')') + 2).split(' ');
	return (Number(rest[11]) + Number(rest[12])) * TICK; // utime, stime
}
function selfMs() {
	const u = process.cpuUsage();
	return (u.user + u.system) / 1000;
}

// Setup: one organization, its local server, one application.
const { srv: made, sql, org, server, project, env } = await benchOrganization(pg, { METRICS_EBPF: '0' });
let srv = made;
const app = await sql(`INSERT INTO applications (organization_id, project_id, environment_id, server_id, name)
	VALUES ('${org}', '${project}', '${env}', '${server}', 'bench') RETURNING id`);

const containers = [];
async function scaleTo(n) {
	while (containers.length < n) {
		const c = await dockerRequest('POST', '/containers/create', {
			Image: image, Cmd: ['sleep', '3600'], Labels: { 'steward.application': app },
			HostConfig: { NetworkMode: 'host' },
		});
		if (c.status !== 201) throw new Error(`create: ${c.status} ${c.text}`);
		const id = c.json().Id;
		const s = await dockerRequest('POST', `/containers/${id}/start`);
		if (s.status !== 204) throw new Error(`start: ${s.status} ${s.text}`);
		containers.push(id);
	}
}

// The stats side: every container's one-shot stats once a second.
async function pollStats(ids, seconds) {
	const end = Date.now() + seconds * 1000;
	let requests = 0;
	await Promise.all(ids.map(async (id) => {
		for (let next = Date.now(); next < end; next += 1000) {
			const r = await dockerRequest('GET', `/containers/${id}/stats?stream=false`);
			if (r.status !== 200) throw new Error(`stats: ${r.status}`);
			requests++;
			const wait = next + 1000 - Date.now();
			if (wait > 0) await h.sleep(wait);
		}
	}));
	return requests;
}

const rows = [];
try {
	for (const n of COUNTS) {
		await scaleTo(n);
		const ids = containers.slice(0, n);
		// stats
		let d0 = cpuMs(dpid), s0 = selfMs();
		const requests = !STATS ? 0 : n ? await pollStats(ids, SECONDS) : (await h.sleep(SECONDS * 1000), 0);
		const statsDockerd = STATS ? cpuMs(dpid) - d0 : 0, statsSelf = STATS ? selfMs() - s0 : 0;
		// steward (then its peer build): the loop at INTERVAL; its first
		// seconds (start-up, cgroup mapping) are left out
		const stew = [];
		for (const bin of PEER ? [h.stewarddPath(), PEER] : [h.stewarddPath()]) {
			const saved = process.env.STEWARDD;
			process.env.STEWARDD = bin;
			srv = await h.startStewardd({ db: pg, env: { DOCKER_HOST: engine.host, METRICS_SAMPLE_INTERVAL_MS: INTERVAL, METRICS_EBPF: '0', DATABASE_URL: srv.env.DATABASE_URL } });
			process.env.STEWARDD = saved;
			await h.sleep(3000 + 10 * n);
			const pid = srv.proc.pid;
			const perf = PERF ? spawn('perf', ['record', '-g', '-q', '-o', path.join(PERF, `perf-${n}-${stew.length}.data`), '-p', String(pid)], { stdio: 'ignore' }) : null;
			d0 = cpuMs(dpid);
			const w0 = cpuMs(pid);
			const clock = await taskClockMs(pid, SECONDS); // null without perf: /proc's figure
			stew.push({ dockerd: cpuMs(dpid) - d0, self: clock ?? cpuMs(pid) - w0 });
			if (perf) {
				const done = new Promise((resolve) => perf.once('exit', resolve));
				perf.kill('SIGINT');
				await done;
			}
			await srv.stop();
		}
		const stewDockerd = stew[0].dockerd, stewSelf = stew[0].self;
		rows.push({ n, requests, statsDockerd, statsSelf, stewDockerd, stewSelf, peer: stew[1] });
		process.stderr.write(`[bench] ${n} containers: stats ${statsDockerd}+${statsSelf.toFixed(0)} ms, steward ${stewSelf}+${stewDockerd} ms\n`);
	}
} finally {
	await removeByLabel(`steward.application=${app}`);
}

const per = (ms) => (ms / TICKS).toFixed(2); // ms of CPU per tick
const core = (ms) => (ms / SECONDS / 10).toFixed(3); // % of one core
const usPer = (ms, n) => (n ? ((ms / TICKS) * 1000 / n).toFixed(1) : '-');
const lines = [
	`# Metrics: Steward's loop against polling the engine's stats endpoint`,
	'',
	`${new Date().toISOString()}, ${os.cpus().length} cores (${os.cpus()[0].model}), load ${fs.readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}, ${SECONDS} s per row, a tick every ${INTERVAL} ms (${TICKS} ticks), stewardd ${process.env.STEWARDD}${PEER ? `, peer ${PEER}` : ''}.`,
	'CPU per tick is milliseconds of CPU per tick of the window (utime + stime, 10 ms resolution; stewardd\'s from perf task-clock when perf is there); dockerd is counted on both sides.',
	'',
];
if (STATS) lines.push(
	'| containers | stats: dockerd ms/tick | stats: poller ms/tick | steward: stewardd ms/tick | steward: dockerd ms/tick | steward us per container per tick | stats total / steward total |',
	'|---|---|---|---|---|---|---|',
	...rows.map((r) => {
		const a = r.statsDockerd + r.statsSelf, b = r.stewSelf + r.stewDockerd;
		return `| ${r.n} | ${per(r.statsDockerd)} | ${per(r.statsSelf)} | ${per(r.stewSelf)} | ${per(r.stewDockerd)} | ${usPer(b, r.n)} | ${b > 0 ? (a / b).toFixed(1) + 'x' : '-'} |`;
	}),
	'');
const base = rows.find((r) => r.n === 0);
const side = (name, get) => rows.map((r) => {
	const x = get(r);
	if (!x) return null;
	const b0 = base && get(base) ? get(base).self : null;
	return `| ${name} | ${r.n} | ${x.self} | ${core(x.self)} | ${per(x.self)} | ${per(x.dockerd)} | ${usPer(x.self, r.n)} | ${b0 === null || !r.n ? '-' : usPer(x.self - b0, r.n)} |`;
}).filter(Boolean);
lines.push(
	'| build | containers | stewardd CPU ms (task-clock) | % of a core | stewardd ms/tick | dockerd ms/tick (10 ms resolution) | stewardd us per container per tick (whole process) | the same, stewardd at 0 containers taken off |',
	'|---|---|---|---|---|---|---|---|',
	...side('this', (r) => ({ self: r.stewSelf, dockerd: r.stewDockerd })),
	...(PEER ? side('peer', (r) => r.peer) : []),
	'');
const text = lines.join('\n');
process.stdout.write(text);
fs.writeFileSync(process.env.BENCH_RESULTS || path.join(here, 'results', 'metrics_vs_stats.md'), text);
await h.cleanupAll();
