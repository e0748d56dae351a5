// GET /servers/:id/sample on the local server, against the kernel's own
// files read here and the engine's own view: memory equals /proc/meminfo,
// load averages equal /proc/loadavg, CPU counts and uptime match, the
// loopback interface's counters only grow; the organization's container
// is there with its limit, state, restart count and application, and the
// other organization's container is not; the runtime's disk usage is the
// engine's /system/df, read once for both samples. 404 across organizations, 401
// without credentials. Run in a container without HOST_PROC_PATH,
// HOST_SYS_PATH and HOST_ROOT_PATH, stewardd warns at start-up and every
// sample says scope CONTAINER; with them, HOST and no warning.

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import * as h from './harness.mjs';
import { call, ok } from './identity.mjs';
import { world } from './app_config.mjs';
import { startDocker, baseImage, removeByLabel, dockerRequest } from './docker.mjs';

const MiB = 1024 * 1024;
const engine = await startDocker();
const image = await baseImage();
const { srv, owner, other, app, otherApp } = await world({ DOCKER_HOST: engine.host });
after(async () => {
	await removeByLabel(`steward.application=${app.id}`);
	await removeByLabel(`steward.application=${otherApp.id}`);
	await h.cleanupAll();
});

async function localOf(who) {
	const list = await ok(call(srv, 'GET', '/servers', who));
	return list.find((s) => s.isLocal);
}

async function runContainer(appId, hostConfig = {}) {
	const c = await dockerRequest('POST', '/containers/create', {
		Image: image,
		Cmd: ['sleep', '600'],
		Labels: { 'steward.application': appId },
		HostConfig: { NetworkMode: 'host', ...hostConfig },
	});
	assert.equal(c.status, 201, c.text);
	const { Id } = c.json();
	assert.equal((await dockerRequest('POST', `/containers/${Id}/start`)).status, 204);
	return Id;
}

function meminfo(key) {
	const m = fs.readFileSync('/proc/meminfo', 'utf8').match(new RegExp(`^${key}:\\s+(\\d+) kB$`, 'm'));
	return Number(m[1]) * 1024;
}

const loadavg = () => fs.readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).map(Number);

function loRx() {
	const line = fs.readFileSync('/proc/net/dev', 'utf8').split('\n').find((l) => /^\s*lo:/.test(l));
	return Number(line.split(':')[1].trim().split(/\s+/)[0]);
}

test('a_sample_of_the_local_server_agrees_with_the_kernel_and_the_engine', async () => {
	const local = await localOf(owner);
	assert.ok(local, 'the owner has a local server');
	assert.equal(app.serverId ?? local.id, local.id, 'the application runs on the local server');
	const mine = await runContainer(app.id, { Memory: 64 * MiB });
	const theirs = await runContainer(otherApp.id);

	// Load averages change every 5 s: one sample between two equal readings.
	let s = null;
	let load = null;
	const rxBefore = loRx();
	for (let attempt = 0; attempt < 5 && !load; attempt++) {
		const before = loadavg();
		s = await ok(call(srv, 'GET', `/servers/${local.id}/sample`, owner));
		const afterLoad = loadavg();
		if (before.join() === afterLoad.join()) load = before;
	}
	assert.ok(load, 'a sample fell between two equal /proc/loadavg readings');
	assert.deepEqual([s.cpu.load1, s.cpu.load5, s.cpu.load15], load);

	assert.equal(s.serverId, local.id);
	assert.match(s.takenAt, h.TS);
	assert.ok(s.intervalMs >= 100, `rates come from two readings (intervalMs ${s.intervalMs})`);
	assert.ok(['HOST', 'CONTAINER'].includes(s.scope));

	assert.equal(s.memory.totalBytes, meminfo('MemTotal'));
	assert.equal(s.memory.swapTotalBytes, meminfo('SwapTotal'));
	assert.ok(Math.abs(s.memory.availableBytes - meminfo('MemAvailable')) < 256 * MiB, 'available is near /proc/meminfo');

	assert.equal(s.cpu.logicalCores, os.cpus().length);
	assert.equal(s.cpu.perCorePercent.length, os.cpus().length);
	assert.ok(s.cpu.physicalCores >= 1 && s.cpu.physicalCores <= s.cpu.logicalCores);
	assert.ok(s.cpu.totalPercent >= 0 && s.cpu.totalPercent <= 100);
	assert.ok(Math.abs(s.host.uptimeSeconds - os.uptime()) < 10);
	assert.equal(s.host.kernel, os.release());
	assert.equal(s.host.architecture, os.arch() === 'x64' ? 'x86_64' : s.host.architecture);
	assert.equal(s.host.publicIp, null, 'never discovered without METRICS_PUBLIC_IP');

	const lo = s.network.find((n) => n.interface === 'lo');
	assert.ok(lo, 'the loopback interface is listed');
	assert.ok(lo.rxBytes >= rxBefore, 'its counter only grows');
	assert.ok(s.disks.length >= 1 && s.disks.every((d) => d.totalBytes >= d.usedBytes));

	// Containers: the organization's only, as the engine sees them.
	assert.equal(s.containers.error, null);
	const ids = s.containers.items.map((c) => c.containerId);
	assert.ok(ids.includes(mine), 'the organization\'s container is sampled');
	assert.ok(!ids.includes(theirs), 'the other organization\'s container is not');
	const c = s.containers.items.find((x) => x.containerId === mine);
	const inspect = (await dockerRequest('GET', `/containers/${mine}/json`)).json();
	assert.equal(c.applicationId, app.id);
	assert.equal(c.state, inspect.State.Status);
	assert.equal(c.restartCount, inspect.RestartCount);
	assert.equal(c.health, null);
	assert.equal(c.memoryLimitBytes, 64 * MiB);
	assert.ok(c.memoryBytes > 0 && c.memoryBytes <= 64 * MiB);
	assert.ok(typeof c.cpuPercent === 'number' && c.cpuPercent >= 0);
	assert.equal(c.oomKills, 0);
	assert.ok(s.containers.running >= 1);
	if (s.sources.ebpf === 'loaded') {
		assert.equal(s.sources.containerNetwork, 'ebpf');
		assert.ok(c.network && c.network.rxBytes >= 0);
	} else {
		assert.equal(s.sources.containerNetwork, 'none');
		assert.equal(c.network, null);
	}
	// The runtime's disk usage, as the engine's own /system/df says.
	const df = (await dockerRequest('GET', '/system/df')).json();
	assert.ok(s.runtimeDisk, 'the engine answered: runtimeDisk is there');
	assert.equal(s.runtimeDisk.imagesBytes, df.LayersSize);
	assert.ok(s.runtimeDisk.imagesBytes > 0, 'the base image has layers');
	assert.match(s.runtimeDisk.measuredAt, h.TS);
	// Read on its slower schedule: the next sample shares the same reading.
	const again = await ok(call(srv, 'GET', `/servers/${local.id}/sample`, owner));
	assert.equal(again.runtimeDisk.measuredAt, s.runtimeDisk.measuredAt);
	console.log(`sample: cpu ${s.cpu.totalPercent}% over ${s.intervalMs} ms, sources ${JSON.stringify(s.sources)}, ` +
		`runtimeDisk ${JSON.stringify(s.runtimeDisk)}`);
});

