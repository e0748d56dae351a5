// Container CPU by three methods side by side, in one run (issue 12):
// (a) each container's cgroup cpu.stat (what the sampler does), (b) a BPF
// cgroup iterator reading every container in one read of its fd, (c) a
// tp_btf/sched_switch hook accumulating run time per cgroup in a map, with
// the hook's own cost on every context switch (kernel BPF run-time
// statistics under a pipe ping-pong). bench/cpu_methods.c measures; this
// script starts a private dockerd (tests/integration/docker.mjs), runs N
// busybox `sleep` containers of the tests' imported base image plus one
// container spinning `while :; do :; done` at a 50% CPU quota (the known
// load of the correctness check), and calls it for each N.
//
// Settings: BENCH_CPU_CONTAINERS ("0 50 200"), BENCH_CPU_TICKS (30 per
// method and N, 100 ms apart), BENCH_CPU_PINGPONG (seconds, 3),
// BENCH_CPU_METHODS_BIN (the bench_cpu_methods binary), BENCH_RESULTS
// (bench/results/cpu_methods.md). Root, BTF and a kernel with the kfunc
// css_rstat_flush (older kernels name it cgroup_rstat_flush) are needed;
// otherwise exit 77 saying why.
//
//   BENCH_CPU_METHODS_BIN=build-bench/bench/bench_cpu_methods node bench/cpu_methods.mjs

import fs from 'node:fs';
import path from 'node:path';
import os from 'node:os';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import * as h from '../tests/integration/harness.mjs';
import { startDocker, baseImage, dockerRequest, removeByLabel } from '../tests/integration/docker.mjs';

const COUNTS = (process.env.BENCH_CPU_CONTAINERS || '0 50 200').split(/\s+/).filter(Boolean).map(Number);
const TICKS = Number(process.env.BENCH_CPU_TICKS || 30);
const PINGPONG = Number(process.env.BENCH_CPU_PINGPONG || 3);
if (COUNTS.some((n) => !(n >= 0 && n <= 500))) throw new Error('BENCH_CPU_CONTAINERS: counts of 0..500');
if (!(TICKS >= 1 && TICKS <= 200)) throw new Error('BENCH_CPU_TICKS: 1..200 (bounded runs)');
if (!(PINGPONG > 0 && PINGPONG <= 30)) throw new Error('BENCH_CPU_PINGPONG: seconds, 0..30');
const here = path.dirname(fileURLToPath(import.meta.url));
const bin = process.env.BENCH_CPU_METHODS_BIN || path.join(here, '..', 'build-bench', 'bench', 'bench_cpu_methods');
if (!fs.existsSync(bin)) h.skip(`no ${bin} (built only where bpf/bpf.cmake finds clang, bpftool, libbpf and the kernel's BTF)`);
if (process.getuid() !== 0) h.skip('loading BPF programs needs root');

await startDocker();
const image = await baseImage();
const LABEL = 'steward.bench=cpu_methods';

// A container's cgroup directory in the unified hierarchy.
function cgroupDir(pid) {
	const line = fs.readFileSync(`/proc/${pid}/cgroup`, 'utf8').split('\n').find((l) => l.startsWith('0::'));
	for (const root of ['/sys/fs/cgroup', '/sys/fs/cgroup/unified']) {
		const d = line && `${root}${line.slice(3)}`;
		if (d && fs.existsSync(`${d}/cpu.stat`) && fs.existsSync(`${root}/cgroup.procs`)) return d;
	}
	throw new Error(`no unified cgroup with cpu.stat for pid ${pid}`);
}

async function run(cmd, host = {}) {
	const c = await dockerRequest('POST', '/containers/create', {
		Image: image, Cmd: ['sh', '-c', cmd], Labels: { 'steward.bench': 'cpu_methods' },
		HostConfig: { NetworkMode: 'none', ...host },
	});
	if (c.status !== 201) throw new Error(`create: ${c.status} ${c.text}`);
	const id = c.json().Id;
	const s = await dockerRequest('POST', `/containers/${id}/start`);
	if (s.status !== 204) throw new Error(`start: ${s.status} ${s.text}`);
	const i = await dockerRequest('GET', `/containers/${id}/json`);
	return cgroupDir(i.json().State.Pid);
}

