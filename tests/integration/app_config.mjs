// Shared by the tests of what hangs off an application (domains,
// variables, git sources) and of git credentials: a server with a known
// master key and two organizations, each with an application made through
// the API; field-error checks; and an independent opener of sealed values
// (node's own AES-256-GCM), so that "sealed at rest" is checked against the
// format seal.h documents, not against the code that wrote it.

import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import * as h from './harness.mjs';
import { call, ok, setup, signup } from './identity.mjs';

// The master key every server of these tests runs with (STEWARD_SECRET_KEY).
export const MASTER_KEY = crypto.randomBytes(32).toString('hex');

// Opens a sealed value ("v1.<key id>.<base64url(nonce || ciphertext ||
// tag)>") bound to aad; throws when it does not open.
export function unseal(sealed, aad, keyHex = MASTER_KEY) {
	const m = /^v1\.([0-9a-f]{8})\.([A-Za-z0-9_-]+)$/.exec(sealed);
	assert.ok(m, `a sealed value: ${sealed.slice(0, 40)}...`);
	const key = Buffer.from(keyHex, 'hex');
	const keyId = crypto.createHash('sha256').update(Buffer.concat([Buffer.from('steward-key-id'), key])).digest('hex').slice(0, 8);
	assert.equal(m[1], keyId, 'sealed under the master key');
	const raw = Buffer.from(m[2], 'base64url');
	const d = crypto.createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
	d.setAAD(Buffer.from(aad, 'utf8'));
	d.setAuthTag(raw.subarray(raw.length - 16));
	return Buffer.concat([d.update(raw.subarray(12, raw.length - 16)), d.final()]).toString('utf8');
}

// A project (with its production environment) and an application in it.
export async function makeApp(srv, who, name, opts = {}) {
	const p = await ok(call(srv, 'POST', '/projects', who, { body: { name: `${name}-project` }, ...opts }), 201);
	return ok(call(srv, 'POST', '/applications', who, { body: { name, environmentId: p.environments[0].id }, ...opts }), 201);
}

// A scratch cluster, a server (test environment, signup on, the known
// master key, env added), the operator's organization A with application
// `app`, and organization B (`other`) with `otherApp`.
export async function world(env = {}) {
	h.stewarddPath();
	const pg = await h.startPostgres();
	const srv = await h.startStewardd({ db: pg, env: { SIGNUP_ENABLED: 'true', STEWARD_SECRET_KEY: MASTER_KEY, ...env } });
	const owner = await setup(srv);
	const other = await signup(srv, 'other@b.example', 'Org B');
	const app = await makeApp(srv, owner, 'shop');
	const otherApp = await makeApp(srv, other, 'rival');
	const sql = (q) => pg.psql(q, srv.dbName);
	return { pg, srv, owner, other, app, otherApp, sql };
}

// A second server on the same cluster in production (PUBLIC_BASE_URL
// https://steward.example.com/), its operator and an application: for the
// rules that differ in production. Requests need opts() (the Origin).
export async function productionWorld(pg, env = {}) {
	const srv = await h.startStewardd({
		db: pg,
		env: { STEWARD_ENV: 'production', PUBLIC_BASE_URL: 'https://steward.example.com/', STEWARD_SECRET_KEY: MASTER_KEY, ...env },
	});
	const origin = { headers: { Origin: 'https://steward.example.com' } };
	const res = await h.request(srv.port, 'POST', '/setup', {
		body: { email: 'prod@example.com', password: 'correct horse battery', name: 'Pat Prod', organizationName: 'Prod' },
	});
	assert.equal(res.status, 201, res.text);
	const cookie = /steward_session=([^;]+)/.exec([].concat(res.headers['set-cookie'])[0])[1];
	const owner = { cookie };
	const app = await makeApp(srv, owner, 'prod-app', origin);
	return { srv, owner, app, origin };
}

// Asserts a 422 whose fields has each of fields (a message matching the
// regular expression given, or any).
export function fieldErrors(res, fields) {
	const e = h.assertError(res, 422, 'VALIDATION_FAILED');
	assert.ok(e.fields, `fields in ${res.text}`);
	for (const [name, re] of Object.entries(fields)) {
		assert.ok(Array.isArray(e.fields[name]), `field ${name} in ${res.text}`);
		if (re) assert.ok(e.fields[name].some((m) => re.test(m)), `${name}: ${e.fields[name]} matches ${re}`);
	}
	return e.fields;
}

// Asserts that the stewardd output never held any of the strings.
export function notInLogs(srv, strings) {
	const text = srv.logs.text();
	for (const s of strings) assert.ok(!text.includes(s), `the logs hold ${s.slice(0, 12)}...`);
}
