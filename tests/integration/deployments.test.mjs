// Deployments through the API, with the runners off (STEWARD_RUNNERS=false:
// nothing claims a job, so every deployment stays where the API and the
// SQL put it; no docker needed): POST /deployments (multipart: manual git
// deployments, refs, uploads of tar, tar.gz and zip; each refusal: 415,
// 400 INVALID_MULTIPART, 422 with its field, 404 across organizations, 409
// GIT_SOURCE_MISSING, 413), the list with its filters and pages, one
// deployment with every field, cancel (QUEUED at once, in flight asked,
// ended 409) and rollback (409 unless SUCCEEDED with an image). States
// the runners would set are written with SQL where a test needs them.

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes, randomUUID } from 'node:crypto';
import zlib from 'node:zlib';
import * as h from './harness.mjs';
const { TS, UUID } = h;
import { call, ok, setup, signup } from './identity.mjs';

h.stewarddPath();
const pg = await h.startPostgres();
const dataDir = h.makeTempDir('sw-data-');
const srv = await h.startStewardd({ db: pg, env: { SIGNUP_ENABLED: 'true', STEWARD_RUNNERS: 'false', STEWARD_DATA_DIR: dataDir } });
after(h.cleanupAll);

const sql = async (q) => (await pg.psql(q, srv.dbName)).trim();

const owner = await setup(srv);
const other = await signup(srv, 'other@example.com', 'Other');

const UPLOAD_MAX = 100 * 1024 * 1024;

// ---- fixtures

async function newApp(who, name, extra = {}) {
	const p = await ok(call(srv, 'POST', '/projects', who, { body: { name: `${name}-project` } }), 201);
	return ok(call(srv, 'POST', '/applications', who, { body: { name, environmentId: p.environments[0].id, ...extra } }), 201);
}
async function gitSource(who, app) {
	await ok(call(srv, 'PUT', `/applications/${app.id}/git-source`, who, {
		body: { repositoryUrl: `https://github.com/example/${app.name}.git`, branch: 'main', provider: 'GITHUB' },
	}), 201);
}

const web = await newApp(owner, 'web');
await gitSource(owner, web);
const api = await newApp(owner, 'api');
await gitSource(owner, api);
const bare = await newApp(owner, 'bare'); // no git source
const uploads = await newApp(owner, 'uploads', { sourceKind: 'UPLOAD' });
const theirs = await newApp(other, 'theirs');
await gitSource(other, theirs);

// ---- multipart bodies

// parts: [{name, value (string | Buffer), filename?, type?}]
function form(parts, boundary = `sw-${randomBytes(8).toString('hex')}`) {
	const chunks = [];
	for (const p of parts) {
		let head = `--${boundary}\r\nContent-Disposition: form-data; name="${p.name}"`;
		if (p.filename !== undefined) head += `; filename="${p.filename}"`;
		head += '\r\n';
		if (p.type) head += `Content-Type: ${p.type}\r\n`;
		chunks.push(Buffer.from(`${head}\r\n`, 'latin1'), Buffer.isBuffer(p.value) ? p.value : Buffer.from(p.value, 'utf8'), Buffer.from('\r\n'));
	}
	chunks.push(Buffer.from(`--${boundary}--\r\n`));
	return { body: Buffer.concat(chunks), type: `multipart/form-data; boundary=${boundary}` };
}

function post(parts, who = owner, { boundary, type } = {}) {
	const f = form(parts, boundary);
	return call(srv, 'POST', '/deployments', who, { body: f.body, headers: { 'Content-Type': type ?? f.type } });
}
const deploy = (app, extra = [], who = owner) => post([{ name: 'applicationId', value: app.id }, ...extra], who);

// A tar archive: one file, then the two zero blocks.
function tar(name = 'index.html', content = '<h1>hi</h1>\n') {
	const header = Buffer.alloc(512);
	header.write(name, 0, 'utf8');
	header.write('0000644\0', 100);
	header.write('0000000\0', 108);
	header.write('0000000\0', 116);
	header.write(content.length.toString(8).padStart(11, '0') + '\0', 124);
	header.write('00000000000\0', 136);
	header.write('        ', 148);
	header.write('0', 156);
	header.write('ustar\0', 257);
	header.write('00', 263);
	let sum = 0;
	for (const b of header) sum += b;
	header.write(sum.toString(8).padStart(6, '0') + '\0 ', 148);
	const body = Buffer.alloc(512);
	body.write(content);
	return Buffer.concat([header, body, Buffer.alloc(1024)]);
}
const tarGz = () => zlib.gzipSync(tar());
const emptyZip = () => Buffer.concat([Buffer.from('PK\x05\x06', 'latin1'), Buffer.alloc(18)]);

