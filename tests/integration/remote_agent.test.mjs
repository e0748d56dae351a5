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
// Deployments (git and upload, RECREATE and BLUE_GREEN, rollback) are
// built by the second engine from the context streamed to the agent and
// served by the second Caddy, also when the agent is held by another
// replica than the runner's (whose log that replica, without the file,
// reads whole from the copy stored in the database); a build's 200,000 output lines arrive whole
// while heartbeats pass; an agent killed mid-build fails the deployment
// and the version before serves on; a deployment cancelled mid-build stops
// the build on the agent (protocol 2's cancel): no image, the version before
// serves on. Jobs asked while the agent is away wait for it, bounded
// (STEWARD_AGENT_RECONNECT_WAIT_MS): a lifecycle job and a deployment go on
// once it is started again, a deployment whose agent leaves between two of
// its commands (paused before SWITCHING by failure injection) goes on once
// it is back, a cancel ends the wait, and past the bound the job fails
// saying it waited, having issued nothing.

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import * as h from './harness.mjs';
import { ok, call as callAs } from './identity.mjs';
import * as W from './deploy_world.mjs';
import { world, BASE_IMAGE, dockerRequest, waitJob as waitJobOf } from './deploy_world.mjs';
import { agentBinary, remoteWorld } from './remote_world.mjs';

agentBinary();
const RECONNECT_WAIT_MS = 30000;
// Failure injection (STEWARD_ENV=test): a deployment's handler waits at a
// phase this file lists (deploy_crash_phases.test.mjs); empty: none.
const pauseFile = path.join(h.makeTempDir('sw-fault-'), 'pause');
fs.writeFileSync(pauseFile, '');
const w = await world({ STEWARD_AGENT_HEARTBEAT_MS: 500, DEPLOY_BLUE_GREEN_MIN_FREE_MEMORY_MB: '16',
	STEWARD_AGENT_RECONNECT_WAIT_MS: String(RECONNECT_WAIT_MS), STEWARD_FAULT_PAUSE_FILE: pauseFile }, { tsan: true });
const { second, caddy2, engine, server, startAgent, waitStatus } = await remoteWorld(w);
const waitJob = (id, timeoutMs) => waitJobOf(w, id, timeoutMs);

const decoys = [];
after(async () => {
	for (const id of decoys) await dockerRequest('DELETE', `/containers/${id}?force=1`).catch(() => {});
	await h.cleanupAll();
});

let agent = startAgent();
await waitStatus('ONLINE');
let killed = null; // the application and container of the killed agent's stop

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
	return { ...app, repo };
}

const filtersOf = (app) => encodeURIComponent(JSON.stringify({ label: [`steward.application=${app.id}`] }));
const imagesOn = async (request, app) => (await request('GET', `/images/json?filters=${filtersOf(app)}`)).json().flatMap((i) => i.RepoTags ?? []).sort();
const containersOn = async (request, app) => (await request('GET', `/containers/json?all=1&filters=${filtersOf(app)}`)).json().map((c) => [c.Names[0].slice(1), c.State]).sort();
// GET through the second Caddy with the Host header.
const viaCaddy2 = (host, opts) => W.viaCaddy({ caddy: caddy2 }, host, '/', opts);

// The health gate's probes of deployment d, made by the agent on its own
// loopback: the container.probe commands issued for the server while d ran,
// each as "<command status>:<HTTP status or error code>", in order.
async function probesOf(d) {
	return (await w.sql(`SELECT coalesce(string_agg(status || ':' || coalesce(result->>'status', error_code, '?'), ',' ORDER BY created_at), '') FROM agent_commands WHERE server_id = '${server.id}' AND kind = 'container.probe' AND created_at BETWEEN '${d.startedAt}' AND '${d.finishedAt}'`)).trim();
}

