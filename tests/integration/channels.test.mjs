// Notification channels: every route's success and validation failures,
// the signing secret shown once and sealed at rest, test-sends that
// arrive signed (verified here with node:crypto) at a local receiver and
// are retried with backoff (NOTIFY_RETRY_BASE_MS makes it fast), the SSRF
// rules (private literals refused when saved, host names refused at
// delivery after resolution, allowPrivateTargets for operators only), e-mail
// channels with and without SMTP_URL, and 404 across organizations.
//
// The local receiver listens on 127.0.0.1, which only a channel whose
// allowPrivateTargets an operator set may reach.

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import http from 'node:http';
import * as h from './harness.mjs';
const { TS, NIL } = h;
import { call, ok, setup, signup, member } from './identity.mjs';
import { startSmtpSink } from './smtp_sink.mjs';

h.stewarddPath();
const pg = await h.startPostgres();
const srv = await h.startStewardd({
	db: pg,
	env: { SIGNUP_ENABLED: 'true', NOTIFY_RETRY_BASE_MS: '50', SMTP_URL: null },
});
after(h.cleanupAll);

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const sql = (q) => pg.psql(q, srv.dbName);
// Audit records are written after the answer: polls q until it yields a row.
const audited = async (q) => { for (let i = 0; ; i++) { const v = (await sql(q)).trim(); if ((v && v !== '0') || i > 150) return v; await h.sleep(20); } };

const operator = await setup(srv); // OWNER of A and the operator
const plain = await member(srv, operator, 'member@a.example', 'MEMBER');
const other = await signup(srv, 'owner@b.example', 'Org B'); // OWNER of B, no operator

// ---- a receiver on loopback: records every request; a path can be told
// which statuses to answer first.

const receiver = await (async () => {
	const hits = [];
	const plans = new Map();
	const waiters = new Set();
	const server = http.createServer((req, res) => {
		const chunks = [];
		req.on('data', (c) => chunks.push(c));
		req.on('end', () => {
			const raw = Buffer.concat(chunks);
			hits.push({ path: req.url, method: req.method, headers: req.headers, raw, body: raw.toString('utf8') });
			const plan = plans.get(req.url) || [];
			const a = plan.length ? plan.shift() : 200;
			const { status, headers = {}, body = 'thanks' } = typeof a === 'number' ? { status: a } : a;
			res.writeHead(status, { 'Content-Type': 'text/plain', ...headers });
			res.end(body);
			for (const w of [...waiters]) w();
		});
	});
	await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
	after(() => new Promise((resolve) => server.close(resolve)));
	const { port } = server.address();
	return {
		port,
		url: (path) => `http://127.0.0.1:${port}${path}`,
		hits: (path) => hits.filter((x) => x.path === path),
		answer: (path, statuses) => plans.set(path, [...statuses]),
		// Resolves once path has received n requests.
		waitFor(path, n, timeoutMs = 10000) {
			return new Promise((resolve, reject) => {
				const check = () => {
					if (this.hits(path).length < n) return false;
					waiters.delete(check);
					clearTimeout(timer);
					resolve(this.hits(path));
					return true;
				};
				const timer = setTimeout(() => {
					waiters.delete(check);
					reject(new Error(`${path}: ${this.hits(path).length} of ${n} requests within ${timeoutMs} ms`));
				}, timeoutMs);
				if (!check()) waiters.add(check);
			});
		},
	};
})();

async function fields(p) {
	return h.assertError(await p, 422, 'VALIDATION_FAILED').fields;
}

function create(who, body) {
	return call(srv, 'POST', '/notification-channels', who, { body });
}

// The signature of a received request, computed as the documentation says.
function expectedSignature(secret, hit) {
	const ts = hit.headers['steward-timestamp'];
	const mac = crypto.createHmac('sha256', secret).update(Buffer.concat([Buffer.from(`${ts}.`), hit.raw]));
	return `v1=${mac.digest('hex')}`;
}