async function fields(p) {
	return h.assertError(await p, 422, 'VALIDATION_FAILED').fields;
}
const uploadFiles = () => {
	try {
		return fs.readdirSync(path.join(dataDir, 'uploads'));
	} catch {
		return [];
	}
};

const KEYS = ['id', 'applicationId', 'number', 'status', 'phase', 'trigger', 'requestedRef', 'gitRef', 'commitSha',
	'commitMessage', 'commitAuthor', 'imageTag', 'strategy', 'logByteCount', 'logTail', 'errorMessage', 'rollbackOf',
	'cancelRequested', 'createdBy', 'createdAt', 'startedAt', 'finishedAt', 'updatedAt', 'durationMs'];

// ------------------------------------------------------------ create

test('a_manual_git_deployment_is_201_QUEUED_with_every_field_and_its_build_job', async () => {
	const d = await ok(deploy(web), 201);
	assert.deepEqual(Object.keys(d).sort(), [...KEYS].sort());
	assert.match(d.id, UUID);
	assert.equal(d.applicationId, web.id);
	assert.equal(d.number, 1);
	assert.equal(d.status, 'QUEUED');
	assert.equal(d.phase, 'QUEUED');
	assert.equal(d.trigger, 'MANUAL');
	for (const k of ['requestedRef', 'gitRef', 'commitSha', 'commitMessage', 'commitAuthor', 'imageTag', 'strategy',
		'errorMessage', 'rollbackOf', 'startedAt', 'finishedAt', 'durationMs']) assert.equal(d[k], null, k);
	assert.equal(d.logByteCount, 0);
	assert.equal(d.logTail, '');
	assert.equal(d.cancelRequested, false);
	assert.equal(d.createdBy, owner.user.id);
	assert.match(d.createdAt, TS);
	assert.match(d.updatedAt, TS);
	assert.deepEqual(await ok(call(srv, 'GET', `/deployments/${d.id}`, owner)), d);
	assert.equal(await sql(`SELECT queue || ' ' || kind || ' ' || status FROM jobs WHERE target_id = '${d.id}'`),
		'build deployment.build QUEUED');
	const audit = JSON.parse(await sql(`SELECT metadata::text FROM audit_logs WHERE action = 'deployment.created' AND target_id = '${d.id}'`));
	assert.deepEqual(audit, { number: 1, trigger: 'MANUAL', applicationId: web.id });
});

test('a_second_deployment_while_one_is_in_flight_is_queued_behind_it_not_refused', async () => {
	const first = await ok(deploy(api), 201);
	await sql(`UPDATE deployments SET status = 'BUILDING', phase = 'CLONING', started_at = now() WHERE id = '${first.id}'`);
	const second = await ok(deploy(api), 201);
	assert.equal(second.status, 'QUEUED');
	assert.equal(second.number, first.number + 1);
	const third = await ok(deploy(api), 201);
	assert.equal(third.number, first.number + 2);
	await sql(`UPDATE deployments SET status = 'FAILED', finished_at = now() WHERE id = '${first.id}'`);
});

test('a_ref_is_kept_as_asked_a_branch_a_tag_or_a_sha_lower_cased', async () => {
	for (const [ref, kept] of [['release/1.2', 'release/1.2'], ['v1.0.0', 'v1.0.0'], ['feature-x', 'feature-x'],
		['A'.repeat(40), 'a'.repeat(40)], ['0123456789abcdef0123456789abcdef01234567', '0123456789abcdef0123456789abcdef01234567']]) {
		const d = await ok(deploy(web, [{ name: 'ref', value: ref }]), 201);
		assert.equal(d.requestedRef, kept, ref);
		assert.equal(d.trigger, 'MANUAL');
	}
	// A blank ref (a form's empty input) is no ref.
	const d = await ok(deploy(web, [{ name: 'ref', value: '' }]), 201);
	assert.equal(d.requestedRef, null);
});

