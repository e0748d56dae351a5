// GET /docs against a real OpenAPI 3.1 validator from npm
// (@seriousme/openapi-schema-validator, tests/integration/package.json),
// every schema of the document against JSON Schema 2020-12 (Ajv, strict),
// the document's own consistency (operation ids, path parameters, $refs,
// success schemas, pages), and the document against the server: the
// routes it lists are exactly the routes the router answers (OPTIONS and
// Allow), every list the server pages documents its page parameters, and
// what the server answers for one of every resource (tests/integration/
// resources.mjs) matches the documented schema.
//
// The other direction, every route of the compiled table in the
// document, is tests/unit/test_routes_doc.c.
//
// Without the npm packages (npm ci --prefix tests/integration) the file
// exits 77 with that reason, except under CI, where it fails.

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import * as h from './harness.mjs';
import { call, setup } from './identity.mjs';
import { populate, fillPath, templateRegExp, startSink } from './resources.mjs';

let Validator, Ajv2020, addFormats;
try {
	({ Validator } = await import('@seriousme/openapi-schema-validator'));
	Ajv2020 = (await import('ajv/dist/2020.js')).default;
	addFormats = (await import('ajv-formats')).default;
} catch (e) {
	const why = `the OpenAPI validator is not installed (npm ci --prefix tests/integration): ${e.message}`;
	if (process.env.CI) throw new Error(why);
	h.skip(why);
}

h.stewarddPath();
const pg = await h.startPostgres();
const srv = await h.startStewardd({ db: pg, env: { SIGNUP_ENABLED: 'true' } });
after(h.cleanupAll);

const docRes = await h.request(srv.port, 'GET', '/docs');
assert.equal(docRes.status, 200, docRes.text.slice(0, 300));
const doc = docRes.json();
// One of every resource, for the checks that talk to the handlers (made
// before any test is declared: the runner starts them at once).
const owner = await setup(srv, 'owner@a.example', 'Org A'); // OWNER of A and the operator
const sink = await startSink(); // the git host's API and webhook targets
const fx = await populate(srv, owner, { docs: doc, pg, dbName: srv.dbName, sink: sink.url });

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
const ops = [];
for (const [path, item] of Object.entries(doc.paths)) {
	for (const [m, op] of Object.entries(item)) {
		if (!METHODS.includes(m)) continue;
		ops.push({ key: `${m.toUpperCase()} ${path}`, method: m.toUpperCase(), path, op });
	}
}

// A JSON pointer "#/a/b" of the document, or undefined.
function resolve(ref) {
	if (!ref.startsWith('#/')) return undefined;
	let v = doc;
	for (const raw of ref.slice(2).split('/')) {
		const k = raw.replace(/~1/g, '/').replace(/~0/g, '~');
		if (v === null || typeof v !== 'object' || !(k in v)) return undefined;
		v = v[k];
	}
	return v;
}
// Follows $ref until a schema with content.
function deref(s) {
	for (let i = 0; s && s.$ref && i < 20; i++) s = resolve(s.$ref);
	return s;
}
function walk(v, fn, where = '#') {
	if (v === null || typeof v !== 'object') return;
	fn(v, where);
	for (const [k, x] of Object.entries(v)) walk(x, fn, `${where}/${k}`);
}
// 101: GET /agent/connect, whose success is the WebSocket (no body).
const successOf = (op) => Object.keys(op.responses).filter((s) => /^(2\d\d|101)$/.test(s));
const dataSchema = (op) => {
	const s = successOf(op)[0];
	return op.responses[s]?.content?.['application/json']?.schema;
};
const queryNames = (op) => (op.parameters || []).filter((p) => p.in === 'query').map((p) => p.name);
const isArrayData = (op) => {
	const top = deref(dataSchema(op));
	const data = deref(top?.properties?.data);
	return !!data && (data.type === 'array' || (Array.isArray(data.type) && data.type.includes('array')));
};

test('the_document_is_valid_openapi_3_1', async () => {
	assert.equal(doc.openapi, '3.1.0');
	const v = new Validator();
	const r = await v.validate(structuredClone(doc));
	assert.ok(r.valid, `the validator refuses the document:\n${JSON.stringify(r, null, 1).slice(0, 4000)}`);
	assert.equal(v.version, '3.1');
});

