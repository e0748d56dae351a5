// GET /servers/:id/sample of a remote server: the real steward-agent takes
// the sample with the sampler stewardd uses for its own host (metrics.sample),
// under its own HOST_PROC_PATH, HOST_SYS_PATH and HOST_ROOT_PATH, with the
// containers of its own engine (a second dockerd). The agent's host trees
// here are the sampler's fixture tree, so every host figure can only have
// come from the agent's paths; the answer carries the organization's
// container of the remote engine and not a container of another
// application on it. The metrics loop samples it too, through its agent,
// every tick (METRICS_SAMPLE_INTERVAL_MS, a test setting, 500 ms here):
// GET /servers/:id/live streams those samples, minute rows appear for its
// host and its application's container (METRICS_MINUTE_MS, another test
// setting, 3 s here) with the fixture tree's figures, and a METRIC_THRESHOLD
// rule on it opens an alert from the agent's figures. The sample carries the
// agent's engine's disk usage split (runtimeDisk, its /system/df, read by the
// agent at most every 5 minutes). With the agent gone:
// 409 SERVER_NOT_CONNECTED, for a sample and for a new live stream.

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import * as h from './harness.mjs';
import { ok } from './identity.mjs';
import { world, BASE_IMAGE } from './deploy_world.mjs';
import { startSecondDocker, startCaddy } from './docker.mjs';

const buildDir = process.env.SW_BUILD_DIR;
if (!buildDir) h.skip('SW_BUILD_DIR is not set (ctest sets it)');
const AGENT = path.join(buildDir, 'steward-agent');
if (!fs.existsSync(AGENT)) h.skip(`${AGENT} does not exist (cmake --build ... --target steward-agent)`);
const FIXTURE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../unit/fixtures/metrics');

const INTERVAL_MS = 500;
const MINUTE = 3000;
const w = await world({ STEWARD_AGENT_HEARTBEAT_MS: 500, METRICS_EBPF: '0', METRICS_SAMPLE_INTERVAL_MS: INTERVAL_MS,
	METRICS_MINUTE_MS: MINUTE }, { tsan: true });
const second = await startSecondDocker();
await second.baseImage();
const caddy2 = await startCaddy();

let agent = null;
after(async () => {
	if (agent && agent.exitCode === null && agent.signalCode === null) agent.kill('SIGKILL');
	caddy2.stop();
	await h.cleanupAll();
});

const server = await ok(w.call('POST', '/servers', { body: { name: 'far', host: '127.0.0.1' } }), 201);
const [, url, token] = /^STEWARD_URL='([^']+)' STEWARD_AGENT_TOKEN='(sta_[A-Za-z0-9_-]{43})'/.exec(server.agentCommand);

const log = [];
agent = spawn(AGENT, [], {
	env: { PATH: process.env.PATH, STEWARD_URL: url, STEWARD_AGENT_TOKEN: token,
		STEWARD_AGENT_DATA_DIR: h.makeTempDir('sw-agent-'), DOCKER_HOST: second.host, ...caddy2.env,
		HOST_PROC_PATH: `${FIXTURE}/proc`, HOST_SYS_PATH: `${FIXTURE}/sys`, HOST_ROOT_PATH: `${FIXTURE}/root`,
		METRICS_EBPF: '0', ASAN_OPTIONS: process.env.ASAN_OPTIONS || '' },
	stdio: ['ignore', 'pipe', 'pipe'],
});
for (const s of [agent.stdout, agent.stderr]) s.on('data', (d) => log.push(String(d)));

async function waitStatus(status, timeoutMs = 15000) {
	const deadline = Date.now() + timeoutMs * h.SLACK;
	for (;;) {
		const s = await ok(w.call('GET', `/servers/${server.id}`));
		if (s.status === status) return s;
		if (Date.now() > deadline) assert.fail(`the server is ${s.status}, not ${status}; agent:\n${log.join('')}`);
		await h.sleep(100);
	}
}
await waitStatus('ONLINE');

const project = await ok(w.call('POST', '/projects', { body: { name: 'remote' } }), 201);
const app = await ok(w.call('POST', '/applications', { body: { name: 'far-app', environmentId: project.environments[0].id, serverId: server.id } }), 201);

async function running(application) {
	const res = await second.request('POST', '/containers/create', {
		Image: BASE_IMAGE, Cmd: ['sleep', '600'], Labels: { 'steward.application': application },
		HostConfig: { NetworkMode: 'none' },
	});
	assert.equal(res.status, 201, res.text);
	const id = res.json().Id;
	assert.equal((await second.request('POST', `/containers/${id}/start`)).status, 204);
	return id;
}
const mine = await running(app.id);
const theirs = await running(randomUUID()); // another application's, on the same engine

