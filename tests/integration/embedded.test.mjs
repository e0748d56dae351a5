// Embedded PostgreSQL: with no DATABASE_URL, stewardd runs its own cluster
// in STEWARD_DATA_DIR, stops it on exit, and reuses it on the next start.

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import * as h from './harness.mjs';

h.stewarddPath();
if (!fs.existsSync('/usr/lib/postgresql')) {
	h.skip('PostgreSQL server binaries are not installed (/usr/lib/postgresql)');
}
after(h.cleanupAll);

// A parent every user can traverse, so that stewardd may run PostgreSQL as
// an unprivileged user inside the data directory it creates.
const parent = h.makeTempDir('sw-emb-');
fs.chmodSync(parent, 0o755);
const dataDir = path.join(parent, 'data');

function postgresProcessesFor(dir) {
	const found = [];
	for (const pid of fs.readdirSync('/proc')) {
		if (!/^\d+$/.test(pid)) continue;
		try {
			const exe = fs.readlinkSync(`/proc/${pid}/exe`);
			if (!/postgres/.test(exe)) continue;
			const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
			// The postmaster and its children run with the data directory as cwd.
			let cwd = '';
			try {
				cwd = fs.readlinkSync(`/proc/${pid}/cwd`);
			} catch {}
			if (cmd.includes(dir) || cwd.startsWith(dir)) found.push(`${pid}: ${cmd}`);
		} catch {}
	}
	return found;
}

function findFiles(dir, name, out = []) {
	let entries = [];
	try {
		entries = fs.readdirSync(dir, { withFileTypes: true });
	} catch {
		return out;
	}
	for (const e of entries) {
		const p = path.join(dir, e.name);
		if (e.isDirectory()) findFiles(p, name, out);
		else if (e.name === name) out.push(p);
	}
	return out;
}

async function startEmbedded() {
	return h.startStewardd({ env: { DATABASE_URL: null, STEWARD_DATA_DIR: dataDir }, healthTimeoutMs: 90000 });
}

async function healthy(srv) {
	const by = Date.now() + 30000 * h.SLACK;
	let res;
	for (;;) {
		res = await h.request(srv.port, 'GET', '/health');
		if (res.status === 200 || Date.now() > by) break;
		await h.sleep(200);
	}
	assert.equal(res.status, 200, res.text);
	assert.deepEqual(res.json(), { data: { status: 'ok', database: 'ok' } });
}

async function stopAndCheckClean(srv) {
	const code = await srv.stop('SIGTERM', 30000 * h.SLACK);
	assert.equal(code, 0, `exit code\n${srv.logs.text()}`);
	await h.sleep(200);
	assert.deepEqual(postgresProcessesFor(dataDir), [], 'no PostgreSQL left running for the data directory');
	assert.deepEqual(findFiles(dataDir, 'postmaster.pid'), [], 'cluster shut down cleanly (no postmaster.pid)');
}

test('first_start_creates_the_cluster_and_serves_health', async () => {
	const srv = await startEmbedded();
	await healthy(srv);
	assert.ok(postgresProcessesFor(dataDir).length > 0, 'PostgreSQL runs from the data directory');
	const status = await h.request(srv.port, 'GET', '/setup-status');
	assert.deepEqual(status.json(), { data: { setupRequired: true } });
	const setup = await h.request(srv.port, 'POST', '/setup', { body: h.setupBody({ email: 'embedded@example.com' }) });
	assert.equal(setup.status, 201, setup.text);
	await stopAndCheckClean(srv);
});

test('second_start_reuses_the_cluster_and_setup_state_persists', async () => {
	const srv = await startEmbedded();
	await healthy(srv);
	const status = await h.request(srv.port, 'GET', '/setup-status');
	assert.deepEqual(status.json(), { data: { setupRequired: false } });
	const again = await h.request(srv.port, 'POST', '/setup', { body: h.setupBody({ email: 'other@example.com' }) });
	h.assertError(again, 409, 'SETUP_COMPLETE');
	await stopAndCheckClean(srv);
});

test('sigint_also_stops_the_embedded_cluster', async () => {
	const srv = await startEmbedded();
	await healthy(srv);
	const code = await srv.stop('SIGINT', 30000 * h.SLACK);
	assert.equal(code, 0);
	await h.sleep(200);
	assert.deepEqual(postgresProcessesFor(dataDir), []);
});
