// The dashboard's operations journeys on real parts, in a real browser
// (Debian's chromium driven by playwright-core): a real Docker engine
// (tests/integration/docker.mjs: $DOCKER_HOST, the machine's, or a private
// dockerd), a real Caddy, stewardd with its runners, and the service images
// built from Debian's packages (tests/images/build). Nothing is written
// into PostgreSQL or the data folder by the test:
//
// - a PostgreSQL service started for real; its backup requested with the
//   page's button, taken by the runner (pg_dump), downloaded through the
//   page's link (the bytes' SHA-256 is the one the API records), restored
//   from the page after its confirmation dialog (the page reads the job,
//   GET /jobs/:id, until it says the restore succeeded), and the destroyed
//   rows are back in the running database; then stopped and started again
//   from its page (each said to have succeeded); a restore the API refuses
//   (the service deleted meanwhile) says why in the dialog;
// - an application deployed from the page (an archive chosen in the file
//   input, the upload's progress bar), its container on the containers
//   tab; a git application deployed with the button, listed with status,
//   trigger, commit and duration, rolled back from its page; an archive
//   dropped on the page that fails to build: its error, no rollback;
// - the first application's running container, which the sample loop
//   measures: its metrics tab charts the minute rows the loop wrote
//   (METRICS_SAMPLE_INTERVAL_MS 1 s; METRICS_MINUTE_MS shortens the minute where stewardd knows it,
//   otherwise a real minute is waited for: at most a minute times
//   SW_TEST_SLACK, three by default);
// - the servers list's badge and banner follow the local server's scope;
// - axe-core on every page, the restore dialog with the keyboard alone,
//   and a walk of the service's page with its backups, the application's
//   pages and the servers, searching the DOM and every answer for the
//   service's password.
//
// Exits 77 (skipped), saying why, without chromium, playwright-core or a
// built dashboard, without dockerd, Caddy, busybox-static, psql, or the
// packages the service images are made of, and under ThreadSanitizer
// (deploy_world.mjs says why).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import * as h from '../integration/harness.mjs';
import { dockerRequest } from '../integration/docker.mjs';
import { BASE_IMAGE, createRepo, gitSource, makeApp, tarOf, waitDeployment, waitJob, webFiles, world } from '../integration/deploy_world.mjs';
import { accessible as axeCheck, dropFile, launch, needDashboard, paintedPixels, playwright, screenshot, walkForSecrets } from './browser.mjs';

const chromium = await playwright();
needDashboard();
if (spawnSync('psql', ['--version']).status !== 0) h.skip('psql is missing (apt-get install postgresql-client)');
const w = await world({ METRICS_SAMPLE_INTERVAL_MS: '1000', METRICS_MINUTE_MS: '6000', METRICS_EBPF: '0' });
const here = path.dirname(new URL(import.meta.url).pathname);
const built = spawnSync(path.join(here, '..', 'images', 'build'), ['postgres'], {
	env: { ...process.env, DOCKER_HOST: w.docker.host }, encoding: 'utf8', timeout: 600000,
});
if (built.status === 77) h.skip(built.stderr.trim());
assert.equal(built.status, 0, `tests/images/build: ${built.stderr}`);

const origin = `http://127.0.0.1:${w.srv.port}`;
const browser = await launch(chromium);
const context = await browser.newContext({ acceptDownloads: true });
// The operator world() made, signed in: its session cookie.
await context.addCookies([{ name: 'steward_session', value: w.owner.cookie, url: origin }]);
const page = await context.newPage();
page.setDefaultTimeout(20000);
const problems = [];
page.on('console', (m) => {
	if (/Content Security Policy|Refused to/i.test(m.text())) problems.push(m.text());
});
page.on('pageerror', (e) => problems.push(String(e)));