function assertSigned(secret, hit) {
	const ts = Number(hit.headers['steward-timestamp']);
	assert.ok(Number.isInteger(ts) && Math.abs(ts - Date.now() / 1000) < 120, `timestamp ${ts}`);
	const sig = hit.headers['steward-signature'];
	const want = expectedSignature(secret, hit);
	assert.equal(sig, want, 'Steward-Signature verifies');
	assert.ok(crypto.timingSafeEqual(Buffer.from(sig), Buffer.from(want)));
}

// ------------------------------------------------------------ create

let hook; // the operator's loopback webhook (allowPrivateTargets)
let hookSecret;

test('create_returns_the_signing_secret_once_and_seals_it', async () => {
	const c = await ok(create(operator, { name: 'ops-hook', kind: 'WEBHOOK', url: receiver.url('/ok'), allowPrivateTargets: true }), 201);
	assert.match(c.id, UUID);
	assert.equal(c.name, 'ops-hook');
	assert.equal(c.kind, 'WEBHOOK');
	assert.equal(c.url, receiver.url('/ok'));
	assert.equal(c.addresses, null);
	assert.equal(c.enabled, true);
	assert.equal(c.allowPrivateTargets, true);
	assert.equal(c.hasSigningSecret, true);
	assert.match(c.signingSecret, /^[A-Za-z0-9_-]{43}$/);
	assert.match(c.createdAt, TS);
	assert.match(c.updatedAt, TS);
	hook = c;
	hookSecret = c.signingSecret;
	// Never again: not in GET, the list, an update's answer.
	for (const res of [await call(srv, 'GET', `/notification-channels/${c.id}`, operator),
		await call(srv, 'GET', '/notification-channels', operator),
		await call(srv, 'PATCH', `/notification-channels/${c.id}`, operator, { body: { enabled: true } })]) {
		assert.equal(res.status, 200, res.text);
		assert.ok(!res.text.includes(hookSecret), 'the secret is shown only once');
		assert.ok(!res.text.includes('signingSecret'));
	}
	// Sealed at rest, bound to the channel.
	const stored = (await sql(`SELECT signing_secret FROM notification_channels WHERE id = '${c.id}'`)).trim();
	assert.match(stored, /^v1\.[0-9a-f]{8}\./);
	assert.ok(!stored.includes(hookSecret));
	const meta = await audited(`SELECT metadata::text FROM audit_logs WHERE action = 'notification_channel.created' AND target_id = '${c.id}'`);
	assert.deepEqual(JSON.parse(meta), { name: 'ops-hook' });
});

test('every_kind_is_created_with_its_own_fields', async () => {
	const slack = await ok(create(plain, { name: 'team-slack', kind: 'SLACK', url: 'https://hooks.slack.example/services/T0/B0/x' }), 201);
	assert.equal(slack.kind, 'SLACK');
	assert.match(slack.signingSecret, /^[A-Za-z0-9_-]{43}$/);
	const discord = await ok(create(plain, { name: 'team-discord', kind: 'DISCORD', url: 'https://discord.example/api/webhooks/1/x', enabled: false }), 201);
	assert.equal(discord.enabled, false);
	const mail = await ok(create(plain, { name: 'on-call', kind: 'EMAIL', addresses: ['Ops@Example.com', 'ops@example.com', 'pager@example.com'] }), 201);
	assert.deepEqual(mail.addresses, ['ops@example.com', 'pager@example.com'], 'lower-cased, each once');
	assert.equal(mail.url, null);
	assert.equal(mail.signingSecret, null, 'EMAIL channels have no signing secret');
	assert.equal(mail.hasSigningSecret, false);
});

