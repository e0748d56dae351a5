// Git sources: PUT creates (201, with a deploy key and a webhook secret
// shown once) or replaces (200, key and secret kept); GET shows the
// deploy key's public half and the webhook URL, never the private key or
// the secret; both are sealed at rest; rotations answer the new public key
// or the new secret once; field errors; file:// only outside production;
// 404 across organizations.

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import * as h from './harness.mjs';
const { TS } = h;
import { call, ok } from './identity.mjs';
import { world, productionWorld, unseal, fieldErrors, notInLogs, makeApp } from './app_config.mjs';

const { pg, srv, owner, other, app, otherApp, sql } = await world();
after(h.cleanupAll);

const SECRET = /^[A-Za-z0-9_-]{43}$/;
const src = (a = app) => `/applications/${a.id}/git-source`;
const SECRETS = [];

async function sealedColumns(a = app) {
	const row = (await sql(`SELECT deploy_private_key_sealed || ' ' || webhook_secret_sealed FROM git_sources WHERE application_id = '${a.id}'`)).trim();
	const [key, secret] = row.split(' ');
	return { key: unseal(key, `deploy-key:${a.id}`), secret: unseal(secret, `webhook-secret:${a.id}`), sealedKey: key, sealedSecret: secret };
}

// The public half ssh-keygen derives from a private key file (with the
// key's comment).
function publicOf(privateKey) {
	const dir = h.makeTempDir('sw-key-');
	const file = path.join(dir, 'id');
	fs.writeFileSync(file, privateKey, { mode: 0o600 });
	return execFileSync('ssh-keygen', ['-y', '-f', file], { encoding: 'utf8' }).trim();
}

let created;

test('put_creates_with_a_deploy_key_and_the_webhook_secret_once', async () => {
	const res = await call(srv, 'PUT', src(), owner, { body: { repositoryUrl: 'git@github.com:acme/shop.git' } });
	assert.equal(res.status, 201, res.text);
	created = res.json().data;
	assert.equal(created.applicationId, app.id);
	assert.equal(created.repositoryUrl, 'git@github.com:acme/shop.git');
	assert.equal(created.branch, 'main', 'the default branch');
	assert.equal(created.provider, 'GITHUB', 'read from the host');
	assert.match(created.deployKey.publicKey, /^ssh-ed25519 [A-Za-z0-9+/]+=* \S+$/);
	assert.match(created.deployKey.fingerprint, /^SHA256:[A-Za-z0-9+/]{43}$/);
	assert.match(created.deployKey.createdAt, TS);
	assert.equal(created.webhookUrl, `${srv.url}/webhooks/github`);
	assert.match(created.webhookSecret, SECRET);
	assert.equal(created.hasWebhookSecret, true);
	SECRETS.push(created.webhookSecret);
	assert.ok(!res.text.includes('PRIVATE KEY'));
	// ssh-keygen agrees on the fingerprint.
	const dir = h.makeTempDir('sw-pub-');
	fs.writeFileSync(path.join(dir, 'k.pub'), created.deployKey.publicKey + '\n');
	const fp = execFileSync('ssh-keygen', ['-l', '-E', 'sha256', '-f', path.join(dir, 'k.pub')], { encoding: 'utf8' });
	assert.ok(fp.includes(created.deployKey.fingerprint), fp);
});

test('private_key_and_secret_are_sealed_at_rest', async () => {
	const s = await sealedColumns();
	assert.match(s.key, /^-----BEGIN OPENSSH PRIVATE KEY-----\n/);
	SECRETS.push(s.key.split('\n')[1]);
	assert.equal(publicOf(s.key), created.deployKey.publicKey, 'the private half is the public half\'s');
	assert.equal(s.secret, created.webhookSecret);
	assert.ok(!s.sealedKey.includes('OPENSSH') && !s.sealedSecret.includes(created.webhookSecret));
	assert.throws(() => unseal(s.sealedKey, `deploy-key:${otherApp.id}`), 'bound to its application');
	const dump = await pg.dump(srv.dbName);
	assert.ok(!dump.includes(created.webhookSecret) && !dump.includes('PRIVATE KEY'), 'nowhere in the database');
});

