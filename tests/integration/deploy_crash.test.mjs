// Crash safety of deployments with a real Docker engine, Caddy and
// PostgreSQL: stewardd is SIGKILLed while a deployment is at each phase
// (QUEUED, CLONING, BUILDING, STARTING, HEALTH_GATE, SWITCHING) and started
// again on the same database and data directory. Afterwards: no deployment
// lost or duplicated, none left in flight (the one killed is FAILED "the
// worker restarted while the deployment was <phase>"), and the version
// serving before still answers through Caddy, unchanged by the failed
// deploy (the "runtime.recover" job puts it back).
//
// Each phase is slowed down by the content deployed, or by the world around
// it, so the kill lands in it (the row's phase is polled):
//   QUEUED       a deployment waiting behind another that builds
//   CLONING      a repository with a large incompressible file
//   BUILDING     RUN sleep in the Dockerfile
//   STARTING     the old version ignores SIGTERM, so stopping it (RECREATE)
//                takes the engine's stop timeout
//   HEALTH_GATE  the new version starts listening only after a long sleep
//   SWITCHING    Caddy's admin API is paused (SIGSTOP) while the route is
//                switched (BLUE_GREEN), and resumed after the kill
// Domains are verified by writing the database directly (no DNS here).

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import * as h from './harness.mjs';
import * as W from './deploy_world.mjs';

let w;

before(async () => {
	w = await W.world({ DEPLOY_BLUE_GREEN_MIN_FREE_MEMORY_MB: '16' });
});

after(async () => {
	if (w) await w.cleanup();
	await h.cleanupAll();
});

const short = (id) => id.replace(/-/g, '').slice(0, 12);

// An application serving "<name> v1" through Caddy. cmd: the v1 command.
async function serving(name, settings = {}, v1Dockerfile = W.webDockerfile()) {
	const app = await W.makeApp(w, name, settings);
	const repo = await W.createRepo({ files: { ...W.webFiles(`${name} v1\n`), Dockerfile: v1Dockerfile } });
	await W.gitSource(w, app, repo.fileUrl);
	const host = `${name}.example.com`;
	await W.verifiedDomain(w, app, host); // verified directly in PostgreSQL
	const d1 = await W.deployed(w, app);
	assert.equal((await W.viaCaddy(w, host)).text, `${name} v1\n`);
	return { app, repo, host, d1 };
}

async function commit(repo, files, message = 'Change') {
	for (const [name, content] of Object.entries(files)) fs.writeFileSync(`${repo.path}/${name}`, content);
	await repo.git(['add', '-A']);
	await repo.git(['commit', '-q', '-m', message]);
}

async function sql1(q) {
	return (await w.sql(q)).trim();
}

// SIGKILL, then a new stewardd on the same database and data directory.
async function crashAndRestart() {
	w.srv.kill();
	await w.srv.exited;
	await w.restart();
}

// After the restart: the deployment killed is FAILED for the worker's
// restart at that phase, its recovery ran, and nothing is in flight.
async function settled(s, d, phaseWords) {
	const end = await W.waitDeployment(w, d.id, { timeoutMs: 30000 });
	assert.equal(end.status, 'FAILED');
	assert.equal(end.errorMessage, `the worker restarted while the deployment was ${phaseWords}`);
	assert.equal(await W.waitRecovered(w, d.id, 30000), 'SUCCEEDED', 'one recovery ran, and succeeded');
	// The killed deployment's job ran once and is not run again.
	const jobs = await sql1(`SELECT string_agg(kind || ':' || status, ',' ORDER BY created_at) FROM jobs WHERE target_id = '${d.id}' AND kind LIKE 'deployment.%'`);
	assert.doesNotMatch(jobs, /QUEUED|RUNNING/, jobs);
	return end;
}

async function nothingInFlight(app) {
	assert.equal(await sql1(`SELECT count(*) FROM deployments WHERE application_id = '${app.id}' AND status IN ('QUEUED', 'BUILDING', 'DEPLOYING')`), '0');
}

// The serving version is v1's, unchanged: its container alone, running.
async function v1Serves(s) {
	assert.equal((await W.viaCaddy(w, s.host, '/', { timeoutMs: 10000 })).text, `${s.app.name} v1\n`);
	const cs = await W.containers(w, s.app);
	assert.deepEqual(cs.map((c) => [c.deploymentNumber, c.state]), [[1, 'running']], JSON.stringify(cs));
	assert.equal((await W.ok(w.call('GET', `/applications/${s.app.id}`))).status, 'RUNNING');
}

async function numbers(app) {
	return (await sql1(`SELECT string_agg(number || ':' || status, ',' ORDER BY number) FROM deployments WHERE application_id = '${app.id}'`));
}

