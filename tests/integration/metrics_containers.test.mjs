// Per-application container metrics from the metrics loop, with a real
// container on a private (or the local) dockerd: a container of an
// application, spinning under a half-core quota with a 64 MiB memory
// limit, gets a series of its own (keyed by its engine id and its
// application), minute rows whose CPU matches the quota (the gauge's
// average and the counter's delta, which come from different readings,
// agree with each other), its memory limit, no restarts; GET
// /applications/:id/metrics answers the same rows, and the live stream
// carries the container to its organization only.
//
// The loop samples every half second (METRICS_SAMPLE_INTERVAL_MS, a test
// setting) and its minute lasts 10 s (METRICS_MINUTE_MS, another): a
// minute row needs a whole such minute, so this takes about twenty seconds.

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import * as h from './harness.mjs';
import { call, ok, setup, localApplication } from './identity.mjs';
import { startDocker, baseImage, removeByLabel, dockerRequest } from './docker.mjs';

h.stewarddPath();
const engine = await startDocker();
const image = await baseImage();
const pg = await h.startPostgres();
const INTERVAL_MS = 500;
const MINUTE = 10000;
const PER_MINUTE = MINUTE / INTERVAL_MS;
const srv = await h.startStewardd({
	db: pg,
	env: { DOCKER_HOST: engine.host, METRICS_SAMPLE_INTERVAL_MS: INTERVAL_MS, METRICS_MINUTE_MS: MINUTE, METRICS_EBPF: '0' },
});
const sql = async (q) => (await pg.psql(q, srv.dbName)).trim();

const owner = await setup(srv);
const { server, app } = await localApplication(sql, owner.org.id, 'spin');
after(async () => {
	await removeByLabel(`steward.application=${app}`);
	await h.cleanupAll();
});

const LIMIT = 64 * 1024 * 1024;
const create = await dockerRequest('POST', '/containers/create', {
	Image: image,
	Cmd: ['sh', '-c', 'while :; do :; done'],
	Labels: { 'steward.application': app },
	HostConfig: { NetworkMode: 'none', NanoCpus: 500000000, Memory: LIMIT },
});
assert.equal(create.status, 201, create.text);
const container = create.json().Id;
assert.equal((await dockerRequest('POST', `/containers/${container}/start`)).status, 204);
const started = Date.now();

test('a container of an application: its own series, minute rows that match its quota and limit', { timeout: 240000 }, async () => {
	// The first minute every sample of which saw the container.
	const first = Math.ceil((started + 3000) / MINUTE) * MINUTE;
	let row = null;
	for (const deadline = Date.now() + 3 * MINUTE + 60000; Date.now() < deadline && !row;) {
		row = await sql(`SELECT m.samples, m.cpu_pct_sum, m.cpu_pct_min, m.cpu_pct_max, m.cpu_usec, m.mem_min, m.mem_max,
			m.mem_limit, m.restarts, m.oom_kills, m.net_rx_bytes IS NULL, s.container_id, s.application_id
			FROM metric_minutes m JOIN metric_series s ON s.id = m.series_id
			WHERE s.application_id = '${app}' AND m.bucket >= to_timestamp(${first} / 1000.0) ORDER BY m.bucket LIMIT 1`);
		if (!row) await h.sleep(250);
	}
	assert.ok(row, `no minute row of the container; output:\n${srv.logs.text().slice(-3000)}`);
	const [samples, cpuSum, cpuMin, cpuMax, cpuUsec, memMin, memMax, memLimit, restarts, ooms, noNet, id, appId] = row.split('|');
	assert.equal(id, container, 'keyed by the engine id');
	assert.equal(appId, app);
	const n = Number(samples);
	assert.ok(n >= Math.ceil(0.7 * PER_MINUTE) && n <= PER_MINUTE + 1, `about a sample an interval: ${n}`);
	const avg = Number(cpuSum) / n;
	// At most half a core (the quota); less when the machine is busy.
	assert.ok(avg > 5 && avg < 55, `at most half a core: ${avg}%`);
	assert.ok(Number(cpuMin) <= avg && avg <= Number(cpuMax));
	// The counter's delta over the minute: about 0.5 s of CPU per second
	// (within 10%, and one interval of a whole core).
	const seconds = Number(cpuUsec) / 1e6;
	const want = (avg / 100) * n * (INTERVAL_MS / 1000);
	assert.ok(Math.abs(seconds - want) <= 0.1 * want + INTERVAL_MS / 1000, `cpu ${seconds} s against ${avg}% x ${n} samples`);
	assert.equal(Number(memLimit), LIMIT);
	assert.ok(Number(memMin) > 0 && Number(memMax) < LIMIT);
	assert.equal(restarts, '0');
	assert.equal(ooms, '0');
	assert.equal(noNet, 't', 'network is null without eBPF, never a wrong number');

	const res = await ok(call(srv, 'GET', `/applications/${app}/metrics?since=${new Date(first).toISOString()}&until=${new Date(first + MINUTE).toISOString()}`, owner));
	assert.equal(res.points.length, 1);
	const p = res.points[0];
	assert.equal(p.containerId, container);
	assert.equal(p.samples, n);
	assert.equal(p.memoryLimitBytes, LIMIT);
	assert.equal(p.cpuSeconds, Math.round(seconds * 1000) / 1000);
	assert.equal(p.networkRxBytes, null);
	const hour = await ok(call(srv, 'GET', `/applications/${app}/metrics?resolution=HOUR&since=${new Date(first - (first % 3600000)).toISOString()}&until=${new Date(first - (first % 3600000) + 3600000).toISOString()}`, owner));
	assert.equal(hour.points.length, 1);
	assert.ok(hour.points[0].samples >= n);
});
