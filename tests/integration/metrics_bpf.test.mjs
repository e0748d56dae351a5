// The eBPF collectors against real containers and the real kernel: the
// sampler (tests/tools/metrics_probe.c, which loads bpf/net.bpf.c and
// bpf/oom.bpf.c) is asked for samples of containers this file starts on a
// private dockerd with host networking. All traffic is on 127.0.0.1.
//
// - bytes a container receives over loopback (50 MiB from a server of
//   this file) show in its cgroup's counters within 1%, and so do the
//   bytes it sends (20 MiB);
// - a container limited to 32 MiB that allocates 100 MiB yields exactly
//   one OOM event, on that container and no other, and the count matches
//   the cgroup's own (memory.events, or memory.oom_control on v1);
// - the CPU % of a container spinning under a half-core quota matches the
//   rate of its cgroup's own CPU counter (cpu.stat usage_usec, or
//   cpuacct.usage on v1) read here around the same window, within 5%;
// - the network programs are attached to a container's own cgroup, one
//   pair however often it is sampled, and their links are closed once the
//   container is gone (read from the probe's own descriptors in /proc);
// - a probe that may load eBPF but not attach it to cgroups (no
//   CAP_NET_ADMIN nor CAP_SYS_ADMIN) says so at start-up.
//
// Needs root (loading eBPF) and the kernel's BTF: otherwise SKIP (77) with
// the sampler's reason.

import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import readline from 'node:readline';
import { after, test } from 'node:test';
import { skip, sleep, withTimeout } from './harness.mjs';
import { startDocker, baseImage, removeByLabel, dockerRequest } from './docker.mjs';

const MiB = 1024 * 1024;

if (process.getuid() !== 0) skip('loading eBPF programs needs root');
const build = process.env.SW_BUILD_DIR || (process.env.STEWARDD && path.dirname(process.env.STEWARDD));
if (!build) skip('SW_BUILD_DIR (or STEWARDD) is not set: the build directory holding tests/metrics_probe');
const probeBin = path.join(build, 'tests', 'metrics_probe');
if (!fs.existsSync(probeBin)) skip(`${probeBin} does not exist (build it first)`);

// The probe: one line in, one line out.
const probe = spawn(probeBin, [], { stdio: ['pipe', 'pipe', 'inherit'] });
const lines = readline.createInterface({ input: probe.stdout });
const waiting = [];
lines.on('line', (l) => waiting.shift()?.(l));
const nextLine = () => new Promise((resolve) => waiting.push(resolve));
const status = await nextLine();
if (status !== 'bpf loaded') {
	probe.kill();
	skip(`the sampler did not load its eBPF programs: ${status.replace(/^bpf /, '')}`);
}

async function sample(id, pid, appId) {
	const reply = nextLine();
	probe.stdin.write(`sample ${id} ${pid} ${appId}\n`);
	const doc = JSON.parse(await reply);
	assert.equal(doc.error, undefined, `the probe failed: ${doc.error}`);
	assert.equal(doc.sources.ebpf, 'loaded');
	assert.equal(doc.sources.containerNetwork, 'ebpf');
	return doc.containers.items[0];
}

await startDocker();
const image = await baseImage();
const appId = randomUUID();

after(async () => {
	probe.stdin.end('quit\n');
	await removeByLabel(`steward.application=${appId}`);
});

async function run(cmd, hostConfig = {}) {
	const create = await dockerRequest('POST', '/containers/create', {
		Image: image,
		Cmd: ['sh', '-c', cmd],
		Labels: { 'steward.application': appId },
		HostConfig: { NetworkMode: 'host', ...hostConfig },
	});
	assert.equal(create.status, 201, create.text);
	const { Id } = create.json();
	const start = await dockerRequest('POST', `/containers/${Id}/start`);
	assert.equal(start.status, 204, start.text);
	const info = (await dockerRequest('GET', `/containers/${Id}/json`)).json();
	assert.ok(info.State.Pid > 0, 'the container runs');
	return { id: Id, pid: info.State.Pid };
}

// Bytes the kernel retransmitted on the connections from local port
// `port` (`dir` 'sport'), or to it ('dport') (ss -ti's bytes_retrans; 0 when
// ss is missing or shows none). A segment the receiver dropped after the
// cgroup program saw it (a full receive queue pruned under load) is sent,
// and counted, twice.
function retransmitted(dir, port) {
	try {
		const out = execFileSync('ss', ['-tinH', `( ${dir} = :${port} )`], { encoding: 'utf8' });
		return [...out.matchAll(/bytes_retrans:(\d+)/g)].reduce((n, m) => n + Number(m[1]), 0);
	} catch {
		return 0;
	}
}

