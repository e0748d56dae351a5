// Shared by the deployment pipeline's tests (deploy_pipeline, deploy_failures,
// deploy_crash) and bench/deploy_time.mjs: a real PostgreSQL, a real Docker
// engine (docker.mjs: never pulls; builds FROM steward-test/base:latest), a
// real Caddy on loopback, stewardd wired to both, an operator, and helpers
// for applications, git repositories, deployments and HTTP through Caddy.
// Missing docker, caddy, git or busybox-static: the file exits 77 with why.

import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import * as h from './harness.mjs';
import { call, ok, setup } from './identity.mjs';
import { startDocker, baseImage, startCaddy, httpGet, removeByLabel, dockerRequest, BASE_IMAGE } from './docker.mjs';
import { createRepo } from './sshd.mjs';

export const MASTER_KEY = crypto.randomBytes(32).toString('hex');
export { BASE_IMAGE, createRepo, dockerRequest, httpGet, ok };

// The command of a web server on $PORT serving /www with busybox httpd; the
// shell stays PID 1 to exit on SIGTERM (PID 1 ignores it otherwise, and
// every stop would wait for the engine's kill).
export const SERVE = 'trap \\"exit 0\\" TERM; httpd -f -p $PORT -h /www & wait';

// A web server on $PORT serving www/. `extra` lines go before CMD (e.g. a
// slow RUN step).
export function webDockerfile(extra = []) {
	return [`FROM ${BASE_IMAGE}`, 'COPY www /www', ...extra, `CMD ["sh", "-c", "${SERVE}"]`, ''].join('\n');
}

// The files of a repository serving body at / (and /health).
export function webFiles(body, extra = []) {
	return { Dockerfile: webDockerfile(extra), 'www/index.html': body, 'www/health': 'ok\n' };
}

// Everything a deployment test needs. env: added to stewardd's. tsan:
// run under ThreadSanitizer too (the remote-server files, whose agent
// sessions, follows and streams are the threaded code TSan is for); the
// other deployment files run in the plain and ASan+UBSan builds only, to
// keep CI's TSan stage inside its time (they passed under TSan when the
// git fetch stopped forking, 2026-11-26).
export async function world(env = {}, { tsan = false } = {}) {
	if (!tsan && /thread/.test(process.env.SW_SANITIZER ?? '')) {
		h.skip('deployment files run in the plain and ASan+UBSan builds (CI time); the remote-server files also run under TSan');
	}
	h.stewarddPath();
	const docker = await startDocker();
	await baseImage();
	const caddy = await startCaddy();
	const pg = await h.startPostgres();
	const srvEnv = {
		STEWARD_SECRET_KEY: MASTER_KEY,
		STEWARD_RUNNERS: 'true',
		DOCKER_HOST: docker.host,
		DEPLOY_BASE_IMAGE: BASE_IMAGE,
		...caddy.env,
		...env,
	};
	const srv = await h.startStewardd({ db: pg, env: srvEnv });
	const owner = await setup(srv);
	const w = { docker, caddy, pg, srv, owner, env: srvEnv, apps: [] };
	w.sql = (q) => pg.psql(q, srv.dbName);
	w.call = (method, path, opts) => call(w.srv, method, path, owner, opts);
	// Starts another stewardd on the same database and data directory (a
	// restart after a crash). opts: startStewardd's (port).
	w.restart = async (more = {}, opts = {}) => {
		w.srv = await h.startStewardd({
			...opts,
			db: pg,
			env: { ...srvEnv, DATABASE_URL: srv.env.DATABASE_URL, STEWARD_DATA_DIR: srv.env.STEWARD_DATA_DIR, ...more },
		});
		return w.srv;
	};
	w.cleanup = async () => {
		for (const id of w.apps) await removeByLabel(`steward.application=${id}`);
	};
	return w;
}

// A project and an application in it, with settings (PATCH members).
export async function makeApp(w, name, settings = {}) {
	const p = await ok(w.call('POST', '/projects', { body: { name: `${name}-project` } }), 201);
	const app = await ok(w.call('POST', '/applications', { body: { name, environmentId: p.environments[0].id } }), 201);
	w.apps.push(app.id);
	const patch = { port: 0, healthCheckPath: '/health', healthCheckRetries: 10, healthCheckTimeoutSeconds: 2, ...settings };
	// A port nothing else uses: RECREATE listens on the application's port.
	if (!patch.port) patch.port = await h.freePort();
	return ok(w.call('PATCH', `/applications/${app.id}`, { body: patch }));
}

export async function gitSource(w, app, url, branch = 'main') {
	return ok(w.call('PUT', `/applications/${app.id}/git-source`, { body: { repositoryUrl: url, branch } }), 201);
}

// A domain of the application, verified by writing the database directly
// (the verification route asks DNS or HTTP, which no test machine has).
export async function verifiedDomain(w, app, hostname) {
	await ok(w.call('POST', `/applications/${app.id}/domains`, { body: { hostname } }), 201);
	await w.sql(`UPDATE domains SET verified_at = now(), verification_method = 'HTTP' WHERE application_id = '${app.id}' AND hostname = '${hostname}'`);
}

export async function setVariables(w, app, set) {
	return ok(w.call('PATCH', `/applications/${app.id}/variables`, { body: { set } }));
}

// multipart/form-data of fields {name: string} and files {name: {filename, data}}.
export function multipart(fields = {}, files = {}) {
	const boundary = `----sw${crypto.randomBytes(8).toString('hex')}`;
	const parts = [];
	for (const [k, v] of Object.entries(fields)) {
		parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`));
	}
	for (const [k, f] of Object.entries(files)) {
		parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${k}"; filename="${f.filename}"\r\n` +
			'Content-Type: application/octet-stream\r\n\r\n'));
		parts.push(f.data, Buffer.from('\r\n'));
	}
	parts.push(Buffer.from(`--${boundary}--\r\n`));
	return { body: Buffer.concat(parts), contentType: `multipart/form-data; boundary=${boundary}` };
}

