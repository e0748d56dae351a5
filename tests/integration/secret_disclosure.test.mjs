// Secret disclosure (spec, "Secret disclosure rules" 1 to 6): a distinct
// canary in every secret, then every route of GET /docs called as every
// principal (anonymous; a MEMBER, an ADMIN, an OWNER and the operator of
// organization A, and the OWNER of organization B, each with its session
// cookie and with an API token), and each canary found only where the spec
// allows it:
//
//   planted by the test, never answered by any route: variable values
//     (one set alone, some in a bulk set), git credential tokens, the
//     master key;
//   generated, answered once by the route that makes them and never again:
//     agent tokens (POST /servers, POST /servers/:id/agent-token), webhook
//     secrets (the git source's creation and its rotation), notification
//     channel signing secrets (POST /notification-channels), API tokens
//     (POST /api-tokens), invitation tokens;
//   generated, never answered: the deploy key's private half (read here
//     from the database and opened with the master key, as seal.h
//     describes the sealed text), after every rotation;
//   generated, answered by GET /services/:id/connection only, each call
//     audited: service credentials.
//
// No canary of any kind may appear in a log line of stewardd or of
// PostgreSQL, in an audit record (GET /audit-logs), in the database in the
// clear (pg_dump), or in what stewardd sends out (a local sink stands in
// for webhook targets and git host APIs). And GET
// /applications/:id/variables answers keys and value lengths only.
//
// Routes whose handlers are not written yet make this weaker, never
// failing: a route appears here the day it is in GET /docs.

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes, randomUUID, createHmac } from 'node:crypto';
import * as h from './harness.mjs';
import { call, ok, setup, signup, member } from './identity.mjs';
import { populate, fillPath, unseal, sealedKeyId, keyIdOf, startSink } from './resources.mjs';

h.stewarddPath();

// ---- a sink for what stewardd sends out (webhooks, git host APIs)

const sink = await startSink();
const outbound = sink.requests;
const SINK = sink.url;

// ---- the installation

const MASTER_KEY = randomBytes(32).toString('hex');
const pg = await h.startPostgres();
const srv = await h.startStewardd({ db: pg, env: { SIGNUP_ENABLED: 'true', STEWARD_SECRET_KEY: MASTER_KEY } });
after(h.cleanupAll);
const sql = (q) => pg.psql(q, srv.dbName);

const docs = JSON.parse((await h.request(srv.port, 'GET', '/docs')).text);

const operator = await setup(srv, 'operator@a.example', 'Org A'); // OWNER of A and the operator
const people = {
	member: await member(srv, operator, 'member@a.example', 'MEMBER'),
	admin: await member(srv, operator, 'admin@a.example', 'ADMIN'),
	owner: await member(srv, operator, 'owner@a.example', 'OWNER'),
	operator,
	other: await signup(srv, 'owner@b.example', 'Org B'), // OWNER of B
};
// Every principal: anonymous, and each person by cookie and by token.
const principals = [{ label: 'anonymous' }];
const transcript = []; // every response of this file: {who, method, template, path, status, text, headers}
for (const [role, p] of Object.entries(people)) {
	const res = await call(srv, 'POST', '/api-tokens', p, { body: { name: `sweep-${role}` } });
	transcript.push({ who: `${role}/cookie`, method: 'POST', template: '/api-tokens', path: '/api-tokens', status: res.status, text: res.text, headers: res.headers });
	const t = (await ok(Promise.resolve(res), 201)).token;
	principals.push({ label: `${role}/cookie`, role, cookie: p.cookie });
	principals.push({ label: `${role}/token`, role, token: t });
}

// One of every resource in A, with the canaries planted there.
const fx = await populate(srv, { ...operator, label: 'operator/cookie' }, { docs, sink: SINK, pg, dbName: srv.dbName });
transcript.push(...fx.transcript);

// ---- the deploy keys' private halves, from the database

const deployKeys = new Set(); // OpenSSH private key files
async function readDeployKeys() {
	let rows = '';
	try {
		rows = await sql('SELECT application_id, deploy_private_key_sealed FROM git_sources');
	} catch {
		return; // no git sources yet in this tree
	}
	for (const line of rows.split('\n').filter(Boolean)) {
		const [app, sealed] = line.split('|');
		assert.equal(sealedKeyId(sealed), keyIdOf(MASTER_KEY), 'sealed under the master key');
		deployKeys.add(unseal(sealed, `deploy-key:${app}`, MASTER_KEY));
	}
}
await readDeployKeys();

// ---- the sweep: every route as every principal

// Requests that would act outside this machine or end the principal's
// session get a random id (404 for the admitted) or are left out.
const RANDOM_ID = new Set(['POST /domains/{domainId}/verify']);
const LEFT_OUT = new Set(['POST /auth/sign-out']); // ends the session; no secret on its way