const services = [];
after(async () => {
	await browser.close();
	for (const id of services) {
		const list = await dockerRequest('GET', `/containers/json?all=1&filters=${encodeURIComponent(JSON.stringify({ label: [`steward.service=${id}`] }))}`);
		for (const c of list.status === 200 ? list.json() : []) await dockerRequest('DELETE', `/containers/${c.Id}?force=1`);
		await dockerRequest('DELETE', `/volumes/sw-svc-${id}-data`);
	}
	await w.cleanup();
	await h.cleanupAll();
});

const accessible = (what) => axeCheck(page, what);
const shot = (name) => screenshot(page, `operations-real-${name}`);
const button = (name, p = page) => p.getByRole('button', { name, exact: true });
const data = async (method, url, body) => {
	const r = await w.call(method, url, body === undefined ? undefined : { body });
	assert.ok(r.status < 300, `${method} ${url}: ${r.status} ${r.text}`);
	return r.status === 204 ? null : r.json().data;
};

// Waits until check() is truthy, at most `ms`.
async function until(what, check, ms) {
	const end = Date.now() + ms * h.SLACK;
	for (;;) {
		const v = await check();
		if (v) return v;
		if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
		await h.sleep(250);
	}
}

function psql(c, q) {
	const r = spawnSync('psql', ['-h', c.host, '-p', String(c.port), '-U', c.username, '-d', c.database, '-XAtq', '-v', 'ON_ERROR_STOP=1', '-c', q], {
		env: { ...process.env, PGPASSWORD: c.password, PGCONNECT_TIMEOUT: '3' }, encoding: 'utf8',
	});
	return { ok: r.status === 0, out: r.stdout.trim(), err: r.stderr.trim() };
}

const project = await data('POST', '/projects', { name: 'shop' });
const env = project.environments[0].id;
const local = (await data('GET', '/servers')).find((s) => s.isLocal);
let app, password;

// ---------------------------------------------------------------- the application

test('an_application_deployed_from_the_page_runs_for_real', async () => {
	app = await makeApp(w, 'web', { sourceKind: 'UPLOAD' });
	await page.goto(`${origin}/app/applications/${app.id}`);
	await page.getByRole('heading', { name: 'web', exact: true }).waitFor();
	// The upload's progress bar, however briefly shown: every value it took.
	await page.evaluate(() => {
		window.__progress = [];
		new MutationObserver(() => {
			const bar = document.querySelector('progress[aria-label="Upload"]');
			if (bar) window.__progress.push(bar.value);
		}).observe(document.body, { subtree: true, childList: true, attributes: true, characterData: true });
	});
	// An archive big enough to be sent in several pieces (1 MiB of padding).
	const archive = tarOf({ ...webFiles('served by a real container\n'), 'www/padding.bin': crypto.randomBytes(1 << 20).toString('base64') });
	await page.getByLabel('Deploy an archive (tar, tar.gz or zip): choose it, or drop it here').setInputFiles({ name: 'site.tar', mimeType: 'application/x-tar', buffer: archive });
	await page.waitForURL(/\/app\/deployments\/[0-9a-f-]{36}$/);
	const id = page.url().split('/').pop();
	const progress = await page.evaluate(() => window.__progress);
	const end = await waitDeployment(w, id, { timeoutMs: 180000 * h.SLACK });
	assert.equal(end.status, 'SUCCEEDED', `${end.errorMessage}\n${end.logTail}`);
	// The page follows it to the end.
	// The bar was shown while the archive was sent (its last value: all of it).
	assert.ok(progress.length >= 1, 'no progress bar was shown');
	assert.equal(Math.max(...progress), 1, JSON.stringify(progress));
	await page.locator('.title-row .badge').filter({ hasText: 'SUCCEEDED' }).waitFor();
	// Its trigger, and a duration now that it ended.
	await page.reload();
	await page.getByRole('definition').filter({ hasText: 'UPLOAD' }).waitFor();
	const facts = await page.locator('dl.facts').innerText();
	assert.match(facts, /Duration\s+\d/, facts);
	const containers = await data('GET', `/applications/${app.id}/containers`);
	assert.ok(containers.length >= 1, JSON.stringify(containers));
	// The containers tab lists what the engine runs.
	await page.goto(`${origin}/app/applications/${app.id}/containers`);
	const row = page.locator('tr').filter({ hasText: containers[0].name });
	await row.getByText('#1', { exact: true }).waitFor();
	await row.getByText('running', { exact: true }).waitFor();
	await accessible('the containers of a running application');
});

