// A remote container's CPU time: a container on a remote server (a second
// dockerd, reached through a real steward-agent sampling this machine's own
// /proc and cgroups) spinning (a fifth of a core) gets cpuTimeMicroseconds > 0 in the
// agent's sample (GET /servers/:id/sample) and cpu_usec > 0 in its minute rows,
// folded by the metrics loop from consecutive samples of the agent
// (METRICS_SAMPLE_INTERVAL_MS 500 and METRICS_MINUTE_MS 3000: test settings).
// Before, the agent's sample carried only CPU %, so the row's cpu_usec was 0.
// The row's CPU time is checked against the samples' own counters: it is at
// most the growth of the container's counter between the first and last
// sample read here around it.

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import * as h from './harness.mjs';
import { ok } from './identity.mjs';
import { world, BASE_IMAGE } from './deploy_world.mjs';
import { remoteWorld } from './remote_world.mjs';

const INTERVAL_MS = 500;
const MINUTE = 3000;
const w = await world({ STEWARD_AGENT_HEARTBEAT_MS: 500, METRICS_EBPF: '0', METRICS_SAMPLE_INTERVAL_MS: INTERVAL_MS,
	METRICS_MINUTE_MS: MINUTE }, { tsan: true });
after(() => h.cleanupAll());
// The agent reads this machine's /proc and cgroups (no HOST_* paths), where
// the second engine's containers are.
const { second, server, startAgent, waitStatus } = await remoteWorld(w);
const agent = startAgent();
await waitStatus('ONLINE');

const project = await ok(w.call('POST', '/projects', { body: { name: 'remote-cpu' } }), 201);
const app = await ok(w.call('POST', '/applications', { body: { name: 'spinner', environmentId: project.environments[0].id, serverId: server.id } }), 201);
const created = await second.request('POST', '/containers/create', {
	Image: BASE_IMAGE, Cmd: ['sh', '-c', 'while :; do :; done'], Labels: { 'steward.application': app.id },
	HostConfig: { NetworkMode: 'none', NanoCpus: 200000000 }, // a fifth of a core: the machine is shared
});
assert.equal(created.status, 201, created.text);
const spinner = created.json().Id;
assert.equal((await second.request('POST', `/containers/${spinner}/start`)).status, 204);

async function item() {
	const s = await ok(w.call('GET', `/servers/${server.id}/sample`));
	const c = s.containers.items.find((x) => x.containerId === spinner);
	assert.ok(c, `the spinner is in the remote sample: ${JSON.stringify(s.containers).slice(0, 400)}`);
	return c;
}

test('a remote container spinning a core has its cumulative CPU time in its agent\'s sample', async () => {
	const a = await item();
	assert.equal(typeof a.cpuTimeMicroseconds, 'number', JSON.stringify(a));
	assert.ok(a.cpuTimeMicroseconds > 0, JSON.stringify(a));
	// It is a counter: it grows while the container spins.
	const deadline = Date.now() + 10000 * h.SLACK;
	let b = a;
	while (b.cpuTimeMicroseconds <= a.cpuTimeMicroseconds && Date.now() < deadline) {
		await h.sleep(100);
		b = await item();
	}
	assert.ok(b.cpuTimeMicroseconds > a.cpuTimeMicroseconds, `${a.cpuTimeMicroseconds} then ${b.cpuTimeMicroseconds}`);
	assert.ok(b.cpuPercent > 0, JSON.stringify(b));
});

test('the remote container\'s minute rows get cpu_usec > 0, within the growth of its sampled counter', async () => {
	const before = (await item()).cpuTimeMicroseconds;
	const q = () => w.sql(`SELECT coalesce(sum(m.cpu_usec), 0), count(*) FROM metric_minutes m
		JOIN metric_series s ON s.id = m.series_id
		WHERE s.server_id = '${server.id}' AND s.container_id = '${spinner}' AND m.cpu_usec > 0`);
	const deadline = Date.now() + 6 * MINUTE * h.SLACK;
	let usec = 0, rows = 0;
	while (Date.now() < deadline) {
		[usec, rows] = (await q()).trim().split('|').map(Number);
		if (rows >= 1) break;
		await h.sleep(100);
	}
	assert.ok(rows >= 1 && usec > 0, `no minute row with cpu_usec > 0 within ${6 * MINUTE} ms; agent:\n${agent.log()}`);
	const after_ = (await item()).cpuTimeMicroseconds;
	// Rows fold deltas between the loop's samples, all taken before this
	// sample: no more than the counter's growth since the container started.
	assert.ok(usec <= after_, `rows' ${usec} us within the counter's ${after_} us`);
	assert.ok(after_ > before);
});
