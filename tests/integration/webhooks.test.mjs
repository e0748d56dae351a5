// POST /webhooks/:provider: each provider's signed push creates exactly one
// GIT_PUSH deployment of the pushed commit; a redelivery answers the earlier
// outcome and deploys nothing more (also when sent many times at once);
// wrong, missing or replayed signatures are 401, the same whether the
// repository is known or not; other branches, tags, deletions, pings and
// other events are acknowledged and ignored; the application of the secret
// that verifies is the one deployed, across organizations; bounds (body
// size, content type, headers) and the per-address rate limit (429 with
// Retry-After). Runners are off (STEWARD_RUNNERS=false): deployments stay
// QUEUED, no docker is needed.

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import * as h from './harness.mjs';
import { call, ok } from './identity.mjs';
import { world, makeApp, notInLogs } from './app_config.mjs';

const { pg, srv, owner, other, app, otherApp, sql } = await world({ STEWARD_RUNNERS: 'false' });
after(h.cleanupAll);

// ---- applications with git sources, one per provider (and one of
// organization B on A's GitHub repository, named another way)

async function source(who, a, repositoryUrl, extra = {}) {
	const res = await call(srv, 'PUT', `/applications/${a.id}/git-source`, who, { body: { repositoryUrl, ...extra } });
	assert.equal(res.status, 201, res.text);
	return res.json().data;
}

const gh = { app, src: await source(owner, app, 'https://github.com/Acme/Shop.git') };
const ghB = { app: otherApp, src: await source(other, otherApp, 'git@github.com:acme/shop') };
const glApp = await makeApp(srv, owner, 'gl-app');
const gl = { app: glApp, src: await source(owner, glApp, 'https://gitlab.com/acme/api.git', { branch: 'release' }) };
const bbApp = await makeApp(srv, owner, 'bb-app');
const bb = { app: bbApp, src: await source(owner, bbApp, 'git@bitbucket.org:team/site.git') };
const genApp = await makeApp(srv, owner, 'gen-app');
const gen = { app: genApp, src: await source(owner, genApp, 'ssh://git@git.example.com:2222/tools/worker.git') };
const SECRETS = [gh, ghB, gl, bb, gen].map((x) => x.src.webhookSecret);
for (const s of SECRETS) assert.match(s, /^[A-Za-z0-9_-]{43}$/);

const sha = () => crypto.randomBytes(20).toString('hex');
const ZERO = '0'.repeat(40);
const uuid = () => crypto.randomUUID();
const now = () => Math.floor(Date.now() / 1000);
const hmacHex = (key, data) => crypto.createHmac('sha256', key).update(data).digest('hex');

function post(provider, body, headers, port = srv.port) {
	const text = typeof body === 'string' ? body : JSON.stringify(body);
	return h.request(port, 'POST', `/webhooks/${provider}`, { headers: { 'Content-Type': 'application/json', ...headers }, body: text });
}

// Each provider as it signs.
function github(secret, body, { event = 'push', delivery = uuid() } = {}) {
	const text = JSON.stringify(body);
	return post('github', text, { 'X-GitHub-Event': event, 'X-GitHub-Delivery': delivery, 'X-Hub-Signature-256': `sha256=${hmacHex(secret, text)}` });
}
function gitlabToken(secret, body, { event = 'Push Hook', delivery = uuid() } = {}) {
	return post('gitlab', body, { 'X-Gitlab-Event': event, 'X-Gitlab-Event-UUID': delivery, 'X-Gitlab-Token': secret });
}
// GitLab's signing token (Standard Webhooks): whsec_ + the secret in
// standard base64, so the HMAC key is the secret's base64url decoding.
function gitlabSigned(secret, body, { delivery = uuid(), ts = now() } = {}) {
	const text = JSON.stringify(body);
	const signingToken = `whsec_${Buffer.from(secret, 'base64url').toString('base64')}`; // what GitLab is given
	const key = Buffer.from(signingToken.slice('whsec_'.length), 'base64');
	const sig = crypto.createHmac('sha256', key).update(`${delivery}.${ts}.${text}`).digest('base64');
	return post('gitlab', text, { 'X-Gitlab-Event': 'Push Hook', 'Idempotency-Key': delivery, 'webhook-id': delivery,
		'webhook-timestamp': String(ts), 'webhook-signature': `v1,${sig}` });
}
function bitbucket(secret, body, { event = 'repo:push', delivery = uuid() } = {}) {
	const text = JSON.stringify(body);
	return post('bitbucket', text, { 'X-Event-Key': event, 'X-Request-UUID': delivery, 'X-Hub-Signature': `sha256=${hmacHex(secret, text)}` });
}
function generic(secret, body, { delivery = uuid(), ts = now(), port } = {}) {
	const text = JSON.stringify(body);
	return post('generic', text, { 'Steward-Delivery': delivery, 'Steward-Timestamp': String(ts),
		'Steward-Signature': `v1=${hmacHex(secret, `${ts}.${text}`)}` }, port);
}

