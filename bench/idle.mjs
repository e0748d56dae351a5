// stewardd at rest: its CPU and its system calls with no request, no agent
// and no container, against a peer build (the one before a change), in the
// same run, alternating.
//
// Each round starts one build (STEWARDD, then BENCH_IDLE_PEER when set, then
// STEWARDD again...) as a production server would run: job runners on,
// its metrics loop at the real 15 s, eBPF off, a private dockerd (its
// container watcher follows the engine's event stream) and the tests'
// PostgreSQL. After BENCH_IDLE_SETTLE seconds (default 5: start-up left
// out) it measures, over BENCH_IDLE_SECONDS (default 60, 10..300):
//   cpu:      `perf stat -e task-clock -p <pid>` (CPU time to the
//             microsecond) and utime + stime of /proc/<pid>/stat (10 ms
//             resolution) over the same window, then
//   syscalls: `strace -f -c -p <pid>` over a second window of the same
//             length (strace's own overhead stays out of the CPU figure).
// BENCH_IDLE_ROUNDS (default 2) rounds per build. Prints a markdown table,
// also written to bench/results/idle.md (BENCH_RESULTS).
//
//   STEWARDD=build/rel/stewardd BENCH_IDLE_PEER=/tmp/before/stewardd node bench/idle.mjs

import fs from 'node:fs';
import path from 'node:path';
import os from 'node:os';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import * as h from '../tests/integration/harness.mjs';
import { startDocker } from '../tests/integration/docker.mjs';
import { benchOrganization, taskClockMs } from './bench_world.mjs';

const SECONDS = Number(process.env.BENCH_IDLE_SECONDS || 60);
const SETTLE = Number(process.env.BENCH_IDLE_SETTLE || 5);
const ROUNDS = Number(process.env.BENCH_IDLE_ROUNDS || 2);
if (!(SECONDS >= 10 && SECONDS <= 300)) throw new Error('BENCH_IDLE_SECONDS: 10..300 (bounded runs)');
if (!(ROUNDS >= 1 && ROUNDS <= 10)) throw new Error('BENCH_IDLE_ROUNDS: 1..10');
const here = path.dirname(fileURLToPath(import.meta.url));
const TICK = 10; // ms per clock tick of /proc/<pid>/stat

const builds = [{ name: 'this build', bin: h.stewarddPath() }];
if (process.env.BENCH_IDLE_PEER) builds.push({ name: 'peer', bin: process.env.BENCH_IDLE_PEER });
const engine = await startDocker();
const pg = await h.startPostgres();
const { srv: made } = await benchOrganization(pg, { METRICS_EBPF: '0' });

function cpuMs(pid) {
	const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
	const rest = f.slice(f.lastIndexOf(')') + 2).split(' ');
	return (Number(rest[11]) + Number(rest[12])) * TICK;
}

// strace -c over `seconds`: { total, byName } (calls).
async function syscalls(pid, seconds) {
	const p = spawn('strace', ['-f', '-c', '-q', '-p', String(pid)], { stdio: ['ignore', 'ignore', 'pipe'] });
	let text = '';
	p.stderr.on('data', (b) => { text += b; });
	const exited = new Promise((resolve) => p.once('exit', resolve));
	await h.sleep(seconds * 1000);
	p.kill('SIGINT');
	await exited;
	const byName = {};
	let total = 0;
	for (const line of text.split('\n')) {
		const m = /^\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)\s+(?:\d+\s+)?(\w+)\s*$/.exec(line);
		if (m && m[2] !== "total") { byName[m[2]] = Number(m[1]); total += Number(m[1]); }
	}
	return { total, byName };
}

const rows = [];
for (let r = 0; r < ROUNDS; r++) {
	for (const b of builds) {
		process.env.STEWARDD = b.bin;
		const srv = await h.startStewardd({ db: pg, env: { DOCKER_HOST: engine.host, METRICS_EBPF: '0', STEWARD_RUNNERS: 'true', DATABASE_URL: made.env.DATABASE_URL } });
		await h.sleep(SETTLE * 1000);
		const pid = srv.proc.pid;
		const c0 = cpuMs(pid);
		const clock = await taskClockMs(pid, SECONDS);
		const cpu = cpuMs(pid) - c0;
		const sc = await syscalls(pid, SECONDS);
		await srv.stop();
		rows.push({ build: b.name, cpu, clock, sc });
		process.stderr.write(`[bench] ${b.name}: ${cpu} ms CPU (task-clock ${clock}), ${sc.total} syscalls in ${SECONDS} s\n`);
	}
}
process.env.STEWARDD = builds[0].bin;

const top = (byName) => Object.entries(byName).sort((a, b) => b[1] - a[1]).slice(0, 6).map(([k, v]) => `${k} ${v}`).join(', ');
const load = fs.readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
const lines = [
	`${new Date().toISOString()}, ${os.cpus().length} cores (${os.cpus()[0].model}), load ${load}, ${SECONDS} s windows, ${ROUNDS} rounds alternating.`,
	`Builds: this build ${builds[0].bin}${builds[1] ? `, peer ${builds[1].bin}` : ''}.`,
	'',
	'| round | build | task-clock ms | % of a core (task-clock) | /proc stat ms | syscalls/s | most frequent (calls in the window) |',
	'|---|---|---|---|---|---|---|',
	...rows.map((x, i) => `| ${Math.floor(i / builds.length) + 1} | ${x.build} | ${x.clock ?? '-'} | ${x.clock === null ? '-' : (x.clock / SECONDS / 10).toFixed(4)} | ${x.cpu} | ${(x.sc.total / SECONDS).toFixed(1)} | ${top(x.sc.byName)} |`),
	'',
];
const text = lines.join('\n');
process.stdout.write(text);
fs.writeFileSync(process.env.BENCH_RESULTS || path.join(here, 'results', 'idle.md'), text);
await h.cleanupAll();