test('a git deployment to the remote server is built, run and served there (RECREATE, then BLUE_GREEN), and a rollback too', async () => {
	const app = await gitApp('far-deploy', 'far v1\n');
	const host = 'far-deploy.example.com';
	await W.verifiedDomain(w, app, host);
	const d1 = await W.deployed(w, app);
	assert.equal(d1.strategy, 'RECREATE');
	assert.match(await probesOf(d1), /^(SUCCEEDED:\d{3},|FAILED:[A-Z_]+,)*SUCCEEDED:200$/, 'the health gate ran on the agent');
	const log = await W.logText(w, d1.id);
	assert.match(log, /Health gate: GET \/ on port \d+ of the server, made there/);
	assert.match(log, /Step 1\/\d+ : FROM steward-test\/base:latest/, 'the engine\'s build output came back into the log');
	assert.match(log, /Successfully built [0-9a-f]+/);
	assert.deepEqual(await imagesOn(second.request, app), [`steward/${app.id}:1`], 'built on the second engine');
	assert.deepEqual(await imagesOn(dockerRequest, app), [], 'nothing built on the first');
	assert.deepEqual(await containersOn(second.request, app), [[`${containerName(app).slice(0, -2)}-1`, 'running']]);
	assert.deepEqual(await containersOn(dockerRequest, app), []);
	assert.equal((await caddy2.request('GET', `/id/steward-app-${app.id}`)).status, 200, 'the route is on the second Caddy');
	assert.notEqual((await w.caddy.request('GET', `/id/steward-app-${app.id}`)).status, 200, 'and not on the first');
	const r1 = await viaCaddy2(host);
	assert.equal(r1.status, 200, r1.text);
	assert.equal(r1.text, 'far v1\n');
	// The streams went with their command.
	assert.equal((await w.sql('SELECT (SELECT count(*) FROM agent_command_input) + (SELECT count(*) FROM agent_command_output)')).trim(), '0');

	// BLUE_GREEN: the free memory is the remote host's (host.facts).
	await ok(w.call('PATCH', `/applications/${app.id}`, { body: { deployStrategy: 'BLUE_GREEN' } }));
	fs.writeFileSync(`${app.repo.path}/www/index.html`, 'far v2\n');
	await app.repo.git(['commit', '-q', '-am', 'Second version']);
	const d2 = await W.deployed(w, app);
	assert.equal(d2.strategy, 'BLUE_GREEN', await W.logText(w, d2.id));
	assert.match(await probesOf(d2), /^(SUCCEEDED:\d{3},|FAILED:[A-Z_]+,)*SUCCEEDED:200$/, 'the new colour\'s gate ran on the agent');
	assert.equal((await viaCaddy2(host)).text, 'far v2\n');
	assert.deepEqual(await imagesOn(second.request, app), [`steward/${app.id}:1`, `steward/${app.id}:2`]);
	const running = (await containersOn(second.request, app)).filter(([, state]) => state === 'running');
	assert.equal(running.length, 1, JSON.stringify(running));
	assert.deepEqual(await containersOn(dockerRequest, app), []);
	// The new colour's port was found free on the server, by its agent
	// (port.free: a bind() there), not on the control plane: the command's
	// answer, the agent's own log line and the container's PORT agree.
	const [, colourPort] = /BLUE_GREEN: the \w+ colour starts on port (\d+) beside the running version \(found free on the server\)/.exec(await W.logText(w, d2.id)) ?? [];
	assert.ok(colourPort, await W.logText(w, d2.id));
	assert.equal((await w.sql(`SELECT string_agg(status || ':' || (result->>'port'), ',') FROM agent_commands WHERE server_id = '${server.id}' AND kind = 'port.free' AND created_at BETWEEN '${d2.startedAt}' AND '${d2.finishedAt}'`)).trim(), `SUCCEEDED:${colourPort}`);
	assert.match(agent.log(), new RegExp(`port\\.free: 127\\.0\\.0\\.1:${colourPort} is free on this server`));
	const env2 = (await second.request('GET', `/containers/${running[0][0]}/json`)).json().Config.Env;
	assert.ok(env2.includes(`PORT=${colourPort}`), JSON.stringify(env2));

	// A rollback to the first version: its image on the second engine, no build.
	const rb = await ok(w.call('POST', `/deployments/${d1.id}/rollback`), 201);
	const d3 = await W.waitDeployment(w, rb.id);
	assert.equal(d3.status, 'SUCCEEDED', d3.errorMessage);
	assert.equal(d3.imageTag, d1.imageTag);
	assert.equal((await viaCaddy2(host)).text, 'far v1\n');
	assert.deepEqual(await imagesOn(dockerRequest, app), []);
	assert.deepEqual(await containersOn(dockerRequest, app), []);
});