const routes = [];
for (const [path, item] of Object.entries(docs.paths)) {
	for (const [m, op] of Object.entries(item)) {
		const method = m.toUpperCase();
		const key = `${method} ${path}`;
		if (LEFT_OUT.has(key)) continue;
		routes.push({ key, method, path, body: !!op.requestBody });
	}
}

const serverErrors = [];
for (const r of routes) {
	for (const p of principals) {
		// Reads and harmless changes name A's objects; deletes name nothing.
		const random = r.method === 'DELETE' || RANDOM_ID.has(r.key);
		const target = random ? r.path.replace(/\{\w+\}/g, () => randomUUID()) : fillPath(r.path, fx.ids);
		const res = await call(srv, r.method, target, p, { body: r.body ? {} : undefined });
		transcript.push({ who: p.label, method: r.method, template: r.path, path: target, status: res.status, text: res.text, headers: res.headers });
		if (res.status >= 500) serverErrors.push(`${r.method} ${target} as ${p.label}: ${res.status} ${res.text.slice(0, 300)}`);
		if (/\/deploy-key$/.test(r.path) && r.method !== 'GET' && res.status < 300) await readDeployKeys();
	}
}
await readDeployKeys();

// The test deliveries the sweep asked for go out in the background: wait
// for them (the sink is the channel's target).
const hooks = () => outbound.filter((o) => o.url === '/hook');
if (fx.ids['notification-channels'] && docs.paths['/notification-channels/{id}/test']) {
	const deadline = Date.now() + 15000 * h.SLACK;
	while (hooks().length === 0 && Date.now() < deadline) await h.sleep(50);
	await h.sleep(200); // and the rest of a burst
}

// What the operator's audit log holds, every page.
const auditRecords = [];
{
	let cursor = null;
	for (let i = 0; i < 1000; i++) {
		const q = cursor ? `?limit=200&cursor=${encodeURIComponent(cursor)}` : '?limit=200';
		const res = await call(srv, 'GET', `/audit-logs${q}`, operator);
		assert.equal(res.status, 200, res.text);
		const body = res.json();
		auditRecords.push(...body.data);
		cursor = body.pagination?.nextCursor;
		if (!cursor) break;
	}
}
const auditText = JSON.stringify(auditRecords);
const dump = await pg.dump(srv.dbName);

// ---- the canaries

const textOf = (e) => `${JSON.stringify(e.headers)}\n${e.text}`;
const count = (hay, needle) => hay.split(needle).length - 1;

// Secrets a successful answer carries, by member name: any string member
// named like a secret (a domain's verification token is published by
// design, and prefixes and hints are too short to be one).
const SECRET_MEMBER = /(token|secret|password|privatekey)$/i;
const NOT_SECRET = new Set(['verificationToken']);
function issued(e) {
	if (e.status < 200 || e.status >= 300) return [];
	let body;
	try {
		body = JSON.parse(e.text);
	} catch {
		return [];
	}
	const out = [];
	const visit = (v) => {
		if (!v || typeof v !== 'object') return;
		for (const [k, x] of Object.entries(v)) {
			if (typeof x === 'string' && x.length >= 16 && SECRET_MEMBER.test(k) && !NOT_SECRET.has(k)) out.push({ member: k, value: x });
			else visit(x);
		}
	};
	visit(body.data);
	return out;
}

const CONNECTION = 'GET /services/{id}/connection';
const isConnection = (e) => `${e.method} ${e.template}` === CONNECTION && e.status === 200;

// Answered once: {value, kind, entry}.
const once = [];
// Service credentials: answered by the connection route only.
const credentials = new Set();
for (const e of transcript) {
	for (const s of issued(e)) {
		if (isConnection(e)) credentials.add(s.value);
		else once.push({ value: s.value, kind: `${s.member} of ${e.method} ${e.template}`, entry: e });
	}
}
// The connection route's other credential members (user names, hosts) are
// not secrets; its password is, and so is a URL that holds it.

// Never answered at all.
const never = [];
for (const [k, v] of Object.entries(fx.secrets.variables)) never.push({ value: v, kind: `variable ${k}` });
for (const v of fx.secrets.refused || []) never.push({ value: v, kind: 'a value in a refused request' });
for (const v of fx.secrets.gitCredentialTokens) never.push({ value: v, kind: 'git credential token' });
never.push({ value: MASTER_KEY, kind: 'master key' });
for (const key of deployKeys) {
	// The private half's base64 lines, but for the header line every
	// Ed25519 key shares and a short last line.
	const lines = key.split('\n').filter((l) => /^[A-Za-z0-9+/=]{20,}$/.test(l)).slice(1);
	for (const l of lines) never.push({ value: l, kind: 'deploy key private half' });
}