const rows = [];
let hook = null;
try {
	const spin = await run('while :; do :; done', { CpuPeriod: 100000, CpuQuota: 50000 });
	const parent = path.dirname(spin);
	const dirs = [];
	for (const n of COUNTS) {
		while (dirs.length < n) dirs.push(await run('exec sleep 3600'));
		const last = n === COUNTS[COUNTS.length - 1];
		const r = spawnSync(bin, [parent, String(TICKS), spin, last ? String(PINGPONG) : '0'], {
			input: dirs.slice(0, n).join('\n') + '\n', encoding: 'utf8', timeout: 300000,
		});
		if (r.status === 77) h.skip(JSON.parse(r.stdout).skip);
		if (r.status !== 0) throw new Error(`bench_cpu_methods: exit ${r.status} ${r.stderr}`);
		const j = JSON.parse(r.stdout);
		rows.push(j);
		if (last) hook = j;
		process.stderr.write(`[bench] cpu methods, ${n} containers: ${r.stdout}`);
	}
} finally {
	await removeByLabel(LABEL);
}

const f1 = (x) => x.toFixed(1);
const zero = rows.find((r) => r.n === 0);
// Per container: above the 0-container row (each method's fixed cost) when it was measured.
const per = (r, k) => (r.n ? f1((r[k] - (zero ? zero[k] : 0)) / r.n) : '-');
const err = (x, ref) => `${f1(((x - ref) / ref) * 100)}%`;
const nsPer = hook.hook_ns / hook.switches;
const rate = hook.switches / hook.switch_s;
const lines = [
	'# Container CPU: cgroup cpu.stat against a BPF cgroup iterator and a sched_switch hook',
	'',
	`${new Date().toISOString()}, ${os.cpus().length} cores (${os.cpus()[0].model}), kernel ${os.release()}, ${TICKS} ticks per row (the three methods interleaved tick by tick, 100 ms apart), ${bin}.`,
	'CPU per tick is the reading thread\'s CPU time (user + system: the iterator\'s kernel work inside read() is counted) in microseconds. The sched_switch hook\'s run-time cost is not in its column: it is paid on every context switch, below.',
	'',
	'| containers | (a) cpu.stat us/tick | per container | (b) cgroup iterator us/tick | per container | (c) sched_switch map us/tick | per container | (b)/(a) | (c)/(a) |',
	'|---|---|---|---|---|---|---|---|---|',
	...rows.map((r) => `| ${r.n} | ${f1(r.a_us)} | ${per(r, 'a_us')} | ${f1(r.b_us)} | ${per(r, 'b_us')} | ${f1(r.c_us)} | ${per(r, 'c_us')} | ${f1(r.b_us / r.a_us)}x | ${f1(r.c_us / r.a_us)}x |`),
	'',
	'Correctness: one container spinning at a 50% CPU quota, its CPU over 3 s by each method against cpu.stat\'s (goal: within 5%).',
	'',
	'| containers beside it | cpu.stat ms | iterator ms (error) | sched_switch ms (error) |',
	'|---|---|---|---|',
	...rows.map((r) => `| ${r.n} | ${f1(r.spin_a_ms)} | ${f1(r.spin_b_ms)} (${err(r.spin_b_ms, r.spin_a_ms)}) | ${f1(r.spin_c_ms)} (${err(r.spin_c_ms, r.spin_a_ms)}) |`),
	'',
	`The sched_switch hook's own cost (kernel.bpf_stats_enabled through BPF_ENABLE_STATS, ${f1(hook.switch_s)} s of a pipe ping-pong between two processes with ${hook.n} containers running): ${hook.switches} runs, ${f1(nsPer)} ns per switch on average, ${Math.round(rate)} switches/s on the host, so ${f1((nsPer * rate) / 1e6)} ms of CPU per second (${f1((nsPer * rate) / 1e7)}% of a core) at that rate, in the program alone (the trampoline's entry and exit are outside the statistics).`,
	`The ping-pong itself, in 3 alternated rounds with and without the hook: ${Math.round(hook.pp_with)} round trips/s with it, ${Math.round(hook.pp_without)} without (${f1(hook.pp_with / hook.pp_without)}x; the machine is shared with other work, so this ratio is noisy; the run-time statistics above are not).`,
	'',
];
const text = lines.join('\n');
process.stdout.write(text);
fs.writeFileSync(process.env.BENCH_RESULTS || path.join(here, 'results', 'cpu_methods.md'), text);
await h.cleanupAll();