test('every_schema_is_valid_json_schema_2020_12', () => {
	// Strict: unknown keywords and formats are errors. The document's refs
	// point into #/components/schemas; here
	// the same schemas sit under #/$defs.
	const ajv = new Ajv2020({ strict: true, strictTypes: false, strictTuples: false, strictRequired: false, allErrors: true });
	addFormats(ajv);
	const defs = JSON.parse(JSON.stringify(doc.components.schemas).replaceAll('#/components/schemas/', '#/$defs/'));
	const problems = [];
	for (const name of Object.keys(defs)) {
		try {
			ajv.compile({ $defs: defs, $ref: `#/$defs/${name}` });
		} catch (e) {
			problems.push(`${name}: ${e.message}`);
		}
	}
	// A required member the same object's properties do not name (with
	// additionalProperties false it could never be given).
	walk(doc.components.schemas, (v, where) => {
		if (!Array.isArray(v.required) || !v.properties || v.additionalProperties !== false) return;
		for (const r of v.required) if (!(r in v.properties)) problems.push(`${where}: required ${r} is not a property`);
	});
	assert.deepEqual(problems, []);
});

test('operation_ids_are_unique_and_every_operation_is_described', () => {
	const seen = new Map();
	for (const { key, op } of ops) {
		assert.ok(op.operationId, `${key}: operationId`);
		assert.ok(!seen.has(op.operationId), `${key}: operationId ${op.operationId} also on ${seen.get(op.operationId)}`);
		seen.set(op.operationId, key);
		assert.ok(op.summary && op.summary.trim(), `${key}: summary`);
		assert.ok(op.description && op.description.trim(), `${key}: description`);
		assert.ok(Array.isArray(op.tags) && op.tags.length === 1 && op.tags[0] !== 'Other', `${key}: one tag`);
		assert.ok(['Public', 'Session', 'Owner', 'Owner/Admin', 'Operator'].includes(op['x-steward-access']), `${key}: x-steward-access`);
		if (op['x-steward-access'] === 'Public') assert.deepEqual(op.security, [], `${key}: public, no security`);
		else {
			assert.deepEqual(op.security, [{ sessionCookie: [] }, { apiToken: [] }], `${key}: security`);
			assert.ok(op.responses['401'], `${key}: documents 401`);
		}
		assert.ok(successOf(op).length >= 1, `${key}: a success status`);
	}
});

test('every_path_parameter_is_declared_and_every_declared_one_is_in_the_path', () => {
	for (const { key, path, op } of ops) {
		const inPath = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
		const declared = (op.parameters || []).filter((p) => p.in === 'path');
		assert.deepEqual(declared.map((p) => p.name).sort(), [...inPath].sort(), `${key}: path parameters`);
		for (const p of declared) assert.equal(p.required, true, `${key}: ${p.name} required`);
		const names = (op.parameters || []).map((p) => `${p.in}:${p.name}`);
		assert.equal(new Set(names).size, names.length, `${key}: a parameter declared twice`);
	}
});

test('every_ref_resolves_and_every_component_is_used', () => {
	const used = new Set();
	walk(doc, (v, where) => {
		if (typeof v.$ref !== 'string') return;
		assert.ok(resolve(v.$ref) !== undefined, `${where}: $ref ${v.$ref} does not resolve`);
		const m = /^#\/components\/schemas\/([^/]+)$/.exec(v.$ref);
		if (m) used.add(m[1]);
	});
	// A schema nobody names is a leftover (or a route that forgot to name it).
	const unused = Object.keys(doc.components.schemas).filter((n) => !used.has(n));
	assert.deepEqual(unused, [], 'components no operation or schema refers to');
});

test('every_success_with_a_body_has_a_schema_and_bodies_refuse_unknown_members', () => {
	for (const { key, op } of ops) {
		const status = successOf(op)[0];
		const resp = op.responses[status];
		if (status === '204' || status === '101') {
			assert.equal(resp.content, undefined, `${key}: ${status} with content`);
			continue;
		}
		const media = Object.keys(resp.content || {});
		if (media.length === 1 && media[0] !== 'application/json') {
			// A body that is not the envelope (a log as text, an SSE stream).
			assert.ok(resp.content[media[0]].schema, `${key}: ${status} without a schema`);
		} else {
			const schema = resp.content?.['application/json']?.schema;
			assert.ok(schema, `${key}: ${status} without a schema`);
			if (key !== 'GET /docs') {
				assert.deepEqual(schema.required, ['data'], `${key}: the envelope`);
				assert.ok(schema.properties?.data?.$ref, `${key}: data names a component schema`);
			}
		}
		for (const [s, r] of Object.entries(op.responses)) {
			if (Number(s) >= 400) assert.equal(r.content?.['application/json']?.schema?.$ref, '#/components/schemas/Error', `${key}: ${s} is the Error envelope`);
		}
		if (op.requestBody) {
			// JSON everywhere, but for the one multipart body (POST /deployments).
			const media = Object.keys(op.requestBody.content ?? {});
			assert.equal(media.length, 1, `${key}: one request media type`);
			assert.ok(media[0] === 'application/json' || (key === 'POST /deployments' && media[0] === 'multipart/form-data'), `${key}: request media ${media[0]}`);
			const b = deref(op.requestBody.content[media[0]].schema);
			assert.ok(b, `${key}: request body schema`);
			assert.equal(b.type, 'object', `${key}: request body is an object`);
			assert.equal(b.additionalProperties, false, `${key}: request body refuses unknown members (additionalProperties: false)`);
		}
	}
});