test('the_fixtures_planted_and_received_every_kind_of_secret_the_api_has', () => {
	// Each issuing route that is documented gave a secret (or this test
	// would pass by finding nothing).
	const kinds = new Set(once.map((s) => `${s.entry.method} ${s.entry.template}`));
	const issuers = ['POST /servers', 'POST /servers/{id}/agent-token', 'POST /api-tokens', 'POST /notification-channels',
		'POST /organizations/{id}/invitations', 'POST /applications/{id}/git-source/webhook-secret'];
	for (const k of issuers) {
		const [m, p] = k.split(' ');
		if (docs.paths[p]?.[m.toLowerCase()]) assert.ok(kinds.has(k), `${k} is documented but no answer of it carried a secret`);
	}
	if (docs.paths['/applications/{id}/git-source']) assert.ok(deployKeys.size >= 1, 'a deploy key was read from the database');
	if (docs.paths['/services/{id}/connection']) assert.ok(credentials.size >= 1, 'GET /services/:id/connection disclosed credentials');
	if (docs.paths['/applications/{id}/variables']) assert.ok(Object.keys(fx.secrets.variables).length >= 2, 'variables planted');
	console.log(`canaries: ${once.length} answered once, ${credentials.size} service credentials, ${never.length} never answered; ` +
		`${transcript.length} responses, ${routes.length} routes x ${principals.length} principals`);
});

test('no_request_of_the_sweep_failed_on_the_server', () => {
	assert.deepEqual(serverErrors, []);
});

// An agent token is answered with the command line that starts the agent
// (agentCommand), which carries it too: twice in that one answer, in
// those two members only.
function timesInOwnAnswer(s) {
	if (!s.kind.startsWith('agentToken ')) return 1;
	const data = JSON.parse(s.entry.text).data;
	assert.ok(data.agentCommand.includes(`STEWARD_AGENT_TOKEN='${s.value}'`), 'the command line starts the agent with its token');
	return 2;
}

test('a_secret_answered_once_appears_in_that_answer_once_and_nowhere_else', () => {
	for (const s of once) {
		for (const e of transcript) {
			const n = count(textOf(e), s.value);
			if (e === s.entry) assert.equal(n, timesInOwnAnswer(s), `${s.kind} appears ${n} times in its own answer`);
			else assert.equal(n, 0, `${s.kind} (answered to ${s.entry.who}) is also in ${e.method} ${e.path} as ${e.who} (${e.status}): ${e.text.slice(0, 400)}`);
		}
	}
});

test('planted_and_private_secrets_appear_in_no_answer', () => {
	for (const s of never) {
		for (const e of transcript) {
			assert.equal(count(textOf(e), s.value), 0, `${s.kind} is in ${e.method} ${e.path} as ${e.who} (${e.status}): ${e.text.slice(0, 400)}`);
		}
	}
});

test('service_credentials_appear_only_in_the_connection_route_and_each_call_is_audited', () => {
	for (const c of credentials) {
		for (const e of transcript) {
			if (isConnection(e)) continue;
			assert.equal(count(textOf(e), c), 0, `service credentials are in ${e.method} ${e.path} as ${e.who} (${e.status})`);
		}
	}
	if (!docs.paths['/services/{id}/connection']) return;
	const disclosed = transcript.filter(isConnection).length;
	const audited = auditRecords.filter((a) => a.targetId === fx.ids.services && /connection|credential/.test(a.action)).length;
	assert.ok(disclosed >= 1);
	assert.equal(audited, disclosed, `${disclosed} disclosures of the connection, ${audited} audit records`);
});

const allCanaries = () => [...once.map((s) => s.value), ...credentials, ...never.map((s) => s.value),
	...principals.filter((p) => p.token).map((p) => p.token), ...principals.filter((p) => p.cookie).map((p) => p.cookie)];

test('no_secret_in_any_log_line', () => {
	const logs = srv.logs.text() + pg.log.text();
	for (const c of allCanaries()) {
		const i = logs.indexOf(c);
		assert.equal(i, -1, `a secret is in the logs: ${logs.slice(Math.max(0, i - 200), i + 100)}`);
	}
});

test('no_secret_in_any_audit_record', () => {
	assert.ok(auditRecords.length > 0);
	for (const c of allCanaries()) assert.ok(!auditText.includes(c), `a secret is in the audit log: ${c.slice(0, 12)}...`);
});

test('no_secret_in_the_database_in_the_clear', () => {
	for (const c of allCanaries()) {
		const i = dump.indexOf(c);
		assert.equal(i, -1, `a secret is stored in the clear: ${dump.slice(Math.max(0, i - 300), i + 50)}`);
	}
});