test('get_shows_the_public_half_and_never_a_secret', async () => {
	const res = await call(srv, 'GET', src(), owner);
	assert.equal(res.status, 200);
	const g = res.json().data;
	assert.deepEqual(Object.keys(g).sort(), ['applicationId', 'branch', 'createdAt', 'credentialId', 'deployKey', 'hasWebhookSecret',
		'id', 'provider', 'repositoryUrl', 'sshHostKey', 'sshHostKeyPinnedAt', 'updatedAt', 'webhookSecretCreatedAt', 'webhookUrl']);
	assert.equal(g.credentialId, null);
	assert.equal(g.sshHostKey, null, 'nothing pinned before a fetch');
	assert.deepEqual(g.deployKey, created.deployKey);
	for (const s of SECRETS) assert.ok(!res.text.includes(s));
	assert.ok(!res.text.includes('PRIVATE'));
});

test('replacing_put_keeps_key_and_secret_and_answers_200_without_it', async () => {
	const res = await call(srv, 'PUT', src(), owner, { body: { repositoryUrl: 'https://git.example.org/acme/shop.git', branch: 'release/v2' } });
	assert.equal(res.status, 200, res.text);
	const r = res.json().data;
	assert.equal(r.webhookSecret, undefined);
	for (const s of SECRETS) assert.ok(!res.text.includes(s));
	assert.equal(r.repositoryUrl, 'https://git.example.org/acme/shop.git');
	assert.equal(r.branch, 'release/v2');
	assert.equal(r.provider, 'GENERIC');
	assert.equal(r.webhookUrl, `${srv.url}/webhooks/generic`);
	assert.deepEqual(r.deployKey, created.deployKey, 'the same key');
	assert.equal(r.id, created.id);
	assert.equal((await sealedColumns()).secret, created.webhookSecret, 'the same secret');
	// Absent members of a PUT take their defaults again.
	const again = await ok(call(srv, 'PUT', src(), owner, { body: { repositoryUrl: 'https://gitlab.com/acme/shop.git' } }));
	assert.equal(again.branch, 'main');
	assert.equal(again.provider, 'GITLAB');
	const bb = await ok(call(srv, 'PUT', src(), owner, { body: { repositoryUrl: 'ssh://git@bitbucket.org/acme/shop.git', provider: 'GENERIC' } }));
	assert.equal(bb.provider, 'GENERIC', 'a given provider wins');
});

test('patch_changes_only_the_members_given', async () => {
	const p = await ok(call(srv, 'PATCH', src(), owner, { body: { branch: 'develop' } }));
	assert.equal(p.branch, 'develop');
	assert.equal(p.repositoryUrl, 'ssh://git@bitbucket.org/acme/shop.git');
	const q = await ok(call(srv, 'PATCH', src(), owner, { body: { provider: 'BITBUCKET', repositoryUrl: 'git@bitbucket.org:acme/shop2.git' } }));
	assert.equal(q.provider, 'BITBUCKET');
	assert.equal(q.branch, 'develop');
	assert.equal(q.webhookUrl, `${srv.url}/webhooks/bitbucket`);
	assert.equal((await ok(call(srv, 'PATCH', src(), owner, { body: {} }))).branch, 'develop', 'an empty PATCH changes nothing');
});