test('another_organizations_server_is_not_found_and_anonymous_is_refused', async () => {
	const local = await localOf(owner);
	h.assertError(await call(srv, 'GET', `/servers/${local.id}/sample`, other), 404, 'NOT_FOUND');
	h.assertError(await call(srv, 'GET', `/servers/${h.NIL}/sample`, owner), 404, 'NOT_FOUND');
	h.assertError(await call(srv, 'GET', '/servers/not-a-uuid/sample', owner), 404, 'NOT_FOUND');
	h.assertError(await call(srv, 'GET', `/servers/${local.id}/sample`, {}), 401, 'UNAUTHENTICATED');
	// Its own organization reads its own local server.
	const theirs = await localOf(other);
	const s = await ok(call(srv, 'GET', `/servers/${theirs.id}/sample`, other));
	assert.equal(s.serverId, theirs.id);
});

test('the_scope_says_whether_the_host_trees_were_given_and_start_up_warns_when_not', async () => {
	const WARNING = /metrics: running in a container without HOST_PROC_PATH, HOST_SYS_PATH and HOST_ROOT_PATH/;
	const local = await localOf(owner);
	const s = await ok(call(srv, 'GET', `/servers/${local.id}/sample`, owner));
	// This process's view of being in a container is stewardd's too.
	if (s.scope === 'CONTAINER') {
		assert.ok(srv.logs.find(WARNING), 'the warning was logged at start-up');
		assert.ok(['docker', 'podman', 'container'].includes(s.host.virtualization));
	} else {
		assert.equal(srv.logs.find(WARNING), null);
	}
	assert.ok(srv.logs.find(/metrics: eBPF collectors loaded|metrics: eBPF off/), 'the eBPF status was logged once');
	// With the host's trees given (here: this machine's own), figures are the host's.
	const hostSrv = await h.startStewardd({
		env: { DATABASE_URL: srv.env.DATABASE_URL, STEWARD_SECRET_KEY: srv.env.STEWARD_SECRET_KEY, DOCKER_HOST: engine.host, HOST_PROC_PATH: '/proc', HOST_SYS_PATH: '/sys', HOST_ROOT_PATH: '/', METRICS_PUBLIC_IP: '203.0.113.9' },
	});
	const hostSample = await ok(call(hostSrv, 'GET', `/servers/${local.id}/sample`, owner));
	assert.equal(hostSample.scope, 'HOST');
	assert.equal(hostSample.host.publicIp, '203.0.113.9');
	assert.equal(hostSrv.logs.find(WARNING), null);
	hostSrv.kill();
});