test('nothing_sent_out_carries_a_secret_but_the_git_host_its_own_token', () => {
	const text = outbound.map((o) => `${o.method} ${o.url}\n${JSON.stringify(o.headers)}\n${o.body}`).join('\n');
	const gitTokens = new Set(fx.secrets.gitCredentialTokens);
	for (const c of allCanaries()) {
		if (gitTokens.has(c)) continue;
		assert.ok(!text.includes(c), `a secret was sent out: ${c.slice(0, 12)}...`);
	}
});

test('variables_answer_keys_and_value_lengths_only', async () => {
	if (!docs.paths['/applications/{id}/variables']?.get) return;
	const res = await call(srv, 'GET', `/applications/${fx.ids.applications}/variables`, operator);
	assert.equal(res.status, 200, res.text);
	const list = res.json().data;
	const planted = fx.secrets.variables;
	assert.deepEqual(list.map((v) => v.key).sort(), Object.keys(planted).sort());
	for (const v of list) {
		assert.deepEqual(Object.keys(v).filter((k) => !['key', 'valueLength', 'masked', 'createdAt', 'updatedAt'].includes(k)), [], `members of ${v.key}`);
		assert.equal(v.valueLength, Buffer.byteLength(planted[v.key]), `valueLength of ${v.key}`);
		assert.equal(v.masked, v.valueLength >= 4, `masked of ${v.key}: logs hide values of 4 bytes or more`);
	}
});

test('every_sealed_value_opens_under_the_master_key_and_variables_hold_what_was_set', async () => {
	// The planted values are what the database holds, sealed to their row.
	if (!docs.paths['/applications/{id}/variables']) return;
	const rows = (await sql('SELECT application_id, key, value_sealed FROM variables')).split('\n').filter(Boolean);
	assert.equal(rows.length, Object.keys(fx.secrets.variables).length);
	for (const row of rows) {
		const [app, key, sealed] = row.split('|');
		assert.equal(unseal(sealed, `variable:${app}:${key}`, MASTER_KEY), fx.secrets.variables[key]);
		assert.throws(() => unseal(sealed, `variable:${app}:${key}x`, MASTER_KEY), 'bound to its row');
	}
});

test('channel_deliveries_are_signed_with_the_secret_answered_once_and_never_carry_it', () => {
	if (!docs.paths['/notification-channels/{id}/test']) return;
	const [secret] = fx.secrets.channelSecrets;
	assert.ok(secret, 'the channel answered its signing secret');
	assert.ok(hooks().length >= 1, 'the test deliveries reached the channel\'s target');
	for (const o of hooks()) {
		const ts = o.headers['steward-timestamp'];
		const sig = o.headers['steward-signature'];
		assert.match(String(ts), /^\d+$/);
		const want = createHmac('sha256', secret).update(`${ts}.${o.body}`).digest('hex');
		assert.equal(sig, `v1=${want}`, 'Steward-Signature is the HMAC of the timestamp and body');
		assert.ok(!o.body.includes(secret) && !JSON.stringify(o.headers).includes(secret));
	}
});

test('the_database_holds_each_secret_sealed_to_its_row_and_it_is_the_one_answered', async () => {
	const rows = async (q) => {
		try {
			return (await sql(q)).split('\n').filter(Boolean).map((l) => l.split('|'));
		} catch {
			return []; // a table of a feature not in this tree
		}
	};
	// Git credential tokens: what was given.
	for (const [id, sealed] of await rows('SELECT id, token_sealed FROM git_credentials')) {
		assert.ok(fx.secrets.gitCredentialTokens.includes(unseal(sealed, `git-credential:${id}`, MASTER_KEY)));
	}
	// Webhook secrets: the last one answered (by creation or rotation).
	const webhookAnswers = once.filter((x) => /git-source/.test(x.entry.template)).map((x) => x.value);
	for (const [app, sealed] of await rows('SELECT application_id, webhook_secret_sealed FROM git_sources')) {
		assert.equal(unseal(sealed, `webhook-secret:${app}`, MASTER_KEY), webhookAnswers.at(-1));
	}
	// Channel signing secrets: the one POST answered.
	for (const [id, sealed] of await rows("SELECT id, signing_secret FROM notification_channels WHERE signing_secret IS NOT NULL")) {
		assert.ok(fx.secrets.channelSecrets.includes(unseal(sealed, `channel:${id}`, MASTER_KEY)));
	}
	// Service credentials: what the connection route disclosed.
	for (const [id, sealed] of await rows('SELECT id, credentials_sealed FROM services')) {
		const c = JSON.parse(unseal(sealed, `service:${id}`, MASTER_KEY));
		assert.ok(credentials.has(c.password), 'the disclosed password is the sealed one');
	}
});
