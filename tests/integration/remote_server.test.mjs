// Work for a remote server never lands on the control plane's own host. A
// server added with POST /servers whose agent is not connected: deleting an
// application, a named volume or a managed service on it fails its job with
// "the server's agent is not connected", and the local engine's containers
// and volumes carrying exactly the names and labels those jobs act on are
// left as they were (real PostgreSQL, real dockerd, real Caddy).

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import * as h from './harness.mjs';
import { ok } from './identity.mjs';
import { world, BASE_IMAGE, dockerRequest, waitJob as waitJobOf } from './deploy_world.mjs';

const w = await world({}, { tsan: true });
const made = { containers: [], volumes: [] };
after(async () => {
	for (const id of made.containers) await dockerRequest('DELETE', `/containers/${id}?force=1`).catch(() => {});
	for (const v of made.volumes) await dockerRequest('DELETE', `/volumes/${v}`).catch(() => {});
	await h.cleanupAll();
});

const NOT_CONNECTED = "The server's agent is not connected: nothing was done on the server.";
const project = await ok(w.call('POST', '/projects', { body: { name: 'far' } }), 201);
const env = project.environments[0].id;
const remote = await ok(w.call('POST', '/servers', { body: { name: 'far-away', host: 'far.example.com' } }), 201);

const waitJob = (id, timeoutMs) => waitJobOf(w, id, timeoutMs);

const jobOf = async (kind, target) =>
	(await w.sql(`SELECT id FROM jobs WHERE kind = '${kind}' AND target_id = '${target}' ORDER BY created_at DESC LIMIT 1`)).trim();

// A container on the local engine, stopped, named and labelled as given.
async function localContainer(name, labels) {
	const res = await dockerRequest('POST', `/containers/create?name=${name}`, {
		Image: BASE_IMAGE, Cmd: ['sleep', '600'], Labels: labels, HostConfig: { NetworkMode: 'none' },
	});
	assert.equal(res.status, 201, res.text);
	made.containers.push(res.json().Id);
	return res.json().Id;
}

async function localVolume(name, labels) {
	const res = await dockerRequest('POST', '/volumes/create', { Name: name, Labels: labels });
	assert.equal(res.status, 201, res.text);
	made.volumes.push(name);
}

const exists = async (kind, name) => (await dockerRequest('GET', `/${kind}/${name}${kind === 'containers' ? '/json' : ''}`)).status === 200;

test('deleting an application of a remote server fails saying its agent is not connected, and touches nothing locally', async () => {
	const app = await ok(w.call('POST', '/applications', { body: { name: 'far-app', environmentId: env, serverId: remote.id } }), 201);
	assert.equal(app.serverId, remote.id);
	await ok(w.call('POST', `/applications/${app.id}/volumes`, { body: { name: 'data', mountPath: '/data' } }), 201);
	const cname = `sw-${app.id.replace(/-/g, '').slice(0, 12)}-1`;
	await localContainer(cname, { 'steward.application': app.id, 'steward.managed': 'true' });
	await localVolume(`sw-${app.id}-data`, { 'steward.application': app.id, 'steward.managed': 'true' });

	assert.equal((await w.call('DELETE', `/applications/${app.id}`)).status, 204);
	const end = await waitJob(await jobOf('application.delete', app.id));
	assert.deepEqual(end, { status: 'FAILED', error: NOT_CONNECTED });
	assert.ok(await exists('containers', cname), 'the local container of that name is still there');
	assert.ok(await exists('volumes', `sw-${app.id}-data`), 'the local volume of that name is still there');
});

test('deleting a named volume of an application on a remote server fails the same way', async () => {
	const app = await ok(w.call('POST', '/applications', { body: { name: 'far-vol', environmentId: env, serverId: remote.id } }), 201);
	const vol = await ok(w.call('POST', `/applications/${app.id}/volumes`, { body: { name: 'cache', mountPath: '/cache' } }), 201);
	await localVolume(`sw-${app.id}-cache`, { 'steward.application': app.id, 'steward.managed': 'true' });
	assert.equal((await w.call('DELETE', `/applications/${app.id}/volumes/${vol.id}`)).status, 204);
	const end = await waitJob(await jobOf('volume.delete', vol.id));
	assert.deepEqual(end, { status: 'FAILED', error: NOT_CONNECTED });
	assert.ok(await exists('volumes', `sw-${app.id}-cache`));
});

test('deleting a service of a remote server fails the same way and leaves the local container and data', async () => {
	const s = await ok(w.call('POST', '/services', { body: { name: 'far-db', kind: 'REDIS', environmentId: env, serverId: remote.id } }), 201);
	assert.equal(s.serverId, remote.id);
	const cname = `sw-svc-${s.id.slice(0, 8)}${s.id.slice(9, 13)}`;
	await localContainer(cname, { 'steward.service': s.id, 'steward.managed': 'true' });
	await localVolume(`sw-svc-${s.id}-data`, { 'steward.service': s.id, 'steward.managed': 'true' });
	assert.equal((await w.call('DELETE', `/services/${s.id}`)).status, 204);
	const end = await waitJob(await jobOf('service.delete', s.id));
	assert.deepEqual(end, { status: 'FAILED', error: NOT_CONNECTED });
	assert.ok(await exists('containers', cname));
	assert.ok(await exists('volumes', `sw-svc-${s.id}-data`));
});

test('the same deletes on the local server still act on the local engine', async () => {
	const app = await ok(w.call('POST', '/applications', { body: { name: 'near-app', environmentId: env } }), 201);
	const cname = `sw-${app.id.replace(/-/g, '').slice(0, 12)}-1`;
	await localContainer(cname, { 'steward.application': app.id, 'steward.managed': 'true' });
	assert.equal((await w.call('DELETE', `/applications/${app.id}`)).status, 204);
	const end = await waitJob(await jobOf('application.delete', app.id));
	assert.equal(end.status, 'SUCCEEDED', end.error);
	assert.equal(await exists('containers', cname), false);
});
