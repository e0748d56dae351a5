// How a git source is reached, end to end with real parts: a private
// repository over https (a real TLS server running git's own smart-HTTP
// program, asking for HTTP Basic credentials) fetched with the git source's
// git credential, and the ssh host key pinned on first use against a real
// OpenSSH server. stewardd trusts the https host's certificate through
// GIT_CA_FILE. Missing docker, caddy, git, sshd or openssl: exit 77 with why.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import path from 'node:path';
import * as h from './harness.mjs';
import * as W from './deploy_world.mjs';
import { startGitHttps } from './git_https.mjs';
import { call, signup } from './identity.mjs';
import { startSshd } from './sshd.mjs';

let w, repo, host, rel;
const TOKEN = `glpat-${crypto.randomBytes(12).toString('hex')}`;
const USER = 'deploy-bot';

before(async () => {
	repo = await W.createRepo({ files: W.webFiles('private over https\n') });
	const root = path.dirname(path.dirname(repo.path));
	rel = path.relative(root, repo.path);
	host = await startGitHttps({ root, username: USER, token: TOKEN });
	w = await W.world({ GIT_CA_FILE: host.caFile, SIGNUP_ENABLED: 'true' });
});

after(async () => {
	if (w) await w.cleanup();
	await host?.stop();
	await h.cleanupAll();
});

async function credential(name, token, username = USER) {
	return W.ok(w.call('POST', '/git-credentials', { body: { name, provider: 'GENERIC', username, token } }), 201);
}

function failed(d, pattern) {
	assert.equal(d.status, 'FAILED', `expected FAILED, got ${d.status}`);
	assert.match(d.errorMessage, pattern);
}

test('a private https repository is fetched with the git source\'s credential, sent only when asked', async () => {
	const cred = await credential('private-host', TOKEN);
	assert.equal(cred.lastUsedAt, null);
	const app = await W.makeApp(w, 'httpsprivate');
	const src = await W.ok(w.call('PUT', `/applications/${app.id}/git-source`, {
		body: { repositoryUrl: host.url(rel), credentialId: cred.id },
	}), 201);
	assert.equal(src.credentialId, cred.id);
	assert.equal(src.provider, 'GENERIC');
	assert.equal(src.sshHostKey, null);

	host.requests.length = 0;
	const d = await W.deployed(w, app);
	assert.equal(d.commitSha, repo.shas[0]);
	assert.equal((await W.httpGet(app.port, '/')).text, 'private over https\n');

	// The first request went without credentials and was refused; the token
	// came only after the 401, as Basic with the credential's username.
	const basic = `Basic ${Buffer.from(`${USER}:${TOKEN}`).toString('base64')}`;
	assert.equal(host.requests[0].authorization, null);
	assert.ok(host.requests.some((r) => r.authorization === basic), JSON.stringify(host.requests));
	assert.ok(host.requests.every((r) => r.authorization === null || r.authorization === basic));

	// The token reaches no log; the credential says it was used.
	const log = await W.logText(w, d.id);
	assert.ok(!log.includes(TOKEN));
	assert.ok(!w.srv.logs.text().includes(TOKEN));
	assert.notEqual((await W.ok(w.call('GET', `/git-credentials/${cred.id}`))).lastUsedAt, null);

	// A credential in use is not deleted.
	const del = await w.call('DELETE', `/git-credentials/${cred.id}`);
	assert.equal(del.status, 409);
	assert.equal(del.json().error.code, 'GIT_CREDENTIAL_IN_USE');
});

test('without a credential, or with a token the host refuses, the fetch fails saying what to do', async () => {
	const app = await W.makeApp(w, 'httpsdenied');
	await W.ok(w.call('PUT', `/applications/${app.id}/git-source`, { body: { repositoryUrl: host.url(rel) } }), 201);
	const none = await W.deploy(w, app);
	failed(await W.waitDeployment(w, none.id), /asks for credentials: attach a git credential to the git source \(credentialId\)/);

	const wrongToken = `glpat-${crypto.randomBytes(12).toString('hex')}`;
	const wrong = await credential('wrong-token', wrongToken);
	await W.ok(w.call('PATCH', `/applications/${app.id}/git-source`, { body: { credentialId: wrong.id } }));
	const refused = await W.deploy(w, app);
	const end = await W.waitDeployment(w, refused.id);
	failed(end, /did not accept the git credential: check that its token is current/);
	assert.ok(!(await W.logText(w, refused.id)).includes(wrongToken));
	assert.ok(!end.errorMessage.includes(wrongToken));

	// Once the source no longer names it, the credential can go.
	await W.ok(w.call('PATCH', `/applications/${app.id}/git-source`, { body: { credentialId: null } }));
	assert.equal((await w.call('DELETE', `/git-credentials/${wrong.id}`)).status, 204);
});

