// Alerts and alert rules: the /alerts/rules and /alerts/summary paths beside
// /alerts/:id, every rule route's success and each validation failure
// (field by field, kind by kind), alerts listed, filtered, read and
// resolved (twice), the summary's three counts, and 404 across
// organizations.
//
// Alerts are opened by the evaluator of a later issue; here they are
// opened directly in PostgreSQL with steward_alert_open(), the function the
// evaluator will call. Applications, whose routes belong to another part of
// this issue, are inserted directly in PostgreSQL too.

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import * as h from './harness.mjs';
const { TS, UUID, NIL } = h;
import { call, ok, setup, signup, member } from './identity.mjs';

h.stewarddPath();
const pg = await h.startPostgres();
const srv = await h.startStewardd({ db: pg, env: { SIGNUP_ENABLED: 'true' } });
after(h.cleanupAll);

const sql = async (q) => (await pg.psql(q, srv.dbName)).trim();
// Audit records are written after the answer: polls q until it yields a row.
const audited = async (q) => { for (let i = 0; ; i++) { const v = (await sql(q)).trim(); if ((v && v !== '0') || i > 150) return v; await h.sleep(20); } };

const owner = await setup(srv);
const plain = await member(srv, owner, 'member@a.example', 'MEMBER');
const other = await signup(srv, 'owner@b.example', 'Org B');
const A = owner.org.id;
const B = other.org.id;

const serverA = await sql(`SELECT id FROM servers WHERE organization_id = '${A}' AND is_local`);
const serverB = await sql(`SELECT id FROM servers WHERE organization_id = '${B}' AND is_local`);

// An application of A, inserted directly in PostgreSQL (its routes are
// tested elsewhere).
async function insertApplication(org, server, name) {
	const project = await sql(`INSERT INTO projects (organization_id, name) VALUES ('${org}', '${name}-project') RETURNING id`);
	const env = await sql(`INSERT INTO environments (organization_id, project_id, name) VALUES ('${org}', '${project}', 'production') RETURNING id`);
	return sql(`INSERT INTO applications (organization_id, project_id, environment_id, server_id, name)
		VALUES ('${org}', '${project}', '${env}', '${server}', '${name}') RETURNING id`);
}
const appA = await insertApplication(A, serverA, 'web');
const appB = await insertApplication(B, serverB, 'web');

const channelA = (await ok(call(srv, 'POST', '/notification-channels', owner, { body: { name: 'ops', kind: 'WEBHOOK', url: 'https://example.com/a' } }), 201)).id;
const channelA2 = (await ok(call(srv, 'POST', '/notification-channels', owner, { body: { name: 'ops2', kind: 'WEBHOOK', url: 'https://example.com/b' } }), 201)).id;
const channelB = (await ok(call(srv, 'POST', '/notification-channels', other, { body: { name: 'ops', kind: 'WEBHOOK', url: 'https://example.com/c' } }), 201)).id;

async function fields(p) {
	return h.assertError(await p, 422, 'VALIDATION_FAILED').fields;
}
const createRule = (who, body) => call(srv, 'POST', '/alerts/rules', who, { body });
const cpu = { name: 'cpu-high', kind: 'METRIC_THRESHOLD', metric: 'CPU_PERCENT', operator: 'ABOVE', threshold: 90.5, serverId: serverA };

// Opens an alert directly in PostgreSQL, as the evaluator will.
async function openAlert(org, rule, severity, title, { server = null, application = null } = {}) {
	const q = (v) => (v === null ? 'NULL' : `'${v}'`);
	return sql(`SELECT (steward_alert_open('${org}', ${q(rule)}, '${severity}', '${title}', 'details', ${q(server)}::uuid, ${q(application)}::uuid)).id`);
}

// ------------------------------------------------------------ paths

