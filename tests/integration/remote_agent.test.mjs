// The remote driver with real parts: a second dockerd on this machine (its
// own socket, data root, exec root and pid file, --bridge=none
// --iptables=false), a second Caddy (its own admin and HTTP ports) and the
// real steward-agent pointed at them, dialing stewardd over 127.0.0.1. The
// first engine holds decoys of the same names. Application start, stop,
// restart and delete, and a named volume's delete, act on the second engine
// and never on the first; an agent killed while it runs a command fails the
// job with a clear sentence, and a job for a server whose agent is gone
// fails saying so. The agent reaches the second engine through a
// pass-through proxy (engine_hold.mjs, a fault injector) that can hold one
// request, so a command is caught while it waits in agent_commands.

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import * as h from './harness.mjs';
import { ok } from './identity.mjs';
import * as W from './deploy_world.mjs';
import { world, BASE_IMAGE, dockerRequest, waitJob as waitJobOf } from './deploy_world.mjs';
import { agentBinary, remoteWorld } from './remote_world.mjs';

agentBinary();
const w = await world({ STEWARD_AGENT_HEARTBEAT_MS: 500 });
const { second, caddy2, engine, server, startAgent } = await remoteWorld(w);
const waitJob = (id, timeoutMs) => waitJobOf(w, id, timeoutMs);

const decoys = [];
after(async () => {
	for (const id of decoys) await dockerRequest('DELETE', `/containers/${id}?force=1`).catch(() => {});
	await h.cleanupAll();
});

async function waitStatus(status, timeoutMs = 15000) {
	const deadline = Date.now() + timeoutMs * h.SLACK;
	for (;;) {
		const s = await ok(w.call('GET', `/servers/${server.id}`));
		if (s.status === status) return s;
		if (Date.now() > deadline) assert.fail(`the server is ${s.status}, not ${status}`);
		await h.sleep(100);
	}
}

let agent = startAgent();
await waitStatus('ONLINE');

const project = await ok(w.call('POST', '/projects', { body: { name: 'remote' } }), 201);
const env = project.environments[0].id;
const makeApp = async (name) => {
	const app = await ok(w.call('POST', '/applications', { body: { name, environmentId: env, serverId: server.id } }), 201);
	assert.equal(app.serverId, server.id);
	return app;
};
const containerName = (app) => `sw-${app.id.replace(/-/g, '').slice(0, 12)}-1`;

// A container of app on engine (request: dockerRequest or second.request),
// started; term: whether it exits on SIGTERM; termAfterS: it exits that
// many seconds after SIGTERM.
async function appContainer(request, app, { term = true, termAfterS = 0 } = {}) {
	const cmd = termAfterS ? ['sh', '-c', `trap "sleep ${termAfterS}; exit 0" TERM; sleep 600 & wait`]
		: term ? ['sh', '-c', 'trap "exit 0" TERM; sleep 600 & wait'] : ['sleep', '600'];
	const res = await request('POST', `/containers/create?name=${containerName(app)}`, {
		Image: BASE_IMAGE, Cmd: cmd, Labels: { 'steward.application': app.id, 'steward.managed': 'true' },
		HostConfig: { NetworkMode: 'none' },
	});
	assert.equal(res.status, 201, res.text);
	const id = res.json().Id;
	assert.equal((await request('POST', `/containers/${id}/start`)).status, 204);
	return id;
}
const inspect = async (request, id) => {
	const r = await request('GET', `/containers/${id}/json`);
	return r.status === 200 ? r.json().State : null;
};

async function lifecycle(app, verb) {
	const job = await ok(w.call('POST', `/applications/${app.id}/${verb}`), 202);
	return waitJob(job.id);
}

