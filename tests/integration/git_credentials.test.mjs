// Git credentials and the repository picker: tokens sealed at rest and
// never returned (a hint of the last four characters instead), default
// API base URLs per provider, field errors, 404 across organizations; and
// GET /git-credentials/:id/repositories against a git host's API.
//
// The git host here is a local HTTP server on 127.0.0.1 standing in for
// the remote APIs (tests cannot reach the internet): it speaks the
// documented shapes of GitHub's GET /user/repos, GitLab's GET /projects
// and Bitbucket's GET /repositories, and checks the credential header each
// documents, answering 401 to any other token.

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import * as h from './harness.mjs';
const { TS } = h;
import { call, ok, signup } from './identity.mjs';
import { world, productionWorld, unseal, fieldErrors, notInLogs } from './app_config.mjs';

const GITHUB_TOKEN = `ghp_${randomUUID().replace(/-/g, '')}`;
const GITLAB_TOKEN = `glpat-${randomUUID().replace(/-/g, '')}`;
const BITBUCKET_PASSWORD = `ATBB${randomUUID().replace(/-/g, '')}`;
const TOKENS = [GITHUB_TOKEN, GITLAB_TOKEN, BITBUCKET_PASSWORD];

// ---- the stand-in git host

const seen = []; // {url, headers} of every request
const github = [
	{ id: 1, full_name: 'acme/shop', private: true, clone_url: 'https://github.com/acme/shop.git', ssh_url: 'git@github.com:acme/shop.git', default_branch: 'main', owner: { login: 'acme' } },
	{ id: 2, full_name: 'acme/docs', private: false, clone_url: 'https://github.com/acme/docs.git', ssh_url: 'git@github.com:acme/docs.git', default_branch: 'gh-pages' },
];
const gitlab = [
	{ id: 7, path_with_namespace: 'team/api', http_url_to_repo: 'https://gitlab.com/team/api.git', ssh_url_to_repo: 'git@gitlab.com:team/api.git', default_branch: 'master', visibility: 'internal' },
	{ id: 8, path_with_namespace: 'team/empty', http_url_to_repo: 'https://gitlab.com/team/empty.git', ssh_url_to_repo: 'git@gitlab.com:team/empty.git', default_branch: null, visibility: 'public' },
];
const bitbucket = {
	pagelen: 100, page: 1, size: 1,
	values: [{
		full_name: 'crew/site', is_private: true, mainbranch: { name: 'trunk', type: 'branch' },
		links: { clone: [{ name: 'https', href: 'https://crewmate@bitbucket.org/crew/site.git' }, { name: 'ssh', href: 'git@bitbucket.org:crew/site.git' }] },
	}],
};
// Behaviour of the /broken/ prefix: what the next request gets.
let broken = 'status500';

const host = http.createServer((req, res) => {
	seen.push({ url: req.url, headers: req.headers });
	const json = (status, body) => {
		const text = JSON.stringify(body);
		res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) }).end(text);
	};
	const u = new URL(req.url, 'http://x');
	if (u.pathname === '/gh/user/repos') {
		if (req.headers.authorization !== `Bearer ${GITHUB_TOKEN}`) return json(401, { message: 'Bad credentials' });
		assert.equal(req.headers.accept, 'application/vnd.github+json');
		assert.equal(u.searchParams.get('per_page'), '100');
		return json(200, github);
	}
	if (u.pathname === '/gl/api/v4/projects') {
		if (req.headers['private-token'] !== GITLAB_TOKEN) return json(401, { message: '401 Unauthorized' });
		assert.equal(u.searchParams.get('membership'), 'true');
		return json(200, gitlab);
	}
	if (u.pathname === '/bb/2.0/repositories') {
		if (req.headers.authorization !== `Basic ${Buffer.from(`crewmate:${BITBUCKET_PASSWORD}`).toString('base64')}`) return json(401, { type: 'error' });
		assert.equal(u.searchParams.get('role'), 'member');
		return json(200, bitbucket);
	}
	if (u.pathname === '/forbidden/user/repos') return json(403, { message: 'Resource not accessible by personal access token' });
	if (u.pathname === '/broken/user/repos') {
		if (broken === 'status500') return json(500, { message: 'oops' });
		if (broken === 'html') {
			res.writeHead(200, { 'Content-Type': 'text/html' }).end('<html>maintenance</html>');
			return;
		}
		if (broken === 'object') return json(200, { repositories: [] });
		if (broken === 'huge') {
			res.writeHead(200, { 'Content-Type': 'application/json' });
			const chunk = Buffer.alloc(1024 * 1024, 0x20);
			for (let i = 0; i < 5; i++) res.write(chunk);
			res.end('[]');
			return;
		}
	}
	json(404, { message: 'Not Found' });
});
await new Promise((resolve) => host.listen(0, '127.0.0.1', resolve));
const HOST = `http://127.0.0.1:${host.address().port}`;

