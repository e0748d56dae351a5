// A full disk loses and duplicates nothing. stewardd's data directory (logs,
// sources, uploads) is a 16 MiB tmpfs mounted here; a filler file takes all
// but a few KiB of it. Then a git deployment fails with a clear error while
// the version deployed before keeps serving, an upload is refused with 503
// and creates no deployment, and once the filler is gone the next deployment
// succeeds: every deployment is accounted for, numbered once, none in
// flight. Real PostgreSQL (on another disk), dockerd, Caddy and git.
// Needs root to mount a tmpfs: exits 77 otherwise, and without docker,
// caddy or git.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import * as h from './harness.mjs';
import * as W from './deploy_world.mjs';

let w, dataDir, filler;

before(async () => {
	if (process.getuid() !== 0) h.skip('mounting a small tmpfs as the data directory needs root');
	dataDir = h.makeTempDir('sw-full-');
	const m = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=16m,mode=0700', 'tmpfs', dataDir], { encoding: 'utf8' });
	if (m.status !== 0) h.skip(`cannot mount a tmpfs here: ${m.stderr.trim() || m.error}`);
	// Unmounted on any exit, a skip (process.exit) included: after() does
	// not run then.
	process.on('exit', () => {
		spawnSync('umount', ['-l', dataDir]);
		fs.rmSync(dataDir, { recursive: true, force: true });
	});
	filler = path.join(dataDir, 'filler');
	w = await W.world({ STEWARD_DATA_DIR: dataDir });
});

after(async () => {
	if (w) await w.cleanup();
	await h.cleanupAll();
});

// Fills the tmpfs but `leave` bytes (tmpfs counts whole pages).
function fill(leave) {
	const st = fs.statfsSync(dataDir);
	const free = st.bavail * st.bsize;
	const fd = fs.openSync(filler, 'w');
	const chunk = Buffer.alloc(1 << 20, 0x55);
	let left = Math.max(0, free - leave);
	try {
		while (left > 0) {
			const n = fs.writeSync(fd, chunk, 0, Math.min(chunk.length, left));
			left -= n;
		}
	} catch (e) {
		if (e.code !== 'ENOSPC') throw e;
	} finally {
		fs.closeSync(fd);
	}
}

test('a full disk fails one deployment clearly, refuses an upload, and loses or duplicates nothing', async () => {
	const app = await W.makeApp(w, 'diskfull');
	// A repository whose checkout needs a few MiB (random bytes: nothing
	// compresses them).
	const big = crypto.randomBytes(3 << 20).toString('base64');
	const repo = await W.createRepo({
		files: W.webFiles('before the disk filled\n'),
		commits: [{ message: 'Add a large asset', files: { 'www/asset.bin': big, 'www/index.html': 'after\n' } }],
		tags: { small: 0 },
	});
	await W.gitSource(w, app, repo.fileUrl);
	const first = await W.deployed(w, app, { ref: 'small' });
	assert.equal((await W.httpGet(app.port, '/')).text, 'before the disk filled\n');

	fill(64 * 1024);
	const second = await W.deploy(w, app);
	const end = await W.waitDeployment(w, second.id);
	assert.equal(end.status, 'FAILED', `${end.status}: ${end.logTail}`);
	assert.match(end.errorMessage, /space/i, end.errorMessage);
	assert.ok(!end.errorMessage.includes(dataDir), 'the control plane\'s own paths are not shown');
	console.log(`the failed deployment says: ${end.errorMessage}`);
	// What served before serves still, untouched.
	assert.equal((await W.httpGet(app.port, '/')).text, 'before the disk filled\n');

	// An upload with no room to store it: 503, and no deployment is made.
	const archive = W.tarOf(W.webFiles('uploaded\n'));
	const m = W.multipart({ applicationId: app.id }, { archive: { filename: 'a.tar', data: Buffer.concat([archive, crypto.randomBytes(256 << 10)]) } });
	const up = await w.call('POST', '/deployments', { body: m.body, headers: { 'Content-Type': m.contentType } });
	assert.equal(up.status, 503, up.text);
	assert.equal(up.json().error.code, 'SERVICE_UNAVAILABLE');
	assert.equal(fs.readdirSync(path.join(dataDir, 'uploads')).length, 0, 'no partial upload is left');

	// Room again: the next deployment succeeds.
	fs.rmSync(filler);
	const third = await W.deployed(w, app);
	assert.equal((await W.httpGet(app.port, '/')).text, 'after\n');

	// Every deployment accounted for: three rows, numbered 1..3 once each,
	// none in flight, and no job left unfinished.
	const rows = (await w.sql(`SELECT number || ':' || status FROM deployments WHERE application_id = '${app.id}' ORDER BY number`))
		.trim().split('\n');
	assert.deepEqual(rows, ['1:SUCCEEDED', '2:FAILED', '3:SUCCEEDED']);
	assert.deepEqual([first.number, second.number, third.number], [1, 2, 3]);
	const open = (await w.sql(`SELECT count(*) FROM jobs WHERE status IN ('QUEUED', 'RUNNING') AND (target_id = '${app.id}'
		OR target_id IN (SELECT id FROM deployments WHERE application_id = '${app.id}'))`)).trim();
	assert.equal(open, '0');
});