test('create_validates_each_field', async () => {
	const f0 = await fields(create(plain, {}));
	assert.deepEqual(f0.name, ['is required']);
	assert.deepEqual(f0.kind, ['is required']);
	const base = { name: 'x1', kind: 'WEBHOOK', url: 'https://hooks.example.com/a' };
	assert.ok((await fields(create(plain, { ...base, name: 'Not A Name' }))).name);
	assert.match((await fields(create(plain, { ...base, kind: 'SMS' }))).kind[0], /WEBHOOK, SLACK, DISCORD or EMAIL/);
	assert.ok((await fields(create(plain, { ...base, url: 'ftp://example.com/' }))).url);
	assert.ok((await fields(create(plain, { ...base, url: 'https://user:pw@example.com/' }))).url);
	assert.ok((await fields(create(plain, { ...base, url: 42 }))).url);
	assert.ok((await fields(create(plain, { ...base, enabled: 'yes' }))).enabled);
	assert.ok((await fields(create(plain, { ...base, allowPrivateTargets: 1 }))).allowPrivateTargets);
	assert.deepEqual((await fields(create(plain, { ...base, secret: 'mine' }))).secret, ['is not a known field']);
	assert.match((await fields(create(plain, { name: 'x1', kind: 'WEBHOOK' }))).url[0], /is required for WEBHOOK/);
	assert.match((await fields(create(plain, { name: 'x1', kind: 'SLACK', url: 'http://hooks.example.com/a' }))).url[0], /https/);
	assert.match((await fields(create(plain, { name: 'x1', kind: 'DISCORD', url: 'http://discord.example/a' }))).url[0], /https/);
	assert.match((await fields(create(plain, { ...base, addresses: ['a@example.com'] }))).addresses[0], /EMAIL channels only/);
	assert.match((await fields(create(plain, { name: 'x1', kind: 'EMAIL' }))).addresses[0], /is required for EMAIL/);
	assert.match((await fields(create(plain, { name: 'x1', kind: 'EMAIL', addresses: ['a@example.com'], url: 'https://example.com/' }))).url[0], /not used by EMAIL/);
	for (const addresses of [[], 'a@example.com', ['not-an-address'], [1], Array.from({ length: 11 }, (_, i) => `u${i}@example.com`)]) {
		assert.ok((await fields(create(plain, { name: 'x1', kind: 'EMAIL', addresses }))).addresses, JSON.stringify(addresses));
	}
	h.assertError(await create(plain, { name: 'ops-hook', kind: 'WEBHOOK', url: 'https://example.com/' }), 409, 'CHANNEL_EXISTS');
	// Nothing was stored by the refusals.
	assert.equal((await sql(`SELECT count(*) FROM notification_channels WHERE name = 'x1'`)).trim(), '0');
});

test('private_literal_targets_are_refused_when_saved', async () => {
	for (const url of ['http://127.0.0.1/', 'http://127.1.2.3:8080/x', 'http://10.0.0.5/', 'http://172.16.0.1/',
		'http://192.168.1.1/', 'http://100.64.0.1/', 'http://169.254.169.254/latest/meta-data', 'http://0.0.0.0/',
		'http://224.0.0.1/', 'http://[::1]/', 'http://[fe80::1]/', 'http://[fd00::1]/', 'http://[::ffff:127.0.0.1]/',
		'http://[::ffff:10.0.0.1]/', 'https://[64:ff9b::a00:1]/']) {
		const f = await fields(create(operator, { name: 'priv', kind: 'WEBHOOK', url }));
		assert.match(f.url[0], /private.*operator/, url);
	}
	// A public literal is fine.
	const pub = await ok(create(plain, { name: 'public-ip', kind: 'WEBHOOK', url: 'http://93.184.216.34/hook' }), 201);
	assert.equal(pub.allowPrivateTargets, false);
});

test('only_an_operator_may_allow_private_targets', async () => {
	for (const who of [plain, other]) {
		h.assertError(await create(who, { name: 'mine', kind: 'WEBHOOK', url: receiver.url('/x'), allowPrivateTargets: true }), 403, 'FORBIDDEN');
	}
	h.assertError(await call(srv, 'PATCH', `/notification-channels/${hook.id}`, plain, { body: { allowPrivateTargets: true } }), 403, 'FORBIDDEN');
	assert.equal((await sql(`SELECT count(*) FROM notification_channels WHERE name = 'mine'`)).trim(), '0');
	// Turning the allowance off is anyone's to do; an operator may set it on again.
	const c = await ok(create(operator, { name: 'toggle', kind: 'WEBHOOK', url: 'https://example.com/t', allowPrivateTargets: true }), 201);
	assert.equal((await ok(call(srv, 'PATCH', `/notification-channels/${c.id}`, plain, { body: { allowPrivateTargets: false } }))).allowPrivateTargets, false);
	assert.equal((await ok(call(srv, 'PATCH', `/notification-channels/${c.id}`, operator, { body: { allowPrivateTargets: true } }))).allowPrivateTargets, true);
});