const { pg, srv, owner, other, sql } = await world();
after(async () => {
	host.close();
	await h.cleanupAll();
});

const create = (body, who = owner) => call(srv, 'POST', '/git-credentials', who, { body });
const repos = (c, who = owner) => call(srv, 'GET', `/git-credentials/${c.id}/repositories`, who);

let gh;

test('create_seals_the_token_and_answers_only_its_hint', async () => {
	const res = await create({ name: 'github-main', provider: 'GITHUB', token: GITHUB_TOKEN, apiBaseUrl: `${HOST}/gh/` });
	assert.equal(res.status, 201, res.text);
	assert.ok(!res.text.includes(GITHUB_TOKEN));
	gh = res.json().data;
	assert.deepEqual(Object.keys(gh).sort(), ['apiBaseUrl', 'createdAt', 'id', 'lastUsedAt', 'name', 'provider', 'tokenHint', 'updatedAt', 'username']);
	assert.equal(gh.tokenHint, GITHUB_TOKEN.slice(-4));
	assert.equal(gh.apiBaseUrl, `${HOST}/gh`, 'trailing slashes removed');
	assert.equal(gh.username, null);
	assert.equal(gh.lastUsedAt, null);
	assert.match(gh.createdAt, TS);
	const sealed = (await sql(`SELECT token_sealed FROM git_credentials WHERE id = '${gh.id}'`)).trim();
	assert.equal(unseal(sealed, `git-credential:${gh.id}`), GITHUB_TOKEN);
	assert.throws(() => unseal(sealed, `git-credential:${randomUUID()}`));
	const dump = await pg.dump(srv.dbName);
	for (const t of TOKENS) assert.ok(!dump.includes(t), 'no token in the database');
	assert.deepEqual(await ok(call(srv, 'GET', `/git-credentials/${gh.id}`, owner)), gh);
});

test('api_base_url_defaults_to_the_providers_public_api', async () => {
	const a = await ok(create({ name: 'gh-public', provider: 'GITHUB', token: 'ghp_0123456789' }), 201);
	assert.equal(a.apiBaseUrl, 'https://api.github.com');
	const b = await ok(create({ name: 'gl-public', provider: 'GITLAB', token: 'glpat-0123456789', apiBaseUrl: null }), 201);
	assert.equal(b.apiBaseUrl, 'https://gitlab.com/api/v4');
	const c = await ok(create({ name: 'bb-public', provider: 'BITBUCKET', token: 'ATBB0123456789', username: 'someone' }), 201);
	assert.equal(c.apiBaseUrl, 'https://api.bitbucket.org/2.0');
	assert.equal(c.username, 'someone');
	const d = await ok(create({ name: 'plain-git', provider: 'GENERIC', token: 'generic-token-1', username: 'deploy' }), 201);
	assert.equal(d.apiBaseUrl, null);
	// PATCH apiBaseUrl null restores the default.
	await ok(call(srv, 'PATCH', `/git-credentials/${a.id}`, owner, { body: { apiBaseUrl: 'https://ghe.example.com/api/v3' } }));
	assert.equal((await ok(call(srv, 'PATCH', `/git-credentials/${a.id}`, owner, { body: { apiBaseUrl: null } }))).apiBaseUrl, 'https://api.github.com');
});

