// Alerts raised by the metrics loop. SERVER_UNREACHABLE opens when a
// server is OFFLINE and has not been heard for durationSeconds, resolves
// when it is ONLINE again; DEPLOYMENT_FAILED opens when a deployment of
// the rule's application fails, resolves when one succeeds; each notifies
// signed. A METRIC_THRESHOLD rule on the local
// server opens its alert once its condition has held for durationSeconds
// (the pending period), notifies the rule's webhook channel with a signed
// delivery (received on 127.0.0.1 and verified), shows in /alerts and
// /alerts/summary, and resolves itself (notified again) once the value has
// been past the threshold by the hysteresis margin for durationSeconds.
//
// The loop samples every quarter second here (METRICS_SAMPLE_INTERVAL_MS,
// a test setting); durationSeconds is at least 60 by the rules' own
// validation, and counts in the loop's minutes: with METRICS_MINUTE_MS
// (another test setting) at 6 s, the rule's 60 pass in 6 s.

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import http from 'node:http';
import * as h from './harness.mjs';
import { call, ok, setup } from './identity.mjs';
import { deploymentRows } from './deployment_rows.mjs';

h.stewarddPath();
const pg = await h.startPostgres();
const srv = await h.startStewardd({
	db: pg,
	env: { METRICS_SAMPLE_INTERVAL_MS: 250, METRICS_MINUTE_MS: 6000, METRICS_EBPF: '0', NOTIFY_RETRY_BASE_MS: '50', SMTP_URL: null },
});
after(h.cleanupAll);
const sql = async (q) => (await pg.psql(q, srv.dbName)).trim();
// A rule's durationSeconds of 60, in the loop's 6-second minutes.
const PENDING_MS = 6000;

const hits = [];
const receiver = http.createServer((req, res) => {
	const chunks = [];
	req.on('data', (c) => chunks.push(c));
	req.on('end', () => {
		hits.push({ headers: req.headers, raw: Buffer.concat(chunks) });
		res.writeHead(200);
		res.end('ok');
	});
});
await new Promise((resolve) => receiver.listen(0, '127.0.0.1', resolve));
after(() => new Promise((resolve) => receiver.close(resolve)));

const owner = await setup(srv); // OWNER and operator: may allow a loopback target
const server = await sql(`SELECT id FROM servers WHERE organization_id = '${owner.org.id}' AND is_local`);

function assertSigned(secret, hit) {
	const ts = hit.headers['steward-timestamp'];
	assert.ok(Math.abs(Number(ts) - Date.now() / 1000) < 120, `timestamp ${ts}`);
	const want = `v1=${crypto.createHmac('sha256', secret).update(Buffer.concat([Buffer.from(`${ts}.`), hit.raw])).digest('hex')}`;
	assert.equal(hit.headers['steward-signature'], want, 'Steward-Signature verifies');
}

async function waitFor(what, pred, ms) {
	const deadline = Date.now() + ms;
	for (;;) {
		const v = await pred();
		if (v) return v;
		if (Date.now() > deadline) throw new Error(`${what} within ${ms} ms; output:\n${srv.logs.text().slice(-3000)}`);
		await h.sleep(250);
	}
}

test('a METRIC_THRESHOLD rule opens after its pending period, notifies signed, resolves with hysteresis', { timeout: 240000 }, async () => {
	const channel = await ok(call(srv, 'POST', '/notification-channels', owner, {
		body: { name: 'hook', kind: 'WEBHOOK', url: `http://127.0.0.1:${receiver.address().port}/hook`, allowPrivateTargets: true },
	}), 201);
	// Memory in use is above 1% of the host's on any machine that runs this.
	const created = Date.now();
	const rule = await ok(call(srv, 'POST', '/alerts/rules', owner, {
		body: { name: 'memory', kind: 'METRIC_THRESHOLD', metric: 'MEMORY_PERCENT', operator: 'ABOVE', threshold: 1,
			durationSeconds: 60, serverId: server, severity: 'CRITICAL', channelIds: [channel.id] },
	}), 201);

	// Pending for 60 scaled seconds (PENDING_MS): nothing before.
	await h.sleep(PENDING_MS - 2000);
	assert.equal(await sql(`SELECT count(*) FROM alerts`), '0', 'no alert within the pending period');
	const opened = await waitFor('the alert opens', () => hits.find((x) => x.headers['steward-event'] === 'alert.opened'), 40000);
	assert.ok(Date.now() - created >= PENDING_MS, 'not before durationSeconds');
	assertSigned(channel.signingSecret, opened);
	const body = JSON.parse(opened.raw.toString('utf8'));
	assert.equal(body.type, 'alert.opened');
	assert.equal(body.data.ruleId, rule.id);
	assert.equal(body.data.serverId, server);
	assert.equal(body.data.status, 'OPEN');
	assert.ok(body.data.value > 1);
	const list = await ok(call(srv, 'GET', '/alerts?status=OPEN', owner));
	assert.equal(list.length, 1);
	assert.equal(list[0].severity, 'CRITICAL');
	assert.deepEqual(await ok(call(srv, 'GET', '/alerts/summary', owner)), { open: 1, openCritical: 1, openWarning: 0 });

	// Still breaching: one open alert, one delivery.
	await h.sleep(3000);
	assert.equal(await sql(`SELECT count(*) FROM alerts`), '1');
	assert.equal(hits.filter((x) => x.headers['steward-event'] === 'alert.opened').length, 1);

	// The threshold moves far above the value: clear past the margin, and
	// resolved once that has held for durationSeconds.
	const cleared = Date.now();
	await ok(call(srv, 'PATCH', `/alerts/rules/${rule.id}`, owner, { body: { threshold: 99.9 } }));
	const resolved = await waitFor('the alert resolves', () => hits.find((x) => x.headers['steward-event'] === 'alert.resolved'), 90000);
	assert.ok(Date.now() - cleared >= PENDING_MS - 1000, 'not before durationSeconds');
	assertSigned(channel.signingSecret, resolved);
	assert.equal(JSON.parse(resolved.raw.toString('utf8')).data.status, 'RESOLVED');
	assert.equal(await sql(`SELECT status || ' ' || (resolved_by IS NULL) FROM alerts`), 'RESOLVED true');
	assert.deepEqual(await ok(call(srv, 'GET', '/alerts/summary', owner)), { open: 0, openCritical: 0, openWarning: 0 });
});