test('an_upload_of_tar_tar_gz_or_zip_is_stored_0600_before_the_deployment_names_it', async () => {
	for (const [filename, bytes] of [['site.tar', tar()], ['site.tar.gz', tarGz()], ['site.zip', emptyZip()]]) {
		const d = await ok(deploy(uploads, [{ name: 'archive', value: bytes, filename, type: 'application/octet-stream' }]), 201);
		assert.equal(d.trigger, 'UPLOAD', filename);
		assert.equal(d.requestedRef, null);
		const file = await sql(`SELECT archive_path FROM deployments WHERE id = '${d.id}'`);
		assert.match(file, new RegExp(`^${dataDir.replace(/[.*+?^$()|[\]\\]/g, '\\$&')}/uploads/[0-9a-f-]{36}\\.archive$`));
		assert.deepEqual(fs.readFileSync(file), bytes);
		assert.equal(fs.statSync(file).mode & 0o777, 0o600);
	}
	assert.equal(fs.statSync(path.join(dataDir, 'uploads')).mode & 0o777, 0o700);
	// A git application may be deployed from an upload as well.
	const d = await ok(deploy(web, [{ name: 'archive', value: tarGz(), filename: 'x.tgz' }]), 201);
	assert.equal(d.trigger, 'UPLOAD');
});

test('a_body_that_is_not_multipart_is_415', async () => {
	h.assertError(await call(srv, 'POST', '/deployments', owner, { body: {} }), 415, 'UNSUPPORTED_MEDIA_TYPE');
	h.assertError(await call(srv, 'POST', '/deployments', owner, { body: `applicationId=${web.id}`, headers: { 'Content-Type': 'application/x-www-form-urlencoded' } }),
		415, 'UNSUPPORTED_MEDIA_TYPE');
	h.assertError(await call(srv, 'POST', '/deployments', owner), 415, 'UNSUPPORTED_MEDIA_TYPE');
});

test('a_malformed_multipart_body_is_400_INVALID_MULTIPART', async () => {
	const f = form([{ name: 'applicationId', value: web.id }], 'right-boundary');
	const bad = async (body, type) => h.assertError(await call(srv, 'POST', '/deployments', owner, { body, headers: { 'Content-Type': type } }), 400, 'INVALID_MULTIPART');
	await bad(f.body, 'multipart/form-data');                              // no boundary
	await bad(f.body, 'multipart/form-data; boundary=wrong-boundary');     // not the body's
	await bad(f.body.subarray(0, f.body.length - 20), f.type);            // no close delimiter
	await bad(Buffer.from(f.body.toString('latin1').replaceAll('\r\n', '\n'), 'latin1'), f.type); // bare LF
	const many = form(Array.from({ length: 9 }, (_, i) => ({ name: `p${i}`, value: 'x' })), 'b');
	await bad(many.body, many.type);                                       // too many parts
});

test('each_bad_field_is_422_with_its_field', async () => {
	const files = uploadFiles().length;
	assert.deepEqual(await fields(post([{ name: 'ref', value: 'main' }])), { applicationId: ['is required'] });
	assert.deepEqual(await fields(post([{ name: 'applicationId', value: 'not-a-uuid' }])), { applicationId: ['must be an id (a UUID)'] });
	assert.ok((await fields(post([{ name: 'applicationId', value: web.id, filename: 'id.txt' }]))).applicationId);
	assert.deepEqual(await fields(deploy(web, [{ name: 'color', value: 'blue' }])), { color: ['is not a known field'] });
	for (const ref of ['bad..ref', '-x', 'a b', 'refs/heads/', 'x'.repeat(201), 'a~1', 'a\u0000b']) {
		assert.ok((await fields(deploy(web, [{ name: 'ref', value: ref }]))).ref, `ref ${JSON.stringify(ref)}`);
	}
	assert.ok((await fields(deploy(web, [{ name: 'ref', value: 'main', filename: 'ref.txt' }]))).ref);
	assert.deepEqual(await fields(deploy(web, [{ name: 'ref', value: 'main' }, { name: 'archive', value: tarGz(), filename: 'a.tgz' }])),
		{ ref: ['cannot be combined with an archive'] });
	assert.deepEqual(await fields(deploy(uploads, [{ name: 'archive', value: '', filename: 'empty.tar' }])), { archive: ['must not be empty'] });
	assert.deepEqual(await fields(deploy(uploads, [{ name: 'archive', value: 'just some text', filename: 'notes.txt' }])),
		{ archive: ['must be a tar, tar.gz or zip archive'] });
	// An application whose source is UPLOAD needs an archive (a blank file input counts as none).
	assert.deepEqual(await fields(deploy(uploads)), { archive: ['is required: the application deploys uploaded archives'] });
	assert.ok((await fields(deploy(uploads, [{ name: 'archive', value: '', filename: '' }]))).archive);
	assert.equal(uploadFiles().length, files, 'refused requests leave no file behind');
});