// The cgroup's cumulative CPU time in microseconds, read here.
function cgroupCpuUs(pid) {
	const lines = fs.readFileSync(`/proc/${pid}/cgroup`, 'utf8').trim().split('\n');
	const unified = lines.find((l) => l.startsWith('0::'))?.slice(3);
	for (const root of ['/sys/fs/cgroup', '/sys/fs/cgroup/unified']) {
		const f = unified && `${root}${unified}/cpu.stat`;
		if (f && fs.existsSync(f)) {
			const m = fs.readFileSync(f, 'utf8').match(/^usage_usec (\d+)$/m);
			if (m) return Number(m[1]);
		}
	}
	const v1 = lines.find((l) => /^\d+:([^:]*,)?cpuacct(,[^:]*)?:/.test(l))?.split(':')[2];
	for (const dir of ['cpuacct', 'cpu,cpuacct']) {
		const f = v1 && `/sys/fs/cgroup/${dir}${v1}/cpuacct.usage`;
		if (f && fs.existsSync(f)) return Number(fs.readFileSync(f, 'utf8').trim()) / 1000;
	}
	return null;
}

// The cgroup's own OOM-kill count, read here from the files.
function cgroupOomKills(pid) {
	const lines = fs.readFileSync(`/proc/${pid}/cgroup`, 'utf8').trim().split('\n');
	const unified = lines.find((l) => l.startsWith('0::'))?.slice(3);
	const v1 = lines.find((l) => /^\d+:([^:]*,)?memory(,[^:]*)?:/.test(l))?.split(':')[2];
	for (const [file, key] of [
		[unified && `/sys/fs/cgroup${unified}/memory.events`, 'oom_kill'],
		[unified && `/sys/fs/cgroup/unified${unified}/memory.events`, 'oom_kill'],
		[v1 && `/sys/fs/cgroup/memory${v1}/memory.oom_control`, 'oom_kill'],
	]) {
		if (!file || !fs.existsSync(file)) continue;
		const m = fs.readFileSync(file, 'utf8').match(new RegExp(`^${key} (\\d+)$`, 'm'));
		if (m) return Number(m[1]);
	}
	return null;
}

// The probe's BPF links to cgroups, from its descriptors' fdinfo: the
// cgroup id of each (0 once the kernel detached it: the cgroup is gone).
function probeCgroupLinks() {
	const dir = `/proc/${probe.pid}/fdinfo`;
	const ids = [];
	for (const fd of fs.readdirSync(dir)) {
		let info;
		try {
			info = fs.readFileSync(`${dir}/${fd}`, 'utf8');
		} catch {
			continue; // closed meanwhile
		}
		if (!/^link_type:\s+cgroup$/m.test(info)) continue;
		ids.push(BigInt(info.match(/^cgroup_id:\s+(\d+)$/m)[1]));
	}
	return ids;
}

// A process's cgroup id in the unified hierarchy (its directory's inode).
function unifiedCgroupId(pid) {
	const rel = fs.readFileSync(`/proc/${pid}/cgroup`, 'utf8').split('\n').find((l) => l.startsWith('0::'))?.slice(3);
	for (const root of ['/sys/fs/cgroup', '/sys/fs/cgroup/unified']) {
		const dir = rel !== undefined && `${root}${rel}`;
		if (dir && fs.existsSync(`${dir}/cgroup.procs`) && fs.statfsSync(root).type === 0x63677270) return fs.statSync(dir, { bigint: true }).ino;
	}
	return null;
}

let netContainer = null;