test('every_documented_page_has_limit_cursor_and_order_and_a_pagination_member', () => {
	for (const { key, method, op } of ops) {
		const q = queryNames(op);
		if (!q.includes('cursor')) continue;
		assert.equal(method, 'GET', `${key}: a page is a GET`);
		for (const p of ['limit', 'cursor', 'order']) assert.ok(q.includes(p), `${key}: documents ?${p}`);
		assert.ok(isArrayData(op), `${key}: a page's data is an array`);
		assert.equal(dataSchema(op).properties?.pagination?.$ref, '#/components/schemas/Pagination', `${key}: pagination member`);
	}
});

// Lists answered whole, without pages, and why that is bounded. Any other
// list is a page (the issue: pagination for every list route).
const UNPAGED = {
	'GET /auth/sessions': "the caller's live sessions",
	'GET /users/{id}/sessions': "one user's live sessions",
	'GET /auth/passkeys': "the caller's passkeys",
	'GET /api-tokens': 'at most 200 records (the live tokens are capped per user)',
	'GET /organizations/{id}/invitations': 'at most 100 open invitations exist',
	'GET /applications/{id}/variables': 'at most 500 variables per application',
	'GET /git-credentials/{id}/repositories': "the first 100 of the git host's answer",
	'GET /plans': 'the whole catalogue of plans',
	'GET /applications/{id}/containers': 'read live from the engine: at most 64 containers of one application',
	'GET /servers/{id}/containers': 'read live from the engine: at most 1000 containers of a server',
};

test('every_list_is_a_page_or_a_bounded_list_named_here', () => {
	const problems = [];
	for (const { key, method, op } of ops) {
		if (method !== 'GET' || !isArrayData(op)) continue;
		const paged = queryNames(op).includes('cursor');
		if (!paged && !UNPAGED[key]) problems.push(`${key} answers a list without documenting pages`);
		if (paged && UNPAGED[key]) problems.push(`${key} is paged now: remove it from UNPAGED`);
	}
	assert.deepEqual(problems, []);
});

// ---- the document against the server

test('the_router_answers_exactly_the_documented_routes', async () => {
	// OPTIONS answers the methods of every route matching the path.
	const templates = Object.keys(doc.paths).map((p) => ({ p, re: templateRegExp(p), methods: Object.keys(doc.paths[p]).map((m) => m.toUpperCase()) }));
	for (const path of Object.keys(doc.paths)) {
		const concrete = path.replace(/\{\w+\}/g, () => randomUUID());
		const want = new Set(['OPTIONS']);
		for (const t of templates) if (t.re.test(concrete)) for (const m of t.methods) want.add(m);
		if (want.has('GET')) want.add('HEAD');
		const res = await h.request(srv.port, 'OPTIONS', concrete);
		assert.equal(res.status, 204, `OPTIONS ${concrete}: ${res.text}`);
		const allow = String(res.headers.allow || '').split(/,\s*/).filter(Boolean);
		assert.deepEqual(allow.sort(), [...want].sort(), `Allow of ${path}`);
	}
	// And a path no route matches is 404 (the document is not a superset).
	h.assertError(await h.request(srv.port, 'OPTIONS', `/no-such-root-${randomUUID()}`), 404, 'NOT_FOUND');
});

