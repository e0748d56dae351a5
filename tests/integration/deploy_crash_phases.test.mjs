// A crash at any phase boundary never takes the application down: stewardd
// is SIGKILLed exactly at each boundary of a deploy (RECREATE, BLUE_GREEN)
// and of a rollback, started again on the same database and data directory,
// and after each restart a request through Caddy answers 200 with the
// version that should serve.
//
// Where it stops is not left to timing: the failure injection of
// STEWARD_ENV=test (STEWARD_FAULT_PAUSE_FILE) makes a handler wait at the
// pause point the file names, saying so in the deployment's log, until the
// test kills the process there. The points: each phase as it begins (the
// row says it), and DONE (the old version removed, the deployment not yet
// recorded).
//
// What must come out of it:
//   before FINISHING   FAILED "the worker restarted while the deployment was
//                      <phase>"; recovery removes what it started and the
//                      version that served before serves again;
//   FINISHING, DONE    the point of no return was passed (healthy, routed):
//                      SUCCEEDED, the new version serves, and recovery
//                      removes what is left of the old one.
// Either way the deployment's log says what recovery did.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import * as h from './harness.mjs';
import * as W from './deploy_world.mjs';

let w;
const pauseFile = path.join(h.makeTempDir('sw-fault-'), 'pause');

before(async () => {
	fs.writeFileSync(pauseFile, '');
	w = await W.world({ DEPLOY_BLUE_GREEN_MIN_FREE_MEMORY_MB: '16', STEWARD_FAULT_PAUSE_FILE: pauseFile });
});

after(async () => {
	if (w) await w.cleanup();
	await h.cleanupAll();
});

async function sql1(q) {
	return (await w.sql(q)).trim();
}

async function commit(repo, files, message = 'Change') {
	for (const [name, content] of Object.entries(files)) fs.writeFileSync(`${repo.path}/${name}`, content);
	await repo.git(['add', '-A']);
	await repo.git(['commit', '-q', '-m', message]);
}

// An application serving "<name> v1" through Caddy.
async function serving(name, settings = {}) {
	const app = await W.makeApp(w, name, settings);
	const repo = await W.createRepo({ files: W.webFiles(`${name} v1\n`) });
	await W.gitSource(w, app, repo.fileUrl);
	const host = `${name}.example.com`;
	await W.verifiedDomain(w, app, host);
	const d1 = await W.deployed(w, app);
	assert.equal((await W.viaCaddy(w, host)).text, `${name} v1\n`);
	return { app, repo, host, d1, body: `${name} v1\n`, version: 1 };
}

function logFile(id) {
	return `${w.srv.env.STEWARD_DATA_DIR}/logs/${id}.log`;
}

async function waitPaused(id, point) {
	const deadline = Date.now() + 90000;
	const line = `Failure injection: paused at ${point}.`;
	while (Date.now() < deadline) {
		if (fs.existsSync(logFile(id)) && fs.readFileSync(logFile(id), 'utf8').includes(line)) return;
		const st = await sql1(`SELECT status FROM deployments WHERE id = '${id}'`);
		if (/SUCCEEDED|FAILED|CANCELLED/.test(st)) throw new Error(`deployment ${id} ended (${st}) before pausing at ${point}`);
		await h.sleep(50);
	}
	throw new Error(`deployment ${id} did not pause at ${point}`);
}

// While it runs, the record's logByteCount and logTail follow the log
// (written at each phase: at the pause the log has stopped growing).
async function logCurrent(id) {
	const deadline = Date.now() + 5000;
	let d, log;
	for (;;) {
		d = await W.getDeployment(w, id);
		log = fs.readFileSync(logFile(id), 'utf8');
		if (d.logByteCount === Buffer.byteLength(log) || Date.now() > deadline) break;
		await h.sleep(100);
	}
	assert.ok(['BUILDING', 'DEPLOYING'].includes(d.status), d.status);
	assert.equal(d.logByteCount, Buffer.byteLength(log), `logByteCount while ${d.status}/${d.phase}`);
	assert.ok(log.endsWith(d.logTail) && d.logTail.length > 0, 'logTail is the end of the log');
}

const words = (phase) => phase.toLowerCase().replace('_', ' ');