// Payloads as each provider writes them (the members Steward reads, and a few it does not).
const githubPush = (ref, after, { repo = 'acme/shop', deleted = false } = {}) => ({
	ref, before: sha(), after, created: false, deleted, forced: false,
	repository: { id: 1, full_name: repo, clone_url: `https://github.com/${repo}.git`, ssh_url: `git@github.com:${repo}.git`, html_url: `https://github.com/${repo}` },
	pusher: { name: 'octocat' }, commits: [],
});
const gitlabPush = (ref, after) => ({
	object_kind: 'push', event_name: 'push', before: sha(), after, ref, checkout_sha: after, user_name: 'Jo',
	project: { id: 15, git_http_url: 'https://gitlab.com/acme/api.git', git_ssh_url: 'git@gitlab.com:acme/api.git', web_url: 'https://gitlab.com/acme/api' },
	commits: [], total_commits_count: 0,
});
const bitbucketPush = (changes) => ({
	push: { changes },
	repository: { type: 'repository', full_name: 'team/site', name: 'site', links: { html: { href: 'https://bitbucket.org/team/site' } } },
	actor: { display_name: 'Bo' },
});
const bbBranch = (name, hash) => ({ new: { type: 'branch', name, target: { type: 'commit', hash } }, old: null, created: true, closed: false });
const genericPush = (after, ref = 'refs/heads/main') => ({ repository: 'git@git.example.com:tools/worker', ref, ...(after ? { after } : {}) });

async function deploymentsOf(a) {
	const out = await sql(`SELECT d.id || '|' || d.trigger || '|' || d.requested_ref || '|' || d.status || '|' || coalesce(d.created_by::text, '-')
		|| '|' || (SELECT count(*) FROM jobs j WHERE j.target_id = d.id AND j.kind = 'deployment.build')
		FROM deployments d WHERE d.application_id = '${a.id}' ORDER BY d.number`);
	return out.trim().split('\n').filter(Boolean).map((l) => {
		const [id, trigger, ref, status, createdBy, jobs] = l.split('|');
		return { id, trigger, ref, status, createdBy, jobs: Number(jobs) };
	});
}

function assertDeployed(res, a, commit, status = 202) {
	assert.equal(res.status, status, res.text);
	const d = res.json().data;
	assert.match(d.deploymentId, h.UUID);
	assert.equal(d.applicationId, a.id);
	assert.equal(d.requestedRef, commit);
	assert.equal(d.status, 'QUEUED');
	assert.equal(typeof d.number, 'number');
	assert.equal(d.redelivered, status === 200);
	return d;
}

function assertIgnored(res, a, code) {
	assert.equal(res.status, 202, res.text);
	const d = res.json().data;
	assert.equal(d.ignored, code, res.text);
	assert.ok(d.reason.length > 10);
	assert.equal(d.applicationId, a.id);
	assert.equal(d.redelivered, false);
	assert.equal(d.deploymentId, undefined);
}

// ---- each provider's push