test('an_application_of_another_organization_or_none_at_all_is_404', async () => {
	const files = uploadFiles().length;
	h.assertError(await deploy(theirs), 404, 'NOT_FOUND');
	h.assertError(await deploy({ id: randomUUID() }), 404, 'NOT_FOUND');
	h.assertError(await deploy(theirs, [{ name: 'archive', value: tarGz(), filename: 'a.tgz' }]), 404, 'NOT_FOUND');
	assert.equal(uploadFiles().length, files);
	// Theirs is theirs.
	const d = await ok(deploy(theirs, [], other), 201);
	h.assertError(await call(srv, 'GET', `/deployments/${d.id}`, owner), 404, 'NOT_FOUND');
	h.assertError(await call(srv, 'POST', `/deployments/${d.id}/cancel`, owner), 404, 'NOT_FOUND');
	h.assertError(await call(srv, 'POST', `/deployments/${d.id}/rollback`, owner), 404, 'NOT_FOUND');
	h.assertError(await call(srv, 'GET', `/deployments/${randomUUID()}`, owner), 404, 'NOT_FOUND');
	h.assertError(await call(srv, 'GET', '/deployments/not-a-uuid', owner), 404, 'NOT_FOUND');
});

test('a_git_deployment_without_a_git_source_is_409_GIT_SOURCE_MISSING', async () => {
	h.assertError(await deploy(bare), 409, 'GIT_SOURCE_MISSING');
	h.assertError(await deploy(bare, [{ name: 'ref', value: 'main' }]), 409, 'GIT_SOURCE_MISSING');
	// An upload does not need one.
	assert.equal((await ok(deploy(bare, [{ name: 'archive', value: tar(), filename: 'a.tar' }]), 201)).trigger, 'UPLOAD');
});

test('a_body_over_the_route_limit_is_413_before_it_is_read', async () => {
	const limit = UPLOAD_MAX + 64 * 1024;
	const r = await h.raw(srv.port, h.buildRequest(srv.port, 'POST', '/deployments', {
		headers: { 'Content-Type': 'multipart/form-data; boundary=b', 'Content-Length': String(limit + 1), Cookie: `steward_session=${owner.cookie}`, Origin: srv.url },
	}));
	h.assertRefusedAndClosed(r, 413, 'PAYLOAD_TOO_LARGE');
});

test('an_archive_over_100_MiB_is_413_and_leaves_no_file', async () => {
	const before = uploadFiles().length;
	const big = Buffer.alloc(UPLOAD_MAX + 1);
	zlib.gzipSync(Buffer.from('x')).copy(big); // looks like a tar.gz
	h.assertError(await deploy(uploads, [{ name: 'archive', value: big, filename: 'big.tgz' }]), 413, 'PAYLOAD_TOO_LARGE');
	assert.equal(uploadFiles().length, before);
	// Exactly 100 MiB fits.
	const fits = big.subarray(0, UPLOAD_MAX);
	assert.equal((await ok(deploy(uploads, [{ name: 'archive', value: fits, filename: 'fits.tgz' }]), 201)).trigger, 'UPLOAD');
	assert.equal(uploadFiles().length, before + 1);
});

// ------------------------------------------------------------ list and get