test('a_non_operator_changing_the_url_loses_the_operators_allowance', async () => {
	const c = await ok(create(operator, { name: 'granted', kind: 'WEBHOOK', url: receiver.url('/granted'), allowPrivateTargets: true }), 201);
	// To another private target: refused.
	const f = await fields(call(srv, 'PATCH', `/notification-channels/${c.id}`, plain, { body: { url: 'http://127.0.0.1:1/other' } }));
	assert.match(f.url[0], /private/);
	// To a public one: allowed, and the allowance is gone.
	const u = await ok(call(srv, 'PATCH', `/notification-channels/${c.id}`, plain, { body: { url: 'https://example.com/hook' } }));
	assert.equal(u.allowPrivateTargets, false);
	// An operator's own change keeps it.
	const o = await ok(call(srv, 'PATCH', `/notification-channels/${c.id}`, operator, { body: { url: receiver.url('/granted'), allowPrivateTargets: true } }));
	assert.equal(o.allowPrivateTargets, true);
	const o2 = await ok(call(srv, 'PATCH', `/notification-channels/${c.id}`, operator, { body: { url: receiver.url('/granted2') } }));
	assert.equal(o2.allowPrivateTargets, true);
	// Turning the allowance off under a private literal is refused.
	assert.match((await fields(call(srv, 'PATCH', `/notification-channels/${c.id}`, operator, { body: { allowPrivateTargets: false } }))).url[0], /private/);
});

// ------------------------------------------------------------ read, update, delete

test('get_list_filters_and_pages', async () => {
	const one = await ok(call(srv, 'GET', `/notification-channels/${hook.id}`, plain));
	assert.equal(one.id, hook.id);
	assert.equal(one.hasSigningSecret, true);
	const all = await call(srv, 'GET', '/notification-channels', plain);
	assert.equal(all.status, 200);
	const names = all.json().data.map((c) => c.name);
	assert.ok(names.includes('ops-hook') && names.includes('on-call'));
	assert.equal(all.json().pagination.nextCursor, null);
	const emails = await ok(call(srv, 'GET', '/notification-channels?kind=EMAIL', plain));
	assert.deepEqual(emails.map((c) => c.name), ['on-call']);
	const off = await ok(call(srv, 'GET', '/notification-channels?enabled=false', plain));
	assert.deepEqual(off.map((c) => c.name), ['team-discord']);
	// Pages of one, oldest first, reach every channel once.
	const seen = [];
	let cursor = '';
	for (let i = 0; i < 50; i++) {
		const res = await call(srv, 'GET', `/notification-channels?limit=1&order=asc${cursor ? `&cursor=${cursor}` : ''}`, plain);
		assert.equal(res.status, 200, res.text);
		const j = res.json();
		seen.push(...j.data.map((c) => c.id));
		if (!j.pagination.nextCursor) break;
		cursor = encodeURIComponent(j.pagination.nextCursor);
	}
	assert.deepEqual([...seen].sort(), all.json().data.map((c) => c.id).sort());
	assert.equal(seen[0], hook.id, 'oldest first');
	for (const q of ['kind=SMS', 'enabled=maybe', 'limit=0', 'order=up', 'colour=red']) {
		h.assertError(await call(srv, 'GET', `/notification-channels?${q}`, plain), 422, 'VALIDATION_FAILED');
	}
});