test('a_git_application_is_deployed_with_the_button_listed_with_its_commit_and_rolled_back_from_its_page', async () => {
	const repo = await createRepo({ files: webFiles('shop v1\n'), message: 'First version' });
	const shop = await makeApp(w, 'shop');
	await gitSource(w, shop, repo.fileUrl);
	await page.goto(`${origin}/app/applications/${shop.id}`);
	await page.getByText('No deployments yet.').waitFor();
	const deployOnce = async () => {
		await button('Deploy').click();
		await page.waitForURL(/\/app\/deployments\/[0-9a-f-]{36}$/);
		const id = page.url().split('/').pop();
		const end = await waitDeployment(w, id, { timeoutMs: 180000 * h.SLACK });
		assert.equal(end.status, 'SUCCEEDED', `${end.errorMessage}\n${end.logTail}`);
		await page.locator('.title-row .badge').filter({ hasText: 'SUCCEEDED' }).waitFor();
		return end;
	};
	const first = await deployOnce();
	// The live log showed the build's own lines.
	await page.locator('.log').filter({ hasText: /\S/ }).first().waitFor();
	await page.goto(`${origin}/app/applications/${shop.id}`);
	await deployOnce();
	// The list: status badges, trigger, commit and duration of each.
	await page.goto(`${origin}/app/applications/${shop.id}`);
	const row = (n) => page.locator('tr').filter({ has: page.getByRole('link', { name: `#${n}`, exact: true }) });
	await row(2).locator('.badge-succeeded').waitFor();
	for (const n of [1, 2]) {
		const cells = await row(n).locator('td').allInnerTexts();
		assert.deepEqual([cells[1], cells[2], cells[3]], ['SUCCEEDED', 'MANUAL', `${repo.shas[0].slice(0, 7)} First version`], cells.join(' | '));
		assert.match(cells[5], /^\d+ (s|min)/, cells.join(' | '));
	}
	await accessible('an application with real deployments');
	await shot('deployments-real');
	// Rolled back to #1 from its page: #3, trigger ROLLBACK, runs for real.
	await row(1).getByRole('link', { name: '#1', exact: true }).click();
	await page.getByRole('heading', { name: 'Deployment #1' }).waitFor();
	await button('Roll back to #1').click();
	await page.getByRole('heading', { name: 'Deployment #3' }).waitFor();
	await page.getByRole('definition').filter({ hasText: 'ROLLBACK' }).waitFor();
	const third = (await data('GET', `/deployments?applicationId=${shop.id}`)).find((d) => d.number === 3);
	assert.equal(third.rollbackOf, first.id);
	const end = await waitDeployment(w, third.id, { timeoutMs: 180000 * h.SLACK });
	assert.equal(end.status, 'SUCCEEDED', `${end.errorMessage}\n${end.logTail}`);
	await page.locator('.title-row .badge').filter({ hasText: 'SUCCEEDED' }).waitFor();
});

// ---------------------------------------------------------------- the service's backups

let svc, conn, backup;