test('the_list_filters_by_application_status_and_trigger_and_pages', async () => {
	const app = await newApp(owner, 'listed');
	await gitSource(owner, app);
	const made = [];
	for (let i = 0; i < 5; i++) made.push(await ok(deploy(app), 201));
	made.push(await ok(deploy(app, [{ name: 'archive', value: tar(), filename: 'a.tar' }]), 201));
	await sql(`UPDATE deployments SET status = 'FAILED', error_message = 'boom', started_at = now() - interval '2 seconds', finished_at = now() WHERE id = '${made[1].id}'`);

	const all = await ok(call(srv, 'GET', `/deployments?applicationId=${app.id}&limit=200`, owner));
	assert.deepEqual(all.map((d) => d.number), [6, 5, 4, 3, 2, 1]); // newest first
	const failed = await ok(call(srv, 'GET', `/deployments?applicationId=${app.id}&status=FAILED`, owner));
	assert.deepEqual(failed.map((d) => d.id), [made[1].id]);
	assert.equal(failed[0].errorMessage, 'boom');
	assert.ok(failed[0].durationMs >= 1900 && failed[0].durationMs <= 10000, `durationMs ${failed[0].durationMs}`);
	const up = await ok(call(srv, 'GET', `/deployments?applicationId=${app.id}&trigger=UPLOAD`, owner));
	assert.deepEqual(up.map((d) => d.id), [made[5].id]);

	// Pages of 2, newest first, then oldest first.
	const seen = [];
	let cursor = null;
	do {
		const res = await call(srv, 'GET', `/deployments?applicationId=${app.id}&limit=2${cursor ? `&cursor=${cursor}` : ''}`, owner);
		assert.equal(res.status, 200, res.text);
		const j = res.json();
		assert.ok(j.data.length <= 2);
		seen.push(...j.data.map((d) => d.number));
		cursor = j.pagination.nextCursor;
	} while (cursor);
	assert.deepEqual(seen, [6, 5, 4, 3, 2, 1]);
	const asc = await ok(call(srv, 'GET', `/deployments?applicationId=${app.id}&order=asc&limit=3`, owner));
	assert.deepEqual(asc.map((d) => d.number), [1, 2, 3]);

	// Without a filter: the organization's deployments only.
	const mine = await ok(call(srv, 'GET', '/deployments?limit=200', owner));
	assert.ok(mine.every((d) => d.applicationId !== theirs.id));
	const theirList = await ok(call(srv, 'GET', '/deployments', other));
	assert.ok(theirList.length >= 1 && theirList.every((d) => d.applicationId === theirs.id));
	assert.deepEqual(await ok(call(srv, 'GET', `/deployments?applicationId=${app.id}`, other)), []);

	for (const q of ['status=NOPE', 'trigger=manual', 'applicationId=xyz', 'limit=0', 'order=up', 'colour=blue']) {
		h.assertError(await call(srv, 'GET', `/deployments?${q}`, owner), 422, 'VALIDATION_FAILED');
	}
});

// ------------------------------------------------------------ cancel

test('cancel_of_a_QUEUED_deployment_ends_it_CANCELLED_at_once_and_a_repeat_is_409', async () => {
	const d = await ok(deploy(web), 201);
	const c = await ok(call(srv, 'POST', `/deployments/${d.id}/cancel`, owner), 200);
	assert.equal(c.status, 'CANCELLED');
	assert.equal(c.cancelRequested, true);
	assert.match(c.finishedAt, TS);
	assert.equal(c.startedAt, null);
	assert.equal(c.durationMs, null);
	assert.equal(await sql(`SELECT status FROM jobs WHERE target_id = '${d.id}'`), 'CANCELLED');
	h.assertError(await call(srv, 'POST', `/deployments/${d.id}/cancel`, owner), 409, 'DEPLOYMENT_FINISHED');
	assert.equal(await sql(`SELECT count(*) FROM audit_logs WHERE action = 'deployment.cancelled' AND target_id = '${d.id}'`), '1');
	h.assertError(await call(srv, 'POST', `/deployments/${randomUUID()}/cancel`, owner), 404, 'NOT_FOUND');
	// A cancelled upload is never unpacked: its file goes.
	const u = await ok(deploy(uploads, [{ name: 'archive', value: tar(), filename: 'a.tar' }]), 201);
	const file = await sql(`SELECT archive_path FROM deployments WHERE id = '${u.id}'`);
	assert.ok(fs.existsSync(file));
	assert.equal((await ok(call(srv, 'POST', `/deployments/${u.id}/cancel`, owner), 200)).status, 'CANCELLED');
	assert.equal(fs.existsSync(file), false);
});