test('killed while QUEUED (behind another) and BUILDING: the builder fails, the queued one runs once', async () => {
	const s = await serving('crash-build');
	await commit(s.repo, { Dockerfile: W.webDockerfile(['RUN sleep 30']) });
	const a = await W.deploy(w, s.app);
	await W.waitPhase(w, a.id, 'BUILDING');
	const b = await W.deploy(w, s.app, { ref: s.repo.shas[0] });
	assert.equal(b.status, 'QUEUED');
	await h.sleep(500);
	assert.equal((await sql1(`SELECT status FROM deployments WHERE id = '${b.id}'`)), 'QUEUED');
	await crashAndRestart();
	await settled(s, a, 'building');
	const eb = await W.waitDeployment(w, b.id);
	assert.equal(eb.status, 'SUCCEEDED', eb.errorMessage);
	assert.equal(eb.number, 3);
	assert.equal(eb.commitSha, s.repo.shas[0]);
	assert.equal(await numbers(s.app), '1:SUCCEEDED,2:FAILED,3:SUCCEEDED', 'nothing lost, nothing duplicated');
	assert.equal(await sql1(`SELECT count(*) FROM jobs WHERE target_id = '${b.id}' AND kind = 'deployment.build'`), '1', 'its build ran once');
	await nothingInFlight(s.app);
	assert.equal((await W.viaCaddy(w, s.host)).text, 'crash-build v1\n', 'the queued deployment (the first commit) serves');
	assert.equal(await imageCount(s.app, 2), 0, 'no image of the killed build');
});

test('killed while CLONING', async () => {
	const s = await serving('crash-clone');
	await commit(s.repo, { 'big.bin': crypto.randomBytes(96 << 20) }, 'A large file');
	const d = await W.deploy(w, s.app);
	await W.waitPhase(w, d.id, 'CLONING');
	await crashAndRestart();
	await settled(s, d, 'cloning');
	assert.ok(!fs.existsSync(`${w.srv.env.STEWARD_DATA_DIR}/sources/${d.id}`), 'the half-cloned source is removed');
	await nothingInFlight(s.app);
	await v1Serves(s);
	assert.equal(await numbers(s.app), '1:SUCCEEDED,2:FAILED');
});

test('killed while STARTING (RECREATE, the old version being stopped)', async () => {
	// v1 ignores SIGTERM (an ignored signal stays ignored across exec):
	// stopping it takes the stop timeout.
	const stubborn = W.webDockerfile().replace(/CMD .*/, 'CMD ["sh", "-c", "trap \'\' TERM; exec httpd -f -p $PORT -h /www"]');
	const s = await serving('crash-start', {}, stubborn);
	await commit(s.repo, { Dockerfile: W.webDockerfile(), 'www/index.html': 'crash-start v2\n' });
	const d = await W.deploy(w, s.app);
	await W.waitPhase(w, d.id, 'STARTING');
	await h.sleep(1000); // inside the old version's stop
	await crashAndRestart();
	await settled(s, d, 'starting');
	await nothingInFlight(s.app);
	await v1Serves(s);
});

