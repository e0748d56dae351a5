// Plans and the subscription: the catalogue, each organization's plan and
// usage (setup's organization on "unlimited", sign-ups on "free"), PUT
// /subscription as an operator's grant only (403 for an OWNER who is not
// an operator), its validation, a grant to another organization, a
// downgrade below current usage refused (409 PLAN_TOO_SMALL), and the
// members quota on inviting and accepting (409 QUOTA_EXCEEDED).

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import * as h from './harness.mjs';
const { TS, NIL } = h;
import { call, ok, setup, signup, member, invite, accept, PASSWORD } from './identity.mjs';

h.stewarddPath();
const pg = await h.startPostgres();
const srv = await h.startStewardd({ db: pg, env: { SIGNUP_ENABLED: 'true' } });
after(h.cleanupAll);

const sql = async (q) => (await pg.psql(q, srv.dbName)).trim();
// Audit records are written after the answer: polls q until it yields a row.
const audited = async (q) => { for (let i = 0; ; i++) { const v = (await sql(q)).trim(); if ((v && v !== '0') || i > 150) return v; await h.sleep(20); } };

const operator = await setup(srv); // OWNER of A, the operator
const admin = await member(srv, operator, 'admin@a.example', 'ADMIN');
const owner = await signup(srv, 'owner@b.example', 'Org B'); // OWNER of B, not an operator
const B = owner.org.id;

async function fields(p) {
	return h.assertError(await p, 422, 'VALIDATION_FAILED').fields;
}
const grant = (who, body) => call(srv, 'PUT', '/subscription', who, { body });

test('plans_are_listed_by_position_with_their_quotas', async () => {
	const res = await call(srv, 'GET', '/plans', admin);
	assert.equal(res.status, 200, res.text);
	assert.equal(res.json().pagination, undefined, 'the whole catalogue, not paged');
	const plans = res.json().data;
	assert.deepEqual(plans.map((p) => p.id), ['free', 'team', 'business', 'unlimited']);
	const free = plans[0];
	assert.deepEqual(free.quotas, { applications: 5, servers: 2, members: 5 });
	assert.equal(free.isDefault, true);
	assert.equal(free.priceCentsMonthly, 0);
	assert.equal(free.name, 'Free');
	assert.equal(typeof free.description, 'string');
	assert.deepEqual(plans[3].quotas, { applications: null, servers: null, members: null }, 'null: no limit');
	assert.equal(plans.filter((p) => p.isDefault).length, 1);
	assert.equal(plans[1].priceCentsMonthly, 2900);
});

test('setup_organization_is_unlimited_and_signups_start_on_free', async () => {
	const a = await ok(call(srv, 'GET', '/subscription', admin));
	assert.equal(a.organizationId, operator.org.id);
	assert.equal(a.plan.id, 'unlimited');
	assert.equal(a.provider, 'manual');
	assert.equal(a.status, 'ACTIVE');
	assert.equal(a.grantedBy, null);
	assert.equal(a.grantedAt, null);
	assert.deepEqual(a.usage, { applications: 0, servers: 0, members: 2 }, 'the local server is not counted');
	const b = await ok(call(srv, 'GET', '/subscription', owner));
	assert.equal(b.organizationId, B);
	assert.equal(b.plan.id, 'free');
	assert.deepEqual(b.plan.quotas, { applications: 5, servers: 2, members: 5 });
	assert.deepEqual(b.usage, { applications: 0, servers: 0, members: 1 });
	assert.equal(b.grantedBy, null);
});

test('only_an_operator_may_change_a_plan', async () => {
	for (const who of [owner, admin]) {
		const res = await grant(who, { planId: 'unlimited' });
		h.assertError(res, 403, 'FORBIDDEN');
	}
	h.assertError(await grant({}, { planId: 'team' }), 401, 'UNAUTHENTICATED');
	assert.equal((await ok(call(srv, 'GET', '/subscription', owner))).plan.id, 'free', 'nothing granted');
	const s = await ok(grant(operator, { planId: 'team' }));
	assert.equal(s.plan.id, 'team');
	assert.equal(s.organizationId, operator.org.id, "the operator's current organization by default");
	assert.equal(s.grantedBy, operator.user.id);
	assert.match(s.grantedAt, TS);
	assert.equal((await ok(call(srv, 'GET', '/subscription', admin))).plan.id, 'team');
	const meta = JSON.parse(await audited(`SELECT metadata::text FROM audit_logs WHERE action = 'subscription.granted' ORDER BY created_at DESC LIMIT 1`));
	assert.deepEqual(meta, { planId: 'team', previousPlanId: 'unlimited' });
	// Back to unlimited; the same plan again is fine.
	await ok(grant(operator, { planId: 'unlimited' }));
	await ok(grant(operator, { planId: 'unlimited' }));
});