// POST /deployments: 201 with the deployment (QUEUED).
export async function deploy(w, app, { ref, archive } = {}) {
	const fields = { applicationId: app.id };
	if (ref) fields.ref = ref;
	const files = archive ? { archive: { filename: 'source.tar', data: archive } } : {};
	const m = multipart(fields, files);
	return ok(w.call('POST', '/deployments', { body: m.body, headers: { 'Content-Type': m.contentType } }), 201);
}

export async function getDeployment(w, id) {
	return ok(w.call('GET', `/deployments/${id}`));
}

// Polls until the deployment's status is one of `until` (default: ended).
export async function waitDeployment(w, id, { until = ['SUCCEEDED', 'FAILED', 'CANCELLED'], timeoutMs = 120000 } = {}) {
	const deadline = Date.now() + timeoutMs;
	let d;
	while (Date.now() < deadline) {
		d = await getDeployment(w, id);
		if (until.includes(d.status)) return d;
		await h.sleep(250);
	}
	throw new Error(`deployment ${id} still ${d?.status}/${d?.phase} after ${timeoutMs} ms`);
}

// Polls the row's phase (SQL: the crash tests kill at a phase).
export async function waitPhase(w, id, phase, timeoutMs = 90000) {
	const deadline = Date.now() + timeoutMs;
	while (Date.now() < deadline) {
		const r = (await w.sql(`SELECT status || ' ' || phase FROM deployments WHERE id = '${id}'`)).trim();
		if (r.endsWith(` ${phase}`)) return r;
		if (/^(SUCCEEDED|FAILED|CANCELLED) /.test(r)) throw new Error(`deployment ${id} ended (${r}) before phase ${phase}`);
		await h.sleep(50);
	}
	throw new Error(`deployment ${id} did not reach phase ${phase} in ${timeoutMs} ms`);
}

// Polls until the deployment's recovery job ("runtime.recover") has run;
// the statuses of its recovery jobs (one, SUCCEEDED, when all went well).
export async function waitRecovered(w, id, timeoutMs = 60000) {
	const deadline = Date.now() + timeoutMs;
	let rec;
	while (Date.now() < deadline) {
		rec = (await w.sql(`SELECT string_agg(status, ',') FROM jobs WHERE kind = 'runtime.recover' AND target_id = '${id}'`)).trim();
		if (rec === 'SUCCEEDED') break;
		await h.sleep(100);
	}
	return rec;
}

export async function deployed(w, app, opts = {}, expect = 'SUCCEEDED') {
	const d = await deploy(w, app, opts);
	const end = await waitDeployment(w, d.id);
	assert.equal(end.status, expect, `deployment #${end.number}: ${end.errorMessage}\n${end.logTail}`);
	return end;
}

// GET through Caddy with the Host header (retried a moment: a route set
// just now is served after Caddy's config load).
export async function viaCaddy(w, host, path = '/', { expectStatus = 200, timeoutMs = 5000 } = {}) {
	const deadline = Date.now() + timeoutMs;
	let last;
	for (;;) {
		try {
			last = await httpGet(w.caddy.httpPort, path, { host });
			if (last.status === expectStatus) return last;
		} catch (e) {
			last = { status: 0, text: String(e) };
		}
		if (Date.now() > deadline) return last;
		await h.sleep(100);
	}
}

export async function containers(w, app) {
	return ok(w.call('GET', `/applications/${app.id}/containers`));
}

export async function logText(w, id) {
	const r = await w.call('GET', `/deployments/${id}/logs`);
	if (r.status === 200) return r.text;
	// The log file itself (before the /logs route exists).
	const file = `${w.srv.env.STEWARD_DATA_DIR}/logs/${id}.log`;
	return fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
}

// A ustar archive of files {path: content}.
export function tarOf(files) {
	const entries = [];
	for (const [name, content] of Object.entries(files)) {
		const data = Buffer.from(content);
		const hd = Buffer.alloc(512);
		const put = (s, off, len) => hd.write(s, off, len, 'utf8');
		const oct = (n, off, len) => put(n.toString(8).padStart(len - 1, '0') + '\0', off, len);
		put(name, 0, 100);
		oct(0o644, 100, 8);
		oct(0, 108, 8);
		oct(0, 116, 8);
		oct(data.length, 124, 12);
		oct(Math.floor(Date.now() / 1000), 136, 12);
		hd.fill(' ', 148, 156);
		put('0', 156, 1);
		put('ustar\0', 257, 6);
		put('00', 263, 2);
		let sum = 0;
		for (const b of hd) sum += b;
		put(sum.toString(8).padStart(6, '0') + '\0 ', 148, 8);
		entries.push(hd, data, Buffer.alloc((512 - (data.length % 512)) % 512));
	}
	entries.push(Buffer.alloc(1024));
	return Buffer.concat(entries);
}

// Waits for the job id to end: {status, error} (its error_message, '' when none).
export async function waitJob(w, id, timeoutMs = 120000) {
	const deadline = Date.now() + timeoutMs * h.SLACK;
	for (;;) {
		const [status, ...msg] = (await w.sql(`SELECT status || '|' || coalesce(error_message, '') FROM jobs WHERE id = '${id}'`)).trim().split('|');
		if (['SUCCEEDED', 'FAILED', 'CANCELLED'].includes(status)) return { status, error: msg.join('|') };
		if (Date.now() > deadline) throw new Error(`job ${id} is still ${status}`);
		await h.sleep(200);
	}
}