test('create_validation_failures', async () => {
	fieldErrors(await create({}), { name: /required/, provider: /required/, token: /required/ });
	const good = { name: 'valid-name', provider: 'GITHUB', token: 'ghp_0123456789' };
	fieldErrors(await create({ ...good, name: 'Not A Name' }), { name: null });
	fieldErrors(await create({ ...good, provider: 'SOURCEFORGE' }), { provider: /GITHUB, GITLAB, BITBUCKET or GENERIC/ });
	fieldErrors(await create({ ...good, token: 'short' }), { token: /8 to 1024/ });
	fieldErrors(await create({ ...good, token: 'has a space in it' }), { token: /printable ASCII/ });
	fieldErrors(await create({ ...good, token: 'x'.repeat(1025) }), { token: /8 to 1024/ });
	fieldErrors(await create({ ...good, token: 12345678 }), { token: /string/ });
	fieldErrors(await create({ ...good, apiBaseUrl: 'ftp://example.com' }), { apiBaseUrl: null });
	fieldErrors(await create({ ...good, apiBaseUrl: 'not a url' }), { apiBaseUrl: null });
	fieldErrors(await create({ ...good, apiBaseUrl: 'https://user:pw@example.com/api' }), { apiBaseUrl: null });
	fieldErrors(await create({ ...good, apiBaseUrl: 'https://example.com/api?x=1' }), { apiBaseUrl: /query/ });
	fieldErrors(await create({ ...good, username: 'bad user' }), { username: null });
	fieldErrors(await create({ ...good, scopes: ['repo'] }), { scopes: /not a known field/ });
	fieldErrors(await create({ name: 'bb', provider: 'BITBUCKET', token: 'ATBB0123456789' }), { username: /required for a BITBUCKET/ });
	fieldErrors(await create({ name: 'gen', provider: 'GENERIC', token: 'generic-0123', apiBaseUrl: 'https://example.com' }), { apiBaseUrl: /GENERIC/ });
	h.assertError(await create({ ...good, name: 'github-main' }), 409, 'GIT_CREDENTIAL_EXISTS');
	const list = await ok(call(srv, 'GET', '/git-credentials?limit=200', owner));
	assert.ok(!list.some((c) => ['valid-name', 'bb', 'gen'].includes(c.name)), 'nothing stored');
});

test('list_filters_and_never_tokens', async () => {
	const res = await call(srv, 'GET', '/git-credentials?limit=200', owner);
	assert.equal(res.status, 200);
	for (const t of TOKENS) assert.ok(!res.text.includes(t));
	const body = res.json();
	assert.ok(body.data.length >= 5);
	assert.ok('pagination' in body);
	const gls = await ok(call(srv, 'GET', '/git-credentials?provider=GITLAB', owner));
	assert.ok(gls.length >= 1 && gls.every((c) => c.provider === 'GITLAB'));
	const named = await ok(call(srv, 'GET', '/git-credentials?name=github-main', owner));
	assert.deepEqual(named.map((c) => c.id), [gh.id]);
	fieldErrors(await call(srv, 'GET', '/git-credentials?provider=CVS', owner), { provider: null });
	assert.deepEqual(await ok(call(srv, 'GET', '/git-credentials', other)), [], 'another organization sees none');
});

test('the_repository_picker_speaks_githubs_api', async () => {
	const before = seen.length;
	const res = await repos(gh);
	assert.equal(res.status, 200, res.text);
	assert.deepEqual(res.json().data, [
		{ fullName: 'acme/shop', cloneUrlHttps: 'https://github.com/acme/shop.git', cloneUrlSsh: 'git@github.com:acme/shop.git', defaultBranch: 'main', private: true },
		{ fullName: 'acme/docs', cloneUrlHttps: 'https://github.com/acme/docs.git', cloneUrlSsh: 'git@github.com:acme/docs.git', defaultBranch: 'gh-pages', private: false },
	]);
	const req = seen[before];
	assert.equal(seen.length, before + 1);
	assert.ok(!req.url.includes(GITHUB_TOKEN), 'the token only in a header');
	assert.equal(req.headers.authorization, `Bearer ${GITHUB_TOKEN}`);
	assert.ok(!res.text.includes(GITHUB_TOKEN));
	assert.match((await ok(call(srv, 'GET', `/git-credentials/${gh.id}`, owner))).lastUsedAt, TS);
});