test('github_push_to_the_branch_creates_one_git_push_deployment_of_the_commit', async () => {
	const commit = sha();
	const delivery = uuid();
	const d = assertDeployed(await github(gh.src.webhookSecret, githubPush('refs/heads/main', commit), { delivery }), app, commit);
	const rows = await deploymentsOf(app);
	assert.equal(rows.length, 1);
	assert.deepEqual(rows[0], { id: d.deploymentId, trigger: 'GIT_PUSH', ref: commit, status: 'QUEUED', createdBy: '-', jobs: 1 });
	assert.equal((await deploymentsOf(otherApp)).length, 0, 'not the other organization\'s application');
	const audit = (await sql(`SELECT action || '|' || coalesce(actor_user_id::text, '-') || '|' || metadata::text FROM audit_logs WHERE target_id = '${d.deploymentId}'`)).trim();
	assert.match(audit, /^deployment\.created\|-\|.*"GIT_PUSH"/);

	// Redelivery: the earlier outcome, 200, nothing new.
	const again = assertDeployed(await github(gh.src.webhookSecret, githubPush('refs/heads/main', commit), { delivery }), app, commit, 200);
	assert.equal(again.deploymentId, d.deploymentId);
	assert.equal((await deploymentsOf(app)).length, 1);
});

test('the_secret_that_verifies_picks_the_application_across_organizations', async () => {
	// B's source names the same repository another way (scp form, other case).
	const commit = sha();
	assertDeployed(await github(ghB.src.webhookSecret, githubPush('refs/heads/main', commit)), otherApp, commit);
	const rows = await deploymentsOf(otherApp);
	assert.equal(rows.length, 1);
	assert.equal(rows[0].ref, commit);
	assert.equal((await deploymentsOf(app)).length, 1, 'A\'s application is untouched');
});

test('gitlab_push_with_the_token_creates_a_deployment_and_a_redelivery_does_not', async () => {
	const commit = sha();
	const delivery = uuid();
	const d = assertDeployed(await gitlabToken(gl.src.webhookSecret, gitlabPush('refs/heads/release', commit), { delivery }), glApp, commit);
	const r = assertDeployed(await gitlabToken(gl.src.webhookSecret, gitlabPush('refs/heads/release', commit), { delivery }), glApp, commit, 200);
	assert.equal(r.deploymentId, d.deploymentId);
	assert.deepEqual((await deploymentsOf(glApp)).map((x) => x.ref), [commit]);
	h.assertError(await gitlabToken(`${gl.src.webhookSecret}x`, gitlabPush('refs/heads/release', sha())), 401, 'INVALID_SIGNATURE');
	assertIgnored(await gitlabToken(gl.src.webhookSecret, gitlabPush('refs/heads/main', sha())), glApp, 'OTHER_BRANCH');
	assertIgnored(await gitlabToken(gl.src.webhookSecret, { ...gitlabPush('refs/tags/v1', sha()), object_kind: 'tag_push' }, { event: 'Tag Push Hook' }), glApp, 'TAG');
	assertIgnored(await gitlabToken(gl.src.webhookSecret, gitlabPush('refs/heads/release', ZERO)), glApp, 'BRANCH_DELETED');
	assertIgnored(await gitlabToken(gl.src.webhookSecret, { object_kind: 'merge_request', project: gitlabPush('x', sha()).project }, { event: 'Merge Request Hook' }), glApp, 'NOT_A_PUSH');
	assert.equal((await deploymentsOf(glApp)).length, 1);
});

test('gitlab_signing_token_form_verifies_and_refuses_a_stale_timestamp', async () => {
	const commit = sha();
	const d = assertDeployed(await gitlabSigned(gl.src.webhookSecret, gitlabPush('refs/heads/release', commit)), glApp, commit);
	assert.equal((await deploymentsOf(glApp)).at(-1).id, d.deploymentId);
	const stale = await gitlabSigned(gl.src.webhookSecret, gitlabPush('refs/heads/release', sha()), { ts: now() - 301 });
	h.assertError(stale, 401, 'INVALID_SIGNATURE');
	assert.match(stale.json().error.message, /300 seconds/);
	assert.equal((await deploymentsOf(glApp)).length, 2);
});