test('rules_and_summary_are_not_taken_for_an_alert_id', async () => {
	const rules = await call(srv, 'GET', '/alerts/rules', plain);
	assert.equal(rules.status, 200, rules.text);
	assert.deepEqual(rules.json(), { data: [], pagination: { nextCursor: null } });
	const summary = await ok(call(srv, 'GET', '/alerts/summary', plain));
	assert.deepEqual(summary, { open: 0, openCritical: 0, openWarning: 0 });
	// Anything else under /alerts/ is an alert id, and not one.
	for (const p of ['/alerts/rule', '/alerts/summaries', `/alerts/${NIL}`, '/alerts/rules/summary', `/alerts/rules/${NIL}`]) {
		h.assertError(await call(srv, 'GET', p, plain), 404, 'NOT_FOUND');
	}
	h.assertError(await call(srv, 'POST', '/alerts/rules/resolve', plain), 404, 'NOT_FOUND');
	h.assertError(await call(srv, 'POST', '/alerts/summary/resolve', plain), 404, 'NOT_FOUND');
	const res = await call(srv, 'DELETE', '/alerts/summary', plain);
	h.assertError(res, 405, 'METHOD_NOT_ALLOWED');
	assert.equal(res.headers.allow, 'GET, HEAD, OPTIONS');
	const res2 = await call(srv, 'PUT', '/alerts/rules', plain, { body: {} });
	h.assertError(res2, 405, 'METHOD_NOT_ALLOWED');
	assert.match(res2.headers.allow, /GET.*POST/);
});

// ------------------------------------------------------------ rules

let cpuRule;

test('create_a_metric_threshold_rule', async () => {
	const r = await ok(createRule(plain, { ...cpu, channelIds: [channelA2, channelA, channelA], description: 'Busy host', severity: 'CRITICAL' }), 201);
	assert.match(r.id, UUID);
	assert.equal(r.name, 'cpu-high');
	assert.equal(r.description, 'Busy host');
	assert.equal(r.kind, 'METRIC_THRESHOLD');
	assert.equal(r.severity, 'CRITICAL');
	assert.equal(r.metric, 'CPU_PERCENT');
	assert.equal(r.operator, 'ABOVE');
	assert.equal(r.threshold, 90.5);
	assert.equal(r.durationSeconds, 300, 'the default duration');
	assert.equal(r.serverId, serverA);
	assert.equal(r.applicationId, null);
	assert.equal(r.enabled, true);
	assert.deepEqual(r.channelIds, [channelA, channelA2].sort(), 'each once, sorted');
	assert.match(r.createdAt, TS);
	assert.match(r.updatedAt, TS);
	cpuRule = r;
	assert.deepEqual(await ok(call(srv, 'GET', `/alerts/rules/${r.id}`, owner)), r);
	assert.equal(await audited(`SELECT metadata->>'name' FROM audit_logs WHERE action = 'alert_rule.created' AND target_id = '${r.id}'`), 'cpu-high');
});

test('create_the_other_kinds', async () => {
	const mem = await ok(createRule(plain, { name: 'app-memory', kind: 'METRIC_THRESHOLD', metric: 'MEMORY_PERCENT', operator: 'BELOW', threshold: 5, durationSeconds: 60, applicationId: appA }), 201);
	assert.equal(mem.applicationId, appA);
	assert.equal(mem.serverId, null);
	assert.equal(mem.severity, 'WARNING', 'the default severity');
	const net = await ok(createRule(plain, { name: 'net', kind: 'METRIC_THRESHOLD', metric: 'NETWORK_RX_BYTES_PER_SECOND', operator: 'ABOVE', threshold: 1e12, serverId: serverA }), 201);
	assert.equal(net.threshold, 1e12);
	const down = await ok(createRule(plain, { name: 'any-server-down', kind: 'SERVER_UNREACHABLE' }), 201);
	assert.equal(down.serverId, null, 'null: every server');
	assert.equal(down.durationSeconds, 300);
	assert.equal(down.metric, null);
	assert.equal(down.threshold, null);
	const local = await ok(createRule(plain, { name: 'local-down', kind: 'SERVER_UNREACHABLE', serverId: serverA, durationSeconds: 86400, enabled: false }), 201);
	assert.equal(local.durationSeconds, 86400);
	assert.equal(local.enabled, false);
	const deploys = await ok(createRule(plain, { name: 'web-deploys', kind: 'DEPLOYMENT_FAILED', applicationId: appA }), 201);
	assert.equal(deploys.durationSeconds, null);
	assert.deepEqual(deploys.channelIds, []);
	await ok(createRule(plain, { name: 'all-deploys', kind: 'DEPLOYMENT_FAILED' }), 201);
});