test('validation_failures', async () => {
	const put = (body) => call(srv, 'PUT', src(), owner, { body });
	fieldErrors(await put({}), { repositoryUrl: /required/ });
	fieldErrors(await put({ repositoryUrl: 7 }), { repositoryUrl: /string/ });
	for (const bad of ['http://github.com/acme/shop.git', 'https://user:pw@github.com/acme/shop.git', 'https://github.com/acme/shop.git?x=1',
		'ftp://example.com/x.git', 'github.com/acme/shop', 'https://github.com/../etc', '-oProxyCommand=x@host:repo', ''])
		fieldErrors(await put({ repositoryUrl: bad }), { repositoryUrl: null });
	for (const bad of ['a..b', '-x', 'x.lock', 'HEAD', 'a b', '', 'x/', '@{x}', 'x'.repeat(201)])
		fieldErrors(await put({ repositoryUrl: 'https://github.com/a/b.git', branch: bad }), { branch: null });
	fieldErrors(await put({ repositoryUrl: 'https://github.com/a/b.git', provider: 'SVN' }), { provider: /GITHUB, GITLAB, BITBUCKET or GENERIC/ });
	fieldErrors(await put({ repositoryUrl: 'https://github.com/a/b.git', deployKey: 'x' }), { deployKey: /not a known field/ });
	fieldErrors(await call(srv, 'PATCH', src(), owner, { body: { branch: null } }), { branch: /null/ });
	fieldErrors(await call(srv, 'PATCH', src(), owner, { body: { repositoryUrl: 'http://x.example/y' } }), { repositoryUrl: null });
	fieldErrors(await call(srv, 'PATCH', src(), owner, { body: { webhookSecret: 'mine' } }), { webhookSecret: /not a known field/ });
	// Outside production a local repository is allowed.
	const local = await ok(call(srv, 'PUT', src(), owner, { body: { repositoryUrl: 'file:///srv/git/shop.git' } }));
	assert.equal(local.provider, 'GENERIC');
});

test('rotating_the_deploy_key_answers_the_new_public_half', async () => {
	const before = await ok(call(srv, 'GET', src(), owner));
	const oldPrivate = (await sealedColumns()).key;
	const res = await call(srv, 'POST', `${src()}/deploy-key`, owner);
	assert.equal(res.status, 200, res.text);
	const k = res.json().data;
	assert.deepEqual(Object.keys(k).sort(), ['createdAt', 'fingerprint', 'publicKey']);
	assert.notEqual(k.publicKey, before.deployKey.publicKey);
	assert.notEqual(k.fingerprint, before.deployKey.fingerprint);
	assert.ok(!res.text.includes('PRIVATE'));
	const after1 = await ok(call(srv, 'GET', src(), owner));
	assert.deepEqual(after1.deployKey, k);
	const newPrivate = (await sealedColumns()).key;
	assert.notEqual(newPrivate, oldPrivate, 'the old private key is gone');
	assert.equal(publicOf(newPrivate), k.publicKey);
	SECRETS.push(newPrivate.split('\n')[1]);
	assert.equal((await sealedColumns()).secret, created.webhookSecret, 'the secret stays');
});

test('rotating_the_webhook_secret_answers_it_once', async () => {
	const res = await call(srv, 'POST', `${src()}/webhook-secret`, owner);
	assert.equal(res.status, 200, res.text);
	const s = res.json().data;
	assert.match(s.webhookSecret, SECRET);
	assert.notEqual(s.webhookSecret, created.webhookSecret);
	assert.match(s.createdAt, TS);
	SECRETS.push(s.webhookSecret);
	assert.equal((await sealedColumns()).secret, s.webhookSecret);
	const g = await call(srv, 'GET', src(), owner);
	assert.ok(!g.text.includes(s.webhookSecret));
	assert.equal(g.json().data.webhookSecretCreatedAt, s.createdAt);
});

test('delete_is_204_and_then_everything_is_404', async () => {
	const a2 = await makeApp(srv, owner, 'short-lived');
	await ok(call(srv, 'PUT', src(a2), owner, { body: { repositoryUrl: 'https://github.com/a/b.git' } }), 201);
	await ok(call(srv, 'DELETE', src(a2), owner), 204);
	for (const [method, path, body] of [['GET', src(a2)], ['DELETE', src(a2)], ['PATCH', src(a2), { branch: 'x' }],
		['POST', `${src(a2)}/deploy-key`], ['POST', `${src(a2)}/webhook-secret`]])
		h.assertError(await call(srv, method, path, owner, { body }), 404, 'NOT_FOUND');
	assert.equal((await sql(`SELECT count(*) FROM git_sources WHERE application_id = '${a2.id}'`)).trim(), '0');
	// A new PUT creates again, with a new secret.
	const again = await ok(call(srv, 'PUT', src(a2), owner, { body: { repositoryUrl: 'https://github.com/a/b.git' } }), 201);
	assert.match(again.webhookSecret, SECRET);
	SECRETS.push(again.webhookSecret);
});

