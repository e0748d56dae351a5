// One of every resource of an organization, made through the API itself,
// for the tests that walk every route (authz_matrix, openapi,
// secret_disclosure): populate() creates them as the given principal and
// returns their ids by collection, the secrets their creation answered
// with, and every response it received (the transcript); fillPath() puts
// those ids into a path template of GET /docs.
//
// A step runs only when GET /docs lists the routes it needs, so the
// fixtures grow with the API and never fail for a route that is not
// there. Values are harmless: hostnames under example.com, loopback or
// documentation URLs, and nothing a runner would act on (no runner runs in
// these tests).

import assert from 'node:assert/strict';
import { randomUUID, randomBytes, createDecipheriv, createHash } from 'node:crypto';
import http from 'node:http';
import { after } from 'node:test';
import { call } from './identity.mjs';

// A distinct value no server would make up: the tests search every
// response and log line for it.
export function canary(label) {
	return `canary${label.replace(/[^A-Za-z0-9]/g, '')}${randomBytes(12).toString('hex')}`;
}

// A loopback HTTP server standing in for webhook targets and git host
// APIs: answers every request 200 with an empty JSON array (an empty
// repository list in the shape of each host's API) and keeps what it got,
// {method, url, headers, body}, in requests. Closed after the file's
// tests.
export async function startSink() {
	const requests = [];
	const server = http.createServer((req, res) => {
		const chunks = [];
		req.on('data', (c) => chunks.push(c));
		req.on('end', () => {
			requests.push({ method: req.method, url: req.url, headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
			res.writeHead(200, { 'Content-Type': 'application/json' });
			res.end('[]');
		});
	});
	await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
	after(() => new Promise((resolve) => server.close(resolve)));
	return { url: `http://127.0.0.1:${server.address().port}`, requests };
}

// ---- sealed values (include/steward/seal.h): "v1." key-id "."
// base64url(nonce[12] || ciphertext || tag[16]), AES-256-GCM under the
// master key with the associated data that binds the value to its row.

// The key id of a master key given as 64 hex digits: the first 8 hex
// digits of SHA-256("steward-key-id" || key).
export function keyIdOf(hex) {
	return createHash('sha256').update('steward-key-id').update(Buffer.from(hex, 'hex')).digest('hex').slice(0, 8);
}

export function sealedKeyId(sealed) {
	const m = /^v1\.([0-9a-f]{8})\.[A-Za-z0-9_-]+$/.exec(sealed);
	assert.ok(m, `not a sealed value: ${String(sealed).slice(0, 40)}`);
	return m[1];
}

// Opens a sealed value bound to aad under the master key (hex); throws
// when it was sealed under another key or the tag does not verify.
export function unseal(sealed, aad, hex) {
	assert.equal(sealedKeyId(sealed), keyIdOf(hex), 'sealed under this key');
	const raw = Buffer.from(sealed.slice(12), 'base64url');
	assert.ok(raw.length >= 28, 'nonce and tag');
	const d = createDecipheriv('aes-256-gcm', Buffer.from(hex, 'hex'), raw.subarray(0, 12));
	d.setAAD(Buffer.from(aad, 'utf8'));
	d.setAuthTag(raw.subarray(raw.length - 16));
	return Buffer.concat([d.update(raw.subarray(12, raw.length - 16)), d.final()]).toString('utf8');
}

// "/projects/{id}/environments/{environmentId}" -> a RegExp matching
// concrete paths of that template.
export function templateRegExp(template) {
	const src = template.split(/\{\w+\}/).map((s) => s.replace(/[.*+?^$()|[\]\\]/g, '\\$&')).join('[^/]+');
	return new RegExp(`^${src}$`);
}

// The collection a path parameter names: the segment before it
// ("/projects/{id}/environments/{environmentId}": projects, environments).
function collectionOf(template, offset) {
	const before = template.slice(0, offset).replace(/\/$/, '');
	return before.slice(before.lastIndexOf('/') + 1);
}

// The collections the parameters of a template name, in order.
export function paramCollections(template) {
	return [...template.matchAll(/\{\w+\}/g)].map((m) => collectionOf(template, m.index));
}

// Fills a template with ids[collection] (an id of A's, or for variables a
// key), else a random UUID. over(collection, name) may decide first
// (return undefined to fall through).
export function fillPath(template, ids, over = () => undefined) {
	return template.replace(/\{(\w+)\}/g, (_, name, offset) => {
		const coll = collectionOf(template, offset);
		const o = over(coll, name);
		if (o !== undefined) return o;
		const v = ids[coll];
		return v === undefined ? randomUUID() : encodeURIComponent(v);
	});
}

// Creates one of every resource in owner's organization. opts.docs: the
// parsed GET /docs (fetched when absent); opts.prefix: of names and
// hostnames, distinct per organization populated ("fx"); opts.sink: a
// loopback http URL standing in for webhook targets and git host APIs
// (startSink(); a channel targets it only when owner is the operator,
// who alone may allow private targets); opts.pg and opts.dbName: the
// scratch cluster and the server's database, for what only the server
// itself makes (an open alert).
// Returns {ids, secrets, transcript, docs, made: [step names]}.
//   ids: collection -> id, by the path segment before a parameter
//     (projects, environments, applications, volumes, domains, variables
//     (a key), servers, services, git-credentials, notification-channels,
//     rules, alerts, api-tokens, invitations, organizations, users), plus
//     git-source and backups
//   secrets: agentTokens, webhookSecrets, channelSecrets, apiTokens,
//     invitationTokens (answered once by their creation); variables
//     ({key: value}) and gitCredentialTokens (planted canaries); refused
//     (canaries sent in requests the server refused with 422)
//   transcript: [{who, method, template, path, body (sent), status, text, headers}]
export async function populate(srv, owner, opts = {}) {
	const docs = opts.docs || JSON.parse((await call(srv, 'GET', '/docs', {})).text);
	// Names are unique per organization; hostnames across the installation.
	const x = opts.prefix || 'fx';
	const has = (method, template) => !!docs.paths?.[template]?.[method.toLowerCase()];
	const ids = {};
	const secrets = { agentTokens: [], webhookSecrets: [], channelSecrets: [], apiTokens: [], variables: {}, gitCredentialTokens: [] };
	const transcript = [];
	const made = [];

	// Calls template (filled from ids) and keeps the response; want: the
	// status (or statuses) it must answer.
	async function send(method, template, body, { who = owner, want, path = fillPath(template, ids) } = {}) {
		const res = await call(srv, method, path, who, { body });
		transcript.push({ who: who.label || 'owner', method, template, path, body, status: res.status, text: res.text, headers: res.headers });
		if (want !== undefined) assert.ok([].concat(want).includes(res.status), `${method} ${path}: want ${want}, got ${res.status} ${res.text.slice(0, 600)}`);
		return res;
	}
	const data = (res) => res.json().data;

	// fn may return false: nothing was made after all.
	const step = async (name, needs, fn) => {
		if (!needs.every((k) => has(...k.split(' ')))) return;
		if ((await fn()) !== false) made.push(name);
	};

	ids.organizations = owner.org.id;
	ids.users = owner.user.id;

	await step('project', ['POST /projects'], async () => {
		const p = data(await send('POST', '/projects', { name: `${x}-project`, description: 'Fixtures' }, { want: 201 }));
		ids.projects = p.id;
		ids.environments = p.environments?.[0]?.id;
		if (!ids.environments && has('POST', '/projects/{id}/environments')) {
			ids.environments = data(await send('POST', '/projects/{id}/environments', { name: 'production' }, { want: 201 })).id;
		}
	});

	await step('server', ['POST /servers'], async () => {
		const s = data(await send('POST', '/servers', { name: `${x}-server`, description: 'Fixtures', host: `${x}-agent.example.com` }, { want: 201 }));
		ids.servers = s.id;
		secrets.agentTokens.push(s.agentToken);
	});

	await step('application', ['POST /applications'], async () => {
		const a = data(await send('POST', '/applications', {
			name: `${x}-app`, description: 'Fixtures', environmentId: ids.environments, serverId: ids.servers,
			port: 8080, healthCheckPath: '/healthz',
		}, { want: 201 }));
		ids.applications = a.id;
	});

	await step('volume', ['POST /applications/{id}/volumes'], async () => {
		ids.volumes = data(await send('POST', '/applications/{id}/volumes', { name: `${x}-data`, mountPath: '/var/lib/data' }, { want: 201 })).id;
	});

	await step('domain', ['POST /applications/{id}/domains'], async () => {
		ids.domains = data(await send('POST', '/applications/{id}/domains', { hostname: `${x}-app.example.com` }, { want: 201 })).id;
	});

	// Variables: one set alone, two in a bulk set, each value a canary;
	// and two refused requests carrying canaries (an answer must not echo
	// a value back).
	await step('variables', ['PUT /applications/{id}/variables/{key}', 'PATCH /applications/{id}/variables'], async () => {
		ids.variables = 'SINGLE_SECRET';
		secrets.variables.SINGLE_SECRET = canary('single');
		await send('PUT', '/applications/{id}/variables/{key}', { value: secrets.variables.SINGLE_SECRET }, { want: [200, 201] });
		// Set again: a replacement (the same value).
		await send('PUT', '/applications/{id}/variables/{key}', { value: secrets.variables.SINGLE_SECRET }, { want: [200, 201] });
		secrets.variables.BULK_ONE = canary('bulkone');
		secrets.variables.BULK_TWO = `with spaces, "quotes" and \u00e9 ${canary('bulktwo')}`;
		await send('PATCH', '/applications/{id}/variables', { set: { BULK_ONE: secrets.variables.BULK_ONE, BULK_TWO: secrets.variables.BULK_TWO } }, { want: 200 });
		secrets.refused = [canary('refusedput'), canary('refusedpatch')];
		await send('PUT', '/applications/{id}/variables/{key}', { value: secrets.refused[0] },
			{ want: 422, path: `/applications/${ids.applications}/variables/9bad-key` });
		await send('PATCH', '/applications/{id}/variables', { set: { 'bad key': secrets.refused[1], OK_KEY: 'x' } }, { want: 422 });
	});

	await step('service', ['POST /services'], async () => {
		const v = data(await send('POST', '/services', { name: `${x}-db`, description: 'Fixtures', kind: 'POSTGRESQL', environmentId: ids.environments, serverId: ids.servers }, { want: 201 }));
		ids.services = v.id;
	});

	await step('backup', ['POST /services/{id}/backups'], async () => {
		const b = data(await send('POST', '/services/{id}/backups', undefined, { want: 202 }));
		ids.backups = b.id;
		ids.jobs = b.jobId; // the backup's job (GET /jobs/{id})
	});

	await step('git source', ['PUT /applications/{id}/git-source'], async () => {
		const g = data(await send('PUT', '/applications/{id}/git-source', { repositoryUrl: `https://github.com/example/${x}-app.git`, branch: 'main', provider: 'GITHUB' }, { want: [200, 201] }));
		ids['git-source'] = g.id;
		if (g.webhookSecret) secrets.webhookSecrets.push(g.webhookSecret);
		// Put again: a replacement, which keeps the keys and the secret.
		await send('PUT', '/applications/{id}/git-source', { repositoryUrl: `https://github.com/example/${x}-app.git`, branch: 'main', provider: 'GITHUB' }, { want: [200, 201] });
	});

	await step('git credential', ['POST /git-credentials'], async () => {
		const token = canary('gitcredential');
		secrets.gitCredentialTokens.push(token);
		const c = data(await send('POST', '/git-credentials', { name: `${x}-github`, provider: 'GITHUB', token, apiBaseUrl: opts.sink || 'https://github.example.com/api/v3' }, { want: 201 }));
		ids['git-credentials'] = c.id;
		// A refused create must not echo the token either.
		const refused = canary('gitcredentialrefused');
		secrets.refused = [...(secrets.refused || []), refused];
		await send('POST', '/git-credentials', { name: 'Not A Name', provider: 'GITHUB', token: refused }, { want: 422 });
	});

	await step('notification channel', ['POST /notification-channels'], async () => {
		// A loopback target needs the operator's allowance.
		const local = !!opts.sink && owner.user.isOperator;
		const c = data(await send('POST', '/notification-channels', {
			name: `${x}-hook`, kind: 'WEBHOOK', url: local ? `${opts.sink}/hook` : `https://hooks.example.com/${x}`,
			...(local ? { allowPrivateTargets: true } : {}),
		}, { want: 201 }));
		ids['notification-channels'] = c.id;
		if (c.signingSecret) secrets.channelSecrets.push(c.signingSecret);
	});

	await step('alert rule', ['POST /alerts/rules'], async () => {
		ids.rules = data(await send('POST', '/alerts/rules', {
			name: `${x}-cpu`, kind: 'METRIC_THRESHOLD', metric: 'CPU_PERCENT', operator: 'ABOVE', threshold: 90,
			serverId: ids.servers, severity: 'CRITICAL',
			...(ids['notification-channels'] ? { channelIds: [ids['notification-channels']] } : {}),
		}, { want: 201 })).id;
	});

	// Alerts are opened by the rules' evaluator, never through the API:
	// opened here as the evaluator does, when the database is at hand.
	await step('alert', ['GET /alerts/{id}'], async () => {
		if (!opts.pg || !opts.dbName) return false;
		const q = `SELECT id FROM steward_alert_open('${ids.organizations}', ${ids.rules ? `'${ids.rules}'` : 'NULL'}, 'CRITICAL', 'CPU above 90%', 'fixture', ${ids.servers ? `'${ids.servers}'` : 'NULL'})`;
		ids.alerts = (await opts.pg.psql(q, opts.dbName)).trim();
	});

	await step('api token', ['POST /api-tokens'], async () => {
		const t = data(await send('POST', '/api-tokens', { name: `${x}-token` }, { want: 201 }));
		ids['api-tokens'] = t.id;
		secrets.apiTokens.push(t.token);
	});

	await step('invitation', ['POST /organizations/{id}/invitations'], async () => {
		const i = data(await send('POST', '/organizations/{id}/invitations', { email: `${x}-invitee@example.com`, role: 'MEMBER' }, { want: 201 }));
		ids.invitations = i.id;
		if (i.token) secrets.invitationTokens = [i.token];
	});

	return { ids, secrets, transcript, docs, made };
}
