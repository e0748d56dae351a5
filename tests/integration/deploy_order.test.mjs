// One application's deployments run one at a time and in the order they
// were asked for, whatever their trigger: a git or upload deployment (a
// build, then a deploy) asked for before a rollback (a deploy alone, on the
// lifecycle queue) runs first, although the rollback has nothing to build
// and waits in another queue. The application ends serving what was asked
// for last.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import * as h from './harness.mjs';
import * as W from './deploy_world.mjs';

let w;

before(async () => {
	w = await W.world();
});

after(async () => {
	if (w) await w.cleanup();
	await h.cleanupAll();
});

async function sql1(q) {
	return (await w.sql(q)).trim();
}

async function commit(repo, files) {
	for (const [name, content] of Object.entries(files)) fs.writeFileSync(`${repo.path}/${name}`, content);
	await repo.git(['add', '-A']);
	await repo.git(['commit', '-q', '-m', 'Change']);
}

async function twoVersions(name) {
	const app = await W.makeApp(w, name);
	const repo = await W.createRepo({ files: W.webFiles(`${name} v1\n`) });
	await W.gitSource(w, app, repo.fileUrl);
	const host = `${name}.example.com`;
	await W.verifiedDomain(w, app, host);
	const d1 = await W.deployed(w, app);
	await commit(repo, { 'www/index.html': `${name} v2\n` });
	const d2 = await W.deployed(w, app);
	assert.equal((await W.viaCaddy(w, host)).text, `${name} v2\n`);
	return { app, repo, host, d1, d2 };
}

// The two deployments ran one after the other, first before second.
function inOrder(first, second) {
	assert.ok(Date.parse(second.startedAt) >= Date.parse(first.finishedAt),
		`#${second.number} started ${second.startedAt}, before #${first.number} finished ${first.finishedAt}`);
}

test('a git deployment then a rollback asked at once run in that order: the rollback\'s version serves', async () => {
	const s = await twoVersions('order-git');
	// A build that takes a moment, so that the rollback is ready to run
	// long before it.
	await commit(s.repo, { Dockerfile: W.webDockerfile(['RUN sleep 3']), 'www/index.html': 'order-git v3\n' });
	const g = await W.deploy(w, s.app);
	const rb = await W.ok(w.call('POST', `/deployments/${s.d1.id}/rollback`), 201);
	assert.equal(rb.status, 'QUEUED');
	assert.equal(await sql1(`SELECT queue FROM jobs WHERE target_id = '${rb.id}' AND kind = 'deployment.deploy'`), 'lifecycle');
	const eg = await W.waitDeployment(w, g.id);
	const erb = await W.waitDeployment(w, rb.id);
	assert.equal(eg.status, 'SUCCEEDED', eg.errorMessage);
	assert.equal(erb.status, 'SUCCEEDED', erb.errorMessage);
	assert.deepEqual([eg.number, erb.number], [3, 4]);
	inOrder(eg, erb);
	assert.equal((await W.viaCaddy(w, s.host)).text, 'order-git v1\n', 'the version asked for last serves');
});

test('an upload then a rollback asked at once run in that order', async () => {
	const s = await twoVersions('order-upload');
	const archive = W.tarOf({ ...W.webFiles('order-upload v3\n'), Dockerfile: W.webDockerfile(['RUN sleep 3']) });
	const u = await W.deploy(w, s.app, { archive });
	const rb = await W.ok(w.call('POST', `/deployments/${s.d2.id}/rollback`), 201);
	const eu = await W.waitDeployment(w, u.id);
	const erb = await W.waitDeployment(w, rb.id);
	assert.equal(eu.status, 'SUCCEEDED', eu.errorMessage);
	assert.equal(erb.status, 'SUCCEEDED', erb.errorMessage);
	inOrder(eu, erb);
	assert.equal((await W.viaCaddy(w, s.host)).text, 'order-upload v2\n');
});

test('a rollback then a git deployment asked at once run in that order', async () => {
	const s = await twoVersions('order-rb-first');
	const rb = await W.ok(w.call('POST', `/deployments/${s.d1.id}/rollback`), 201);
	await commit(s.repo, { 'www/index.html': 'order-rb-first v3\n' });
	const g = await W.deploy(w, s.app);
	const erb = await W.waitDeployment(w, rb.id);
	const eg = await W.waitDeployment(w, g.id);
	assert.equal(erb.status, 'SUCCEEDED', erb.errorMessage);
	assert.equal(eg.status, 'SUCCEEDED', eg.errorMessage);
	inOrder(erb, eg);
	assert.equal((await W.viaCaddy(w, s.host)).text, 'order-rb-first v3\n');
});
