// Deployments that fail, against a real Docker engine, Caddy and
// PostgreSQL: a build that fails, a container that never becomes healthy
// (RECREATE and BLUE_GREEN), one that exits, git URLs that reach no
// repository, a full log cap, a deleted base image, and a cancel. Each ends
// FAILED (or CANCELLED) with a clear errorMessage, the new version removed,
// and the previous version still serving through Caddy.
//
// Domains are verified by writing the database directly (no DNS here).
// "A git URL that does not resolve" is tested with URLs that reach no
// repository on this machine (a missing file:// path, ssh to a closed
// loopback port): a DNS name that does not resolve would send a query to
// the machine's resolver, which is not on 127.0.0.0/8.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import * as h from './harness.mjs';
import * as W from './deploy_world.mjs';

const LOG_CAP = 65536; // DEPLOY_LOG_MAX_BYTES' minimum
let w;

before(async () => {
	w = await W.world({ DEPLOY_LOG_MAX_BYTES: String(LOG_CAP), DEPLOY_BLUE_GREEN_MIN_FREE_MEMORY_MB: '16' });
});

after(async () => {
	if (w) {
		await w.cleanup();
		await W.dockerRequest('DELETE', '/images/steward-test/doomed:latest?force=1');
	}
	await h.cleanupAll();
});

const short = (id) => id.replace(/-/g, '').slice(0, 12);

async function inspect(name) {
	const r = await W.dockerRequest('GET', `/containers/${name}/json`);
	return r.status === 200 ? r.json() : null;
}

async function imageExists(tag) {
	return (await W.dockerRequest('GET', `/images/${tag}/json`)).status === 200;
}

// An application serving `v1` through Caddy at host, with its repository.
async function serving(name, host, settings = {}, files = W.webFiles(`${name} v1\n`)) {
	const app = await W.makeApp(w, name, settings);
	const repo = await W.createRepo({ files });
	await W.gitSource(w, app, repo.fileUrl);
	await W.verifiedDomain(w, app, host); // verified directly in PostgreSQL
	const d1 = await W.deployed(w, app);
	assert.equal((await W.viaCaddy(w, host)).text, `${name} v1\n`);
	const c1 = await inspect(`sw-${short(app.id)}-1${d1.strategy === 'BLUE_GREEN' ? '-blue' : ''}`);
	return { app, repo, d1, c1 };
}

async function commit(repo, files, message = 'Change') {
	for (const [name, content] of Object.entries(files)) fs.writeFileSync(`${repo.path}/${name}`, content);
	await repo.git(['add', '-A']);
	await repo.git(['commit', '-q', '-m', message]);
}

// The previous version serves as before: same container, running, same body.
async function stillServing(s, host, body) {
	assert.equal((await W.viaCaddy(w, host)).text, body, 'the previous version still serves through Caddy');
	const now = await inspect(s.c1.Name.slice(1));
	assert.ok(now, 'its container is still there');
	assert.equal(now.Id, s.c1.Id, 'the same container');
	assert.equal(now.State.Running, true);
}

test('a build that fails: FAILED with the engine\'s reason; no image; the previous version serves untouched', async () => {
	const s = await serving('badbuild', 'badbuild.example.com');
	await commit(s.repo, { Dockerfile: W.webDockerfile(['RUN echo about to fail && exit 3']) });
	const d2 = await W.deployed(w, s.app, {}, 'FAILED');
	assert.match(d2.errorMessage, /^The image build failed: .*returned a non-zero code: 3/);
	assert.match(d2.logTail, /about to fail/);
	assert.match(d2.logTail, /Deployment failed: /);
	assert.equal(d2.phase, 'BUILDING', 'the phase it failed in, never DONE');
	assert.equal(await imageExists(`steward/${s.app.id}:2`), false);
	await stillServing(s, 'badbuild.example.com', 'badbuild v1\n');
	assert.equal(s.c1.State.StartedAt, (await inspect(s.c1.Name.slice(1))).State.StartedAt, 'not even restarted');
	assert.equal((await W.ok(w.call('GET', `/applications/${s.app.id}`))).status, 'RUNNING');
});