test('a remote server is sampled by its agent, from the agent\'s host paths and engine', async () => {
	const s = await ok(w.call('GET', `/servers/${server.id}/sample`));
	assert.equal(s.serverId, server.id);
	assert.equal(s.scope, 'HOST');
	// The fixture tree's figures (tests/unit/fixtures/metrics), not this machine's.
	assert.equal(s.host.hostname, 'fixture-host');
	assert.equal(s.memory.totalBytes, 8000000 * 1024);
	assert.equal(s.memory.availableBytes, 5000000 * 1024);
	assert.equal(s.cpu.load1, 0.52);
	assert.equal(s.cpu.load15, 2);
	assert.deepEqual(s.containers.items.map((c) => [c.containerId, c.applicationId, c.state]), [[mine, app.id, 'running']]);
	assert.ok(!JSON.stringify(s).includes(theirs), 'another application\'s container is not shown');
	assert.equal(s.containers.running, 1);
	assert.equal(s.containers.stopped, 0);
	assert.equal(s.containers.error, null);
});

test('a remote server\'s sample carries its own engine\'s disk usage split, read by the agent on the slower schedule', async () => {
	const s = await ok(w.call('GET', `/servers/${server.id}/sample`));
	// The second engine's own /system/df: images, containers, volumes, build cache.
	const df = (await second.request('GET', '/system/df')).json();
	assert.ok(s.runtimeDisk, `the agent's engine answered: runtimeDisk is there (${JSON.stringify(s).slice(0, 300)})`);
	assert.equal(s.runtimeDisk.imagesBytes, df.LayersSize);
	assert.ok(s.runtimeDisk.imagesBytes > 0, 'the base image has layers on the second engine');
	for (const k of ['containersBytes', 'volumesBytes', 'buildCacheBytes'])
		assert.ok(Number.isInteger(s.runtimeDisk[k]) && s.runtimeDisk[k] >= 0, `${k}: ${s.runtimeDisk[k]}`);
	assert.equal(s.runtimeDisk.volumesBytes, (df.Volumes ?? []).reduce((n, v) => n + Math.max(0, v.UsageData?.Size ?? 0), 0));
	assert.match(s.runtimeDisk.measuredAt, h.TS);
	// The agent reads it at most every 5 minutes: the next sample (another
	// metrics.sample command) shares the same reading.
	const again = await ok(w.call('GET', `/servers/${server.id}/sample`));
	assert.equal(again.runtimeDisk.measuredAt, s.runtimeDisk.measuredAt);
	assert.deepEqual(again.runtimeDisk, s.runtimeDisk);
});

// Reads GET path as a stream until enough(events) holds (or the deadline
// passes), then leaves: {status, evs}.
function readStream(p, enough, timeoutMs, port = w.srv.port) {
	return new Promise((resolve, reject) => {
		let text = '';
		let status = 0;
		const finish = () => { clearTimeout(timer); req.destroy(); resolve({ status, evs: h.sseEvents(text), text }); };
		const timer = setTimeout(finish, timeoutMs * h.SLACK);
		const req = http.get({ host: '127.0.0.1', port, path: p, agent: false,
			headers: { Cookie: `steward_session=${w.owner.cookie}` } }, (res) => {
			status = res.statusCode;
			res.setEncoding('utf8');
			res.on('data', (d) => {
				text += d;
				if (status !== 200 || enough(h.sseEvents(text))) finish();
			});
			res.on('end', finish);
		});
		req.on('error', (e) => { if (e.code !== 'ECONNRESET') reject(e); });
	});
}

// The frames of a live stream of the remote server: its agent's samples.
function assertFrames(r) {
	assert.equal(r.status, 200, r.text.slice(0, 300));
	assert.ok(r.evs.length >= 3, `${r.evs.length} events within the deadline:\n${r.text.slice(0, 300)}\nagent:\n${log.join('')}`);
	const ids = r.evs.map((e) => Number(e.id));
	for (let i = 1; i < ids.length; i++) assert.ok(ids[i] > ids[i - 1], 'event ids grow');
	for (const e of r.evs) {
		assert.equal(e.event, 'sample');
		const d = JSON.parse(e.data);
		assert.equal(d.serverId, server.id);
		// The agent's host paths (the fixture tree), not this machine's.
		assert.equal(d.host.hostname, 'fixture-host');
		assert.equal(d.memory.totalBytes, 8000000 * 1024);
		assert.equal(d.cpu.load1, 0.52);
		assert.deepEqual(d.containers.items.map((c) => [c.containerId, c.applicationId]), [[mine, app.id]]);
		assert.ok(!e.data.includes(theirs), 'another application\'s container is not streamed');
		assert.equal(d.platform, null);
	}
}