test('credentialId must be a credential of the organization and only for https URLs', async () => {
	const app = await W.makeApp(w, 'credrules');
	const cred = await credential('rules', TOKEN);
	const put = (body) => w.call('PUT', `/applications/${app.id}/git-source`, { body });
	let r = await put({ repositoryUrl: 'ssh://git@127.0.0.1:22/a/b.git', credentialId: cred.id });
	assert.equal(r.status, 422);
	assert.match(r.json().error.fields.credentialId[0], /only for https repositories/);
	r = await put({ repositoryUrl: host.url(rel), credentialId: crypto.randomUUID() });
	assert.equal(r.status, 422);
	assert.deepEqual(r.json().error.fields.credentialId, ['does not name a git credential of this organization']);
	r = await put({ repositoryUrl: host.url(rel), credentialId: 'not-a-uuid' });
	assert.equal(r.status, 422);
	assert.ok(r.json().error.fields.credentialId);
	await W.ok(put({ repositoryUrl: host.url(rel), credentialId: cred.id }), 201);
	// switching the URL to ssh while the credential is named is refused too
	r = await w.call('PATCH', `/applications/${app.id}/git-source`, { body: { repositoryUrl: 'ssh://git@127.0.0.1:22/a/b.git' } });
	assert.equal(r.status, 422);
	assert.ok(r.json().error.fields.credentialId);
	// another organization's credential is not found for this one
	const other = await signup(w.srv, 'other-git@example.com', 'Other Org');
	const theirs = await W.ok(call(w.srv, 'POST', '/git-credentials', other, {
		body: { name: 'theirs', provider: 'GENERIC', username: USER, token: TOKEN },
	}), 201);
	r = await put({ repositoryUrl: host.url(rel), credentialId: theirs.id });
	assert.equal(r.status, 422);
	assert.deepEqual(r.json().error.fields.credentialId, ['does not name a git credential of this organization']);
});

test('the ssh host key is pinned on first use; a changed key fails the fetch until it is re-pinned', async () => {
	const app = await W.makeApp(w, 'hostkey');
	const sshRepo = await W.createRepo({ files: W.webFiles('pinned\n') });
	const src = await W.gitSource(w, app, 'ssh://root@127.0.0.1:22/placeholder.git');
	const sshd = await startSshd({ authorizedKey: src.deployKey.publicKey });
	const sourcePath = `/applications/${app.id}/git-source`;
	try {
		await W.ok(w.call('PATCH', sourcePath, { body: { repositoryUrl: sshd.url(sshRepo.path) } }));
		const first = await W.deployed(w, app);
		const real = `ssh-ed25519 ${sshd.hostKeyFingerprint}`;
		let got = await W.ok(w.call('GET', sourcePath));
		assert.equal(got.sshHostKey, real);
		assert.ok(Date.parse(got.sshHostKeyPinnedAt) > 0);
		assert.match(await W.logText(w, first.id), new RegExp(`Host key of 127\\.0\\.0\\.1: ${real.replace(/[+/]/g, '\\$&')} \\(pinned on first use\\)`));

		// The same key again: accepted, the pin unchanged.
		const second = await W.deployed(w, app);
		assert.match(await W.logText(w, second.id), /\(matches the pinned key\)/);
		assert.equal((await W.ok(w.call('GET', sourcePath))).sshHostKeyPinnedAt, got.sshHostKeyPinnedAt);

		// A pin the server does not match: FAILED, naming both keys, and the
		// version serving stays.
		const wrongPin = 'ssh-ed25519 SHA256:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';
		await W.ok(w.call('PATCH', sourcePath, { body: { sshHostKey: wrongPin } }));
		const bad = await W.deploy(w, app);
		const end = await W.waitDeployment(w, bad.id);
		failed(end, /^The ssh host key of 127\.0\.0\.1 has changed/);
		assert.ok(end.errorMessage.includes(real) && end.errorMessage.includes(wrongPin));
		assert.equal((await W.httpGet(app.port, '/')).text, 'pinned\n');

		// null forgets the pin: the next fetch pins what it meets.
		got = await W.ok(w.call('PATCH', sourcePath, { body: { sshHostKey: null } }));
		assert.equal(got.sshHostKey, null);
		assert.equal(got.sshHostKeyPinnedAt, null);
		await W.deployed(w, app);
		assert.equal((await W.ok(w.call('GET', sourcePath))).sshHostKey, real);

		// Malformed pins are field errors.
		for (const v of ['SHA256:abc', 'ssh-ed25519 SHA256:short', 'Ssh-Ed25519 ' + sshd.hostKeyFingerprint, 42]) {
			const r = await w.call('PATCH', sourcePath, { body: { sshHostKey: v } });
			assert.equal(r.status, 422, String(v));
			assert.ok(r.json().error.fields.sshHostKey, String(v));
		}
		// A new repository URL forgets the pin; a replacing PUT without
		// sshHostKey keeps it.
		await W.ok(w.call('PUT', sourcePath, { body: { repositoryUrl: sshd.url(sshRepo.path) } }));
		assert.equal((await W.ok(w.call('GET', sourcePath))).sshHostKey, real);
		got = await W.ok(w.call('PATCH', sourcePath, { body: { repositoryUrl: 'ssh://root@127.0.0.1:22/elsewhere.git' } }));
		assert.equal(got.sshHostKey, null);
	} finally {
		await sshd.stop();
	}
});
