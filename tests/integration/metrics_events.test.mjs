// The local server's containers followed by the engine's events: stewardd
// lists Steward's containers once, then follows GET /events, so a sample
// asks the engine nothing, yet every container field follows what happens
// to real containers on a private dockerd: a start, a health check turning
// unhealthy, a restart by the restart policy (restart count), a stop and a
// kill, each in the next samples without a list call; samples of an idle
// engine make no engine call at all; and when dockerd restarts (its
// containers stopped with it), stewardd lists again and follows again.
//
// What stewardd asks the engine is seen by a pass-through proxy in front of
// the engine's socket (engine_hold.mjs; it holds nothing here, it only
// records each request line). Containers are made by this file on the
// engine's own socket, so the proxy sees stewardd's requests only.

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import * as h from './harness.mjs';
import { call, ok, setup, localApplication } from './identity.mjs';
import { startSecondDocker, BASE_IMAGE } from './docker.mjs';
import { holdingEngine } from './engine_hold.mjs';

h.stewarddPath();
const engine = await startSecondDocker(); // one of this file's own: it is restarted below
await engine.baseImage();
const proxy = await holdingEngine(engine.socket);
const pg = await h.startPostgres();
const srv = await h.startStewardd({
	db: pg,
	env: { DOCKER_HOST: proxy.host, METRICS_SAMPLE_INTERVAL_MS: 500, METRICS_EBPF: '0' },
});
after(async () => {
	proxy.close();
	await h.cleanupAll();
});
const sql = async (q) => (await pg.psql(q, srv.dbName)).trim();
const owner = await setup(srv);
const { server, app } = await localApplication(sql, owner.org.id, 'watched');

const LIST = /^GET \/v[\d.]+\/containers\/json/;
const EVENTS = /^GET \/v[\d.]+\/events\?/;
const sample = () => ok(call(srv, 'GET', `/servers/${server}/sample`, owner));
const mine = (s, id) => s.containers.items.find((c) => c.containerId === id);

// Samples until pred(sample) holds; fails with the last one past the deadline.
async function until(what, pred, timeoutMs = 20000) {
	const deadline = Date.now() + timeoutMs * h.SLACK;
	let s;
	for (;;) {
		s = await sample();
		if (pred(s)) return s;
		if (Date.now() > deadline) assert.fail(`${what} within ${timeoutMs} ms; last sample's containers: ${JSON.stringify(s.containers)}\nengine requests: ${proxy.requests.slice(-20).join(', ')}`);
		await h.sleep(100);
	}
}
async function untilRequest(re, from, timeoutMs = 20000) {
	const deadline = Date.now() + timeoutMs * h.SLACK;
	while (!proxy.requests.slice(from).some((l) => re.test(l))) {
		if (Date.now() > deadline) assert.fail(`no ${re} within ${timeoutMs} ms; seen: ${proxy.requests.join(', ')}`);
		await h.sleep(50);
	}
}
async function make(body) {
	const c = await engine.request('POST', '/containers/create', {
		Image: BASE_IMAGE, Labels: { 'steward.application': app }, ...body,
		HostConfig: { NetworkMode: 'none', ...body.HostConfig },
	});
	assert.equal(c.status, 201, c.text);
	const id = c.json().Id;
	assert.equal((await engine.request('POST', `/containers/${id}/start`)).status, 204);
	return id;
}
async function exec(id, cmd) {
	const x = await engine.request('POST', `/containers/${id}/exec`, { Cmd: cmd });
	assert.equal(x.status, 201, x.text);
	const r = await engine.request('POST', `/exec/${x.json().Id}/start`, { Detach: false, Tty: false });
	assert.equal(r.status, 200, r.text);
}

// stewardd follows the engine once it has listed it.
await untilRequest(EVENTS, 0);
const afterListing = proxy.requests.length;