test('a_grant_validates_its_fields', async () => {
	assert.deepEqual((await fields(grant(operator, {}))).planId, ['is required']);
	assert.ok((await fields(grant(operator, { planId: 'Team!' }))).planId);
	assert.ok((await fields(grant(operator, { planId: 7 }))).planId);
	assert.match((await fields(grant(operator, { planId: 'gold' }))).planId[0], /is not a plan/);
	assert.ok((await fields(grant(operator, { planId: 'team', organizationId: 'org-b' }))).organizationId);
	assert.match((await fields(grant(operator, { planId: 'team', organizationId: NIL }))).organizationId[0], /is not an organization/);
	assert.deepEqual((await fields(grant(operator, { planId: 'team', price: 0 }))).price, ['is not a known field']);
	assert.equal((await ok(call(srv, 'GET', '/subscription', admin))).plan.id, 'unlimited');
});

test('the_members_quota_refuses_inviting_and_accepting', async () => {
	// B is on free: 5 members. Invitations are not counted, members are.
	const invitations = [];
	for (let i = 1; i <= 5; i++) invitations.push(await invite(srv, owner, `m${i}@b.example`, 'MEMBER'));
	for (let i = 0; i < 4; i++) await accept(srv, invitations[i].token);
	assert.equal((await ok(call(srv, 'GET', '/subscription', owner))).usage.members, 5);
	// The fifth invitation cannot be accepted now, and stays open.
	const res = await h.request(srv.port, 'POST', '/invitations/accept', { body: { token: invitations[4].token, name: 'Fifth', password: PASSWORD } });
	const e = h.assertError(res, 409, 'QUOTA_EXCEEDED');
	assert.match(e.message, /Free plan allows 5 members/);
	assert.equal(await sql(`SELECT count(*) FROM users WHERE email = 'm5@b.example'`), '0', 'no account was made');
	// A new invitation is refused.
	h.assertError(await call(srv, 'POST', `/organizations/${B}/invitations`, owner, { body: { email: 'm6@b.example', role: 'MEMBER' } }), 409, 'QUOTA_EXCEEDED');
	// An operator grants a larger plan: the open invitation is accepted.
	const s = await ok(grant(operator, { planId: 'team', organizationId: B }));
	assert.equal(s.organizationId, B);
	assert.equal(s.plan.id, 'team');
	assert.equal(s.grantedBy, operator.user.id);
	const b = await ok(call(srv, 'GET', '/subscription', owner));
	assert.equal(b.plan.id, 'team');
	assert.equal(b.grantedBy, operator.user.id);
	await accept(srv, invitations[4].token);
	assert.equal((await ok(call(srv, 'GET', '/subscription', owner))).usage.members, 6);
	const meta = JSON.parse(await audited(`SELECT metadata::text FROM audit_logs WHERE action = 'subscription.granted' AND target_id = '${B}'`));
	assert.deepEqual(meta, { planId: 'team', previousPlanId: 'free' });
	assert.equal(await audited(`SELECT organization_id FROM audit_logs WHERE action = 'subscription.granted' AND target_id = '${B}'`), B);
});

test('a_plan_smaller_than_the_usage_is_refused', async () => {
	const e = h.assertError(await grant(operator, { planId: 'free', organizationId: B }), 409, 'PLAN_TOO_SMALL');
	assert.match(e.message, /Free plan allows 5 members \(it has 6\)/);
	assert.equal((await ok(call(srv, 'GET', '/subscription', owner))).plan.id, 'team', 'unchanged');
	// Servers count too (the control plane's own host does not).
	await sql(`INSERT INTO servers (organization_id, name) SELECT '${B}', 'srv-' || g FROM generate_series(1, 3) g`);
	const e2 = h.assertError(await grant(operator, { planId: 'free', organizationId: B }), 409, 'PLAN_TOO_SMALL');
	assert.match(e2.message, /2 servers \(it has 3\).*5 members \(it has 6\)|5 members.*2 servers/);
	assert.equal((await ok(call(srv, 'GET', '/subscription', owner))).usage.servers, 3);
});