test('start, stop and restart of an application on the remote server act on its engine, not the first', async () => {
	const app = await makeApp('far-life');
	const there = await appContainer(second.request, app);
	const decoy = await appContainer(dockerRequest, app);
	decoys.push(decoy);

	assert.deepEqual(await lifecycle(app, 'stop'), { status: 'SUCCEEDED', error: '' });
	assert.equal((await inspect(second.request, there)).Running, false, 'stopped on the second engine');
	assert.equal((await inspect(dockerRequest, decoy)).Running, true, 'the first engine\'s container runs on');

	assert.deepEqual(await lifecycle(app, 'start'), { status: 'SUCCEEDED', error: '' });
	const started = await inspect(second.request, there);
	assert.equal(started.Running, true);

	assert.deepEqual(await lifecycle(app, 'restart'), { status: 'SUCCEEDED', error: '' });
	const restarted = await inspect(second.request, there);
	assert.equal(restarted.Running, true);
	assert.notEqual(restarted.StartedAt, started.StartedAt, 'restarted on the second engine');
	assert.equal((await ok(w.call('GET', `/applications/${app.id}`))).status, 'RUNNING');
	const decoyState = await inspect(dockerRequest, decoy);
	assert.equal(decoyState.Running, true);

	// The live routes read the second engine and the second Caddy.
	const listed = await ok(w.call('GET', `/servers/${server.id}/containers`));
	assert.deepEqual(listed.map((c) => [c.id, c.applicationId, c.state]), [[there, app.id, 'running']]);
	assert.deepEqual((await ok(w.call('GET', `/applications/${app.id}/containers`))).map((c) => c.id), [there]);
	const route = { '@id': `steward-app-${app.id}`, match: [{ host: ['far.example.com'] }],
		handle: [{ handler: 'reverse_proxy', upstreams: [{ dial: '127.0.0.1:9' }] }] };
	const put = await caddy2.request('POST', '/config/apps/http/servers/steward', { listen: [caddy2.httpListen], routes: [route] });
	assert.equal(put.status, 200, put.text);
	const proxy = await ok(w.call('GET', `/proxy?serverId=${server.id}`));
	assert.equal(proxy.reachable, true);
	assert.equal(proxy.serverId, server.id);
	assert.deepEqual(proxy.server.listen, [caddy2.httpListen]);
	assert.deepEqual(proxy.routes.map((r) => [r.id, r.hosts, r.upstreams]), [[`steward-app-${app.id}`, ['far.example.com'], ['127.0.0.1:9']]]);
	const localProxy = await ok(w.call('GET', '/proxy'));
	assert.ok(!localProxy.routes.some((r) => r.applicationId === app.id), 'not on the first Caddy');

	// The commands went through the table and were closed: no payload kept.
	const rows = (await w.sql(`SELECT kind || ':' || status || ':' || payload::text FROM agent_commands WHERE server_id = '${server.id}' ORDER BY created_at`)).trim().split('\n');
	assert.ok(rows.some((r) => r.startsWith('container.stop:SUCCEEDED:{}')), rows.join('\n'));
	assert.ok(rows.every((r) => r.endsWith(':{}')), 'payloads are dropped once answered');
});

test('deleting a named volume and an application on the remote server removes them there only', async () => {
	const app = await makeApp('far-gone');
	const vol = await ok(w.call('POST', `/applications/${app.id}/volumes`, { body: { name: 'files', mountPath: '/files' } }), 201);
	const volName = `sw-${app.id}-files`;
	for (const request of [second.request, dockerRequest]) {
		const r = await request('POST', '/volumes/create', { Name: volName, Labels: { 'steward.application': app.id, 'steward.managed': 'true' } });
		assert.equal(r.status, 201, r.text);
	}
	assert.equal((await w.call('DELETE', `/applications/${app.id}/volumes/${vol.id}`)).status, 204);
	const vj = (await w.sql(`SELECT id FROM jobs WHERE kind = 'volume.delete' AND target_id = '${vol.id}'`)).trim();
	assert.deepEqual(await waitJob(vj), { status: 'SUCCEEDED', error: '' });
	assert.equal((await second.request('GET', `/volumes/${volName}`)).status, 404, 'gone from the second engine');
	assert.equal((await dockerRequest('GET', `/volumes/${volName}`)).status, 200, 'kept on the first');
	await dockerRequest('DELETE', `/volumes/${volName}`);

	const there = await appContainer(second.request, app);
	const decoy = await appContainer(dockerRequest, app);
	decoys.push(decoy);
	assert.equal((await w.call('DELETE', `/applications/${app.id}`)).status, 204);
	const aj = (await w.sql(`SELECT id FROM jobs WHERE kind = 'application.delete' AND target_id = '${app.id}'`)).trim();
	assert.deepEqual(await waitJob(aj), { status: 'SUCCEEDED', error: '' });
	assert.equal(await inspect(second.request, there), null, 'its container is gone from the second engine');
	assert.equal((await inspect(dockerRequest, decoy)).Running, true, 'the first engine\'s is untouched');
});

// An application on the remote server with a git source serving body.
async function gitApp(name, body) {
	const app = await makeApp(name);
	await ok(w.call('PATCH', `/applications/${app.id}`, { body: { port: await h.freePort() } }));
	const repo = await W.createRepo({ files: W.webFiles(body) });
	await W.gitSource(w, app, repo.fileUrl);
	return app;
}
const NO_BUILD = 'An image build on a remote server is not available yet.';