test('update_is_partial_and_validates', async () => {
	const c = await ok(create(plain, { name: 'renamed-later', kind: 'WEBHOOK', url: 'https://example.com/a' }), 201);
	const u = await ok(call(srv, 'PATCH', `/notification-channels/${c.id}`, plain, { body: { name: 'renamed', enabled: false } }));
	assert.equal(u.name, 'renamed');
	assert.equal(u.enabled, false);
	assert.equal(u.url, 'https://example.com/a', 'untouched');
	assert.deepEqual((await fields(call(srv, 'PATCH', `/notification-channels/${c.id}`, plain, { body: { kind: 'SLACK' } }))).kind, ['cannot be changed']);
	assert.match((await fields(call(srv, 'PATCH', `/notification-channels/${c.id}`, plain, { body: { url: null } }))).url[0], /is required/);
	assert.ok((await fields(call(srv, 'PATCH', `/notification-channels/${c.id}`, plain, { body: { url: 'nope' } }))).url);
	assert.ok((await fields(call(srv, 'PATCH', `/notification-channels/${c.id}`, plain, { body: { name: '' } }))).name);
	assert.ok((await fields(call(srv, 'PATCH', `/notification-channels/${c.id}`, plain, { body: { nickname: 'x' } }))).nickname);
	h.assertError(await call(srv, 'PATCH', `/notification-channels/${c.id}`, plain, { body: { name: 'ops-hook' } }), 409, 'CHANNEL_EXISTS');
	const mail = (await ok(call(srv, 'GET', '/notification-channels?kind=EMAIL', plain)))[0];
	const m = await ok(call(srv, 'PATCH', `/notification-channels/${mail.id}`, plain, { body: { addresses: ['new@example.com'] } }));
	assert.deepEqual(m.addresses, ['new@example.com']);
	assert.match((await fields(call(srv, 'PATCH', `/notification-channels/${mail.id}`, plain, { body: { url: 'https://example.com/' } }))).url[0], /not used by EMAIL/);
});

test('delete_answers_204_then_404', async () => {
	const c = await ok(create(plain, { name: 'short-lived', kind: 'WEBHOOK', url: 'https://example.com/a' }), 201);
	await ok(call(srv, 'DELETE', `/notification-channels/${c.id}`, plain), 204);
	h.assertError(await call(srv, 'DELETE', `/notification-channels/${c.id}`, plain), 404, 'NOT_FOUND');
	h.assertError(await call(srv, 'GET', `/notification-channels/${c.id}`, plain), 404, 'NOT_FOUND');
	assert.equal((await audited(`SELECT count(*) FROM audit_logs WHERE action = 'notification_channel.deleted' AND target_id = '${c.id}'`)).trim(), '1');
});

test('a_channel_that_alert_rules_notify_is_not_deleted', async () => {
	const c = await ok(create(plain, { name: 'in-use', kind: 'WEBHOOK', url: 'https://example.com/a' }), 201);
	const rule = await ok(call(srv, 'POST', '/alerts/rules', plain, { body: { name: 'deploys', kind: 'DEPLOYMENT_FAILED', channelIds: [c.id] } }), 201);
	h.assertError(await call(srv, 'DELETE', `/notification-channels/${c.id}`, plain), 409, 'CHANNEL_IN_USE');
	await ok(call(srv, 'PATCH', `/alerts/rules/${rule.id}`, plain, { body: { channelIds: [] } }));
	await ok(call(srv, 'DELETE', `/notification-channels/${c.id}`, plain), 204);
});

test('another_organizations_channel_is_not_found', async () => {
	const p = `/notification-channels/${hook.id}`;
	h.assertError(await call(srv, 'GET', p, other), 404, 'NOT_FOUND');
	h.assertError(await call(srv, 'PATCH', p, other, { body: { name: 'mine-now' } }), 404, 'NOT_FOUND');
	h.assertError(await call(srv, 'DELETE', p, other), 404, 'NOT_FOUND');
	h.assertError(await call(srv, 'POST', `${p}/test`, other), 404, 'NOT_FOUND');
	const list = await call(srv, 'GET', '/notification-channels', other);
	assert.equal(list.status, 200);
	assert.deepEqual(list.json().data, []);
	for (const path of [`/notification-channels/${NIL}`, '/notification-channels/ops-hook', `/notification-channels/${NIL}/test`]) {
		const method = path.endsWith('/test') ? 'POST' : 'GET';
		h.assertError(await call(srv, method, path, operator), 404, 'NOT_FOUND');
	}
	assert.equal((await sql(`SELECT name FROM notification_channels WHERE id = '${hook.id}'`)).trim(), 'ops-hook');
});

// ------------------------------------------------------------ test-sends