test('the metrics loop streams the remote server\'s samples, taken by its agent (GET /servers/:id/live)', async () => {
	assertFrames(await readStream(`/servers/${server.id}/live`, (evs) => evs.length >= 3, 20000));
});

test('a replica that does not write the metric history streams the remote server to its own readers', async () => {
	const b = await h.startStewardd({ env: { ...w.env, DATABASE_URL: w.srv.env.DATABASE_URL } });
	// The first replica holds the writer's lock: b samples only for its reader.
	assert.ok(!b.logs.text().includes('metrics: this process writes the metric history'));
	assertFrames(await readStream(`/servers/${server.id}/live`, (evs) => evs.length >= 3, 20000, b.port));
	assert.ok(!b.logs.text().includes('metrics: this process writes the metric history'), 'b never wrote');
	await b.stop();
});

test('minute rows are written for the remote server\'s host and its application\'s container, from the agent\'s figures', async () => {
	const sample = await ok(w.call('GET', `/servers/${server.id}/sample`));
	const q = (where) => w.sql(`SELECT m.samples, m.mem_max, m.mem_limit, m.load1_max, m.load1_sum
		FROM metric_minutes m JOIN metric_series s ON s.id = m.series_id
		WHERE s.server_id = '${server.id}' AND ${where} ORDER BY m.bucket LIMIT 1`);
	const deadline = Date.now() + 4 * MINUTE * h.SLACK;
	let host = '';
	while (!(host = (await q('s.application_id IS NULL')).trim()) && Date.now() < deadline) await h.sleep(100);
	assert.ok(host, `no minute row for the remote server's host within ${4 * MINUTE} ms; agent:\n${log.join('')}`);
	const [samples, memMax, memLimit, load1Max, load1Sum] = host.split('|').map(Number);
	assert.ok(samples >= 1 && samples <= MINUTE / INTERVAL_MS + 1, `${samples} samples in a minute`);
	assert.equal(memMax, sample.memory.usedBytes, 'the fixture tree\'s memory');
	assert.equal(memLimit, 8000000 * 1024);
	assert.equal(load1Max, 0.52);
	assert.ok(Math.abs(load1Sum - 0.52 * samples) < 1e-9);
	const container = (await w.sql(`SELECT DISTINCT s.application_id, s.container_id FROM metric_series s
		WHERE s.server_id = '${server.id}' AND s.application_id IS NOT NULL`)).trim();
	assert.equal(container, `${app.id}|${mine}`, 'the organization\'s container only');
	const history = await ok(w.call('GET', `/servers/${server.id}/metrics`));
	assert.ok(history.points.length >= 1, JSON.stringify(history).slice(0, 300));
	assert.equal(await w.sql(`SELECT count(*) FROM (SELECT series_id, bucket FROM metric_minutes GROUP BY 1, 2 HAVING count(*) > 1) x`).then((t) => t.trim()), '0');
});

test('a METRIC_THRESHOLD rule on the remote server opens an alert from its agent\'s figures', async () => {
	const rule = await ok(w.call('POST', '/alerts/rules', {
		body: { name: 'far-load', kind: 'METRIC_THRESHOLD', metric: 'LOAD_AVERAGE_1M', operator: 'ABOVE', threshold: 0.5,
			durationSeconds: 60, serverId: server.id, severity: 'WARNING', channelIds: [] },
	}), 201);
	const deadline = Date.now() + 15000 * h.SLACK;
	let open = [];
	while (!(open = await ok(w.call('GET', '/alerts?status=OPEN'))).length && Date.now() < deadline) await h.sleep(100);
	assert.equal(open.length, 1, 'one open alert');
	assert.equal(open[0].ruleId, rule.id);
	assert.equal(open[0].serverId, server.id);
	assert.match(JSON.stringify(open[0]), /0\.52/, 'the value is the fixture tree\'s load');
});

test('with its agent gone, a remote server\'s sample is 409 SERVER_NOT_CONNECTED', async () => {
	agent.kill('SIGTERM');
	await waitStatus('OFFLINE', 30000);
	h.assertError(await w.call('GET', `/servers/${server.id}/sample`), 409, 'SERVER_NOT_CONNECTED');
	h.assertError(await w.call('GET', `/servers/${server.id}/live`), 409, 'SERVER_NOT_CONNECTED');
});