test('a_postgresql_service_is_started_and_backed_up_from_the_page', async () => {
	svc = await data('POST', '/services', { name: 'orders', kind: 'POSTGRESQL', version: '15', environmentId: env });
	services.push(svc.id);
	await page.goto(`${origin}/app/services/${svc.id}`);
	await page.getByRole('heading', { name: 'orders', exact: true }).waitFor();
	await button('Start').click();
	// The page reads the job until it ends and says so.
	await page.getByRole('status').filter({ hasText: /^Start succeeded\.$/ }).waitFor({ timeout: 120000 * h.SLACK });
	conn = await data('GET', `/services/${svc.id}/connection`);
	password = conn.password;
	await until('the service answering', async () => psql(conn, 'SELECT 1').ok, 60000);
	assert.ok(psql(conn, "CREATE TABLE orders (id int PRIMARY KEY, what text); INSERT INTO orders SELECT g, 'order ' || g FROM generate_series(1, 300) g").ok);

	await page.reload();
	await button('Back up now').click();
	await page.getByRole('status').filter({ hasText: 'Backup queued.' }).waitFor();
	// The list refreshes itself while the backup is in flight: the runner's pg_dump ends it.
	await page.locator('table .badge-succeeded').waitFor({ timeout: 120000 * h.SLACK });
	[backup] = await data('GET', `/services/${svc.id}/backups`);
	assert.equal(backup.status, 'SUCCEEDED', backup.errorMessage);
	assert.match(backup.sha256, /^[0-9a-f]{64}$/);
	await page.locator(`tr[data-backup="${backup.id}"]`).getByText(`${backup.sizeBytes} bytes`).waitFor();
	await accessible('a service with a backup taken');
	await shot('service-backup');
});

test('the_backup_is_downloaded_through_the_pages_link_with_the_recorded_sha256', async () => {
	const link = page.locator(`tr[data-backup="${backup.id}"]`).getByRole('link', { name: /^Download the backup/ });
	assert.equal(await link.getAttribute('href'), `/services/${svc.id}/backups/${backup.id}/download`);
	const [download] = await Promise.all([page.waitForEvent('download'), link.click()]);
	const bytes = fs.readFileSync(await download.path());
	assert.equal(download.suggestedFilename(), `${backup.id}.pgdump`);
	assert.equal(bytes.length, backup.sizeBytes);
	assert.equal(crypto.createHash('sha256').update(bytes).digest('hex'), backup.sha256);
	assert.equal(bytes.subarray(0, 5).toString(), 'PGDMP', "pg_dump's custom format");
	assert.equal((await w.sql(`SELECT count(*) FROM audit_logs WHERE action = 'service.backup.downloaded'`)).trim(), '1');
});

test('the_backup_is_restored_from_the_page_after_its_confirmation_and_the_rows_come_back', async () => {
	assert.ok(psql(conn, 'DELETE FROM orders WHERE id > 100').ok);
	assert.equal(psql(conn, 'SELECT count(*) FROM orders').out, '100');
	const restores = async () => Number((await w.sql(`SELECT count(*) FROM jobs WHERE kind = 'service.restore'`)).trim());
	// With the keyboard alone: the row's Restore, the dialog, Escape cancels.
	const restore = page.locator(`tr[data-backup="${backup.id}"]`).getByRole('button', { name: /^Restore the backup/ });
	await restore.focus();
	await page.keyboard.press('Enter');
	const dialog = page.getByRole('dialog');
	await dialog.getByText('Changes made since are lost.').waitFor();
	await accessible('the restore confirmation');
	await shot('restore-confirmation');
	await page.keyboard.press('Escape');
	await dialog.waitFor({ state: 'hidden' });
	assert.equal(await restores(), 0, 'a cancelled restore queues nothing');
	// Confirmed: the job is queued and its state said.
	await restore.focus();
	await page.keyboard.press('Enter');
	await button('Restore now', dialog).focus();
	await page.keyboard.press('Enter');
	await page.getByRole('status').filter({ hasText: /^Restore (queued|running|succeeded)\./ }).waitFor();
	assert.equal(await restores(), 1);
	// The page reads the job (GET /jobs/:id) until it ends and says so; the
	// runner restored it into the running service: the rows are back.
	await page.getByRole('status').filter({ hasText: /^Restore succeeded\.$/ }).waitFor({ timeout: 120000 * h.SLACK });
	const job = (await w.sql(`SELECT id FROM jobs WHERE kind = 'service.restore'`)).trim();
	assert.deepEqual(await waitJob(w, job), { status: 'SUCCEEDED', error: '' });
	assert.equal(psql(conn, 'SELECT count(*) FROM orders').out, '300');
	await accessible('a service after a restore');
	await shot('service-restored');
});