test('bitbucket_push_creates_a_deployment_of_the_branch_change', async () => {
	const commit = sha();
	const delivery = uuid();
	const body = bitbucketPush([{ new: { type: 'tag', name: 'v3', target: { hash: sha() } }, old: null }, bbBranch('main', commit)]);
	assertDeployed(await bitbucket(bb.src.webhookSecret, body, { delivery }), bbApp, commit);
	assertDeployed(await bitbucket(bb.src.webhookSecret, body, { delivery }), bbApp, commit, 200);
	assertIgnored(await bitbucket(bb.src.webhookSecret, bitbucketPush([bbBranch('feature', sha())])), bbApp, 'OTHER_BRANCH');
	assertIgnored(await bitbucket(bb.src.webhookSecret, bitbucketPush([{ new: null, old: { type: 'branch', name: 'main', target: { hash: sha() } } }])), bbApp, 'BRANCH_DELETED');
	assertIgnored(await bitbucket(bb.src.webhookSecret, { repository: bitbucketPush([]).repository }, { event: 'repo:fork' }), bbApp, 'NOT_A_PUSH');
	h.assertError(await bitbucket(gh.src.webhookSecret, body), 401, 'INVALID_SIGNATURE');
	assert.deepEqual((await deploymentsOf(bbApp)).map((x) => [x.trigger, x.ref]), [['GIT_PUSH', commit]]);
});

test('generic_push_deploys_and_an_old_timestamp_is_a_refused_replay', async () => {
	const commit = sha();
	const delivery = uuid();
	const ts = now();
	assertDeployed(await generic(gen.src.webhookSecret, genericPush(commit), { delivery, ts }), genApp, commit);
	// The very same request again (a replay within 300 s): the delivery id answers it.
	assertDeployed(await generic(gen.src.webhookSecret, genericPush(commit), { delivery, ts }), genApp, commit, 200);
	// Captured and replayed later: its timestamp is too old.
	const old = await generic(gen.src.webhookSecret, genericPush(sha()), { ts: now() - 301 });
	h.assertError(old, 401, 'INVALID_SIGNATURE');
	const future = await generic(gen.src.webhookSecret, genericPush(sha()), { ts: now() + 301 });
	h.assertError(future, 401, 'INVALID_SIGNATURE');
	// Without "after": the branch itself, its head at clone time.
	const head = await generic(gen.src.webhookSecret, genericPush(null));
	assertDeployed(head, genApp, 'main');
	assertIgnored(await generic(gen.src.webhookSecret, genericPush(sha(), 'refs/heads/other')), genApp, 'OTHER_BRANCH');
	assertIgnored(await generic(gen.src.webhookSecret, genericPush(ZERO)), genApp, 'BRANCH_DELETED');
	assert.deepEqual((await deploymentsOf(genApp)).map((x) => x.ref), [commit, 'main']);
});

test('generic_payload_is_validated', async () => {
	const bad = await generic(gen.src.webhookSecret, { repository: 'git@git.example.com:tools/worker', ref: 'main', after: 'xyz', extra: 1 });
	const e = h.assertError(bad, 422, 'VALIDATION_FAILED');
	assert.ok(e.fields.extra || e.fields.ref || e.fields.after, bad.text);
	const missing = await generic(gen.src.webhookSecret, { ref: 'refs/heads/main' });
	assert.deepEqual(h.assertError(missing, 422, 'VALIDATION_FAILED').fields, { repository: ['is required'] });
});

// ---- refusals

