// The deployment pipeline end to end, against a real Docker engine (images
// built FROM the local busybox base image, never pulled), a real Caddy on
// loopback and a real PostgreSQL: git over file:// and over ssh with the
// deploy key, archive uploads, RECREATE and BLUE_GREEN, variables in the
// container and scrubbed from the log, rollback without a build, image
// retention, a second deployment queued behind the first, lifecycle jobs,
// service containers, and the runtime routes (containers, proxy).
//
// Domains are verified by writing the database directly (the verify route
// asks DNS or HTTP, which no test machine has): named so in each test.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import * as h from './harness.mjs';
import * as W from './deploy_world.mjs';
import { startSshd } from './sshd.mjs';

let w;

before(async () => {
	w = await W.world({ DEPLOY_BLUE_GREEN_MIN_FREE_MEMORY_MB: '16' });
});

after(async () => {
	if (w) await w.cleanup();
	await h.cleanupAll();
});

async function imagesOf(app) {
	const filters = encodeURIComponent(JSON.stringify({ label: [`steward.application=${app.id}`] }));
	const r = await W.dockerRequest('GET', `/images/json?filters=${filters}`);
	return r.json().flatMap((i) => i.RepoTags || []).filter((t) => t.startsWith('steward/')).sort();
}

async function engineContainers(app) {
	const filters = encodeURIComponent(JSON.stringify({ label: [`steward.application=${app.id}`] }));
	const r = await W.dockerRequest('GET', `/containers/json?all=1&filters=${filters}`);
	return r.json().map((c) => ({ name: c.Names[0].slice(1), state: c.State, labels: c.Labels, image: c.Image }));
}

// ---- git over file://, RECREATE, rollback, retention ----