test('a deployment to the remote server stops at the build, which is not carried yet, and builds nothing locally', async () => {
	const app = await gitApp('far-deploy', 'far v1\n');
	const d = await W.deploy(w, app);
	const end = await W.waitDeployment(w, d.id);
	assert.equal(end.status, 'FAILED');
	assert.equal(end.errorMessage, NO_BUILD);
	assert.match(await W.logText(w, d.id), /Base image steward-test\/base:latest is present/, 'the FROM image was looked up on the second engine');
	const filters = encodeURIComponent(JSON.stringify({ label: [`steward.application=${app.id}`] }));
	for (const request of [dockerRequest, second.request]) {
		assert.deepEqual((await request('GET', `/images/json?filters=${filters}`)).json(), [], 'no image built');
		assert.deepEqual((await request('GET', `/containers/json?all=1&filters=${filters}`)).json(), [], 'no container');
	}
});

// A service of kind on the remote server, started from a STAND-IN image
// tagged <image>:<version> on the second engine only (see
// deploy_pipeline.test.mjs): it proves where the container is made, not
// that the database works. whilePending(svc): called while the service's
// container.create is held at the engine (its command sent, unanswered).
async function startedService(serviceName, kind, image, version, whilePending = null) {
	const standIn = W.tarOf({ Dockerfile: `FROM ${BASE_IMAGE}\nENTRYPOINT ["sh", "-c", "trap \\"exit 0\\" TERM; sleep 3600 & wait", "stand-in"]\n` });
	const built = await second.request('POST', `/build?t=${image}:${version}`, standIn, { headers: { 'Content-Type': 'application/x-tar' }, timeoutMs: 60000 });
	assert.equal(built.status, 200, built.text);
	const svc = await ok(w.call('POST', '/services', { body: { name: serviceName, kind, version, environmentId: env, serverId: server.id } }), 201);
	if (whilePending) engine.hold(/^POST \S*\/containers\/create/);
	const start = await ok(w.call('POST', `/services/${svc.id}/start`), 202);
	if (whilePending) {
		try {
			await engine.waitHeld(30000);
			await whilePending(svc);
		} finally {
			engine.release();
		}
	}
	assert.deepEqual(await waitJob(start.id), { status: 'SUCCEEDED', error: '' });
	return { svc, name: `sw-svc-${svc.id.replace(/-/g, '').slice(0, 12)}` };
}

test('a service on the remote server starts, stops and is deleted there; its password is never in the command table, pending or answered', async () => {
	let pending = null;
	const { svc, name } = await startedService('far-db', 'POSTGRESQL', 'postgres', '16', async (s) => {
		// container.create is at the engine: its row is pending, and what
		// it carries (the environment, with the password) is sealed.
		const { password } = await ok(w.call('GET', `/services/${s.id}/connection`));
		assert.ok(password.length >= 16);
		const row = (await w.sql(`SELECT status || ' ' || payload::text || ' ' || coalesce(payload_sealed, 'NULL') FROM agent_commands WHERE server_id = '${server.id}' AND kind = 'container.create'`)).trim();
		assert.match(row, /^(SENT|ACKED) \{\} v1\.[0-9a-f]{8}\.[A-Za-z0-9_-]+$/, 'pending, its payload sealed');
		const all = await w.sql(`SELECT coalesce(string_agg(t::text, ' '), '') FROM agent_commands t`);
		assert.ok(!all.includes(password), 'no column of any row holds the password while the command is pending');
		assert.ok(!all.includes('POSTGRES_PASSWORD'), 'nor the environment\'s names');
		pending = row;
	});
	assert.ok(pending, 'the pending state was checked');
	const info = (await second.request('GET', `/containers/${name}/json`)).json();
	assert.equal(info.State.Running, true);
	assert.ok(info.Config.Env.includes('POSTGRES_DB=far_db'));
	assert.equal((await dockerRequest('GET', `/containers/${name}/json`)).status, 404, 'nothing on the first engine');
	const { password } = await ok(w.call('GET', `/services/${svc.id}/connection`));
	assert.ok(info.Config.Env.includes(`POSTGRES_PASSWORD=${password}`), 'the password travelled in container.create');
	const rows = await w.sql(`SELECT coalesce(string_agg(t::text, ' '), '') FROM agent_commands t`);
	assert.ok(!rows.includes(password), 'the container\'s environment is dropped from the command rows');
	assert.equal((await w.sql(`SELECT count(*) FROM agent_commands WHERE payload_sealed IS NOT NULL AND status IN ('SUCCEEDED', 'FAILED')`)).trim(), '0', 'answered: nothing sealed is kept');

	const stop = await ok(w.call('POST', `/services/${svc.id}/stop`), 202);
	assert.deepEqual(await waitJob(stop.id), { status: 'SUCCEEDED', error: '' });
	assert.equal((await second.request('GET', `/containers/${name}/json`)).json().State.Running, false);
	assert.equal((await w.call('DELETE', `/services/${svc.id}`)).status, 204);
	const del = (await w.sql(`SELECT id FROM jobs WHERE kind = 'service.delete' AND target_id = '${svc.id}'`)).trim();
	assert.deepEqual(await waitJob(del), { status: 'SUCCEEDED', error: '' });
	assert.equal((await second.request('GET', `/containers/${name}/json`)).status, 404);
	assert.equal((await second.request('GET', `/volumes/sw-svc-${svc.id}-data`)).status, 404);
});