test('bytes a container receives and sends over loopback show in its cgroup within 1%', async () => {
	const received = 50 * MiB;
	const sent = 20 * MiB;
	// Server 1 sends `received` bytes to whoever connects and keeps the
	// connection open (its retransmission count is read before it ends).
	let sendDone;
	const sendFinished = new Promise((r) => (sendDone = r));
	let conn = null;
	const sender = net.createServer((c) => {
		conn = c;
		const chunk = Buffer.alloc(MiB, 0x5a);
		let left = received;
		const pump = () => {
			while (left > 0) {
				const n = Math.min(left, chunk.length);
				left -= n;
				const last = left === 0;
				if (!c.write(chunk.subarray(0, n), last ? () => sendDone() : undefined) && !last) return c.once('drain', pump);
			}
		};
		pump();
		c.on('error', () => {});
	});
	// Server 2 counts what the container sends. It leaves its side open
	// when the container's nc ends: the container's socket stays (in
	// FIN-WAIT-2), so its retransmissions can be read.
	let got = 0;
	let recvDone;
	const recvFinished = new Promise((r) => (recvDone = r));
	let rconn = null;
	const receiver = net.createServer({ allowHalfOpen: true }, (c) => {
		rconn = c;
		c.on('data', (d) => {
			got += d.length;
			if (got >= sent) recvDone();
		});
		c.on('error', () => {});
		c.on('end', () => recvDone());
		c.on('close', () => recvDone());
	});
	await new Promise((r) => sender.listen(0, '127.0.0.1', r));
	await new Promise((r) => receiver.listen(0, '127.0.0.1', r));
	try {
		// One container receives, another sends, so each direction's count
		// holds one flow's data segments (the other direction only ACKs).
		// busybox nc quits when its stdin ends: a pipe from sleep keeps the
		// receiver's open, so it reads until the server closes.
		const rxC = await run(`sleep 1; sleep 600 | nc 127.0.0.1 ${sender.address().port} > /dev/null`);
		const txC = await run(
			`sleep 1; dd if=/dev/zero bs=1048576 count=20 2>/dev/null | nc 127.0.0.1 ${receiver.address().port}; sleep 600`,
		);
		netContainer = rxC;
		const rxBefore = await sample(rxC.id, rxC.pid, appId); // maps the containers to their cgroups
		const txBefore = await sample(txC.id, txC.pid, appId);
		assert.equal(rxBefore.applicationId, appId);
		await withTimeout(sendFinished, 60000, 'the transfer to the container to end');
		await withTimeout(recvFinished, 60000, 'the transfer from the container to end');
		assert.equal(got, sent, 'the server received what the container sent');
		// The counters settle once the last segments and FINs are through.
		const settled = async (c) => {
			let s = await sample(c.id, c.pid, appId);
			for (let i = 0; i < 50; i++) {
				await sleep(100);
				const again = await sample(c.id, c.pid, appId);
				const still = again.network.rxBytes === s.network.rxBytes && again.network.txBytes === s.network.txBytes;
				s = again;
				if (still) break;
			}
			return s;
		};
		const rxAfter = await settled(rxC);
		const txAfter = await settled(txC);
		const retrans = retransmitted('sport', sender.address().port);
		const txRetrans = retransmitted('dport', receiver.address().port);
		const rx = rxAfter.network.rxBytes - rxBefore.network.rxBytes - retrans;
		const tx = txAfter.network.txBytes - txBefore.network.txBytes - txRetrans;
		console.log(`container ${rxC.id.slice(0, 12)}: rx ${rx} bytes (retransmissions of ${retrans} taken out) for ${received} sent to it ` +
			`(${((100 * (rx - received)) / received).toFixed(3)}%) in ${rxAfter.network.rxPackets} packets; ` +
			`container ${txC.id.slice(0, 12)}: tx ${tx} bytes (retransmissions of ${txRetrans} taken out) for ${sent} ` +
			`(${((100 * (tx - sent)) / sent).toFixed(3)}%) in ${txAfter.network.txPackets} packets`);
		assert.ok(Math.abs(rx - received) <= received * 0.01, `rx ${rx} within 1% of ${received}`);
		assert.ok(Math.abs(tx - sent) <= sent * 0.01, `tx ${tx} within 1% of ${sent}`);
		assert.equal(rxAfter.oomEvents, 0);
	} finally {
		conn?.destroy();
		rconn?.destroy();
		sender.close();
		receiver.close();
	}
});

test('a container limited to 32 MiB that allocates 100 MiB yields one OOM event, on it alone', async () => {
	const c = await run('dd if=/dev/zero of=/dev/null bs=100M count=1; sleep 600', {
		Memory: 32 * MiB,
		MemorySwap: 32 * MiB,
	});
	// busybox dd allocates its 100 MiB block and fills it: the cgroup's
	// OOM killer takes dd; sh stays, so the cgroup can still be read.
	let s = await sample(c.id, c.pid, appId);
	const deadline = Date.now() + 30000;
	while ((s.oomKills ?? 0) < 1 && Date.now() < deadline) {
		await sleep(200);
		s = await sample(c.id, c.pid, appId);
	}
	const own = cgroupOomKills(c.pid);
	console.log(`container ${c.id.slice(0, 12)}: oomEvents ${s.oomEvents}, oomKills ${s.oomKills}, cgroup file ${own}, ` +
		`memory ${s.memoryBytes} of ${s.memoryLimitBytes}`);
	assert.equal(s.oomKills, 1, 'the cgroup counted one OOM kill');
	assert.equal(own, 1, 'the cgroup file, read here, says one');
	assert.equal(s.oomEvents, 1, 'eBPF saw one OOM event in this container');
	assert.equal(s.memoryLimitBytes, 32 * MiB);
	if (netContainer) {
		const other = await sample(netContainer.id, netContainer.pid, appId);
		assert.equal(other.oomEvents, 0, 'no OOM event on the other container');
	}
});