test('every_list_the_server_pages_documents_its_page_parameters', async () => {
	// A route that reads ?limit is a page and says so; a documented page
	// answers limit=1 with one item and a cursor that leads on, and refuses
	// page parameters out of range.
	const problems = [];
	for (const { key, method, path, op } of ops) {
		if (method !== 'GET' || path === '/docs') continue;
		const target = fillPath(path, fx.ids);
		const res = await call(srv, 'GET', `${target}?limit=1`, owner);
		const documented = queryNames(op).includes('limit');
		if (!documented) {
			const body = res.status === 200 || res.status === 422 ? res.json() : {};
			const unknown = res.status === 422 && /not a known parameter/.test(JSON.stringify(body.error.fields?.limit || ''));
			if ((res.status === 200 && 'pagination' in body) || (res.status === 422 && !unknown))
				problems.push(`${key} reads ?limit (answered ${res.status} ${res.text.slice(0, 120)}) but documents no page parameters`);
			continue;
		}
		if (res.status !== 200) {
			problems.push(`${key}?limit=1: ${res.status} ${res.text.slice(0, 200)}`);
			continue;
		}
		const body = res.json();
		if (!Array.isArray(body.data) || body.data.length > 1) problems.push(`${key}: limit=1 gives more than one item`);
		if (!body.pagination || !('nextCursor' in body.pagination)) problems.push(`${key}: no pagination.nextCursor`);
		else if (body.pagination.nextCursor) {
			const next = await call(srv, 'GET', `${target}?limit=1&cursor=${encodeURIComponent(body.pagination.nextCursor)}`, owner);
			if (next.status !== 200) problems.push(`${key}: the next page: ${next.status} ${next.text.slice(0, 200)}`);
			else if (JSON.stringify(next.json().data) === JSON.stringify(body.data)) problems.push(`${key}: the next page is the same page`);
		}
		for (const q of ['order=asc', 'order=desc']) {
			const r = await call(srv, 'GET', `${target}?${q}`, owner);
			if (r.status !== 200) problems.push(`${key}?${q}: ${r.status} ${r.text.slice(0, 200)}`);
		}
		for (const q of ['limit=0', 'limit=201', 'order=sideways', 'cursor=nonsense']) {
			const r = await call(srv, 'GET', `${target}?${q}`, owner);
			const field = q.split('=')[0];
			if (r.status !== 422 || !r.json().error.fields?.[field]) problems.push(`${key}?${q}: ${r.status} ${r.text.slice(0, 200)} (want 422 on ${field})`);
		}
	}
	assert.deepEqual(problems, []);
});

test('every_documented_query_parameter_is_one_the_route_knows', async () => {
	for (const { key, method, path, op } of ops) {
		if (method !== 'GET') continue;
		const target = fillPath(path, fx.ids);
		for (const name of queryNames(op)) {
			const res = await call(srv, 'GET', `${target}?${encodeURIComponent(name)}=x`, owner);
			if (res.status !== 422) continue;
			const f = res.json().error.fields || {};
			assert.ok(!/not a known parameter/.test(JSON.stringify(f[name] || '')), `${key} documents ?${name} but refuses it as unknown`);
		}
		// And an unknown parameter is refused, not ignored, where the route reads a query.
		if (queryNames(op).length) {
			const res = await call(srv, 'GET', `${target}?noSuchFilter=1`, owner);
			assert.equal(res.status, 422, `${key}?noSuchFilter=1: ${res.text.slice(0, 200)}`);
		}
	}
});

// Ajv over the whole document's schemas, for checking answers.
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);
ajv.addSchema({ $id: 'doc', components: doc.components });
function schemaErrors(schema, value) {
	const v = ajv.compile(JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"doc#/components/')));
	return v(value) ? null : ajv.errorsText(v.errors, { separator: '\n' });
}

test('answers_match_their_documented_schemas', async () => {
	// Every GET of one of every resource, and what populating answered.
	const checked = [];
	const answers = [...fx.transcript];
	for (const { method, path } of ops) {
		if (method !== 'GET' || path === '/docs') continue;
		const target = fillPath(path, fx.ids);
		const res = await call(srv, 'GET', target, owner);
		answers.push({ method, template: path, path: target, status: res.status, text: res.text });
	}
	const problems = [];
	for (const a of answers) {
		const op = doc.paths[a.template]?.[a.method.toLowerCase()];
		if (!op) {
			problems.push(`${a.method} ${a.template} is not documented`);
			continue;
		}
		const r = op.responses[String(a.status)];
		if (!r) {
			problems.push(`${a.method} ${a.path}: status ${a.status} is not documented (${Object.keys(op.responses)}): ${a.text.slice(0, 200)}`);
			continue;
		}
		const schema = r.content?.['application/json']?.schema;
		if (!schema || a.template === '/docs') continue;
		const err = schemaErrors(schema, JSON.parse(a.text));
		if (err) problems.push(`${a.method} ${a.path} (${a.status}) does not match its schema: ${err}\n${a.text.slice(0, 400)}`);
		checked.push(`${a.method} ${a.template}`);
	}
	assert.deepEqual(problems, []);
	assert.ok(checked.length > 0);
});

test('the_bodies_the_server_accepted_match_their_documented_request_schemas', () => {
	// What populating sent and the server took (2xx) is what the document
	// says a client may send.
	const problems = [];
	for (const a of fx.transcript) {
		if (a.body === undefined || a.status >= 300) continue;
		const op = doc.paths[a.template]?.[a.method.toLowerCase()];
		const schema = op?.requestBody?.content?.['application/json']?.schema;
		if (!schema) {
			problems.push(`${a.method} ${a.template} took a body its document does not describe`);
			continue;
		}
		const err = schemaErrors(schema, a.body);
		if (err) problems.push(`${a.method} ${a.template}: ${JSON.stringify(a.body)} does not match its request schema: ${err}`);
	}
	assert.deepEqual(problems, []);
});