test('start, health, a restart by policy, stop and kill reach the samples without a list call', async () => {
	// A health check that holds until /tmp/bad exists.
	const checked = await make({
		Cmd: ['sleep', '600'],
		Healthcheck: { Test: ['CMD-SHELL', 'test ! -f /tmp/bad'], Interval: 200e6, Timeout: 1e9, Retries: 1 },
	});
	let s = await until('the started container, healthy', (x) => mine(x, checked)?.health === 'healthy');
	assert.equal(mine(s, checked).state, 'running');
	assert.equal(s.containers.running, 1);
	assert.equal(s.containers.unhealthy, 0);
	await exec(checked, ['touch', '/tmp/bad']);
	s = await until('the container unhealthy', (x) => mine(x, checked)?.health === 'unhealthy');
	assert.equal(s.containers.unhealthy, 1);

	// Exits once, then the restart policy starts it again and it stays.
	const restarted = await make({
		Cmd: ['sh', '-c', 'if [ -f /tmp/once ]; then exec sleep 600; fi; touch /tmp/once; exit 1'],
		HostConfig: { RestartPolicy: { Name: 'on-failure', MaximumRetryCount: 3 } },
	});
	s = await until('the restarted container, running with one restart',
		(x) => mine(x, restarted)?.restartCount === 1 && mine(x, restarted)?.state === 'running');
	const inspected = (await engine.request('GET', `/containers/${restarted}/json`)).json();
	assert.equal(inspected.RestartCount, 1, 'the engine\'s own view');
	assert.equal(s.containers.running, 2);

	assert.equal((await engine.request('POST', `/containers/${restarted}/stop?t=1`)).status, 204);
	assert.equal((await engine.request('POST', `/containers/${checked}/kill`)).status, 204);
	s = await until('both exited', (x) => mine(x, restarted)?.state === 'exited' && mine(x, checked)?.state === 'exited');
	assert.equal(s.containers.running, 0);
	assert.equal(s.containers.stopped, 2);

	assert.equal((await engine.request('DELETE', `/containers/${checked}`)).status, 204);
	s = await until('the removed container gone', (x) => !mine(x, checked));
	assert.equal(s.containers.stopped, 1);

	const since = proxy.requests.slice(afterListing);
	assert.ok(!since.some((l) => LIST.test(l)), `no list call after the first: ${since.join(', ')}`);
	// Besides the engine's disk usage (its own slower schedule, first read by the first sample).
	const calls = since.filter((l) => !/^GET \/v[\d.]+\/system\/df$/.test(l));
	assert.ok(calls.every((l) => /^GET \/v[\d.]+\/containers\/[0-9a-f]{64}\/json$/.test(l)),
		`only an inspect per event: ${since.join(', ')}`);
});

test('samples of an idle engine ask it nothing', async () => {
	const from = proxy.requests.length;
	for (let i = 0; i < 5; i++) await sample();
	assert.deepEqual(proxy.requests.slice(from), [], 'no engine call in five samples (and the loop\'s ticks meanwhile)');
});

test('a restart of dockerd: stewardd lists again, then follows the new engine', async () => {
	const running = await make({ Cmd: ['sleep', '600'] });
	await until('the container running', (x) => mine(x, running)?.state === 'running');
	const from = proxy.requests.length;
	await engine.restart(); // its containers are stopped with it
	await untilRequest(EVENTS, from);
	assert.ok(proxy.requests.slice(from).some((l) => LIST.test(l)), 'listed again before following');
	await until('the container stopped by the engine\'s restart', (x) => mine(x, running)?.state === 'exited');
	const followed = proxy.requests.length;
	const fresh = await make({ Cmd: ['sleep', '600'] });
	const s = await until('a container started after the restart', (x) => mine(x, fresh)?.state === 'running');
	// The engine's own view of the application's containers.
	const filters = encodeURIComponent(JSON.stringify({ label: [`steward.application=${app}`] }));
	const listed = (await engine.request('GET', `/containers/json?all=1&filters=${filters}`)).json();
	assert.deepEqual(s.containers.items.map((c) => [c.containerId, c.state]).sort(),
		listed.map((c) => [c.Id, c.State]).sort());
	assert.equal(s.containers.running, listed.filter((c) => c.State === 'running').length);
	assert.ok(!proxy.requests.slice(followed).some((l) => LIST.test(l)), 'followed, not listed');
});