test('test_send_arrives_signed', async () => {
	const res = await call(srv, 'POST', `/notification-channels/${hook.id}/test`, plain);
	assert.equal(res.status, 202, res.text);
	const d = res.json().data;
	assert.match(d.deliveryId, UUID);
	assert.deepEqual({ ...d, deliveryId: 'x' }, { deliveryId: 'x', channelId: hook.id, event: 'channel.test', status: 'QUEUED' });
	const [hit] = await receiver.waitFor('/ok', 1);
	assert.equal(hit.method, 'POST');
	assert.match(hit.headers['content-type'], /^application\/json/);
	assert.equal(hit.headers['steward-delivery'], d.deliveryId);
	assert.equal(hit.headers['steward-event'], 'channel.test');
	assertSigned(hookSecret, hit);
	const body = JSON.parse(hit.body);
	assert.equal(body.id, d.deliveryId);
	assert.equal(body.type, 'channel.test');
	assert.match(body.createdAt, TS);
	assert.equal(body.data.channelId, hook.id);
	assert.equal(body.data.channelName, 'ops-hook');
	assert.match(body.text, /ops-hook/);
	await srv.logs.waitForLine(new RegExp(`notify delivered channel=${hook.id} delivery=${d.deliveryId} event=channel.test attempt=1 status=200`));
	// A signature over another body or with another secret does not verify.
	assert.notEqual(hit.headers['steward-signature'], expectedSignature(hookSecret, { ...hit, raw: Buffer.from(`${hit.body} `) }));
	assert.notEqual(hit.headers['steward-signature'], expectedSignature('another-secret', hit));
	assert.equal((await audited(`SELECT metadata->>'deliveryId' FROM audit_logs WHERE action = 'notification_channel.tested'`)).trim(), d.deliveryId);
});

test('a_failing_receiver_is_retried_with_backoff_until_it_succeeds', async () => {
	const c = await ok(create(operator, { name: 'flaky', kind: 'WEBHOOK', url: receiver.url('/flaky'), allowPrivateTargets: true }), 201);
	receiver.answer('/flaky', [503, 500]);
	const started = Date.now();
	const d = await ok(call(srv, 'POST', `/notification-channels/${c.id}/test`, operator), 202);
	const hits = await receiver.waitFor('/flaky', 3);
	assert.equal(hits.length, 3);
	for (const hit of hits) {
		assert.equal(hit.headers['steward-delivery'], d.deliveryId, 'the same delivery id on every attempt');
		assertSigned(c.signingSecret, hit);
	}
	assert.equal(hits[0].body, hits[2].body, 'the same body');
	// Backoff: base 50 ms, then 4 x 50 ms.
	assert.ok(Date.now() - started >= 250, 'waited 50 + 200 ms at least');
	await srv.logs.waitForLine(new RegExp(`notify delivered channel=${c.id} delivery=${d.deliveryId} event=channel.test attempt=3 status=200`));
	const retries = srv.logs.all().filter((l) => l.includes(`notify retry channel=${c.id}`));
	assert.equal(retries.length, 2);
	assert.match(retries[0], /attempt=1 error="the receiver answered 503" retry_in_ms=50/);
	assert.match(retries[1], /attempt=2 error="the receiver answered 500" retry_in_ms=200/);
	await h.sleep(300);
	assert.equal(receiver.hits('/flaky').length, 3, 'nothing more once delivered');
});

test('a_refusing_receiver_is_not_retried', async () => {
	const c = await ok(create(operator, { name: 'gone', kind: 'WEBHOOK', url: receiver.url('/gone'), allowPrivateTargets: true }), 201);
	receiver.answer('/gone', [410]);
	const d = await ok(call(srv, 'POST', `/notification-channels/${c.id}/test`, operator), 202);
	await srv.logs.waitForLine(new RegExp(`notify failed channel=${c.id} delivery=${d.deliveryId} event=channel.test attempts=1 error="the receiver answered 410"`));
	await h.sleep(200);
	assert.equal(receiver.hits('/gone').length, 1);
});