test('the_service_is_stopped_and_started_again_from_its_page', async () => {
	const status = async () => (await data('GET', `/services/${svc.id}`)).status;
	await page.goto(`${origin}/app/services/${svc.id}`);
	await page.locator('.title-row .badge-running').waitFor();
	await button('Stop').click();
	await page.getByRole('status').filter({ hasText: /^Stop succeeded\.$/ }).waitFor({ timeout: 60000 * h.SLACK });
	await until('the service stopped', async () => (await status()) === 'STOPPED', 60000);
	assert.equal(psql(conn, 'SELECT 1').ok, false, 'a stopped service answers nothing');
	await page.reload();
	await page.locator('.title-row .badge-stopped').waitFor();
	await button('Start').click();
	await page.getByRole('status').filter({ hasText: /^Start succeeded\.$/ }).waitFor({ timeout: 60000 * h.SLACK });
	await until('the service running', async () => (await status()) === 'RUNNING', 60000);
	await until('the service answering again', async () => psql(conn, 'SELECT count(*) FROM orders').out === '300', 60000);
	await page.reload();
	await page.locator('.title-row .badge-running').waitFor();
});

// ---------------------------------------------------------------- the application's metrics

test('the_applications_metrics_tab_charts_the_minutes_the_sample_loop_wrote', { timeout: 300000 * h.SLACK }, async () => {
	// The loop writes a minute once it is over (a shortened one where
	// stewardd knows METRICS_MINUTE_MS; otherwise a real one).
	const points = await until('a minute row of the application', async () => {
		const p = (await data('GET', `/applications/${app.id}/metrics?resolution=MINUTE`)).points;
		return p.length > 0 && p;
	}, 60000);
	const ids = await data('GET', `/applications/${app.id}/containers`);
	assert.ok(points.some((p) => ids.some((c) => c.id === p.containerId || c.id?.startsWith(p.containerId) || p.containerId.startsWith(c.id))), `${JSON.stringify(points[0])} of ${JSON.stringify(ids)}`);
	await page.goto(`${origin}/app/applications/${app.id}/metrics`);
	const tab = page.locator('[data-resolution="MINUTE"]');
	for (const title of ['CPU \\(% of one core\\)', 'Memory']) {
		const chart = tab.locator('figure.chart').filter({ has: page.locator('figcaption', { hasText: new RegExp(`^${title}$`) }) });
		await until(`${title} drawn`, async () => Number(await chart.getAttribute('data-points')) >= 1, 20000);
		const painted = await paintedPixels(chart.locator('canvas'));
		assert.ok(painted > 100, `${title}: ${painted} painted pixels`);
	}
	// The label names the container the engine runs.
	const short = points[0].containerId.slice(0, 12);
	await page.getByRole('img', { name: new RegExp(`^CPU \\(% of one core\\): \\d+ points?, latest .*${short}`) }).waitFor();
	await accessible('an application’s metrics from real minutes');
	await shot('application-metrics');
});