test('the_repository_picker_speaks_gitlabs_and_bitbuckets_apis', async () => {
	const gl = await ok(create({ name: 'gitlab-self', provider: 'GITLAB', token: GITLAB_TOKEN, apiBaseUrl: `${HOST}/gl/api/v4` }), 201);
	assert.deepEqual(await ok(repos(gl)), [
		{ fullName: 'team/api', cloneUrlHttps: 'https://gitlab.com/team/api.git', cloneUrlSsh: 'git@gitlab.com:team/api.git', defaultBranch: 'master', private: true },
		{ fullName: 'team/empty', cloneUrlHttps: 'https://gitlab.com/team/empty.git', cloneUrlSsh: 'git@gitlab.com:team/empty.git', defaultBranch: null, private: false },
	]);
	assert.equal(seen.at(-1).headers['private-token'], GITLAB_TOKEN);
	const bb = await ok(create({ name: 'bitbucket-crew', provider: 'BITBUCKET', username: 'crewmate', token: BITBUCKET_PASSWORD, apiBaseUrl: `${HOST}/bb/2.0` }), 201);
	assert.deepEqual(await ok(repos(bb)), [
		{ fullName: 'crew/site', cloneUrlHttps: 'https://bitbucket.org/crew/site.git', cloneUrlSsh: 'git@bitbucket.org:crew/site.git', defaultBranch: 'trunk', private: true },
	]);
});

test('a_refused_token_is_422_git_credential_rejected', async () => {
	const bad = await ok(create({ name: 'github-revoked', provider: 'GITHUB', token: 'ghp_revoked_long_ago', apiBaseUrl: `${HOST}/gh` }), 201);
	const e = h.assertError(await repos(bad), 422, 'GIT_CREDENTIAL_REJECTED');
	assert.match(e.message, /HTTP 401/);
	const forbidden = await ok(create({ name: 'github-forbidden', provider: 'GITHUB', token: GITHUB_TOKEN, apiBaseUrl: `${HOST}/forbidden` }), 201);
	assert.match(h.assertError(await repos(forbidden), 422, 'GIT_CREDENTIAL_REJECTED').message, /HTTP 403/);
	// A new token (PATCH) fixes it, and the hint follows.
	const fixed = await ok(call(srv, 'PATCH', `/git-credentials/${bad.id}`, owner, { body: { token: GITHUB_TOKEN } }));
	assert.equal(fixed.tokenHint, GITHUB_TOKEN.slice(-4));
	assert.equal((await ok(repos(bad))).length, 2);
});

test('a_host_that_fails_is_502_git_host_unavailable', async () => {
	const broke = await ok(create({ name: 'github-broken', provider: 'GITHUB', token: GITHUB_TOKEN, apiBaseUrl: `${HOST}/broken` }), 201);
	for (const [mode, re] of [['status500', /HTTP 500/], ['html', /not the list/], ['object', /not the list/], ['huge', /more than 4 MiB/]]) {
		broken = mode;
		assert.match(h.assertError(await repos(broke), 502, 'GIT_HOST_UNAVAILABLE').message, re, mode);
	}
	const closed = await h.freePort();
	const gone = await ok(create({ name: 'github-gone', provider: 'GITHUB', token: GITHUB_TOKEN, apiBaseUrl: `http://127.0.0.1:${closed}` }), 201);
	assert.match(h.assertError(await repos(gone), 502, 'GIT_HOST_UNAVAILABLE').message, /could not be reached/);
});

test('generic_credentials_have_no_repository_list', async () => {
	const g = await ok(create({ name: 'generic-only', provider: 'GENERIC', token: 'generic-token-2' }), 201);
	h.assertError(await repos(g), 409, 'GIT_PROVIDER_UNSUPPORTED');
});