test('a container that never becomes healthy (RECREATE): FAILED, removed, the previous version started again', async () => {
	const s = await serving('unhealthy', 'unhealthy.example.com', { healthCheckRetries: 2, healthCheckTimeoutSeconds: 1 });
	await commit(s.repo, { 'www/index.html': 'unhealthy v2\n' });
	await W.ok(w.call('PATCH', `/applications/${s.app.id}`, { body: { healthCheckPath: '/missing' } }));
	const d2 = await W.deployed(w, s.app, {}, 'FAILED');
	assert.equal(d2.errorMessage, `The new version did not pass the health check: GET /missing on port ${s.app.port} answered 404 (expected 200) after 2 tries.`);
	assert.equal(await inspect(`sw-${short(s.app.id)}-2`), null, 'the new container is removed');
	assert.equal(await imageExists(`steward/${s.app.id}:2`), false, 'and its image');
	await stillServing(s, 'unhealthy.example.com', 'unhealthy v1\n');
	assert.match(await W.logText(w, d2.id), /Started the serving version's container sw-[0-9a-f]{12}-1 again \(deployment #1\)\./);
});

test('a container that never becomes healthy (BLUE_GREEN): the old colour is never touched and never stops answering', async () => {
	const s = await serving('bgfail', 'bgfail.example.com', { deployStrategy: 'BLUE_GREEN', healthCheckRetries: 3, healthCheckTimeoutSeconds: 1 });
	assert.equal(s.d1.strategy, 'BLUE_GREEN');
	await commit(s.repo, { Dockerfile: W.webDockerfile().replace('CMD [', 'RUN rm /www/health\nCMD [') });
	let polling = true;
	const seen = [];
	const poller = (async () => {
		while (polling) {
			const r = await W.httpGet(w.caddy.httpPort, '/', { host: 'bgfail.example.com' }).catch((e) => ({ status: 0, text: String(e) }));
			seen.push(`${r.status} ${r.text.trim()}`);
			await h.sleep(25);
		}
	})();
	const d2 = await W.deployed(w, s.app, {}, 'FAILED');
	polling = false;
	await poller;
	assert.match(d2.errorMessage, /^The new version did not pass the health check: GET \/health on port \d+ answered 404 \(expected 200\) after 3 tries\.$/);
	assert.deepEqual(seen.filter((x) => x !== '200 bgfail v1'), [], `${seen.length} requests, all served by the old colour`);
	assert.equal(await inspect(`sw-${short(s.app.id)}-2-green`), null, 'the new colour is removed');
	await stillServing(s, 'bgfail.example.com', 'bgfail v1\n');
	assert.equal(s.c1.State.StartedAt, (await inspect(s.c1.Name.slice(1))).State.StartedAt, 'never stopped');
});

test('a container that exits at once fails the health gate without waiting for every try', async () => {
	const app = await W.makeApp(w, 'exits', { healthCheckRetries: 30, healthCheckTimeoutSeconds: 1 });
	const repo = await W.createRepo({ files: { Dockerfile: `FROM ${W.BASE_IMAGE}\nCMD ["false"]\n` } });
	await W.gitSource(w, app, repo.fileUrl);
	const t0 = Date.now();
	const d = await W.deployed(w, app, {}, 'FAILED');
	assert.match(d.errorMessage, /^The new version's container exited before it passed the health check \(GET \/health on port \d+: .*\)\.$/);
	assert.ok(Date.now() - t0 < 25000, 'did not wait for 30 tries');
	assert.deepEqual((await W.containers(w, app)), [], 'removed');
	assert.equal((await W.ok(w.call('GET', `/applications/${app.id}`))).status, 'FAILED', 'a first deployment that fails');
});

test('git URLs that reach no repository: FAILED with the reason', async () => {
	const app = await W.makeApp(w, 'nogit');
	await W.gitSource(w, app, 'file:///nonexistent/steward/repo.git');
	const d = await W.deployed(w, app, {}, 'FAILED');
	assert.match(d.errorMessage, /^No git repository was found at the URL .*\.$/);
	assert.equal(d.commitSha, null);
	const closed = await h.freePort();
	await W.ok(w.call('PATCH', `/applications/${app.id}/git-source`, { body: { repositoryUrl: `ssh://root@127.0.0.1:${closed}/srv/repo.git` } }));
	const d2 = await W.deployed(w, app, {}, 'FAILED');
	assert.match(d2.errorMessage, /^[A-Z].*(refused|connect).*\.$/i);
	assert.ok(!fs.existsSync(`${w.srv.env.STEWARD_DATA_DIR}/sources/${d2.id}`), 'the source directory is removed');
});

test('a build whose log reaches DEPLOY_LOG_MAX_BYTES is stopped and FAILED; the log says it was cut', async () => {
	const s = await serving('chatty', 'chatty.example.com');
	const loop = 'RUN i=0; while [ $i -lt 4000 ]; do echo "line $i of a build that will not stop talking"; i=$((i+1)); done';
	await commit(s.repo, { Dockerfile: W.webDockerfile([loop]) });
	const d2 = await W.deployed(w, s.app, {}, 'FAILED');
	assert.equal(d2.errorMessage, `The build's log reached DEPLOY_LOG_MAX_BYTES (${LOG_CAP} bytes): the build was stopped.`);
	assert.ok(d2.logByteCount <= LOG_CAP, `${d2.logByteCount} bytes`);
	const log = await W.logText(w, d2.id);
	assert.equal(Buffer.byteLength(log), d2.logByteCount);
	assert.match(d2.logTail, /cut/);
	await stillServing(s, 'chatty.example.com', 'chatty v1\n');
});

test('a deleted base image: FAILED naming it, before any build (nothing is pulled)', async () => {
	const tag = await W.dockerRequest('POST', `/images/${W.BASE_IMAGE}/tag?repo=steward-test/doomed&tag=latest`);
	assert.equal(tag.status, 201, tag.text);
	const files = { ...W.webFiles('doomed v1\n'), Dockerfile: W.webDockerfile().replace(W.BASE_IMAGE, 'steward-test/doomed:latest') };
	const s = await serving('doomed', 'doomed.example.com', {}, files);
	assert.match(await W.logText(w, s.d1.id), /Base image steward-test\/doomed:latest is present\./);
	assert.equal((await W.dockerRequest('DELETE', '/images/steward-test/doomed:latest')).status, 200);
	await commit(s.repo, { 'www/index.html': 'doomed v2\n' });
	const d2 = await W.deployed(w, s.app, {}, 'FAILED');
	assert.equal(d2.errorMessage, 'The base image steward-test/doomed:latest is not present on the server and is never pulled: load it on the server, or build FROM one that is.');
	assert.doesNotMatch(await W.logText(w, d2.id), /Step 1\//, 'the engine was never asked');
	await stillServing(s, 'doomed.example.com', 'doomed v1\n');
});

test('a cancel while building stops the build: CANCELLED; the previous version serves untouched', async () => {
	const s = await serving('cancelled', 'cancelled.example.com');
	await commit(s.repo, { Dockerfile: W.webDockerfile(['RUN sleep 60']) });
	const d = await W.deploy(w, s.app);
	await W.waitPhase(w, d.id, 'BUILDING');
	await h.sleep(1500); // inside RUN sleep
	const t0 = Date.now();
	const r = await w.call('POST', `/deployments/${d.id}/cancel`);
	assert.ok([200, 202].includes(r.status), r.text);
	const end = await W.waitDeployment(w, d.id, { timeoutMs: 30000 });
	assert.equal(end.status, 'CANCELLED');
	assert.ok(Date.now() - t0 < 20000, 'the build was stopped, not waited for');
	assert.equal(await imageExists(`steward/${s.app.id}:2`), false);
	await stillServing(s, 'cancelled.example.com', 'cancelled v1\n');
	// The next deployment runs (the lock was released).
	await commit(s.repo, { Dockerfile: W.webDockerfile(), 'www/index.html': 'cancelled v3\n' });
	await W.deployed(w, s.app);
	assert.equal((await W.viaCaddy(w, 'cancelled.example.com')).text, 'cancelled v3\n');
});

test('a cancel in the health gate removes the new version and starts the previous one again: CANCELLED', async () => {
	const s = await serving('cancelgate', 'cancelgate.example.com', { healthCheckRetries: 60, healthCheckTimeoutSeconds: 1 });
	const late = W.webDockerfile().replace(/CMD \["sh", "-c", "/, 'CMD ["sh", "-c", "sleep 120; ');
	await commit(s.repo, { Dockerfile: late, 'www/index.html': 'cancelgate v2\n' });
	const d = await W.deploy(w, s.app);
	await W.waitPhase(w, d.id, 'HEALTH_GATE');
	assert.equal((await w.call('POST', `/deployments/${d.id}/cancel`)).status, 202);
	const end = await W.waitDeployment(w, d.id, { timeoutMs: 30000 });
	assert.equal(end.status, 'CANCELLED');
	assert.equal(end.errorMessage, null);
	assert.match(end.logTail, /Deployment cancelled\./);
	assert.equal(await inspect(`sw-${short(s.app.id)}-2`), null);
	assert.equal(await imageExists(`steward/${s.app.id}:2`), false);
	await stillServing(s, 'cancelgate.example.com', 'cancelgate v1\n');
});

test('a cancel while QUEUED behind another ends it at once; it never runs', async () => {
	const s = await serving('cancelq', 'cancelq.example.com');
	await commit(s.repo, { Dockerfile: W.webDockerfile(['RUN sleep 2']) });
	const a = await W.deploy(w, s.app);
	await W.waitPhase(w, a.id, 'BUILDING');
	const b = await W.deploy(w, s.app);
	assert.equal((await w.call('POST', `/deployments/${b.id}/cancel`)).status, 200);
	assert.equal((await W.getDeployment(w, b.id)).status, 'CANCELLED');
	assert.equal((await W.waitDeployment(w, a.id)).status, 'SUCCEEDED');
	const eb = await W.getDeployment(w, b.id);
	assert.equal(eb.status, 'CANCELLED');
	assert.equal(eb.startedAt, null, 'it never started');
});