test('an_archive_dropped_on_the_page_that_fails_to_build_shows_the_error_and_offers_no_rollback', async () => {
	await page.goto(`${origin}/app/applications/${app.id}`);
	await page.getByRole('heading', { name: 'web', exact: true }).waitFor();
	const broken = tarOf({ Dockerfile: `FROM ${BASE_IMAGE}\nRUN exit 3\n` });
	await dropFile(page, page.locator('.drop'), 'broken.tar', broken);
	await page.waitForURL(/\/app\/deployments\/[0-9a-f-]{36}$/);
	const end = await waitDeployment(w, page.url().split('/').pop(), { timeoutMs: 180000 * h.SLACK });
	assert.equal(end.status, 'FAILED');
	assert.ok(end.errorMessage, 'a failed deployment says why');
	await page.locator('.title-row .badge').filter({ hasText: 'FAILED' }).waitFor();
	await page.getByText(end.errorMessage.split('\n')[0].slice(0, 60)).first().waitFor();
	assert.equal(await page.getByRole('button', { name: /^Roll back/ }).count(), 0);
	await accessible('a deployment that failed to build');
	await shot('deployment-failed');
	// What ran before runs still.
	assert.equal((await data('GET', `/applications/${app.id}/containers`)).filter((c) => c.state === 'running').length, 1);
});

// ---------------------------------------------------------------- servers list

test('the_servers_list_badges_a_server_whose_figures_describe_a_container', async () => {
	const sample = await data('GET', `/servers/${local.id}/sample`);
	await page.goto(`${origin}/app/servers`);
	await page.getByRole('link', { name: local.name, exact: true }).waitFor();
	const row = page.locator('tr').filter({ has: page.getByRole('link', { name: local.name, exact: true }) });
	if (sample.scope === 'CONTAINER') {
		await row.locator('.badge[data-scope="CONTAINER"]').waitFor();
		await page.locator('.banner[data-scope="CONTAINER"]').waitFor();
	} else {
		// Once the sample was answered: no badge, no banner.
		await page.waitForResponse((r) => r.url().endsWith(`/servers/${local.id}/sample`)).catch(() => {});
		await page.waitForLoadState('networkidle');
		assert.equal(await row.locator('.badge[data-scope]').count(), 0);
		assert.equal(await page.locator('.banner').count(), 0);
		process.stdout.write(`# the local server's scope is ${sample.scope}: no badge (operations.test.mjs shows the CONTAINER case)\n`);
	}
	await accessible('the servers list');
});

// ---------------------------------------------------------------- walk

test('the_backups_and_application_pages_are_walked_and_the_services_password_is_nowhere', async () => {
	assert.ok(password && password.length >= 16);
	await walkForSecrets(page, {
		origin,
		pages: [
			[`/app/services/${svc.id}`, 'orders'],
			['/app/services', 'Services'],
			[`/app/applications/${app.id}`, 'web'],
			[`/app/applications/${app.id}/metrics`, 'web'],
			[`/app/applications/${app.id}/containers`, 'web'],
			['/app/servers', 'Servers'],
			[`/app/servers/${local.id}`, local.name],
		],
		secrets: { servicePassword: password, connectionUrl: conn.url },
	});
});

test('a_restore_the_api_refuses_shows_its_message_in_the_dialog', async () => {
	await page.goto(`${origin}/app/services/${svc.id}`);
	const restore = page.locator(`tr[data-backup="${backup.id}"]`).getByRole('button', { name: /^Restore the backup/ });
	await restore.click();
	const dialog = page.getByRole('dialog');
	await dialog.getByText('Changes made since are lost.').waitFor();
	// Meanwhile someone else deletes the service (its backups' records go with it).
	await data('DELETE', `/services/${svc.id}`);
	const refusal = await w.call('POST', `/services/${svc.id}/backups/${backup.id}/restore`);
	assert.equal(refusal.status, 404);
	await button('Restore now', dialog).click();
	await dialog.getByRole('alert').filter({ hasText: refusal.json().error.message }).waitFor();
	assert.equal(await dialog.isVisible(), true, 'the dialog stays open with the refusal');
	await accessible('a refused restore');
	await page.keyboard.press('Escape');
	await dialog.waitFor({ state: 'hidden' });
});

test('the_pages_met_no_csp_refusal_and_no_script_error', () => {
	assert.deepEqual(problems, []);
});