test('a git deployment over file:// builds, starts, passes the health gate and is served through Caddy', async () => {
	const app = await W.makeApp(w, 'shop', { imageRetentionCount: 2 });
	const repo = await W.createRepo({ files: W.webFiles('shop v1\n'), message: 'First version\n\nWith a body.' });
	await W.gitSource(w, app, repo.fileUrl);
	await W.verifiedDomain(w, app, 'shop.example.com'); // verified directly in PostgreSQL

	const d1 = await W.deployed(w, app);
	assert.equal(d1.number, 1);
	assert.equal(d1.trigger, 'MANUAL');
	assert.equal(d1.commitSha, repo.shas[0], 'the commit is read from the clone');
	assert.equal(d1.commitMessage, 'First version\n\nWith a body.');
	assert.equal(d1.commitAuthor, 'Ada Lovelace <ada@example.com>');
	assert.equal(d1.gitRef, 'refs/heads/main');
	assert.equal(d1.imageTag, `steward/${app.id}:1`);
	assert.equal(d1.strategy, 'RECREATE');
	assert.equal(d1.errorMessage, null);
	assert.match(d1.startedAt, h.TS);
	assert.ok(Math.abs(d1.durationMs - (Date.parse(d1.finishedAt) - Date.parse(d1.startedAt))) <= 1, 'durationMs');
	const log = await W.logText(w, d1.id);
	assert.equal(d1.logByteCount, Buffer.byteLength(log), 'logByteCount is the log file size');
	assert.ok(log.endsWith(d1.logTail), 'logTail is the end of the log');
	assert.ok(Buffer.byteLength(d1.logTail) <= 4096);
	for (const phase of ['CLONING', 'BUILDING', 'STARTING', 'HEALTH_GATE', 'SWITCHING', 'FINISHING'])
		assert.match(log, new RegExp(`==> ${phase} at \\d{4}-`), `phase ${phase} in the log`);
	assert.match(log, /Step 1\/\d+ : FROM steward-test\/base:latest/);

	const r = await W.viaCaddy(w, 'shop.example.com');
	assert.equal(r.status, 200, r.text);
	assert.equal(r.text, 'shop v1\n');
	const app1 = await h.request(w.srv.port, 'GET', `/applications/${app.id}`, { headers: { Cookie: `steward_session=${w.owner.cookie}` } });
	assert.equal(app1.json().data.status, 'RUNNING');

	const list = await W.containers(w, app);
	assert.equal(list.length, 1);
	assert.equal(list[0].name, `sw-${app.id.replace(/-/g, '').slice(0, 12)}-1`);
	assert.equal(list[0].state, 'running');
	assert.equal(list[0].deploymentNumber, 1);
	assert.equal(list[0].project, 'shop');
	const labels = (await engineContainers(app))[0].labels;
	assert.equal(labels['com.docker.compose.project'], 'shop');
	assert.equal(labels['com.docker.compose.service'], 'shop');
	assert.equal(labels['steward.deployment'], d1.id);
	assert.equal(labels['steward.managed'], 'true');

	// ---- a second version replaces the first (RECREATE) ----
	fs.writeFileSync(`${repo.path}/www/index.html`, 'shop v2\n');
	await repo.git(['commit', '-q', '-am', 'Second version']);
	const d2 = await W.deployed(w, app);
	assert.equal(d2.number, 2);
	assert.equal(d2.commitMessage, 'Second version');
	assert.equal((await W.viaCaddy(w, 'shop.example.com')).text, 'shop v2\n');
	const after2 = await engineContainers(app);
	assert.deepEqual(after2.map((c) => c.name), [`sw-${app.id.replace(/-/g, '').slice(0, 12)}-2`], 'the old container is removed');

	// ---- rollback: the first image again, no build ----
	const rb = await W.ok(w.call('POST', `/deployments/${d1.id}/rollback`), 201);
	assert.equal(rb.trigger, 'ROLLBACK');
	assert.equal(rb.rollbackOf, d1.id);
	const d3 = await W.waitDeployment(w, rb.id);
	assert.equal(d3.status, 'SUCCEEDED', d3.errorMessage);
	assert.equal(d3.imageTag, d1.imageTag);
	assert.equal(d3.strategy, 'RECREATE');
	const rlog = await W.logText(w, d3.id);
	assert.match(rlog, /Rollback to deployment #1: its image steward\/[0-9a-f-]+:1 is applied again, without a build\./);
	assert.doesNotMatch(rlog, /==> (CLONING|BUILDING)|Step \d+\/\d+/, 'no build step in a rollback');
	assert.equal((await W.viaCaddy(w, 'shop.example.com')).text, 'shop v1\n');
	const history = await W.ok(w.call('GET', `/deployments?applicationId=${app.id}`));
	assert.deepEqual(history.map((d) => d.number).sort(), [1, 2, 3], 'the history keeps both');

	// ---- retention (imageRetentionCount 2): keep the newest two succeeded ----
	fsWrite(`${repo.path}/www/index.html`, 'shop v4\n');
	await repo.git(['commit', '-q', '-am', 'Fourth']);
	const d4 = await W.deployed(w, app);
	assert.deepEqual(await imagesOf(app), [`steward/${app.id}:1`, `steward/${app.id}:4`].sort(),
		':4 (serving) and :1 (#3, the rollback, newest use) are kept; :2 is removed');
	assert.match(await W.logText(w, d4.id), /Removed the image steward\/[0-9a-f-]+:2 \(beyond imageRetentionCount 2\)/);
	// A rollback to #2 is refused or fails clearly: its image is gone.
	const rb2 = await w.call('POST', `/deployments/${d2.id}/rollback`);
	if (rb2.status === 201) {
		const d5 = await W.waitDeployment(w, rb2.json().data.id);
		assert.equal(d5.status, 'FAILED');
		assert.match(d5.errorMessage, /is no longer on the server/);
		assert.equal((await W.viaCaddy(w, 'shop.example.com')).text, 'shop v4\n', 'the serving version is untouched');
	} else {
		assert.equal(rb2.status, 409);
	}

	// ---- lifecycle: stop, start, restart ----
	await W.ok(w.call('POST', `/applications/${app.id}/stop`), 202);
	await waitFor(async () => (await W.containers(w, app))[0]?.state === 'exited', 'stopped');
	await waitFor(async () => (await appStatus(app)) === 'STOPPED', 'STOPPED');
	assert.notEqual((await W.viaCaddy(w, 'shop.example.com', '/', { timeoutMs: 500 })).status, 200);
	await W.ok(w.call('POST', `/applications/${app.id}/start`), 202);
	// The job records RUNNING when it ends, after the container serves: the
	// record is read once the job has ended, not at the first answer.
	await waitFor(async () => (await jobOf(app.id, 'application.start')) === 'SUCCEEDED', 'start done');
	assert.equal((await W.viaCaddy(w, 'shop.example.com', '/', { timeoutMs: 500 })).text, 'shop v4\n', 'served again');
	assert.equal(await appStatus(app), 'RUNNING');
	await W.ok(w.call('POST', `/applications/${app.id}/restart`), 202);
	await waitFor(async () => (await jobOf(app.id, 'application.restart')) === 'SUCCEEDED', 'restart done');
	assert.equal((await W.viaCaddy(w, 'shop.example.com')).text, 'shop v4\n');

	// ---- the runtime routes ----
	const servers = await W.ok(w.call('GET', '/servers'));
	const local = servers.find((s) => s.isLocal);
	const onServer = await W.ok(w.call('GET', `/servers/${local.id}/containers`));
	assert.ok(onServer.some((c) => c.applicationId === app.id && c.state === 'running'));
	const proxy = await W.ok(w.call('GET', `/proxy?serverId=${local.id}`));
	assert.equal(proxy.reachable, true);
	assert.equal(proxy.error, null);
	assert.equal(proxy.serverId, local.id);
	assert.deepEqual(proxy.server.listen, [w.caddy.httpListen]);
	const route = proxy.routes.find((x) => x.applicationId === app.id);
	assert.deepEqual(route.hosts, ['shop.example.com']);
	assert.equal(route.id, `steward-app-${app.id}`);
	assert.match(route.upstreams[0], /^127\.0\.0\.1:\d+$/);
	assert.deepEqual((await W.ok(w.call('GET', '/proxy'))).routes, proxy.routes, 'serverId defaults to the local server');
	h.assertError(await w.call('GET', '/proxy?serverId=nope'), 422, 'VALIDATION_FAILED');
	h.assertError(await w.call('GET', `/proxy?serverId=${h.NIL}`), 404, 'NOT_FOUND');
	const remote = await W.ok(w.call('POST', '/servers', { body: { name: 'far-away', host: 'far.example.com' } }), 201);
	h.assertError(await w.call('GET', `/servers/${remote.id}/containers`), 409, 'SERVER_NOT_CONNECTED');
	h.assertError(await w.call('GET', `/proxy?serverId=${remote.id}`), 409, 'SERVER_NOT_CONNECTED');
	h.assertError(await w.call('GET', `/applications/${h.NIL}/containers`), 404, 'NOT_FOUND');
});

// ---- BLUE_GREEN ----

test('BLUE_GREEN starts the other colour beside the old, switches Caddy with no failed request, then removes the old colour', async () => {
	const app = await W.makeApp(w, 'blog', { deployStrategy: 'BLUE_GREEN' });
	const repo = await W.createRepo({ files: W.webFiles('blog v1\n') });
	await W.gitSource(w, app, repo.fileUrl);
	await W.verifiedDomain(w, app, 'blog.example.com'); // verified directly in PostgreSQL
	const d1 = await W.deployed(w, app);
	assert.equal(d1.strategy, 'BLUE_GREEN');
	assert.equal((await W.viaCaddy(w, 'blog.example.com')).text, 'blog v1\n');
	const c1 = await W.containers(w, app);
	assert.deepEqual(c1.map((c) => [c.colour, c.project]), [['blue', 'blog-blue']]);
	assert.notEqual(Number((await W.ok(w.call('GET', '/proxy'))).routes.find((r) => r.applicationId === app.id).upstreams[0].split(':')[1]), app.port,
		'a colour listens on a port of its own, not the application port');

	fsWrite(`${repo.path}/www/index.html`, 'blog v2\n');
	await repo.git(['commit', '-q', '-am', 'v2']);
	// Requests through Caddy all along the second deployment: none fails.
	let polling = true;
	const seen = [];
	const poller = (async () => {
		while (polling) {
			const r = await W.httpGet(w.caddy.httpPort, '/', { host: 'blog.example.com' }).catch((e) => ({ status: 0, text: String(e) }));
			seen.push(`${r.status} ${r.text.trim()}`);
			await h.sleep(20);
		}
	})();
	const d2 = await W.deployed(w, app);
	polling = false;
	await poller;
	assert.equal(d2.strategy, 'BLUE_GREEN');
	const bad = seen.filter((s) => !/^200 blog v[12]$/.test(s));
	assert.deepEqual(bad, [], `every request during the switch answered (${seen.length} requests)`);
	assert.ok(seen.includes('200 blog v1') && seen.at(-1) === '200 blog v2');
	assert.equal((await W.viaCaddy(w, 'blog.example.com')).text, 'blog v2\n');
	const log = await W.logText(w, d2.id);
	assert.match(log, /BLUE_GREEN: the green colour starts on port \d+ beside the running version \(found free on the server\)\./);
	assert.ok(log.indexOf('==> SWITCHING') < log.indexOf('Removed the container sw-'), 'the old colour goes after the switch');
	const c2 = await engineContainers(app);
	assert.deepEqual(c2.map((c) => [c.labels['steward.colour'], c.labels['com.docker.compose.project'], c.state]),
		[['green', 'blog-green', 'running']], 'the blue colour is stopped and removed');

	// A rollback always runs RECREATE, and says why.
	const rb = await W.ok(w.call('POST', `/deployments/${d1.id}/rollback`), 201);
	const d3 = await W.waitDeployment(w, rb.id);
	assert.equal(d3.status, 'SUCCEEDED', d3.errorMessage);
	assert.equal(d3.strategy, 'RECREATE');
	assert.match(await W.logText(w, d3.id), /BLUE_GREEN falls back to RECREATE: the deployment is a rollback\./);
	assert.equal((await W.viaCaddy(w, 'blog.example.com')).text, 'blog v1\n');
});

test('BLUE_GREEN falls back to RECREATE, saying so, without a verified hostname or with a volume', async () => {
	const app = await W.makeApp(w, 'nohost', { deployStrategy: 'BLUE_GREEN' });
	const repo = await W.createRepo({ files: W.webFiles('nohost\n') });
	await W.gitSource(w, app, repo.fileUrl);
	const d = await W.deployed(w, app);
	assert.equal(d.strategy, 'RECREATE');
	const log = await W.logText(w, d.id);
	assert.match(log, /BLUE_GREEN falls back to RECREATE: the application has no verified hostname\./);
	assert.match(log, /No verified hostname: no route is set/);
	assert.equal((await W.httpGet(app.port, '/')).text, 'nohost\n', 'served on the application port');

	await W.verifiedDomain(w, app, 'nohost.example.com');
	await W.ok(w.call('POST', `/applications/${app.id}/volumes`, { body: { name: 'data', mountPath: '/data' } }), 201);
	const d2 = await W.deployed(w, app);
	assert.equal(d2.strategy, 'RECREATE');
	assert.match(await W.logText(w, d2.id), /BLUE_GREEN falls back to RECREATE: the application has a volume/);
	const mounts = (await W.dockerRequest('GET', `/containers/sw-${app.id.replace(/-/g, '').slice(0, 12)}-2/json`)).json().Mounts;
	assert.deepEqual(mounts.map((m) => [m.Type, m.Name, m.Destination]), [['volume', `sw-${app.id}-data`, '/data']]);

	// Deleting the application removes its containers, images and route.
	const routeOf = async () => (await W.ok(w.call('GET', '/proxy'))).routes.find((r) => r.applicationId === app.id);
	assert.ok(await routeOf(), 'routed before');
	await W.ok(w.call('DELETE', `/applications/${app.id}`), 204);
	await waitFor(async () => (await jobOf(app.id, 'application.delete')) === 'SUCCEEDED', 'application.delete');
	assert.deepEqual(await engineContainers(app), []);
	assert.deepEqual(await imagesOf(app), []);
	assert.equal(await routeOf(), undefined);
});

// ---- variables ----

test('variables reach the container and are scrubbed from the build log, the tail and the daemon output', async () => {
	const secret = `s3cr3t-${Date.now().toString(36)}-canary`;
	const app = await W.makeApp(w, 'vars');
	// The value is written in the Dockerfile too, so the build prints it
	// (builds do not receive the variables): the log writer must scrub it.
	const files = {
		Dockerfile: [`FROM ${W.BASE_IMAGE}`, 'COPY www /www', `RUN echo "the token is ${secret}"`,
			`CMD ["sh", "-c", "echo $API_TOKEN/$PORT > /www/token.txt; ${W.SERVE}"]`, ''].join('\n'),
		'www/health': 'ok\n',
	};
	const repo = await W.createRepo({ files });
	await W.gitSource(w, app, repo.fileUrl);
	await W.verifiedDomain(w, app, 'vars.example.com'); // verified directly in PostgreSQL
	await W.setVariables(w, app, { API_TOKEN: secret, PORT: '1' });
	const d = await W.deployed(w, app);
	const r = await W.viaCaddy(w, 'vars.example.com', '/token.txt');
	assert.equal(r.text, `${secret}/${app.port}\n`, 'the variable is in the environment; PORT is Steward\'s');
	const log = await W.logText(w, d.id);
	assert.ok(!log.includes(secret), 'the value is not in the log');
	assert.match(log, /the token is \*\*\*/);
	assert.ok(!d.logTail.includes(secret));
	assert.ok(!w.srv.logs.text().includes(secret), 'nor in the daemon output');
	assert.match(log, /The variable PORT is replaced by the port Steward gives/);
});

// ---- archives and ssh ----

test('an uploaded archive deploys (trigger UPLOAD) without a git source', async () => {
	const app = await W.makeApp(w, 'upload');
	await W.verifiedDomain(w, app, 'upload.example.com'); // verified directly in PostgreSQL
	const archive = W.tarOf(W.webFiles('from an archive\n'));
	const d = await W.deployed(w, app, { archive });
	assert.equal(d.trigger, 'UPLOAD');
	assert.equal(d.commitSha, null);
	assert.match(await W.logText(w, d.id), /Unpacking the uploaded archive\./);
	assert.equal((await W.viaCaddy(w, 'upload.example.com')).text, 'from an archive\n');
});

test('a git source over ssh is cloned with the application\'s deploy key', async () => {
	const app = await W.makeApp(w, 'viassh');
	const repo = await W.createRepo({ files: W.webFiles('over ssh\n') });
	// The source first (its deploy key), then the server authorising it.
	const src = await W.gitSource(w, app, 'ssh://root@127.0.0.1:22/placeholder.git');
	const sshd = await startSshd({ authorizedKey: src.deployKey.publicKey });
	try {
		await W.ok(w.call('PATCH', `/applications/${app.id}/git-source`, { body: { repositoryUrl: sshd.url(repo.path) } }));
		const d = await W.deployed(w, app);
		assert.equal(d.commitSha, repo.shas[0]);
		assert.equal((await W.httpGet(app.port, '/')).text, 'over ssh\n');
	} finally {
		await sshd.stop();
	}
});

// ---- the queue ----

test('a second deployment while one is in flight waits QUEUED behind it, then runs', async () => {
	const app = await W.makeApp(w, 'queued');
	const repo = await W.createRepo({ files: W.webFiles('slow\n', ['RUN sleep 3']) });
	await W.gitSource(w, app, repo.fileUrl);
	const a = await W.deploy(w, app);
	await W.waitPhase(w, a.id, 'BUILDING');
	const b = await W.deploy(w, app);
	assert.equal(b.status, 'QUEUED');
	await h.sleep(1000);
	assert.equal((await W.getDeployment(w, b.id)).status, 'QUEUED', 'still waiting while the first builds');
	const ea = await W.waitDeployment(w, a.id);
	const eb = await W.waitDeployment(w, b.id);
	assert.equal(ea.status, 'SUCCEEDED', ea.errorMessage);
	assert.equal(eb.status, 'SUCCEEDED', eb.errorMessage);
	assert.ok(Date.parse(eb.startedAt) >= Date.parse(ea.finishedAt), 'the second started after the first ended');
});

// ---- services ----

test('services: a missing image fails the start clearly; a stand-in image tagged as it runs', async () => {
	const p = await W.ok(w.call('POST', '/projects', { body: { name: 'svc-project' } }), 201);
	const svc = await W.ok(w.call('POST', '/services', { body: { name: 'db', kind: 'POSTGRESQL', version: '16', environmentId: p.environments[0].id } }), 201);
	await W.dockerRequest('DELETE', '/images/postgres:16?force=1');
	const job = await W.ok(w.call('POST', `/services/${svc.id}/start`), 202);
	const failed = await waitForJob(job.id);
	assert.equal(failed.status, 'FAILED');
	assert.equal(failed.error_message, 'The image postgres:16 is not present on the server and cannot be pulled (Steward never pulls images): load it on the server first.');

	// A STAND-IN, not PostgreSQL: the busybox base image tagged postgres:16
	// with an entrypoint that stays up and ignores the command Steward gives
	// (postgres -p <port> ...). It proves the runner creates and starts the
	// service's container from the kind's image with its credentials and
	// port, not that PostgreSQL works (service_data.test.mjs runs the real one).
	const standIn = W.tarOf({ Dockerfile: `FROM ${W.BASE_IMAGE}\nENTRYPOINT ["sh", "-c", "trap \\"exit 0\\" TERM; sleep 3600 & wait", "stand-in"]\n` });
	const built = await W.dockerRequest('POST', '/build?t=postgres:16&labels=' + encodeURIComponent(JSON.stringify({ 'steward.test': 'stand-in' })),
		standIn, { headers: { 'Content-Type': 'application/x-tar' }, timeoutMs: 60000 });
	assert.equal(built.status, 200, built.text);
	try {
		const job2 = await W.ok(w.call('POST', `/services/${svc.id}/start`), 202);
		assert.equal((await waitForJob(job2.id)).status, 'SUCCEEDED');
		const name = `sw-svc-${svc.id.replace(/-/g, '').slice(0, 12)}`;
		const info = (await W.dockerRequest('GET', `/containers/${name}/json`)).json();
		assert.equal(info.State.Running, true);
		assert.equal(info.Config.Image, 'postgres:16');
		assert.ok(info.Config.Env.includes('POSTGRES_DB=db'));
		const port = (await W.ok(w.call('GET', `/services/${svc.id}/connection`))).port;
		assert.deepEqual(info.Config.Cmd, ['postgres', '-p', String(port), '-c', 'listen_addresses=127.0.0.1']);
		assert.equal((await W.ok(w.call('GET', `/services/${svc.id}`))).status, 'RUNNING');
		const job3 = await W.ok(w.call('POST', `/services/${svc.id}/stop`), 202);
		assert.equal((await waitForJob(job3.id)).status, 'SUCCEEDED');
		assert.equal((await W.dockerRequest('GET', `/containers/${name}/json`)).json().State.Running, false);
		assert.equal((await W.ok(w.call('GET', `/services/${svc.id}`))).status, 'STOPPED');
		await W.ok(w.call('DELETE', `/services/${svc.id}`), 204);
		await waitFor(async () => (await W.dockerRequest('GET', `/containers/${name}/json`)).status === 404, 'the container removed');
	} finally {
		await W.dockerRequest('DELETE', '/images/postgres:16?force=1');
	}
});

// ---- helpers ----

function fsWrite(file, text) {
	fs.writeFileSync(file, text);
}

async function appStatus(app) {
	return (await W.ok(w.call('GET', `/applications/${app.id}`))).status;
}

async function jobOf(target, kind) {
	return (await w.sql(`SELECT status FROM jobs WHERE target_id = '${target}' AND kind = '${kind}' ORDER BY created_at DESC LIMIT 1`)).trim();
}

async function waitForJob(id, timeoutMs = 30000) {
	const deadline = Date.now() + timeoutMs;
	for (;;) {
		const row = (await w.sql(`SELECT status || '|' || coalesce(error_message, '') FROM jobs WHERE id = '${id}'`)).trim();
		const [status, error_message] = [row.slice(0, row.indexOf('|')), row.slice(row.indexOf('|') + 1)];
		if (['SUCCEEDED', 'FAILED', 'CANCELLED'].includes(status)) return { status, error_message };
		if (Date.now() > deadline) throw new Error(`job ${id} still ${status}`);
		await h.sleep(100);
	}
}

async function waitFor(fn, what, timeoutMs = 20000) {
	const deadline = Date.now() + timeoutMs;
	while (!(await fn())) {
		if (Date.now() > deadline) throw new Error(`timed out waiting: ${what}`);
		await h.sleep(100);
	}
}

// ---- named volumes ----

test('named volumes: labelled when made, a deleted one still mounted goes after the next deployment, the rest go with the application', async () => {
	const app = await W.makeApp(w, 'vols');
	const volumeOf = async (name) => W.dockerRequest('GET', `/volumes/${name}`);
	const data = `sw-${app.id}-data`;
	const cache = `sw-${app.id}-cache`;
	try {
		const repo = await W.createRepo({ files: W.webFiles('vols\n') });
		await W.gitSource(w, app, repo.fileUrl);
		const dataRow = await W.ok(w.call('POST', `/applications/${app.id}/volumes`, { body: { name: 'data', mountPath: '/data' } }), 201);
		await W.ok(w.call('POST', `/applications/${app.id}/volumes`, { body: { name: 'cache', mountPath: '/cache' } }), 201);
		await W.deployed(w, app);
		const made = await volumeOf(data);
		assert.equal(made.status, 200, made.text);
		assert.equal(made.json().Labels['steward.application'], app.id, 'created by Steward with its label');
		assert.equal(made.json().Labels['steward.managed'], 'true');
		assert.equal((await volumeOf(cache)).status, 200);

		// Deleted while the running version mounts it: the job succeeds,
		// says so, and the volume stays until the next deployment.
		await W.ok(w.call('DELETE', `/applications/${app.id}/volumes/${dataRow.id}`), 204);
		await waitFor(async () => (await jobOf(dataRow.id, 'volume.delete')) === 'SUCCEEDED', 'volume.delete');
		assert.match(w.srv.logs.text(), new RegExp(`the volume ${data} is still mounted by the running version: it will be removed after the next successful deployment`));
		assert.equal((await volumeOf(data)).status, 200, 'kept while mounted');
		const d2 = await W.deployed(w, app);
		assert.equal((await volumeOf(data)).status, 404, 'removed after the next successful deployment');
		assert.match(await W.logText(w, d2.id), new RegExp(`Removed the volume ${data}\\.`));
		assert.equal((await volumeOf(cache)).status, 200, 'a volume still listed stays');

		// Deleting the application removes its remaining named volume.
		await W.ok(w.call('DELETE', `/applications/${app.id}`), 204);
		await waitFor(async () => (await jobOf(app.id, 'application.delete')) === 'SUCCEEDED', 'application.delete');
		assert.equal((await volumeOf(cache)).status, 404, 'removed with the application');
	} finally {
		// What a failed step left: containers first (they hold the volumes).
		const filters = encodeURIComponent(JSON.stringify({ label: [`steward.application=${app.id}`] }));
		for (const c of (await W.dockerRequest('GET', `/containers/json?all=1&filters=${filters}`)).json())
			await W.dockerRequest('DELETE', `/containers/${c.Id}?force=1`);
		for (const v of [data, cache]) await W.dockerRequest('DELETE', `/volumes/${v}`);
	}
});

test('no shell expands $PORT: Steward replaces it in the command, for the static plan and an exec-form CMD; signals reach the program', async () => {
	// No Dockerfile: the static plan (busybox httpd, exec form).
	const plain = await W.makeApp(w, 'staticplan');
	const repo = await W.createRepo({ files: { 'index.html': 'static plan\n', health: 'ok\n' } });
	await W.gitSource(w, plain, repo.fileUrl);
	const d = await W.deployed(w, plain);
	assert.match(await W.logText(w, d.id), /static/);
	assert.equal((await W.httpGet(plain.port, '/')).text, 'static plan\n');

	// An application's own Dockerfile whose exec-form CMD says ${PORT}.
	const own = await W.makeApp(w, 'execport');
	const dockerfile = [`FROM ${W.BASE_IMAGE}`, 'COPY www /www', 'CMD ["httpd", "-f", "-p", "${PORT}", "-h", "/www"]', ''].join('\n');
	const repo2 = await W.createRepo({ files: { Dockerfile: dockerfile, 'www/index.html': 'exec form\n', 'www/health': 'ok\n' } });
	await W.gitSource(w, own, repo2.fileUrl);
	await W.deployed(w, own);
	assert.equal((await W.httpGet(own.port, '/')).text, 'exec form\n');

	// httpd installs no SIGTERM handler; under docker-init it is not PID 1,
	// so a stop ends it with SIGTERM (exit 143), not the engine's SIGKILL.
	await W.ok(w.call('POST', `/applications/${own.id}/stop`), 202);
	const filters = encodeURIComponent(JSON.stringify({ label: [`steward.application=${own.id}`] }));
	let state;
	for (let i = 0; i < 200; i++) {
		const list = (await W.dockerRequest('GET', `/containers/json?all=1&filters=${filters}`)).json();
		state = list[0] && (await W.dockerRequest('GET', `/containers/${list[0].Id}/json`)).json().State;
		if (state && !state.Running) break;
		await h.sleep(100);
	}
	assert.equal(state.Running, false);
	assert.equal(state.ExitCode, 143, JSON.stringify(state));
});