test('patch_changes_members_given_and_refuses_provider', async () => {
	const c = await ok(create({ name: 'to-patch', provider: 'GITHUB', token: 'ghp_patch_me_1' }), 201);
	const p = await ok(call(srv, 'PATCH', `/git-credentials/${c.id}`, owner, { body: { name: 'patched' } }));
	assert.equal(p.name, 'patched');
	assert.equal(p.tokenHint, c.tokenHint);
	fieldErrors(await call(srv, 'PATCH', `/git-credentials/${c.id}`, owner, { body: { provider: 'GITLAB' } }), { provider: /cannot be changed/ });
	fieldErrors(await call(srv, 'PATCH', `/git-credentials/${c.id}`, owner, { body: { token: null } }), { token: /null/ });
	fieldErrors(await call(srv, 'PATCH', `/git-credentials/${c.id}`, owner, { body: { token: 'tiny' } }), { token: null });
	h.assertError(await call(srv, 'PATCH', `/git-credentials/${c.id}`, owner, { body: { name: 'github-main' } }), 409, 'GIT_CREDENTIAL_EXISTS');
	const t = await ok(call(srv, 'PATCH', `/git-credentials/${c.id}`, owner, { body: { token: 'ghp_replaced_9876' } }));
	assert.equal(t.tokenHint, '9876');
	const sealed = (await sql(`SELECT token_sealed FROM git_credentials WHERE id = '${c.id}'`)).trim();
	assert.equal(unseal(sealed, `git-credential:${c.id}`), 'ghp_replaced_9876');
	const bb = await ok(create({ name: 'bb-patch', provider: 'BITBUCKET', token: 'ATBB0123456789', username: 'u' }), 201);
	fieldErrors(await call(srv, 'PATCH', `/git-credentials/${bb.id}`, owner, { body: { username: null } }), { username: /BITBUCKET/ });
});

test('delete_is_204_and_a_repeat_404', async () => {
	const c = await ok(create({ name: 'to-delete', provider: 'GITHUB', token: 'ghp_delete_me_1' }), 201);
	await ok(call(srv, 'DELETE', `/git-credentials/${c.id}`, owner), 204);
	h.assertError(await call(srv, 'DELETE', `/git-credentials/${c.id}`, owner), 404, 'NOT_FOUND');
	h.assertError(await call(srv, 'GET', `/git-credentials/${c.id}`, owner), 404, 'NOT_FOUND');
	h.assertError(await repos(c), 404, 'NOT_FOUND');
});

test('another_organizations_credentials_are_404', async () => {
	for (const [method, path, body] of [['GET', `/git-credentials/${gh.id}`], ['PATCH', `/git-credentials/${gh.id}`, { name: 'stolen' }],
		['DELETE', `/git-credentials/${gh.id}`], ['GET', `/git-credentials/${gh.id}/repositories`],
		['GET', `/git-credentials/${randomUUID()}`], ['GET', '/git-credentials/not-a-uuid/repositories']])
		h.assertError(await call(srv, method, path, other, { body }), 404, 'NOT_FOUND');
	assert.equal((await ok(call(srv, 'GET', `/git-credentials/${gh.id}`, owner))).name, 'github-main', 'untouched');
});

test('outbound_calls_are_limited_per_organization', async () => {
	const third = await signup(srv, 'third@c.example', 'Org C');
	const c = await ok(create({ name: 'limited', provider: 'GITHUB', token: GITHUB_TOKEN, apiBaseUrl: `${HOST}/gh` }, third), 201);
	let limited = null;
	for (let i = 0; i < 40 && !limited; i++) {
		const res = await repos(c, third);
		if (res.status === 429) limited = res;
		else assert.equal(res.status, 200, res.text);
	}
	assert.ok(limited, 'refused within 40 calls');
	h.assertError(limited, 429, 'RATE_LIMITED');
	assert.match(String(limited.headers['retry-after']), /^\d+$/);
	assert.equal((await repos(gh)).status, 200, 'another organization is not limited by it');
});

test('tokens_never_reach_the_logs_or_the_audit_log', async () => {
	notInLogs(srv, TOKENS);
	const audit = await sql('SELECT string_agg(action || coalesce(metadata::text, \'\'), \' \') FROM audit_logs');
	for (const t of TOKENS) assert.ok(!audit.includes(t));
	assert.match(audit, /git_credential\.created/);
});

test('in_production_the_api_base_url_must_be_https', async () => {
	const prod = await productionWorld(pg);
	const p = (body) => call(prod.srv, 'POST', '/git-credentials', prod.owner, { body, ...prod.origin });
	fieldErrors(await p({ name: 'plain', provider: 'GITLAB', token: 'glpat-0123456789', apiBaseUrl: 'http://gitlab.internal/api/v4' }), { apiBaseUrl: null });
	await ok(p({ name: 'tls', provider: 'GITLAB', token: 'glpat-0123456789', apiBaseUrl: 'https://gitlab.internal/api/v4' }), 201);
	await prod.srv.stop();
});