test('killed in the HEALTH_GATE (RECREATE): the new version is removed, the old one started again', async () => {
	const s = await serving('crash-gate', { healthCheckRetries: 60, healthCheckTimeoutSeconds: 1 });
	const late = W.webDockerfile().replace(/CMD \["sh", "-c", "/, 'CMD ["sh", "-c", "sleep 120; ');
	await commit(s.repo, { Dockerfile: late, 'www/index.html': 'crash-gate v2\n' });
	const d = await W.deploy(w, s.app);
	await W.waitPhase(w, d.id, 'HEALTH_GATE');
	await h.sleep(1500);
	assert.equal((await W.containers(w, s.app)).find((c) => c.deploymentNumber === 2)?.state, 'running', 'the new one runs, unhealthy');
	await crashAndRestart();
	await settled(s, d, 'health gate');
	await nothingInFlight(s.app);
	await v1Serves(s);
	assert.equal(await imageCount(s.app, 2), 0, 'its image is removed');
});

test('killed while SWITCHING (BLUE_GREEN, Caddy paused mid-switch): the old colour serves on', async () => {
	const s = await serving('crash-switch', { deployStrategy: 'BLUE_GREEN', healthCheckRetries: 30, healthCheckTimeoutSeconds: 1 });
	assert.equal(s.d1.strategy, 'BLUE_GREEN');
	// The new colour answers after 3 s: time to pause Caddy during the
	// health gate (which asks the container directly), so that the switch
	// that follows waits on Caddy's admin API.
	const late = W.webDockerfile().replace(/CMD \["sh", "-c", "/, 'CMD ["sh", "-c", "sleep 3; ');
	await commit(s.repo, { Dockerfile: late, 'www/index.html': 'crash-switch v2\n' });
	const d = await W.deploy(w, s.app);
	await W.waitPhase(w, d.id, 'HEALTH_GATE');
	process.kill(w.caddy.proc.pid, 'SIGSTOP');
	try {
		await W.waitPhase(w, d.id, 'SWITCHING', 30000);
		await h.sleep(500);
		w.srv.kill();
		await w.srv.exited;
	} finally {
		process.kill(w.caddy.proc.pid, 'SIGCONT');
	}
	await h.sleep(300); // Caddy reads what it was sent while paused
	await w.restart();
	await settled(s, d, 'switching');
	await nothingInFlight(s.app);
	await v1Serves(s);
	assert.deepEqual((await W.containers(w, s.app)).map((c) => c.colour), ['blue'], 'the green colour is removed');
	const route = (await W.ok(w.call('GET', '/proxy'))).routes.find((r) => r.applicationId === s.app.id);
	assert.deepEqual(route.hosts, ['crash-switch.example.com']);
});

test('after the crashes a deployment runs to the end: the application\'s lock was released', async () => {
	const s = await serving('crash-after');
	await commit(s.repo, { Dockerfile: W.webDockerfile(['RUN sleep 30']) });
	const d = await W.deploy(w, s.app);
	await W.waitPhase(w, d.id, 'BUILDING');
	await crashAndRestart();
	await settled(s, d, 'building');
	await commit(s.repo, { Dockerfile: W.webDockerfile(), 'www/index.html': 'crash-after v3\n' });
	const d3 = await W.deployed(w, s.app);
	assert.equal(d3.number, 3);
	assert.equal((await W.viaCaddy(w, s.host)).text, 'crash-after v3\n');
});

test('a graceful stop (SIGTERM) whose window is too short for the build hands the deployment back to the queue; the next start runs it', async () => {
	const s = await serving('crash-term');
	await w.srv.stop('SIGTERM', 30000);
	// The build is asked to stop at 2 s (the window's last half) and
	// stops within the engine client's progress tick (about 1 s).
	await w.restart({ STEWARD_SHUTDOWN_TIMEOUT_MS: '4000' });
	await commit(s.repo, { Dockerfile: W.webDockerfile(['RUN sleep 12']), 'www/index.html': 'crash-term v2\n' });
	const d = await W.deploy(w, s.app);
	await W.waitPhase(w, d.id, 'BUILDING');
	await h.sleep(1000);
	const t0 = Date.now();
	assert.equal(await w.srv.stop('SIGTERM', 30000), 0);
	assert.ok(Date.now() - t0 < 8000, `the build was stopped in the window, not waited for (${Date.now() - t0} ms)`);
	assert.equal(await sql1(`SELECT status || '|' || phase || '|' || coalesce(error_message, '-') || '|' || coalesce(worker_id::text, '-') FROM deployments WHERE id = '${d.id}'`),
		'QUEUED|QUEUED|-|-', 'handed back to the queue, not failed');
	assert.equal(await sql1(`SELECT string_agg(status, ',') FROM jobs WHERE target_id = '${d.id}'`), 'QUEUED', 'its build job waits again; no recovery');
	assert.match(fs.readFileSync(`${w.srv.env.STEWARD_DATA_DIR}/logs/${d.id}.log`, 'utf8'), /The worker is stopping: .* goes back to the queue/);
	assert.equal(await imageCount(s.app, 2), 0);
	await w.restart();
	// The previous version served all along.
	assert.equal((await W.viaCaddy(w, s.host)).text, 'crash-term v1\n');
	const end = await W.waitDeployment(w, d.id);
	assert.equal(end.status, 'SUCCEEDED', end.errorMessage);
	assert.equal(end.number, 2);
	assert.equal(await sql1(`SELECT count(*) || ':' || max(attempts) FROM jobs WHERE target_id = '${d.id}' AND kind = 'deployment.build'`), '1:2', 'the same build job ran again');
	assert.equal((await W.viaCaddy(w, s.host)).text, 'crash-term v2\n');
	await nothingInFlight(s.app);
});

test('a graceful stop (SIGTERM) with a long enough window lets the deployment finish, deploy step included, before the process exits', async () => {
	const s = await serving('crash-drain');
	await w.srv.stop('SIGTERM', 30000);
	await w.restart({ STEWARD_SHUTDOWN_TIMEOUT_MS: '60000' });
	await commit(s.repo, { Dockerfile: W.webDockerfile(['RUN sleep 3']), 'www/index.html': 'crash-drain v2\n' });
	const d = await W.deploy(w, s.app);
	await W.waitPhase(w, d.id, 'BUILDING');
	assert.equal(await w.srv.stop('SIGTERM', 60000), 0);
	assert.equal(await sql1(`SELECT status FROM deployments WHERE id = '${d.id}'`), 'SUCCEEDED', 'finished before the exit');
	assert.equal(await sql1(`SELECT string_agg(kind || ':' || status, ',' ORDER BY created_at) FROM jobs WHERE target_id = '${d.id}'`),
		'deployment.build:SUCCEEDED,deployment.deploy:SUCCEEDED');
	assert.equal((await W.viaCaddy(w, s.host)).text, 'crash-drain v2\n', 'the new version serves while no stewardd runs');
	await w.restart();
	await nothingInFlight(s.app);
});

async function imageCount(app, number) {
	return (await W.dockerRequest('GET', `/images/steward/${app.id}:${number}/json`)).status === 200 ? 1 : 0;
}