test('SERVER_UNREACHABLE and DEPLOYMENT_FAILED open, notify signed, and resolve from the database state', { timeout: 60000 }, async () => {
	const channel = await ok(call(srv, 'POST', '/notification-channels', owner, {
		body: { name: 'hook2', kind: 'WEBHOOK', url: `http://127.0.0.1:${receiver.address().port}/hook2`, allowPrivateTargets: true },
	}), 201);
	const events = (type, key, id) => hits.filter((x) => x.headers['steward-event'] === type).map((x) => ({ x, b: JSON.parse(x.raw.toString('utf8')) }))
		.filter(({ b }) => b.data[key] === id);

	// A remote server last heard 10 minutes ago, and one heard just now.
	const far = await sql(`INSERT INTO servers (organization_id, name, status, last_seen_at) VALUES ('${owner.org.id}', 'far', 'OFFLINE', now() - interval '10 minutes') RETURNING id`);
	const near = await sql(`INSERT INTO servers (organization_id, name, status, last_seen_at) VALUES ('${owner.org.id}', 'near', 'OFFLINE', now()) RETURNING id`);
	const rule = await ok(call(srv, 'POST', '/alerts/rules', owner, {
		body: { name: 'unreachable', kind: 'SERVER_UNREACHABLE', durationSeconds: 300, channelIds: [channel.id] },
	}), 201);
	const opened = await waitFor('SERVER_UNREACHABLE opens', () => events('alert.opened', 'serverId', far)[0], 20000);
	assertSigned(channel.signingSecret, opened.x);
	assert.equal(opened.b.data.ruleId, rule.id);
	await h.sleep(2500);
	assert.equal(events('alert.opened', 'serverId', far).length, 1, 'once');
	assert.equal(events('alert.opened', 'serverId', near).length, 0, 'not before durationSeconds');
	assert.equal(await sql(`SELECT count(*) FROM alerts WHERE rule_id = '${rule.id}' AND status = 'OPEN'`), '1');
	await sql(`UPDATE servers SET status = 'ONLINE', last_seen_at = now() WHERE id = '${far}'`);
	const back = await waitFor('SERVER_UNREACHABLE resolves', () => events('alert.resolved', 'serverId', far)[0], 20000);
	assertSigned(channel.signingSecret, back.x);
	assert.equal(await sql(`SELECT count(*) FROM alerts WHERE rule_id = '${rule.id}' AND status = 'OPEN'`), '0');

	// A deployment of the rule's application fails; another application's does not count.
	const project = await sql(`INSERT INTO projects (organization_id, name) VALUES ('${owner.org.id}', 'p') RETURNING id`);
	const env = await sql(`INSERT INTO environments (organization_id, project_id, name) VALUES ('${owner.org.id}', '${project}', 'production') RETURNING id`);
	const app = await sql(`INSERT INTO applications (organization_id, project_id, environment_id, server_id, name) VALUES ('${owner.org.id}', '${project}', '${env}', '${server}', 'web') RETURNING id`);
	const app2 = await sql(`INSERT INTO applications (organization_id, project_id, environment_id, server_id, name) VALUES ('${owner.org.id}', '${project}', '${env}', '${server}', 'api') RETURNING id`);
	const { insertDeployment } = deploymentRows(pg, srv);
	await insertDeployment(owner, app, { status: 'FAILED', error: 'before the rule' });
	const failedRule = await ok(call(srv, 'POST', '/alerts/rules', owner, {
		body: { name: 'failed', kind: 'DEPLOYMENT_FAILED', applicationId: app, channelIds: [channel.id] },
	}), 201);
	await h.sleep(2500);
	assert.equal(events('alert.opened', 'applicationId', app).length, 0, 'a failure before the rule does not count');
	await insertDeployment(owner, app2, { status: 'FAILED', error: 'other' });
	await insertDeployment(owner, app, { status: 'FAILED', error: 'the build failed' });
	const failed = await waitFor('DEPLOYMENT_FAILED opens', () => events('alert.opened', 'applicationId', app)[0], 20000);
	assertSigned(channel.signingSecret, failed.x);
	assert.equal(failed.b.data.ruleId, failedRule.id);
	assert.match(failed.b.text, /failed: the build failed/);
	assert.equal(events('alert.opened', 'applicationId', app2).length, 0);
	await insertDeployment(owner, app, { status: 'SUCCEEDED' });
	await waitFor('DEPLOYMENT_FAILED resolves', () => events('alert.resolved', 'applicationId', app)[0], 20000);
	assert.equal(await sql(`SELECT count(*) FROM alerts WHERE rule_id = '${failedRule.id}'`), '1');
	assert.deepEqual(await ok(call(srv, 'GET', '/alerts/summary', owner)), { open: 0, openCritical: 0, openWarning: 0 });
});