test('a remote version whose health path fails: FAILED with the health gate\'s sentence from the agent\'s probes, and the version before keeps serving', async () => {
	const app = await gitApp('far-unhealthy', 'healthy v1\n');
	const host = 'far-unhealthy.example.com';
	await W.verifiedDomain(w, app, host);
	await W.deployed(w, app);
	assert.equal((await viaCaddy2(host)).text, 'healthy v1\n');
	fs.writeFileSync(`${app.repo.path}/www/index.html`, 'never served\n');
	await app.repo.git(['commit', '-q', '-am', 'An unhealthy version']);
	await ok(w.call('PATCH', `/applications/${app.id}`, { body: { healthCheckPath: '/missing', healthCheckRetries: 2, healthCheckTimeoutSeconds: 2 } }));
	const d2 = await W.deployed(w, app, {}, 'FAILED');
	const port = (await ok(w.call('GET', `/applications/${app.id}`))).port;
	assert.equal(d2.errorMessage, `The new version did not pass the health check: GET /missing on port ${port} answered 404 (expected 200) after 2 tries.`);
	assert.match(await probesOf(d2), /^(SUCCEEDED:404|FAILED:UNREACHABLE),SUCCEEDED:404$/, 'both tries were the agent\'s');
	assert.equal((await viaCaddy2(host)).text, 'healthy v1\n', 'the version before serves on');
	assert.deepEqual((await containersOn(second.request, app)).filter(([, state]) => state === 'running').map(([n]) => n),
		[`${containerName(app).slice(0, -2)}-1`], 'the first version runs again on the second engine');
});

