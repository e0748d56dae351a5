// GET /jobs/:id on real parts (PostgreSQL, dockerd, the runners of
// stewardd): a 202 with a job names it in Location; the organization's
// own job is read again and again until it ends, its status only moving
// forward (QUEUED, RUNNING, then SUCCEEDED or FAILED with the runner's
// sentence), startedAt and finishedAt set when known; another
// organization's job, an unknown id and an id that is not a UUID answer
// 404 in the error envelope, as every :id route does.
//
// The jobs: stopping a managed service that never ran (nothing to stop:
// SUCCEEDED), and starting one whose image this engine does not have
// (nothing can be pulled here: FAILED, with the runner's sentence).

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import * as h from './harness.mjs';
import { call, ok, signup } from './identity.mjs';
import { world } from './deploy_world.mjs';

const w = await world({ SIGNUP_ENABLED: 'true' });
after(h.cleanupAll);

const project = await ok(w.call('POST', '/projects', { body: { name: 'jobs' } }), 201);
const env = project.environments[0].id;
const other = await signup(w.srv, 'owner@b.example', 'Org B');

const RFC3339 = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const ORDER = ['QUEUED', 'RUNNING', 'SUCCEEDED', 'FAILED', 'CANCELLED'];
const ENDED = new Set(['SUCCEEDED', 'FAILED', 'CANCELLED']);

// Queues a job with POST path: 202, its Location, the job.
async function queue(path) {
	const res = await w.call('POST', path);
	assert.equal(res.status, 202, res.text);
	const job = res.json().data;
	assert.equal(res.headers.location, `/jobs/${job.id}`);
	return job;
}

// Reads GET /jobs/:id until the job ends (bounded); every read is checked
// and the statuses seen are returned with the last read.
async function poll(id) {
	const deadline = Date.now() + 120000 * h.SLACK;
	const seen = [];
	for (;;) {
		const job = await ok(w.call('GET', `/jobs/${id}`));
		assert.equal(job.id, id);
		assert.match(job.createdAt, RFC3339);
		assert.ok(Number.isInteger(job.attempts) && job.attempts >= 0);
		if (job.status !== 'QUEUED') {
			assert.match(job.startedAt, RFC3339, `${job.status}: startedAt`);
			assert.ok(job.attempts >= 1);
		}
		if (seen.at(-1) !== job.status) seen.push(job.status);
		if (ENDED.has(job.status)) {
			assert.match(job.finishedAt, RFC3339);
			return { job, seen };
		}
		assert.equal(job.finishedAt, null);
		assert.equal(job.errorMessage, null);
		if (Date.now() > deadline) throw new Error(`job ${id} is still ${job.status}`);
		await h.sleep(100);
	}
}

// The statuses seen only move forward.
function forward(seen) {
	const at = seen.map((s) => ORDER.indexOf(s));
	assert.ok(at.every((i, k) => i >= 0 && (k === 0 || i > at[k - 1]) && (i <= 1 || k === at.length - 1)),
		`statuses seen: ${seen.join(' -> ')}`);
}

const service = await ok(w.call('POST', '/services', { body: { name: 'jobs-db', kind: 'POSTGRESQL', environmentId: env } }), 201);

test('a_queued_job_is_read_until_it_succeeds', async () => {
	const queued = await queue(`/services/${service.id}/stop`);
	assert.equal(queued.kind, 'service.stop');
	assert.equal(queued.targetType, 'service');
	assert.equal(queued.targetId, service.id);
	const { job, seen } = await poll(queued.id);
	forward(seen);
	assert.equal(job.status, 'SUCCEEDED', job.errorMessage ?? '');
	assert.equal(job.errorMessage, null);
	// The same members as the 202 answered, the same values but for progress.
	for (const k of ['id', 'queue', 'kind', 'targetType', 'targetId', 'createdAt']) assert.equal(job[k], queued[k], k);
	assert.deepEqual(Object.keys(job).sort(), Object.keys(queued).sort());
	assert.ok(job.finishedAt >= job.startedAt && job.startedAt >= job.createdAt);
});

test('a_failed_job_carries_the_runners_sentence', async () => {
	const queued = await queue(`/services/${service.id}/start`);
	const { job, seen } = await poll(queued.id);
	forward(seen);
	assert.equal(job.status, 'FAILED');
	assert.equal(typeof job.errorMessage, 'string');
	assert.ok(job.errorMessage.length > 0);
	// The stored sentence, as the runner recorded it.
	const stored = (await w.sql(`SELECT error_message FROM jobs WHERE id = '${job.id}'`)).trim();
	assert.equal(job.errorMessage, stored);
});

test('another_organizations_job_and_bad_ids_are_not_found', async () => {
	const queued = await queue(`/services/${service.id}/restart`);
	h.assertError(await call(w.srv, 'GET', `/jobs/${queued.id}`, other), 404, 'NOT_FOUND');
	h.assertError(await w.call('GET', `/jobs/${h.NIL}`), 404, 'NOT_FOUND');
	h.assertError(await w.call('GET', '/jobs/not-a-uuid'), 404, 'NOT_FOUND');
	h.assertError(await call(w.srv, 'GET', `/jobs/${queued.id}`, {}), 401);
	// As other :id routes answer for a non-UUID id.
	h.assertError(await w.call('GET', '/services/not-a-uuid'), 404, 'NOT_FOUND');
	await poll(queued.id);
});

test('an_application_lifecycle_202_names_its_job_in_location', async () => {
	const servers = await ok(w.call('GET', '/servers'));
	const local = servers.find((s) => s.isLocal);
	const app = await ok(w.call('POST', '/applications', {
		body: { name: 'jobs-app', environmentId: env, serverId: local.id },
	}), 201);
	const queued = await queue(`/applications/${app.id}/stop`);
	assert.equal(queued.kind, 'application.stop');
	const { seen } = await poll(queued.id);
	forward(seen);
});