// Starts a deployment (start()), kills stewardd where it paused at point,
// starts it again and checks the outcome. next: the body the new version
// serves.
async function killAt(s, point, start, next) {
	fs.writeFileSync(pauseFile, point);
	const d = await start();
	try {
		await waitPaused(d.id, point);
		await logCurrent(d.id);
	} finally {
		w.srv.kill();
		await w.srv.exited;
		fs.writeFileSync(pauseFile, '');
	}
	await w.restart();
	const end = await W.waitDeployment(w, d.id, { timeoutMs: 30000 });
	assert.equal(await W.waitRecovered(w, d.id), 'SUCCEEDED', 'one recovery ran, and succeeded');
	const past = point === 'FINISHING' || point === 'DONE';
	if (past) {
		assert.equal(end.status, 'SUCCEEDED', `${point}: ${end.errorMessage}`);
		assert.equal(end.phase, 'DONE');
		assert.equal(end.errorMessage, null);
		s.body = next;
		s.version = end.number;
	} else {
		assert.equal(end.status, 'FAILED', point);
		assert.equal(end.errorMessage, `the worker restarted while the deployment was ${words(point)}`);
		assert.equal(end.phase, point, 'the phase it failed in is kept');
	}
	const r = await W.viaCaddy(w, s.host, '/', { timeoutMs: 15000 });
	assert.equal(r.status, 200, `${point}: through Caddy after the restart: ${r.status} ${r.text}`);
	assert.equal(r.text, s.body, `${point}: the version that should serve serves`);
	const cs = await W.containers(w, s.app);
	assert.deepEqual(cs.map((c) => [c.deploymentNumber, c.state]), [[s.version, 'running']], `${point}: ${JSON.stringify(cs)}`);
	assert.equal((await W.ok(w.call('GET', `/applications/${s.app.id}`))).status, 'RUNNING');
	assert.equal(await sql1(`SELECT count(*) FROM deployments WHERE application_id = '${s.app.id}' AND status IN ('QUEUED', 'BUILDING', 'DEPLOYING')`), '0');
	// The record and the log say what happened and what recovery did.
	const log = fs.readFileSync(logFile(d.id), 'utf8');
	assert.match(log, past ? /Recovery: the worker restarted while the deployment was finishing/ : /Recovery: the worker restarted while the deployment was/);
	assert.match(log, /Recovery done: the application's serving version runs and is routed\./);
	const rec = await W.getDeployment(w, d.id);
	assert.equal(rec.logByteCount, Buffer.byteLength(log), 'logByteCount follows what recovery wrote');
	assert.ok(log.endsWith(rec.logTail));
	return end;
}

async function gitDeployment(s, label) {
	const body = `${s.app.name} ${label}\n`;
	await commit(s.repo, { 'www/index.html': body });
	return { start: () => W.deploy(w, s.app), body };
}

for (const strategy of ['RECREATE', 'BLUE_GREEN']) {
	const points = ['CLONING', 'BUILDING', 'STARTING', 'HEALTH_GATE', 'SWITCHING', 'FINISHING', 'DONE'];
	test(`${strategy}: killed at every phase boundary, the application keeps answering through Caddy`, async () => {
		const s = await serving(`kill-${strategy.toLowerCase().replace('_', '')}`, { deployStrategy: strategy });
		assert.equal(s.d1.strategy, strategy);
		for (const point of points) {
			const g = await gitDeployment(s, `at ${point}`);
			const end = await killAt(s, point, g.start, g.body);
			if (end.strategy) assert.equal(end.strategy, strategy);
		}
		// And the next deployment runs to the end as usual.
		const g = await gitDeployment(s, 'after');
		const d = await W.waitDeployment(w, (await g.start()).id);
		assert.equal(d.status, 'SUCCEEDED', d.errorMessage);
		assert.equal((await W.viaCaddy(w, s.host)).text, g.body);
	});
}

test('a rollback killed at every phase boundary: the application keeps answering through Caddy', async () => {
	const s = await serving('kill-rollback');
	const g2 = await gitDeployment(s, 'v2');
	const d2 = await W.waitDeployment(w, (await g2.start()).id);
	assert.equal(d2.status, 'SUCCEEDED', d2.errorMessage);
	s.body = g2.body;
	s.version = d2.number;
	// Alternate between the two versions so that each rollback changes
	// what serves.
	for (const point of ['STARTING', 'HEALTH_GATE', 'SWITCHING', 'FINISHING', 'DONE']) {
		const target = s.body === g2.body ? s.d1 : d2;
		const body = target === s.d1 ? `${s.app.name} v1\n` : g2.body;
		const end = await killAt(s, point, () => W.ok(w.call('POST', `/deployments/${target.id}/rollback`), 201), body);
		assert.equal(end.trigger, 'ROLLBACK');
	}
	assert.equal(await sql1(`SELECT count(*) FROM jobs WHERE kind = 'deployment.deploy' AND queue <> 'lifecycle' AND target_id IN (SELECT id FROM deployments WHERE application_id = '${s.app.id}' AND trigger = 'ROLLBACK')`), '0', 'rollbacks run on the lifecycle queue');
});

// Recovery and the next build: the recovery of a deployment killed after
// its image was built runs while the application's next deployment is
// building (both held at a pause point, then let go in that order). The
// failed deployment's image, which the next build may build on (the
// engine's cache), is kept while that build runs; image retention removes
// it once the next deployment has succeeded.
test('a recovery never removes an image while another deployment of the application builds', async () => {
	const s = await serving('kill-cache');
	const imageOf = async (n) => (await W.dockerRequest('GET', `/images/steward/${s.app.id}:${n}/json`)).status === 200;
	const g2 = await gitDeployment(s, 'v2');
	fs.writeFileSync(pauseFile, 'STARTING');
	const d2 = await g2.start();
	try {
		await waitPaused(d2.id, 'STARTING');
	} finally {
		w.srv.kill();
		await w.srv.exited;
	}
	assert.ok(await imageOf(2), 'the killed deployment had built its image');
	fs.writeFileSync(pauseFile, 'RECOVER BUILDING');
	await w.restart();
	await waitPaused(d2.id, 'RECOVER');
	// The same source again: its build may use the cache of #2's image.
	const d3 = await W.deploy(w, s.app);
	await waitPaused(d3.id, 'BUILDING');
	fs.writeFileSync(pauseFile, 'BUILDING'); // the recovery goes on
	assert.equal(await W.waitRecovered(w, d2.id), 'SUCCEEDED');
	assert.ok(await imageOf(2), 'the image is kept while #3 is in flight');
	assert.match(fs.readFileSync(logFile(d2.id), 'utf8'), /The image steward\/[0-9a-f-]+:2 is kept for now: another deployment of the application is queued or under way/);
	assert.equal((await W.viaCaddy(w, s.host)).text, s.body, 'v1 serves');
	fs.writeFileSync(pauseFile, '');
	const e3 = await W.waitDeployment(w, d3.id);
	assert.equal(e3.status, 'SUCCEEDED', e3.errorMessage);
	assert.equal((await W.viaCaddy(w, s.host)).text, g2.body);
	assert.ok(!(await imageOf(2)), 'image retention removed it after #3 succeeded');
	assert.ok(await imageOf(3));
});