test('a_wrong_signature_is_401_and_the_same_whether_the_repository_is_known_or_not', async () => {
	const known = await github('not-the-secret', githubPush('refs/heads/main', sha()));
	const unknown = await github('not-the-secret', githubPush('refs/heads/main', sha(), { repo: 'nobody/nothing' }));
	const unknownWithASecret = await github(gh.src.webhookSecret, githubPush('refs/heads/main', sha(), { repo: 'nobody/nothing' }));
	for (const r of [known, unknown, unknownWithASecret]) h.assertError(r, 401, 'INVALID_SIGNATURE');
	const answer = (r) => ({ status: r.status, code: r.json().error.code, message: r.json().error.message, fields: r.json().error.fields });
	assert.deepEqual(answer(unknown), answer(known));
	assert.deepEqual(answer(unknownWithASecret), answer(known));
	// A secret of another provider's source does not open this one.
	h.assertError(await github(gl.src.webhookSecret, githubPush('refs/heads/main', sha())), 401, 'INVALID_SIGNATURE');
	// Unsigned, or signed the wrong way.
	const text = JSON.stringify(githubPush('refs/heads/main', sha()));
	h.assertError(await post('github', text, { 'X-GitHub-Event': 'push', 'X-GitHub-Delivery': uuid() }), 401, 'INVALID_SIGNATURE');
	h.assertError(await post('github', text, { 'X-GitHub-Event': 'push', 'X-GitHub-Delivery': uuid(),
		'X-Hub-Signature': `sha1=${crypto.createHmac('sha1', gh.src.webhookSecret).update(text).digest('hex')}` }), 401, 'INVALID_SIGNATURE');
	h.assertError(await post('github', text, { 'X-GitHub-Event': 'push', 'X-GitHub-Delivery': uuid(),
		'X-Hub-Signature-256': `sha256=${hmacHex(gh.src.webhookSecret, text)}`.slice(0, -1) }), 401, 'INVALID_SIGNATURE');
	h.assertError(await post('github', text, { 'X-GitHub-Event': 'push', 'X-GitHub-Delivery': uuid(),
		'X-Hub-Signature-256': `sha256=${hmacHex('', text)}` }), 401, 'INVALID_SIGNATURE');
	h.assertError(await post('gitlab', text, { 'X-Gitlab-Event': 'Push Hook', 'X-Gitlab-Event-UUID': uuid() }), 401, 'INVALID_SIGNATURE');
	h.assertError(await post('gitlab', text, { 'X-Gitlab-Event': 'Push Hook', 'X-Gitlab-Event-UUID': uuid(), 'X-Gitlab-Token': '' }), 401, 'INVALID_SIGNATURE');
	assert.equal((await deploymentsOf(app)).length, 1, 'nothing deployed by any of these');
});

test('other_branches_tags_deletions_pings_and_other_events_are_ignored', async () => {
	const s = gh.src.webhookSecret;
	assertIgnored(await github(s, githubPush('refs/heads/develop', sha())), app, 'OTHER_BRANCH');
	assertIgnored(await github(s, githubPush('refs/tags/v1.2.3', sha())), app, 'TAG');
	assertIgnored(await github(s, githubPush('refs/heads/main', ZERO, { deleted: true })), app, 'BRANCH_DELETED');
	assertIgnored(await github(s, { zen: 'Design for failure.', hook_id: 7, repository: githubPush('x', sha()).repository }, { event: 'ping' }), app, 'PING');
	assertIgnored(await github(s, { action: 'opened', repository: githubPush('x', sha()).repository }, { event: 'pull_request' }), app, 'NOT_A_PUSH');
	// An ignored delivery sent again: its outcome, 200.
	const delivery = uuid();
	assertIgnored(await github(s, githubPush('refs/heads/develop', sha()), { delivery }), app, 'OTHER_BRANCH');
	const again = await github(s, githubPush('refs/heads/main', sha()), { delivery });
	assert.equal(again.status, 200, again.text);
	assert.equal(again.json().data.ignored, 'OTHER_BRANCH');
	assert.equal(again.json().data.redelivered, true);
	assert.equal((await deploymentsOf(app)).length, 1);
});

test('a_delivery_sent_many_times_at_once_deploys_once', async () => {
	const commit = sha();
	const delivery = uuid();
	const results = await Promise.all(Array.from({ length: 6 }, () => bitbucket(bb.src.webhookSecret, bitbucketPush([bbBranch('main', commit)]), { delivery })));
	const statuses = results.map((r) => r.status).sort();
	assert.deepEqual(statuses, [200, 200, 200, 200, 200, 202], results.map((r) => r.text).join('\n'));
	const ids = new Set(results.map((r) => r.json().data.deploymentId));
	assert.equal(ids.size, 1);
	assert.equal((await deploymentsOf(bbApp)).filter((x) => x.ref === commit).length, 1);
});

