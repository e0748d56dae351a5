// GET /servers/:id/sample of a remote server: the real steward-agent takes
// the sample with the sampler stewardd uses for its own host (metrics.sample),
// under its own HOST_PROC_PATH, HOST_SYS_PATH and HOST_ROOT_PATH, with the
// containers of its own engine (a second dockerd). The agent's host trees
// here are the sampler's fixture tree, so every host figure can only have
// come from the agent's paths; the answer carries the organization's
// container of the remote engine and not a container of another
// application on it. With the agent gone: 409 SERVER_NOT_CONNECTED.

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
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

const w = await world({ STEWARD_AGENT_HEARTBEAT_MS: 500, METRICS_EBPF: '0' });
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

test('with its agent gone, a remote server\'s sample is 409 SERVER_NOT_CONNECTED', async () => {
	agent.kill('SIGTERM');
	await waitStatus('OFFLINE', 30000);
	h.assertError(await w.call('GET', `/servers/${server.id}/sample`), 409, 'SERVER_NOT_CONNECTED');
});