test('an upload deployment to the remote server is built there from the streamed archive, its variable values scrubbed from the build log', async () => {
	const app = await makeApp('far-upload');
	await ok(w.call('PATCH', `/applications/${app.id}`, { body: { port: await h.freePort() } }));
	const secret = 'hunter2-remote-build-secret';
	await W.setVariables(w, app, { BUILD_NOTE: secret });
	// A context over several input windows (about 3 MiB) and a build step
	// that prints the variable's value.
	const big = crypto.randomBytes(3 << 20).toString('base64');
	const files = W.webFiles('uploaded\n', [`RUN echo ${secret} && wc -c /www/big.txt`]);
	files['www/big.txt'] = big;
	const d = await W.deployed(w, app, { archive: W.tarOf(files) });
	const log = await W.logText(w, d.id);
	assert.doesNotMatch(log, new RegExp(secret), 'the value is scrubbed');
	assert.match(log, new RegExp(`${big.length} /www/big.txt`), 'the whole context reached the engine');
	assert.deepEqual(await imagesOn(second.request, app), [`steward/${app.id}:1`]);
	assert.deepEqual(await imagesOn(dockerRequest, app), []);
	const port = (await ok(w.call('GET', `/applications/${app.id}`))).port;
	assert.equal((await W.httpGet(port, '/')).text, 'uploaded\n');
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
		const row = (await w.sql(`SELECT status || ' ' || payload::text || ' ' || coalesce(payload_sealed, 'NULL') FROM agent_commands WHERE server_id = '${server.id}' AND kind = 'container.create' AND status IN ('QUEUED', 'SENT', 'ACKED')`)).trim();
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

test('a build that prints 200,000 lines reaches the log whole and in order, and the agent stays ONLINE meanwhile (heartbeats every 500 ms)', async () => {
	const app = await makeApp('far-chatty');
	await ok(w.call('PATCH', `/applications/${app.id}`, { body: { port: await h.freePort() } }));
	const files = W.webFiles('chatty\n', ['RUN busybox seq 1 200000']);
	const d = await W.deploy(w, app, { archive: W.tarOf(files) });
	const statuses = new Set();
	let end;
	for (;;) {
		statuses.add((await ok(w.call('GET', `/servers/${server.id}`))).status);
		end = await W.getDeployment(w, d.id);
		if (['SUCCEEDED', 'FAILED', 'CANCELLED'].includes(end.status)) break;
		await h.sleep(100);
	}
	const why = () => `${end.errorMessage}\n${agent.log().slice(-2000)}\n${w.srv.logs.all().filter((l) => /agent/.test(l)).slice(-10).join('\n')}`;
	assert.equal(end.status, 'SUCCEEDED', why());
	assert.deepEqual([...statuses], ['ONLINE'], 'never OFFLINE while the output streamed');
	const numbers = (await W.logText(w, d.id)).split('\n').filter((l) => /^\d+$/.test(l)).map(Number);
	assert.equal(numbers.length, 200000);
	assert.ok(numbers.every((n, i) => n === i + 1), 'each line once, in order');
});

// An application serving 'before\n' through the second Caddy at host, then
// a deployment whose build has reached its slow step (a RUN of 120 s).
async function slowBuildRunning(name) {
	const app = await gitApp(name, 'before\n');
	const host = `${name}.example.com`;
	await W.verifiedDomain(w, app, host);
	await W.deployed(w, app);
	assert.equal((await viaCaddy2(host)).text, 'before\n');
	fs.writeFileSync(`${app.repo.path}/Dockerfile`, W.webDockerfile(['RUN echo slow-step-begins && sleep 120']));
	await app.repo.git(['commit', '-q', '-am', 'A slow build']);
	const d = await W.deploy(w, app);
	const deadline = Date.now() + 60000 * h.SLACK;
	while (!/slow-step-begins/.test(await W.logText(w, d.id))) {
		if (Date.now() > deadline) assert.fail(`the build never reached its slow step:\n${await W.logText(w, d.id)}`);
		await h.sleep(50);
	}
	return { app, host, d };
}

test('an agent killed during a build fails the deployment saying so, and the version before keeps serving', async () => {
	const { app, host, d } = await slowBuildRunning('far-killbuild');
	agent.kill('SIGKILL');
	const end = await W.waitDeployment(w, d.id);
	assert.equal(end.status, 'FAILED');
	assert.match(end.errorMessage, /The server's agent disconnected while it ran image\.build: its outcome on the server is not known\./);
	assert.equal((await viaCaddy2(host)).text, 'before\n', 'the version before serves on');
	assert.deepEqual(await imagesOn(second.request, app), [`steward/${app.id}:1`], 'no image of the killed build');
	agent = startAgent();
	await waitStatus('ONLINE');
});

test('a cancel during a remote build stops it on the agent: CANCELLED, no image, the version before serves on', async () => {
	const { app, host, d } = await slowBuildRunning('far-cancelbuild');
	const deadline = Date.now() + 60000 * h.SLACK;
	const r = await w.call('POST', `/deployments/${d.id}/cancel`);
	assert.ok([200, 202].includes(r.status), r.text);
	const end = await W.waitDeployment(w, d.id);
	assert.equal(end.status, 'CANCELLED', end.errorMessage);
	// The agent was told, and its engine call was stopped (not run to its end).
	const stopped = /agent: command (\S+) cancelled by the control plane[^]*agent: image\.build \1 stopped by its cancel \(nothing tagged\)/;
	while (!stopped.test(agent.log())) {
		if (Date.now() > deadline) assert.fail(`the agent never said the build stopped:\n${agent.log().slice(-2000)}`);
		await h.sleep(50);
	}
	// The engine runs no step of it: the slow step's container is gone.
	const building = async () => (await second.request('GET', '/containers/json?all=1')).json()
		.filter((c) => /slow-step-begins/.test(c.Command ?? ''));
	while ((await building()).length) {
		if (Date.now() > deadline) assert.fail(`the build's step still runs: ${JSON.stringify(await building())}`);
		await h.sleep(50);
	}
	assert.deepEqual(await imagesOn(second.request, app), [`steward/${app.id}:1`], 'no image of the cancelled build');
	assert.equal((await viaCaddy2(host)).text, 'before\n', 'the version before serves on');
	assert.equal((await ok(w.call('GET', `/servers/${server.id}`))).status, 'ONLINE');
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

test('an agent killed while it runs a command fails the job saying so; the command given up on is closed', async () => {
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
	// The command given up on is closed: a returning agent is not sent it.
	const left = (await w.sql(`SELECT count(*) FROM agent_commands WHERE server_id = '${server.id}' AND status NOT IN ('SUCCEEDED', 'FAILED')`)).trim();
	assert.equal(left, '0');
	killed = { app, there };
});

// The remote driver's wait for an agent that is reconnecting
// (STEWARD_AGENT_RECONNECT_WAIT_MS, RECONNECT_WAIT_MS here): each job
// logs when it starts waiting, and each case below waits for that line,
// not for a time.
const WAITING = new RegExp(`remote driver: waiting up to \\d+ ms for the agent of server=${server.id} to reconnect`);
async function jobsWaiting(n, from) {
	const deadline = Date.now() + 30000 * h.SLACK;
	while (w.srv.logs.all(from).filter((l) => WAITING.test(l)).length < n) {
		if (Date.now() > deadline) assert.fail(`not ${n} jobs waiting for the agent:\n${w.srv.logs.text(from)}`);
		await h.sleep(20);
	}
}

test('jobs for a server whose agent is reconnecting wait for it: a lifecycle job and a deployment queued while it is away succeed once it is back', async () => {
	const { app, there } = killed;
	await waitStatus('OFFLINE');
	// The engine ends the killed agent's stop on its own (its 10 s timeout).
	const stopped = Date.now() + 30000 * h.SLACK;
	while ((await inspect(second.request, there)).Running) {
		if (Date.now() > stopped) assert.fail('the container of the killed stop still runs');
		await h.sleep(100);
	}
	const commands = async () => (await w.sql(`SELECT count(*) FROM agent_commands WHERE server_id = '${server.id}'`)).trim();
	const before = await commands();
	const from = w.srv.logs.mark();
	const job = await ok(w.call('POST', `/applications/${app.id}/start`), 202);
	const later = await gitApp('far-later', 'later\n');
	const d = await W.deploy(w, later);
	await jobsWaiting(2, from);
	// Nothing was issued while the agent was away.
	assert.equal(await commands(), before);
	assert.equal((await W.getDeployment(w, d.id)).status, 'BUILDING');
	agent = startAgent();
	await waitStatus('ONLINE');
	assert.deepEqual(await waitJob(job.id), { status: 'SUCCEEDED', error: '' }, 'the start went on once the agent was back');
	assert.equal((await inspect(second.request, there)).Running, true, 'started on the second engine');
	const end = await W.waitDeployment(w, d.id);
	assert.equal(end.status, 'SUCCEEDED', `the deployment went on once the agent was back: ${end.errorMessage}`);
	await w.srv.logs.waitForLine(new RegExp(`remote driver: the agent of server=${server.id} is back after \\d+ ms`), 10000 * h.SLACK, { from });
});

test('a deployment whose agent leaves between two commands: the next one waits unsent in the table until the agent is back, and the deployment succeeds', async () => {
	const app = await gitApp('far-between', 'between\n');
	const host = 'far-between.example.com';
	await W.verifiedDomain(w, app, host);
	// Paused before SWITCHING, whose one command (caddy.route.set) is not
	// retried: a failure there fails the deployment.
	fs.writeFileSync(pauseFile, 'SWITCHING');
	let d;
	try {
		d = await W.deploy(w, app);
		// Its container runs healthy on the server; the handler waits.
		await W.waitPhase(w, d.id, 'SWITCHING', 120000 * h.SLACK);
		const gone = new Promise((resolve) => agent.once('exit', resolve));
		agent.kill('SIGTERM');
		await gone;
		await waitStatus('OFFLINE');
	} finally {
		fs.writeFileSync(pauseFile, '');
	}
	// The route's command waits QUEUED for the agent (the old driver
	// failed it at once: "not connected").
	const queued = `SELECT count(*) FROM agent_commands WHERE server_id = '${server.id}' AND status = 'QUEUED' AND kind <> 'metrics.sample'`;
	const deadline = Date.now() + 20000 * h.SLACK;
	while ((await w.sql(queued)).trim() === '0') {
		const s = await W.getDeployment(w, d.id);
		if (s.status !== 'DEPLOYING') assert.fail(`the deployment ended without waiting: ${s.status} ${s.errorMessage}`);
		if (Date.now() > deadline) assert.fail('no command waits for the agent');
		await h.sleep(50);
	}
	agent = startAgent();
	await waitStatus('ONLINE');
	const end = await W.waitDeployment(w, d.id);
	assert.equal(end.status, 'SUCCEEDED', `it went on once the agent was back: ${end.errorMessage}`);
	assert.equal((await viaCaddy2(host)).text, 'between\n', 'routed on the second Caddy');
});

test('a deployment cancelled while it waits for the agent ends CANCELLED by its cancel, not by the wait\'s bound', async () => {
	const gone = new Promise((resolve) => agent.once('exit', resolve));
	agent.kill('SIGTERM');
	await gone;
	await waitStatus('OFFLINE');
	const app = await gitApp('far-cancelwait', 'never\n');
	const from = w.srv.logs.mark();
	const d = await W.deploy(w, app);
	await jobsWaiting(1, from);
	assert.equal((await w.call('POST', `/deployments/${d.id}/cancel`)).status, 202);
	const end = await W.waitDeployment(w, d.id);
	assert.equal(end.status, 'CANCELLED');
	// Ended by the cancel, not by the bound: the driver says so.
	await w.srv.logs.waitForLine(new RegExp(`remote driver: the wait for the agent of server=${server.id} ended by the job's stop after \\d+ ms`),
		10000 * h.SLACK, { from });
	assert.deepEqual(await imagesOn(second.request, app), []);
});

test('a job whose agent does not come back within the bound fails saying it waited, having issued nothing', async () => {
	// This stewardd again with a bound of 1.5 s, on its address.
	w.srv.kill();
	await w.srv.exited;
	await w.restart({ STEWARD_AGENT_RECONNECT_WAIT_MS: '1500' }, { port: w.srv.port });
	await waitStatus('OFFLINE');
	const { app } = killed;
	const commands = async () => (await w.sql(`SELECT count(*) FROM agent_commands WHERE server_id = '${server.id}'`)).trim();
	const before = await commands();
	const from = w.srv.logs.mark();
	const job = await ok(w.call('POST', `/applications/${app.id}/stop`), 202);
	assert.deepEqual(await waitJob(job.id),
		{ status: 'FAILED', error: "The server's agent is not connected (waited 1.5 s): nothing was done on the server." });
	await w.srv.logs.waitForLine(WAITING, 10000 * h.SLACK, { from }); // it waited
	assert.equal(await commands(), before, 'nothing issued');
	// The usual bound again, and the agent back, for the tests after.
	w.srv.kill();
	await w.srv.exited;
	await w.restart({}, { port: w.srv.port });
	agent = startAgent();
	await waitStatus('ONLINE');
});

test('two replicas: the agent held by replica B, a deployment requested on B and run by A\'s runner builds and serves on the remote server; B reads the whole log, byte-exact, from the copy stored in the database', async () => {
	const b = await h.startStewardd({ env: { ...w.env, STEWARD_RUNNERS: 'false', DATABASE_URL: w.srv.env.DATABASE_URL } });
	const onB = { ...w, call: (method, p, opts) => callAs(b, method, p, w.owner, opts) };
	const stopped = new Promise((resolve) => agent.once('exit', resolve));
	agent.kill('SIGTERM');
	await stopped;
	assert.doesNotMatch(agent.log(), h.SANITIZER_REPORT, 'the agent that ran the builds ended clean');
	await waitStatus('OFFLINE');
	agent = startAgent(b.url);
	await waitStatus('ONLINE');
	await b.logs.waitForLine(new RegExp(`agent online server=${server.id}`), 10000 * h.SLACK);
	const app = await gitApp('far-replicas', 'replicas\n');
	const host = 'far-replicas.example.com';
	await W.verifiedDomain(w, app, host);
	const d = await W.deploy(onB, app);
	const end = await W.waitDeployment(onB, d.id);
	assert.equal(end.status, 'SUCCEEDED', end.errorMessage);
	assert.ok(w.srv.logs.find(new RegExp(`job started id=\\S+ kind=deployment.build target=${d.id}`)), 'replica A\'s runner built it');
	assert.equal((await viaCaddy2(host)).text, 'replicas\n');
	assert.deepEqual(await imagesOn(second.request, app), [`steward/${app.id}:1`]);
	// The log's file is on the runner's replica (A); B reads its record's tail.
	const logA = await W.logText(w, d.id);
	assert.match(logA, /Step 1\/\d+ : FROM steward-test\/base:latest/);
	assert.ok(logA.endsWith(end.logTail), 'replica B\'s record ends as the log');
	// B has no file of it (its own data directory): it reads the whole log,
	// byte-exact, from the copy A's runner stored in the database as it wrote.
	assert.ok(!fs.existsSync(`${b.env.STEWARD_DATA_DIR}/logs/${d.id}.log`), 'B holds no file of the log');
	const fileA = fs.readFileSync(`${w.srv.env.STEWARD_DATA_DIR}/logs/${d.id}.log`);
	const whole = await h.request(b.port, 'GET', `/deployments/${d.id}/logs`, { headers: { Cookie: `steward_session=${w.owner.cookie}` } });
	assert.equal(whole.status, 200);
	assert.equal(whole.headers['content-type'], 'text/plain; charset=utf-8');
	assert.ok(Buffer.compare(whole.body, fileA) === 0, `B's log is A's file, byte for byte (${whole.body.length} and ${fileA.length} bytes)`);
	assert.equal(Number(whole.headers['content-length']), fileA.length);
	assert.equal(whole.body.toString('utf8'), logA);
	// A range of it, as A's file answers it.
	const part = await h.request(b.port, 'GET', `/deployments/${d.id}/logs`, { headers: { Cookie: `steward_session=${w.owner.cookie}`, Range: 'bytes=10-99' } });
	assert.equal(part.status, 206);
	assert.equal(part.headers['content-range'], `bytes 10-99/${fileA.length}`);
	assert.ok(Buffer.compare(part.body, fileA.subarray(10, 100)) === 0);
	const past = await h.request(b.port, 'GET', `/deployments/${d.id}/logs`, { headers: { Cookie: `steward_session=${w.owner.cookie}`, Range: `bytes=${fileA.length}-` } });
	assert.equal(past.status, 416);
	assert.equal(past.headers['content-range'], `bytes */${fileA.length}`);
	// Its SSE stream on B too: the whole log from the stored copy, then the status.
	const liveB = async (headers = {}) => {
		const r = await h.request(b.port, 'GET', `/deployments/${d.id}/live`, { headers: { Cookie: `steward_session=${w.owner.cookie}`, ...headers }, timeoutMs: 20000 * h.SLACK });
		assert.equal(r.status, 200);
		// Events with their data lines joined by \n (a line per data field).
		return r.text.split('\n\n').filter((blk) => blk.trim() && !blk.startsWith(':')).map((blk) => {
			const e = { event: 'message', id: null, data: [] };
			for (const l of blk.split('\n')) {
				const i = l.indexOf(':');
				const v = l.slice(i + 2);
				if (l.startsWith('event:')) e.event = v;
				else if (l.startsWith('id:')) e.id = v;
				else if (l.startsWith('data:')) e.data.push(v);
			}
			return e;
		});
	};
	const evs = await liveB();
	const logs = evs.filter((e) => e.event === 'log');
	assert.equal(logs.map((e) => `${e.data.join('\n')}\n`).join(''), logA.replaceAll('\r', '\n'), 'B streams the whole log');
	assert.equal(Number(logs.at(-1).id), fileA.length);
	assert.equal(evs.at(-1).event, 'status');
	assert.equal(JSON.parse(evs.at(-1).data.join('\n')).status, 'SUCCEEDED');
	// Resumed after a line in the middle: the rest of the file, from the next line.
	const mid = logs[Math.floor(logs.length / 2)].id;
	const rest = (await liveB({ 'Last-Event-ID': mid })).filter((e) => e.event === 'log');
	assert.equal(rest.map((e) => `${e.data.join('\n')}\n`).join(''), fileA.subarray(Number(mid)).toString('utf8').replaceAll('\r', '\n'));
	const back = new Promise((resolve) => agent.once('exit', resolve));
	agent.kill('SIGTERM');
	await back;
	agent = startAgent();
	await waitStatus('ONLINE');
});

test('the agent that ran the commands stops on SIGTERM, cleanly', async () => {
	const exited = new Promise((resolve) => agent.once('exit', (code, signal) => resolve({ code, signal })));
	agent.kill('SIGTERM');
	assert.deepEqual(await exited, { code: 0, signal: null });
	assert.doesNotMatch(agent.log(), h.SANITIZER_REPORT);
});