test('create_validates_each_field', async () => {
	const f0 = await fields(createRule(plain, {}));
	assert.deepEqual(f0.name, ['is required']);
	assert.deepEqual(f0.kind, ['is required']);
	const bad = async (over, field, re) => {
		const f = await fields(createRule(plain, { ...cpu, name: 'v1', ...over }));
		assert.ok(f[field], `${JSON.stringify(over)}: ${JSON.stringify(f)}`);
		if (re) assert.match(f[field][0], re);
	};
	await bad({ name: 'CPU High' }, 'name');
	await bad({ description: 'x'.repeat(501) }, 'description');
	await bad({ kind: 'CPU' }, 'kind', /METRIC_THRESHOLD, SERVER_UNREACHABLE or DEPLOYMENT_FAILED/);
	await bad({ severity: 'INFO' }, 'severity');
	await bad({ metric: 'TEMPERATURE' }, 'metric');
	await bad({ operator: 'EQUALS' }, 'operator');
	await bad({ threshold: 'high' }, 'threshold');
	await bad({ threshold: -1 }, 'threshold');
	await bad({ threshold: 1e16 }, 'threshold');
	await bad({ threshold: 100.5 }, 'threshold', /0 to 100 for a percentage/);
	await bad({ durationSeconds: 59 }, 'durationSeconds');
	await bad({ durationSeconds: 86401 }, 'durationSeconds');
	await bad({ durationSeconds: 90.5 }, 'durationSeconds');
	await bad({ serverId: 'local' }, 'serverId');
	await bad({ serverId: NIL }, 'serverId', /not a server of the organization/);
	await bad({ serverId: serverB }, 'serverId', /not a server of the organization/);
	await bad({ serverId: null, applicationId: appB }, 'applicationId', /not an application of the organization/);
	await bad({ enabled: 'yes' }, 'enabled');
	await bad({ channelIds: channelA }, 'channelIds');
	await bad({ channelIds: ['ops'] }, 'channelIds');
	await bad({ channelIds: Array.from({ length: 11 }, () => channelA) }, 'channelIds');
	await bad({ channelIds: [channelB] }, 'channelIds', /not the organization's/);
	await bad({ channelIds: [NIL] }, 'channelIds', /not the organization's/);
	await bad({ colour: 'red' }, 'colour', /is not a known field/);
	// The rules of METRIC_THRESHOLD.
	await bad({ metric: undefined }, 'metric', /is required for METRIC_THRESHOLD/);
	await bad({ operator: null }, 'operator', /is required for METRIC_THRESHOLD/);
	await bad({ threshold: null }, 'threshold', /is required for METRIC_THRESHOLD/);
	await bad({ serverId: undefined }, 'serverId', /is required for METRIC_THRESHOLD rules, or applicationId/);
	await bad({ applicationId: appA }, 'applicationId', /cannot be given with serverId/);
	await bad({ serverId: null, applicationId: appA, metric: 'DISK_PERCENT' }, 'metric', /servers only/);
	// The rules of the other kinds.
	const down = { name: 'v1', kind: 'SERVER_UNREACHABLE' };
	assert.match((await fields(createRule(plain, { ...down, metric: 'CPU_PERCENT' }))).metric[0], /METRIC_THRESHOLD rules only/);
	assert.match((await fields(createRule(plain, { ...down, operator: 'ABOVE' }))).operator[0], /METRIC_THRESHOLD rules only/);
	assert.match((await fields(createRule(plain, { ...down, threshold: 1 }))).threshold[0], /METRIC_THRESHOLD rules only/);
	assert.match((await fields(createRule(plain, { ...down, applicationId: appA }))).applicationId[0], /not used by SERVER_UNREACHABLE/);
	const deploys = { name: 'v1', kind: 'DEPLOYMENT_FAILED' };
	assert.match((await fields(createRule(plain, { ...deploys, serverId: serverA }))).serverId[0], /not used by DEPLOYMENT_FAILED/);
	assert.match((await fields(createRule(plain, { ...deploys, durationSeconds: 60 }))).durationSeconds[0], /not used by DEPLOYMENT_FAILED/);
	h.assertError(await createRule(plain, cpu), 409, 'ALERT_RULE_EXISTS');
	assert.equal(await sql(`SELECT count(*) FROM alert_rules WHERE name = 'v1'`), '0');
});

test('update_is_partial_and_held_to_the_rules_of_the_kind', async () => {
	const p = `/alerts/rules/${cpuRule.id}`;
	const u = await ok(call(srv, 'PATCH', p, plain, { body: { threshold: 75, durationSeconds: 120 } }));
	assert.equal(u.threshold, 75);
	assert.equal(u.durationSeconds, 120);
	assert.equal(u.metric, 'CPU_PERCENT', 'untouched');
	assert.deepEqual(u.channelIds, cpuRule.channelIds, 'untouched');
	assert.deepEqual((await fields(call(srv, 'PATCH', p, plain, { body: { kind: 'SERVER_UNREACHABLE' } }))).kind, ['cannot be changed']);
	assert.match((await fields(call(srv, 'PATCH', p, plain, { body: { applicationId: appA } }))).applicationId[0], /cannot be given with serverId/);
	assert.match((await fields(call(srv, 'PATCH', p, plain, { body: { threshold: null } }))).threshold[0], /is required/);
	assert.match((await fields(call(srv, 'PATCH', p, plain, { body: { channelIds: [channelB] } }))).channelIds[0], /not the organization's/);
	assert.deepEqual((await fields(call(srv, 'PATCH', p, plain, { body: { channelIds: null } }))).channelIds, ['must not be null']);
	// From the server to the application in one request.
	const moved = await ok(call(srv, 'PATCH', p, plain, { body: { serverId: null, applicationId: appA, channelIds: [channelA] } }));
	assert.equal(moved.serverId, null);
	assert.equal(moved.applicationId, appA);
	assert.deepEqual(moved.channelIds, [channelA]);
	// durationSeconds null returns to the default.
	assert.equal((await ok(call(srv, 'PATCH', p, plain, { body: { durationSeconds: null, enabled: false } }))).durationSeconds, 300);
	h.assertError(await call(srv, 'PATCH', p, plain, { body: { name: 'net' } }), 409, 'ALERT_RULE_EXISTS');
	cpuRule = await ok(call(srv, 'PATCH', p, plain, { body: { serverId: serverA, applicationId: null, enabled: true } }));
	assert.equal(cpuRule.serverId, serverA);
});

test('list_filters_and_pages_rules', async () => {
	const all = await ok(call(srv, 'GET', '/alerts/rules', plain));
	assert.equal(all.length, 7);
	assert.deepEqual((await ok(call(srv, 'GET', '/alerts/rules?kind=SERVER_UNREACHABLE&order=asc', plain))).map((r) => r.name), ['any-server-down', 'local-down']);
	assert.deepEqual((await ok(call(srv, 'GET', '/alerts/rules?enabled=false', plain))).map((r) => r.name), ['local-down']);
	const page = await call(srv, 'GET', '/alerts/rules?limit=2', plain);
	assert.equal(page.json().data.length, 2);
	assert.ok(page.json().pagination.nextCursor);
	const next = await call(srv, 'GET', `/alerts/rules?limit=2&cursor=${encodeURIComponent(page.json().pagination.nextCursor)}`, plain);
	assert.deepEqual(next.json().data.map((r) => r.id), all.slice(2, 4).map((r) => r.id));
	for (const q of ['kind=CPU', 'enabled=1', 'limit=201', 'severity=CRITICAL']) {
		h.assertError(await call(srv, 'GET', `/alerts/rules?${q}`, plain), 422, 'VALIDATION_FAILED');
	}
});

test('another_organizations_rule_is_not_found', async () => {
	const p = `/alerts/rules/${cpuRule.id}`;
	h.assertError(await call(srv, 'GET', p, other), 404, 'NOT_FOUND');
	h.assertError(await call(srv, 'PATCH', p, other, { body: { enabled: false } }), 404, 'NOT_FOUND');
	h.assertError(await call(srv, 'DELETE', p, other), 404, 'NOT_FOUND');
	assert.deepEqual(await ok(call(srv, 'GET', '/alerts/rules', other)), []);
	assert.equal(await sql(`SELECT enabled FROM alert_rules WHERE id = '${cpuRule.id}'`), 't');
});

// ------------------------------------------------------------ alerts

let critical; // an open CRITICAL alert of cpuRule
let warning;  // an open WARNING alert of the SERVER_UNREACHABLE rule

test('alerts_opened_in_postgresql_are_listed_and_counted', async () => {
	const down = (await ok(call(srv, 'GET', '/alerts/rules?kind=SERVER_UNREACHABLE&order=asc', plain)))[0];
	critical = await openAlert(A, cpuRule.id, 'CRITICAL', 'CPU above 75% on local', { server: serverA });
	warning = await openAlert(A, down.id, 'WARNING', 'Server local unreachable', { server: serverA });
	// The evaluator asking again while it is open gets the same alert.
	assert.equal(await openAlert(A, cpuRule.id, 'CRITICAL', 'CPU above 75% on local', { server: serverA }), critical);
	await openAlert(B, null, 'CRITICAL', 'B only');
	assert.deepEqual(await ok(call(srv, 'GET', '/alerts/summary', plain)), { open: 2, openCritical: 1, openWarning: 1 });
	assert.deepEqual(await ok(call(srv, 'GET', '/alerts/summary', other)), { open: 1, openCritical: 1, openWarning: 0 });
	const a = await ok(call(srv, 'GET', `/alerts/${critical}`, plain));
	assert.equal(a.id, critical);
	assert.equal(a.ruleId, cpuRule.id);
	assert.equal(a.ruleName, 'cpu-high');
	assert.equal(a.severity, 'CRITICAL');
	assert.equal(a.status, 'OPEN');
	assert.equal(a.title, 'CPU above 75% on local');
	assert.equal(a.message, 'details');
	assert.equal(a.serverId, serverA);
	assert.equal(a.applicationId, null);
	assert.match(a.createdAt, TS);
	assert.equal(a.resolvedAt, null);
	assert.equal(a.resolvedBy, null);
	const list = await ok(call(srv, 'GET', '/alerts', plain));
	assert.deepEqual(list.map((x) => x.id).sort(), [critical, warning].sort());
	assert.deepEqual((await ok(call(srv, 'GET', '/alerts?severity=WARNING', plain))).map((x) => x.id), [warning]);
	assert.deepEqual((await ok(call(srv, 'GET', `/alerts?ruleId=${cpuRule.id}`, plain))).map((x) => x.id), [critical]);
	assert.deepEqual(await ok(call(srv, 'GET', '/alerts?status=RESOLVED', plain)), []);
	for (const q of ['status=CLOSED', 'severity=LOW', 'ruleId=cpu', 'since=today']) {
		h.assertError(await call(srv, 'GET', `/alerts?${q}`, plain), 422, 'VALIDATION_FAILED');
	}
});

test('resolve_records_who_and_when_and_a_repeat_changes_nothing', async () => {
	const r = await ok(call(srv, 'POST', `/alerts/${critical}/resolve`, plain));
	assert.equal(r.status, 'RESOLVED');
	assert.match(r.resolvedAt, TS);
	assert.equal(r.resolvedBy, plain.user.id);
	const again = await ok(call(srv, 'POST', `/alerts/${critical}/resolve`, owner));
	assert.deepEqual(again, r, 'unchanged: the first resolution stays');
	assert.equal(await audited(`SELECT count(*) FROM audit_logs WHERE action = 'alert.resolved' AND target_id = '${critical}'`), '1');
	await h.sleep(100); // a second record would be written as late
	assert.equal(await sql(`SELECT count(*) FROM audit_logs WHERE action = 'alert.resolved' AND target_id = '${critical}'`), '1', 'audited once');
	assert.deepEqual(await ok(call(srv, 'GET', '/alerts/summary', plain)), { open: 1, openCritical: 0, openWarning: 1 });
	assert.deepEqual((await ok(call(srv, 'GET', '/alerts?status=RESOLVED', plain))).map((x) => x.id), [critical]);
	// A new occurrence of the same condition is a new alert.
	const next = await openAlert(A, cpuRule.id, 'CRITICAL', 'CPU above 75% on local', { server: serverA });
	assert.notEqual(next, critical);
	// The evaluator closes it when the condition clears: resolved by nobody.
	assert.equal(await sql(`SELECT steward_alert_close('${A}', '${cpuRule.id}', '${serverA}')`), '1');
	const closed = await ok(call(srv, 'GET', `/alerts/${next}`, plain));
	assert.equal(closed.status, 'RESOLVED');
	assert.equal(closed.resolvedBy, null);
});

test('another_organizations_alert_is_not_found', async () => {
	h.assertError(await call(srv, 'GET', `/alerts/${warning}`, other), 404, 'NOT_FOUND');
	h.assertError(await call(srv, 'POST', `/alerts/${warning}/resolve`, other), 404, 'NOT_FOUND');
	h.assertError(await call(srv, 'POST', `/alerts/${NIL}/resolve`, plain), 404, 'NOT_FOUND');
	h.assertError(await call(srv, 'POST', '/alerts/not-an-id/resolve', plain), 404, 'NOT_FOUND');
	assert.ok(!(await call(srv, 'GET', '/alerts', other)).text.includes(warning));
	assert.equal((await ok(call(srv, 'GET', `/alerts/${warning}`, plain))).status, 'OPEN');
});

test('deleting_a_rule_keeps_its_alerts', async () => {
	const down = (await ok(call(srv, 'GET', '/alerts/rules?kind=SERVER_UNREACHABLE&order=asc', plain)))[0];
	await ok(call(srv, 'DELETE', `/alerts/rules/${down.id}`, plain), 204);
	h.assertError(await call(srv, 'DELETE', `/alerts/rules/${down.id}`, plain), 404, 'NOT_FOUND');
	h.assertError(await call(srv, 'GET', `/alerts/rules/${down.id}`, plain), 404, 'NOT_FOUND');
	const a = await ok(call(srv, 'GET', `/alerts/${warning}`, plain));
	assert.equal(a.ruleId, null);
	assert.equal(a.ruleName, null);
	assert.equal(a.status, 'OPEN');
});

test('an_organization_deleted_takes_its_channels_with_the_rules_that_notify_them', async () => {
	// Directly in PostgreSQL (no route deletes an organization): the
	// in-use refusal applies to deleting a channel, not to the cascade.
	await ok(createRule(other, { name: 'b-deploys', kind: 'DEPLOYMENT_FAILED', channelIds: [channelB] }), 201);
	h.assertError(await call(srv, 'DELETE', `/notification-channels/${channelB}`, other), 409, 'CHANNEL_IN_USE');
	await sql(`DELETE FROM organizations WHERE id = '${B}'`);
	assert.equal(await sql(`SELECT count(*) FROM notification_channels WHERE organization_id = '${B}'`), '0');
	assert.equal(await sql(`SELECT count(*) FROM alert_rules WHERE organization_id = '${B}'`), '0');
});
