// The job queue across processes: two stewardd against one database with
// their runners on. Each registers as a worker holding its lock; a job is
// run by exactly one of them; a deployment whose worker is SIGKILLed while
// it is BUILDING becomes FAILED "the worker restarted while the deployment
// was cloning", by the surviving process's reaper or by the restarted
// process at start-up, and its application's lock is released (the next
// deployment runs). A deployment the real pipeline cannot run (no git
// source) fails fast with a clear errorMessage. No docker needed: where a
// test needs a deployment to be BUILDING on a given worker, it is claimed
// for that worker with the runners' own SQL (steward_job_claim), as a
// runner would, in the transaction that creates it.

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import * as h from './harness.mjs';
import { call, ok, setup } from './identity.mjs';

h.stewarddPath();
const pg = await h.startPostgres();
const url = await pg.freshDatabase();
const dbName = /^postgresql:\/\/\/([^?]+)/.exec(url)[1];
const env = { DATABASE_URL: url, STEWARD_SECRET_KEY: randomBytes(32).toString('hex'), STEWARD_RUNNERS: 'true' };
const start = () => h.startStewardd({ db: pg, env });
let a = await start();
let b = await start();
after(h.cleanupAll);

const sql = async (q) => (await pg.psql(q, dbName)).trim();
const REAP_MS = 10000; // SW_JOBS_REAP_MS

const owner = await setup(a);

async function newApp(srv, name) {
	const p = await ok(call(srv, 'POST', '/projects', owner, { body: { name: `${name}-project` } }), 201);
	return ok(call(srv, 'POST', '/applications', owner, { body: { name, environmentId: p.environments[0].id } }), 201);
}
const workerOf = (srv) => sql(`SELECT id FROM workers WHERE pid = ${srv.proc.pid}`);

// A deployment of app (no git source: nothing a runner would do can
// succeed) created and claimed for worker in one transaction, as a runner's
// claim leaves it: BUILDING, phase CLONING, its build job RUNNING.
async function claimedDeployment(app, worker) {
	const out = await sql(`SELECT id FROM steward_deployment_create('${owner.org.id}', '${app.id}', 'MANUAL', NULL, NULL, NULL, NULL);
		SELECT target_id FROM steward_job_claim('build', '${worker}')`);
	const [id, claimed] = out.split('\n').map((s) => s.trim()).filter(Boolean);
	assert.equal(claimed, id, 'the claim took the new deployment');
	return id;
}
// A deployment made as the API would, for an application the API refuses
// (no git source): the runners must end it.
const queuedDeployment = async (app) =>
	sql(`SELECT id FROM steward_deployment_create('${owner.org.id}', '${app.id}', 'MANUAL', NULL, NULL, NULL, NULL)`);

async function until(what, fn, timeoutMs) {
	const deadline = Date.now() + timeoutMs;
	for (;;) {
		const v = await fn();
		if (v) return v;
		if (Date.now() > deadline) assert.fail(`${what}: not within ${timeoutMs} ms`);
		await h.sleep(100);
	}
}
const deployment = (srv, id) => ok(call(srv, 'GET', `/deployments/${id}`, owner));

test('each_process_is_a_worker_holding_its_lock', async () => {
	const ids = [await workerOf(a), await workerOf(b)];
	for (const id of ids) assert.match(id, h.UUID);
	assert.notEqual(ids[0], ids[1]);
	// Held: another session cannot take either worker's lock.
	for (const id of ids) assert.equal(await sql(`SELECT pg_try_advisory_lock(steward_worker_key('${id}'))`), 'f');
});

test('two_processes_never_run_one_job_twice', async () => {
	const n = 80;
	await sql(`SELECT count(*) FROM generate_series(1, ${n}) i, steward_job_enqueue('${owner.org.id}', 'lifecycle',
		'test.nothing', 'thing', lpad(to_hex(i), 32, '0')::uuid, NULL, NULL)`);
	await until('every job ran', async () => (await sql(`SELECT count(*) FROM jobs WHERE kind = 'test.nothing' AND status = 'FAILED'`)) === String(n), 20000 * h.SLACK);
	// Each once, by one of the two, and ended as a job without a handler ends.
	assert.equal(await sql(`SELECT count(*) FROM jobs WHERE kind = 'test.nothing' AND attempts = 1
		AND error_message = 'no runner for test.nothing'
		AND locked_by IN ('${await workerOf(a)}', '${await workerOf(b)}')`), String(n));
});

test('a_deployment_of_an_application_without_a_git_source_fails_fast_saying_so', async () => {
	const app = await newApp(a, 'sourceless');
	const id = await queuedDeployment(app);
	const d = await until('the deployment ended', async () => {
		const x = await deployment(a, id);
		return ['FAILED', 'SUCCEEDED', 'CANCELLED'].includes(x.status) && x;
	}, 15000 * h.SLACK);
	assert.equal(d.status, 'FAILED');
	assert.match(d.errorMessage, /no git source/i);
	assert.match(d.finishedAt, h.TS);
});

test('SIGKILL_while_BUILDING_the_other_process_fails_it_and_releases_the_application', async () => {
	const app = await newApp(a, 'killed');
	const deadWorker = await workerOf(a);
	const id = await claimedDeployment(app, deadWorker);
	assert.equal((await deployment(b, id)).status, 'BUILDING');
	// While A lives, B's reaper leaves it alone.
	await h.sleep(500);
	assert.equal((await deployment(b, id)).status, 'BUILDING');

	a.proc.kill('SIGKILL');
	await a.exited;
	const d = await until('reaped by the other process', async () => {
		const x = await deployment(b, id);
		return x.status !== 'BUILDING' && x;
	}, (REAP_MS + 5000) * h.SLACK);
	assert.equal(d.status, 'FAILED');
	assert.equal(d.errorMessage, 'the worker restarted while the deployment was cloning');
	assert.match(d.finishedAt, h.TS);
	assert.equal(await sql(`SELECT count(*) FROM workers WHERE id = '${deadWorker}'`), '0');
	assert.equal(await sql(`SELECT status || ' ' || error_message FROM jobs WHERE target_id = '${id}' AND kind = 'deployment.build'`),
		'FAILED the worker restarted');

	// The application's lock is free: its next deployment is taken and run.
	const next = await queuedDeployment(app);
	const n = await until('the next deployment ran', async () => {
		const x = await deployment(b, next);
		return ['FAILED', 'SUCCEEDED', 'CANCELLED'].includes(x.status) && x;
	}, 15000 * h.SLACK);
	assert.notEqual(n.errorMessage, null);
	assert.doesNotMatch(n.errorMessage, /worker restarted/);
});

test('a_restarted_process_fails_what_its_predecessor_left_in_flight_before_it_serves', async () => {
	const app = await newApp(b, 'restarted');
	const deadWorker = await workerOf(b);
	const id = await claimedDeployment(app, deadWorker);
	b.proc.kill('SIGKILL');
	await b.exited;
	b = await start();
	// Reaped at start-up, before the first request is answered.
	const d = await deployment(b, id);
	assert.equal(d.status, 'FAILED');
	assert.equal(d.errorMessage, 'the worker restarted while the deployment was cloning');
	assert.equal(await sql(`SELECT count(*) FROM workers WHERE id = '${deadWorker}'`), '0');
	assert.equal(await sql(`SELECT count(*) FROM deployments WHERE status IN ('BUILDING', 'DEPLOYING')`), '0');
});