test('cancel_of_a_running_deployment_is_202_and_asks_its_runner', async () => {
	const app = await newApp(owner, 'running');
	await gitSource(owner, app);
	const d = await ok(deploy(app), 201);
	// As a runner's claim leaves it.
	await sql(`UPDATE deployments SET status = 'BUILDING', phase = 'BUILDING', started_at = now() WHERE id = '${d.id}';
		UPDATE jobs SET status = 'RUNNING', attempts = 1, started_at = now() WHERE target_id = '${d.id}'`);
	const c = await ok(call(srv, 'POST', `/deployments/${d.id}/cancel`, owner), 202);
	assert.equal(c.status, 'BUILDING');
	assert.equal(c.cancelRequested, true);
	assert.equal((await ok(call(srv, 'POST', `/deployments/${d.id}/cancel`, owner), 202)).cancelRequested, true);
	assert.equal(await sql(`SELECT count(*) FROM audit_logs WHERE action = 'deployment.cancel_requested' AND target_id = '${d.id}'`), '2');
	// Between its build and its deploy step nothing runs: cancelled at once.
	const e = await ok(deploy(app), 201);
	await sql(`UPDATE deployments SET status = 'FAILED', finished_at = now() WHERE id = '${d.id}';
		UPDATE deployments SET status = 'DEPLOYING', phase = 'STARTING', started_at = now() WHERE id = '${e.id}'`);
	assert.equal((await ok(call(srv, 'POST', `/deployments/${e.id}/cancel`, owner), 200)).status, 'CANCELLED');
});

// ------------------------------------------------------------ rollback

test('rollback_needs_a_SUCCEEDED_deployment_with_its_image', async () => {
	const app = await newApp(owner, 'rolled');
	await gitSource(owner, app);
	const d = await ok(deploy(app), 201);
	h.assertError(await call(srv, 'POST', `/deployments/${d.id}/rollback`, owner), 409, 'NOT_ROLLBACK_TARGET');
	await sql(`UPDATE deployments SET status = 'FAILED', finished_at = now() WHERE id = '${d.id}'`);
	h.assertError(await call(srv, 'POST', `/deployments/${d.id}/rollback`, owner), 409, 'NOT_ROLLBACK_TARGET');
	await sql(`UPDATE deployments SET status = 'SUCCEEDED', phase = 'DONE', image_tag = 'steward/${app.id}:1',
		started_at = now() - interval '3 seconds', finished_at = now() WHERE id = '${d.id}'`);
	const got = await ok(call(srv, 'GET', `/deployments/${d.id}`, owner));
	assert.ok(got.durationMs >= 2900 && got.durationMs < 10000, `durationMs ${got.durationMs}`);
	const r = await ok(call(srv, 'POST', `/deployments/${d.id}/rollback`, owner), 201);
	assert.equal(r.trigger, 'ROLLBACK');
	assert.equal(r.rollbackOf, d.id);
	assert.equal(r.number, 2);
	assert.equal(r.status, 'QUEUED');
	assert.equal(r.imageTag, `steward/${app.id}:1`);
	assert.equal(await sql(`SELECT queue || ' ' || kind FROM jobs WHERE target_id = '${r.id}'`), 'lifecycle deployment.deploy');
	// The history keeps both.
	const list = await ok(call(srv, 'GET', `/deployments?applicationId=${app.id}`, owner));
	assert.deepEqual(list.map((x) => x.number), [2, 1]);
	h.assertError(await call(srv, 'POST', `/deployments/${r.id}/rollback`, owner), 409, 'NOT_ROLLBACK_TARGET');
	h.assertError(await call(srv, 'POST', `/deployments/${randomUUID()}/rollback`, owner), 404, 'NOT_FOUND');
});

// ------------------------------------------------------------ runners off

test('with_STEWARD_RUNNERS_false_nothing_runs_and_deployments_stay_QUEUED', async () => {
	const d = await ok(deploy(web), 201);
	await h.sleep(2500); // longer than a runner's poll interval (2 s)
	const got = await ok(call(srv, 'GET', `/deployments/${d.id}`, owner));
	assert.equal(got.status, 'QUEUED');
	assert.equal(await sql('SELECT count(*) FROM workers'), '0');
	assert.equal(await sql(`SELECT status || ' ' || attempts FROM jobs WHERE target_id = '${d.id}'`), 'QUEUED 0');
});