test('a Redis service on the remote server gets its password file there (container.file)', async () => {
	const { svc, name } = await startedService('far-cache', 'REDIS', 'redis', '7');
	const { password, port } = await ok(w.call('GET', `/services/${svc.id}/connection`));
	const file = await second.request('GET', `/containers/${name}/archive?path=/data/steward-redis.conf`);
	assert.equal(file.status, 200, file.text);
	assert.ok(file.body.includes(Buffer.from(`port ${port}\nbind 127.0.0.1\ndir /data\nrequirepass ${password}\n`)), 'the file, byte for byte');
	const files = (await w.sql(`SELECT count(*) || ':' || count(*) FILTER (WHERE payload <> '{}' OR payload_sealed IS NOT NULL) FROM agent_commands WHERE kind = 'container.file' AND status = 'SUCCEEDED'`)).trim();
	assert.equal(files, '1:0', 'one file written, its data dropped from the command row');
	assert.equal((await w.call('DELETE', `/services/${svc.id}`)).status, 204);
	const del = (await w.sql(`SELECT id FROM jobs WHERE kind = 'service.delete' AND target_id = '${svc.id}'`)).trim();
	assert.deepEqual(await waitJob(del), { status: 'SUCCEEDED', error: '' });
});

test('a command longer than three heartbeats runs while the agent answers them', async () => {
	const app = await makeApp('far-slow');
	// The container exits 3 s after SIGTERM: the stop takes six heartbeats.
	const there = await appContainer(second.request, app, { termAfterS: 3 });
	const t0 = Date.now();
	assert.deepEqual(await lifecycle(app, 'stop'), { status: 'SUCCEEDED', error: '' });
	assert.ok(Date.now() - t0 >= 3000, 'the stop took the container\'s 3 s');
	assert.equal((await inspect(second.request, there)).Running, false);
	assert.equal((await ok(w.call('GET', `/servers/${server.id}`))).status, 'ONLINE');
});

test('an agent killed while it runs a command fails the job saying so; with no agent, lifecycle jobs fail at once and a deployment waits for it', async () => {
	const app = await makeApp('far-kill');
	// sleep as PID 1 ignores SIGTERM: the stop waits its 10 s timeout.
	const there = await appContainer(second.request, app, { term: false });
	const from = agent.log().length;
	const job = await ok(w.call('POST', `/applications/${app.id}/stop`), 202);
	const deadline = Date.now() + 20000 * h.SLACK;
	while (!/running command \S+ \(container\.stop\)/.test(agent.log().slice(from))) {
		if (Date.now() > deadline) assert.fail(`the agent never ran container.stop:\n${agent.log()}`);
		await h.sleep(20);
	}
	agent.kill('SIGKILL');
	const end = await waitJob(job.id, 30000);
	assert.equal(end.status, 'FAILED');
	assert.match(end.error, /^The server's agent disconnected while it ran container\.stop: its outcome on the server is not known\.$/);
	await waitStatus('OFFLINE');
	h.assertError(await w.call('GET', `/proxy?serverId=${server.id}`), 409, 'SERVER_NOT_CONNECTED');
	h.assertError(await w.call('GET', `/servers/${server.id}/containers`), 409, 'SERVER_NOT_CONNECTED');
	assert.deepEqual(await lifecycle(app, 'start'),
		{ status: 'FAILED', error: "The server's agent is not connected: nothing was done on the server." });
	// The command given up on is closed: a returning agent is not sent it.
	const left = (await w.sql(`SELECT count(*) FROM agent_commands WHERE server_id = '${server.id}' AND status NOT IN ('SUCCEEDED', 'FAILED')`)).trim();
	assert.equal(left, '0');
	// A deployment waits a while for the agent: one that returns in time
	// carries it on (to the build, which is not carried yet).
	const later = await gitApp('far-later', 'later\n');
	const d = await W.deploy(w, later);
	await h.sleep(1500);
	agent = startAgent();
	await waitStatus('ONLINE');
	const end2 = await W.waitDeployment(w, d.id);
	assert.equal(end2.errorMessage, NO_BUILD, 'it went on once the agent was back');
	assert.ok(await inspect(second.request, there));
});

test('the agent that ran the commands stops on SIGTERM, cleanly', async () => {
	const exited = new Promise((resolve) => agent.once('exit', (code, signal) => resolve({ code, signal })));
	agent.kill('SIGTERM');
	assert.deepEqual(await exited, { code: 0, signal: null });
	assert.doesNotMatch(agent.log(), /ERROR: (AddressSanitizer|LeakSanitizer)|runtime error: /);
});