test('bad_requests_are_refused_before_any_work', async () => {
	const text = JSON.stringify(githubPush('refs/heads/main', sha()));
	const sig = `sha256=${hmacHex(gh.src.webhookSecret, text)}`;
	h.assertError(await post('gitea', text, { 'X-Hub-Signature-256': sig }), 404, 'NOT_FOUND');
	h.assertError(await post('GitHub', text, { 'X-Hub-Signature-256': sig }), 404, 'NOT_FOUND');
	h.assertError(await post('github', text, { 'X-Hub-Signature-256': sig, 'X-GitHub-Event': 'push' }), 400, 'INVALID_WEBHOOK');
	h.assertError(await post('github', text, { 'X-Hub-Signature-256': sig, 'X-GitHub-Delivery': uuid() }), 400, 'INVALID_WEBHOOK');
	h.assertError(await post('github', text, { 'X-Hub-Signature-256': sig, 'X-GitHub-Event': 'push', 'X-GitHub-Delivery': 'a b' }), 400, 'INVALID_WEBHOOK');
	h.assertError(await post('github', text, { 'X-Hub-Signature-256': sig, 'X-GitHub-Event': 'push', 'X-GitHub-Delivery': uuid(), 'Content-Type': 'application/x-www-form-urlencoded' }), 415, 'UNSUPPORTED_MEDIA_TYPE');
	h.assertError(await post('github', '{"ref":', { 'X-Hub-Signature-256': `sha256=${hmacHex(gh.src.webhookSecret, '{"ref":')}`, 'X-GitHub-Event': 'push', 'X-GitHub-Delivery': uuid() }), 400, 'INVALID_JSON');
	// Over 1 MiB: 413 without reading it.
	const big = await h.raw(srv.port, Buffer.from(`POST /webhooks/github HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${1024 * 1024 + 1}\r\n\r\n`));
	assert.equal(big.responses[0]?.status, 413, big.text.slice(0, 300));
	assert.equal((await deploymentsOf(app)).length, 1);
});

test('a_payload_of_one_mebibyte_is_accepted', async () => {
	const commit = sha();
	const body = githubPush('refs/heads/main', commit);
	const base = JSON.stringify({ ...body, padding: '' }).length;
	body.padding = 'x'.repeat(1024 * 1024 - base);
	assert.equal(JSON.stringify(body).length, 1024 * 1024);
	assertDeployed(await github(gh.src.webhookSecret, body), app, commit);
});

test('secrets_never_reach_the_logs_or_the_answers', async () => {
	notInLogs(srv, SECRETS);
	const dump = await pg.dump(srv.dbName);
	for (const s of SECRETS) assert.ok(!dump.includes(s), 'no secret in the database in the clear');
});

test('the_route_has_its_own_per_address_rate_limit', async () => {
	// A server of its own, so the other tests' requests do not count.
	const s2 = await h.startStewardd({ db: pg, env: { STEWARD_RUNNERS: 'false' } });
	const text = '{}';
	const headers = { 'X-GitHub-Event': 'push', 'X-GitHub-Delivery': uuid(), 'X-Hub-Signature-256': `sha256=${'0'.repeat(64)}` };
	let limited = null;
	let n = 0;
	for (; n < 80 && !limited; n++) {
		const r = await post('github', text, headers, s2.port);
		if (r.status === 429) limited = r;
		else assert.equal(r.status, 401, r.text);
	}
	assert.ok(limited, 'a 429 within 80 requests');
	// A burst of 60, then one a second (a slow machine earns a few more).
	assert.ok(n >= 61 && n <= 75, `the 429 came at request ${n}`);
	h.assertError(limited, 429, 'RATE_LIMITED');
	assert.ok(Number(limited.headers['retry-after']) >= 1, `Retry-After: ${limited.headers['retry-after']}`);
	// Other routes are not limited by it.
	assert.equal((await h.request(s2.port, 'GET', '/health')).status, 200);
	await s2.stop();
});