test('the CPU % of a spinning container matches its cgroup counter within 5%', async () => {
	const c = await run('while :; do :; done', { CpuPeriod: 100000, CpuQuota: 50000 });
	await sleep(1000); // past the start
	await sample(c.id, c.pid, appId); // maps it; the next sample's window starts here
	const u0 = cgroupCpuUs(c.pid);
	const t0 = process.hrtime.bigint();
	await sleep(3000);
	const s = await sample(c.id, c.pid, appId);
	const u1 = cgroupCpuUs(c.pid);
	const t1 = process.hrtime.bigint();
	assert.ok(u0 !== null && u1 !== null, 'the cgroup CPU counter is readable here');
	const own = (100 * (u1 - u0)) / (Number(t1 - t0) / 1000);
	console.log(`container ${c.id.slice(0, 12)}: cpuPercent ${s.cpuPercent}, its cgroup counter says ${own.toFixed(2)}%`);
	assert.ok(typeof s.cpuPercent === 'number' && s.cpuPercent > 1, 'the container is busy');
	assert.ok(Math.abs(s.cpuPercent - own) <= own * 0.05, `${s.cpuPercent}% within 5% of ${own.toFixed(2)}%`);
});

test("a container's cgroup gets one pair of network programs, and their links go when it goes", async () => {
	const a = await run('sleep 600');
	const b = await run('sleep 600');
	const idA = unifiedCgroupId(a.pid);
	assert.ok(idA, 'the container has a cgroup in the unified hierarchy');
	// Sampled three times, with another container between: still one pair.
	await sample(a.id, a.pid, appId);
	await sample(b.id, b.pid, appId);
	await sample(a.id, a.pid, appId);
	const onA = probeCgroupLinks().filter((id) => id === idA).length;
	assert.equal(onA, 2, 'an ingress and an egress link on the container\'s cgroup');
	// Gone: the engine removes its cgroup, the kernel detaches the links,
	// and the sampler closes them (samples without that container).
	const del = await dockerRequest('DELETE', `/containers/${a.id}?force=true`);
	assert.equal(del.status, 204, del.text);
	const deadline = Date.now() + 30000;
	let left = probeCgroupLinks().filter((id) => id === idA || id === 0n).length;
	while (left > 0 && Date.now() < deadline) {
		await sleep(100);
		await sample(b.id, b.pid, appId);
		left = probeCgroupLinks().filter((id) => id === idA || id === 0n).length;
	}
	console.log(`container ${a.id.slice(0, 12)} removed: ${left} links of the probe left on its cgroup or detached`);
	assert.equal(left, 0, 'the removed container\'s links are closed');
	assert.equal(probeCgroupLinks().filter((id) => id === unifiedCgroupId(b.pid)).length, 2, 'the other container keeps its pair');
	assert.ok((await sample(b.id, b.pid, appId)).network, 'and its counters');
});

test('a sampler allowed to load eBPF but not to attach it to cgroups says so instead of loading', async (t) => {
	// CAP_NET_ADMIN and CAP_SYS_ADMIN are what attaching to a cgroup needs
	// (either); CAP_BPF, which loading needs, stays. setpriv (util-linux)
	// drops them for the probe alone.
	const setpriv = ['/usr/bin/setpriv', '/bin/setpriv'].find((p) => fs.existsSync(p));
	if (!setpriv) return t.skip('setpriv (util-linux) is not installed');
	const drop = '-net_admin,-sys_admin';
	const p = spawn(setpriv, [`--bounding-set=${drop}`, `--inh-caps=${drop}`, probeBin], { stdio: ['pipe', 'pipe', 'inherit'] });
	const first = readline.createInterface({ input: p.stdout });
	const line = await withTimeout(new Promise((r) => first.once('line', r)), 20000, 'the probe\'s first line');
	p.stdin.end('quit\n');
	console.log(`probe without CAP_NET_ADMIN: ${line}`);
	assert.match(line, /^bpf eBPF off: attaching the network counters: not permitted/);
});