test('redirects_are_not_followed_and_long_answers_are_cut', async () => {
	const c = await ok(create(operator, { name: 'moved', kind: 'WEBHOOK', url: receiver.url('/moved'), allowPrivateTargets: true }), 201);
	receiver.answer('/moved', [{ status: 307, headers: { Location: receiver.url('/elsewhere') } }]);
	const d = await ok(call(srv, 'POST', `/notification-channels/${c.id}/test`, operator), 202);
	await srv.logs.waitForLine(new RegExp(`notify failed channel=${c.id} delivery=${d.deliveryId} event=channel.test attempts=1 error="the receiver answered 307"`));
	await h.sleep(200);
	assert.equal(receiver.hits('/elsewhere').length, 0, 'the redirect was not followed');
	// An answer longer than the cap is not read to its end: the status decides.
	const big = await ok(create(operator, { name: 'chatty', kind: 'WEBHOOK', url: receiver.url('/chatty'), allowPrivateTargets: true }), 201);
	receiver.answer('/chatty', [{ status: 200, body: 'x'.repeat(4 * 1024 * 1024) }]);
	const d2 = await ok(call(srv, 'POST', `/notification-channels/${big.id}/test`, operator), 202);
	await srv.logs.waitForLine(new RegExp(`notify delivered channel=${big.id} delivery=${d2.deliveryId} event=channel.test attempt=1 status=200`));
});

test('a_host_name_resolving_to_loopback_is_refused_at_delivery', async () => {
	// localhost is a name, not a literal: accepted when saved, refused once resolved.
	const c = await ok(create(plain, { name: 'sneaky', kind: 'WEBHOOK', url: `http://localhost:${receiver.port}/sneaky` }), 201);
	assert.equal(c.allowPrivateTargets, false);
	const d = await ok(call(srv, 'POST', `/notification-channels/${c.id}/test`, plain), 202);
	await srv.logs.waitForLine(new RegExp(`notify refused channel=${c.id} delivery=${d.deliveryId} event=channel.test reason="the target's address is loopback; the channel does not allow private targets"`));
	await h.sleep(200);
	assert.equal(receiver.hits('/sneaky').length, 0, 'nothing reached the receiver');
	assert.equal(srv.logs.all().filter((l) => l.includes(`notify retry channel=${c.id}`)).length, 0, 'a refusal is final');
	// The same name with an operator's allowance is delivered.
	await ok(call(srv, 'PATCH', `/notification-channels/${c.id}`, operator, { body: { allowPrivateTargets: true } }));
	await ok(call(srv, 'POST', `/notification-channels/${c.id}/test`, plain), 202);
	await receiver.waitFor('/sneaky', 1);
});

test('email_test_send_needs_smtp', async () => {
	const mail = (await ok(call(srv, 'GET', '/notification-channels?kind=EMAIL', plain)))[0];
	h.assertError(await call(srv, 'POST', `/notification-channels/${mail.id}/test`, plain), 409, 'MAIL_NOT_CONFIGURED');
});

test('email_test_send_is_mailed_to_every_address', async () => {
	const sink = await startSmtpSink();
	after(() => sink.close());
	const s2 = await h.startStewardd({ db: pg, env: { SMTP_URL: sink.url, SMTP_FROM: 'alerts@steward.test' } });
	const op = await setup(s2, 'op@c.example', 'Org C');
	const c = await ok(call(s2, 'POST', '/notification-channels', op, { body: { name: 'mailers', kind: 'EMAIL', addresses: ['one@example.com', 'two@example.com'] } }), 201);
	const d = await ok(call(s2, 'POST', `/notification-channels/${c.id}/test`, op), 202);
	for (const to of ['one@example.com', 'two@example.com']) {
		const m = await sink.waitForMessage((x) => x.to.includes(`<${to}>`) || x.to.includes(to));
		assert.match(m.headers.subject, /Steward: Test notification/);
		assert.match(m.body, /"mailers"/);
		assert.ok(m.body.includes(d.deliveryId));
	}
	await s2.stop();
});

test('no_signing_secret_in_any_log_line', () => {
	const text = srv.logs.text();
	assert.ok(!text.includes(hookSecret));
	assert.ok(!/notify [^\n]*http:\/\//.test(text), 'notify lines never carry the URL');
});