test('deleting_the_application_removes_its_configuration', async () => {
	const a3 = await makeApp(srv, owner, 'doomed');
	await ok(call(srv, 'PUT', src(a3), owner, { body: { repositoryUrl: 'https://github.com/a/doomed.git' } }), 201).then((g) => SECRETS.push(g.webhookSecret));
	await ok(call(srv, 'PUT', `/applications/${a3.id}/variables/DOOMED`, owner, { body: { value: 'x' } }), 201);
	await ok(call(srv, 'POST', `/applications/${a3.id}/domains`, owner, { body: { hostname: 'doomed.example.com' } }), 201);
	await ok(call(srv, 'DELETE', `/applications/${a3.id}`, owner), 204);
	const counts = await sql(`SELECT (SELECT count(*) FROM git_sources WHERE application_id = '${a3.id}') || ' ' ||
		(SELECT count(*) FROM variables WHERE application_id = '${a3.id}') || ' ' ||
		(SELECT count(*) FROM domains WHERE application_id = '${a3.id}')`);
	assert.equal(counts.trim(), '0 0 0');
	h.assertError(await call(srv, 'GET', src(a3), owner), 404, 'NOT_FOUND');
});

test('another_organizations_application_is_404', async () => {
	const theirs = await ok(call(srv, 'PUT', src(otherApp), other, { body: { repositoryUrl: 'https://github.com/b/b.git' } }), 201);
	SECRETS.push(theirs.webhookSecret);
	for (const [method, path, body] of [['GET', src(otherApp)], ['PUT', src(otherApp), { repositoryUrl: 'https://github.com/a/a.git' }],
		['PATCH', src(otherApp), { branch: 'x' }], ['DELETE', src(otherApp)], ['POST', `${src(otherApp)}/deploy-key`],
		['POST', `${src(otherApp)}/webhook-secret`], ['GET', `/applications/${randomUUID()}/git-source`],
		['PUT', `/applications/${randomUUID()}/git-source`, { repositoryUrl: 'https://github.com/a/a.git' }],
		['GET', '/applications/nope/git-source']])
		h.assertError(await call(srv, method, path, owner, { body }), 404, 'NOT_FOUND');
	assert.deepEqual((await ok(call(srv, 'GET', src(otherApp), other))).deployKey, theirs.deployKey, 'untouched');
});

test('audit_records_carry_no_secret', async () => {
	let rows = '';
	for (let i = 0; i < 50 && !/webhook_secret_rotated/.test(rows); i++) {
		rows = await sql(`SELECT string_agg(action || ' ' || coalesce(metadata::text, ''), E'\\n') FROM audit_logs WHERE action LIKE 'git_source.%'`);
		await h.sleep(20);
	}
	for (const a of ['created', 'updated', 'deleted', 'deploy_key_rotated', 'webhook_secret_rotated']) assert.match(rows, new RegExp(`git_source\\.${a}`));
	for (const s of SECRETS) assert.ok(!rows.includes(s));
});

test('secrets_never_reach_the_logs', () => {
	notInLogs(srv, SECRETS);
});

test('in_production_file_urls_are_refused_and_the_webhook_url_is_public', async () => {
	const prod = await productionWorld(pg);
	const p = (body) => call(prod.srv, 'PUT', `/applications/${prod.app.id}/git-source`, prod.owner, { body, ...prod.origin });
	fieldErrors(await p({ repositoryUrl: 'file:///srv/git/shop.git' }), { repositoryUrl: null });
	const res = await p({ repositoryUrl: 'https://gitlab.com/acme/shop.git' });
	assert.equal(res.status, 201, res.text);
	assert.equal(res.json().data.webhookUrl, 'https://steward.example.com/webhooks/gitlab');
	await prod.srv.stop();
});
