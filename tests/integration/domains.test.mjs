// Domains: hostnames validated and stored lower-case, unique across the
// installation, at most 50 per application; verification by a DNS TXT
// record or an HTTP token.
//
// Tests can reach only 127.0.0.0/8 and have no DNS of their own, so this
// file runs the two things a customer would control: a small DNS server
// (UDP on 127.0.0.1, answering TXT and A from a table; stewardd asks it
// through DOMAIN_VERIFY_NAMESERVER) and a web server on 127.0.0.1
// (DOMAIN_VERIFY_HTTP_PORT) answering the challenge path. Both stand in
// for the customer's real DNS zone and web server.

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import * as h from './harness.mjs';
const { TS } = h;
import { call, ok } from './identity.mjs';
import { world, productionWorld, fieldErrors } from './app_config.mjs';

// ---- the customer's DNS zone: name -> {txt: [strings], a: ['127.0.0.1']}

const zone = new Map();
const dnsQueries = [];
const dns = dgram.createSocket('udp4');

function readName(msg, off) {
	const labels = [];
	while (msg[off] !== 0) {
		labels.push(msg.toString('latin1', off + 1, off + 1 + msg[off]));
		off += 1 + msg[off];
	}
	return { name: labels.join('.').toLowerCase(), end: off + 1 };
}

function record(type, rdata) {
	const rr = Buffer.alloc(12);
	rr.writeUInt16BE(0xc00c, 0); // the question's name
	rr.writeUInt16BE(type, 2);
	rr.writeUInt16BE(1, 4); // IN
	rr.writeUInt32BE(60, 6);
	rr.writeUInt16BE(rdata.length, 10);
	return Buffer.concat([rr, rdata]);
}

dns.on('message', (msg, rinfo) => {
	const { name, end } = readName(msg, 12);
	const type = msg.readUInt16BE(end);
	dnsQueries.push({ name, type });
	const entry = zone.get(name);
	const answers = [];
	if (entry && type === 16)
		for (const t of entry.txt || []) {
			// A long value is split into character-strings of 255 bytes.
			const parts = t.match(/.{1,255}/gs) || [''];
			answers.push(record(16, Buffer.concat(parts.map((p) => Buffer.concat([Buffer.from([p.length]), Buffer.from(p, 'latin1')])))));
		}
	if (entry && type === 1)
		for (const a of entry.a || []) answers.push(record(1, Buffer.from(a.split('.').map(Number))));
	const head = Buffer.alloc(12);
	head.writeUInt16BE(msg.readUInt16BE(0), 0);
	head.writeUInt16BE(0x8180 | (entry ? 0 : 3), 2); // response, RD, RA; NXDOMAIN when unknown
	head.writeUInt16BE(1, 4);
	head.writeUInt16BE(answers.length, 6);
	dns.send(Buffer.concat([head, msg.subarray(12, end + 4), ...answers]), rinfo.port, rinfo.address);
});
await new Promise((resolve) => dns.bind(0, '127.0.0.1', resolve));

// ---- the customer's web server: path -> {status, body, chunked}

const pages = new Map();
const web = http.createServer((req, res) => {
	const p = pages.get(req.url);
	if (!p) {
		res.writeHead(404).end('not here');
		return;
	}
	if (p.chunked) {
		res.writeHead(p.status, { 'Content-Type': 'text/plain' });
		res.write(p.body.slice(0, 10));
		res.end(p.body.slice(10) + '\n');
	} else {
		res.writeHead(p.status, { 'Content-Type': 'text/plain', 'Content-Length': Buffer.byteLength(p.body) }).end(p.body);
	}
});
await new Promise((resolve) => web.listen(0, '127.0.0.1', resolve));
const env = { DOMAIN_VERIFY_NAMESERVER: `127.0.0.1:${dns.address().port}`, DOMAIN_VERIFY_HTTP_PORT: web.address().port };

const { pg, srv, owner, other, app, otherApp, sql } = await world(env);
after(async () => {
	dns.close();
	web.close();
	await h.cleanupAll();
});

const base = `/applications/${app.id}/domains`;
const add = (hostname, who = owner, a = app) => ok(call(srv, 'POST', `/applications/${a.id}/domains`, who, { body: { hostname } }), 201);
const verify = (d, who = owner) => call(srv, 'POST', `/domains/${d.id}/verify`, who);

test('a_domain_is_stored_lower_case_pending_with_its_token_and_instructions', async () => {
	const d = await add('WWW.Shop-Example.COM');
	assert.equal(d.hostname, 'www.shop-example.com');
	assert.equal(d.applicationId, app.id);
	assert.equal(d.status, 'PENDING');
	assert.match(d.verificationToken, /^[0-9a-f]{64}$/);
	assert.equal(d.verificationMethod, null);
	assert.equal(d.verifiedAt, null);
	assert.equal(d.lastCheckedAt, null);
	assert.equal(d.lastCheckError, null);
	assert.match(d.createdAt, TS);
	assert.deepEqual(d.instructions, {
		dns: { type: 'TXT', name: '_steward-challenge.www.shop-example.com', value: d.verificationToken },
		http: { url: `http://www.shop-example.com/.well-known/steward-challenge/${d.verificationToken}`, body: d.verificationToken },
	});
	assert.deepEqual(await ok(call(srv, 'GET', `${base}/${d.id}`, owner)), d);
	const d2 = await add('api.shop-example.com');
	assert.notEqual(d2.verificationToken, d.verificationToken);
});

test('hostname_validation_failures', async () => {
	const post = (body) => call(srv, 'POST', base, owner, { body });
	fieldErrors(await post({}), { hostname: /required/ });
	fieldErrors(await post({ hostname: 42 }), { hostname: /string/ });
	fieldErrors(await post({ hostname: null }), { hostname: null });
	for (const bad of ['', 'localhost', '*.example.com', '203.0.113.7', 'exa mple.com', 'example.com.', '-x.example.com',
		'a..b.com', 'x_y.example.com', 'h\u00e9llo.example.com', `${'a'.repeat(64)}.example.com`, `${'a.'.repeat(127)}com`])
		fieldErrors(await post({ hostname: bad }), { hostname: null });
	fieldErrors(await post({ hostname: 'ok.example.com', applicationId: app.id }), { applicationId: /not a known field/ });
});

test('a_pending_claim_blocks_no_one_and_a_verified_hostname_belongs_to_one_application', async () => {
	const mine = await add('unique.example.org');
	// The same application cannot hold it twice.
	h.assertError(await call(srv, 'POST', base, owner, { body: { hostname: 'Unique.Example.org' } }), 409, 'DOMAIN_EXISTS');
	// Another organization may claim it while it is unverified (no squatting).
	const theirs = await add('unique.example.org', other, otherApp);
	assert.equal(theirs.status, 'PENDING');
	// The first to prove control holds it; the other claim can no longer verify.
	zone.set('_steward-challenge.unique.example.org', { txt: [mine.verificationToken, theirs.verificationToken] });
	assert.equal((await ok(verify(mine))).status, 'VERIFIED');
	h.assertError(await verify(theirs, other), 409, 'DOMAIN_EXISTS');
	// And no application can add it any more.
	h.assertError(await call(srv, 'POST', `/applications/${otherApp.id}/domains`, other, { body: { hostname: 'unique.example.org' } }), 409, 'DOMAIN_EXISTS');
	zone.delete('_steward-challenge.unique.example.org');
});

test('at_most_50_domains_per_application', async () => {
	const env2 = (await ok(call(srv, 'GET', `/applications/${app.id}`, owner))).environmentId;
	const many = await ok(call(srv, 'POST', '/applications', owner, { body: { name: 'many-domains', environmentId: env2 } }), 201);
	for (let i = 0; i < 50; i++) await add(`d${i}.many.example.net`, owner, many);
	h.assertError(await call(srv, 'POST', `/applications/${many.id}/domains`, owner, { body: { hostname: 'd50.many.example.net' } }), 409, 'DOMAIN_LIMIT_REACHED');
	const page = await call(srv, 'GET', `/applications/${many.id}/domains?limit=200`, owner);
	assert.equal(page.json().data.length, 50);
});

test('verified_by_a_dns_txt_record', async () => {
	const d = await add('dns.verify.example');
	zone.set('_steward-challenge.dns.verify.example', { txt: ['some-other-record', d.verificationToken] });
	const res = await verify(d);
	assert.equal(res.status, 200, res.text);
	const v = res.json().data;
	assert.equal(v.status, 'VERIFIED');
	assert.equal(v.verificationMethod, 'DNS');
	assert.match(v.verifiedAt, TS);
	assert.match(v.lastCheckedAt, TS);
	assert.equal(v.lastCheckError, null);
	assert.ok(dnsQueries.some((q) => q.name === '_steward-challenge.dns.verify.example' && q.type === 16));
	let audit = '';
	for (let i = 0; i < 50 && !audit.trim(); i++) {
		audit = await sql(`SELECT metadata::text FROM audit_logs WHERE action = 'domain.verified' AND target_id = '${d.id}'`);
		await h.sleep(20);
	}
	assert.match(audit, /"method": "DNS"/);
});

test('a_txt_value_split_in_character_strings_counts_joined', async () => {
	const d = await add('split.verify.example');
	zone.set('_steward-challenge.split.verify.example', { txt: [d.verificationToken] });
	// 64 characters fit one string; a record of two strings is the token too.
	zone.set('_steward-challenge.split.verify.example', { txt: [] });
	const two = Buffer.concat([Buffer.from([32]), Buffer.from(d.verificationToken.slice(0, 32)), Buffer.from([32]), Buffer.from(d.verificationToken.slice(32))]);
	const orig = dns.listeners('message')[0];
	const splitter = (msg, rinfo) => {
		const { name, end } = readName(msg, 12);
		if (name !== '_steward-challenge.split.verify.example') return orig(msg, rinfo);
		const head = Buffer.alloc(12);
		head.writeUInt16BE(msg.readUInt16BE(0), 0);
		head.writeUInt16BE(0x8180, 2);
		head.writeUInt16BE(1, 4);
		head.writeUInt16BE(1, 6);
		dns.send(Buffer.concat([head, msg.subarray(12, end + 4), record(16, two)]), rinfo.port, rinfo.address);
	};
	dns.removeAllListeners('message');
	dns.on('message', splitter);
	try {
		const v = await ok(verify(d));
		assert.equal(v.verificationMethod, 'DNS');
	} finally {
		dns.removeAllListeners('message');
		dns.on('message', orig);
	}
});

test('verified_by_the_http_token', async () => {
	const d = await add('http.verify.example');
	zone.set('http.verify.example', { a: ['127.0.0.1'] });
	pages.set(`/.well-known/steward-challenge/${d.verificationToken}`, { status: 200, body: `  ${d.verificationToken}\r\n` });
	const v = await ok(verify(d));
	assert.equal(v.status, 'VERIFIED');
	assert.equal(v.verificationMethod, 'HTTP');
	// A chunked answer is read too.
	const c = await add('chunked.verify.example');
	zone.set('chunked.verify.example', { a: ['127.0.0.1'] });
	pages.set(`/.well-known/steward-challenge/${c.verificationToken}`, { status: 200, body: c.verificationToken, chunked: true });
	assert.equal((await ok(verify(c))).verificationMethod, 'HTTP');
});

test('no_proof_is_409_with_the_reason_kept_on_the_domain', async () => {
	const d = await add('nothing.verify.example');
	const res = await verify(d);
	const e = h.assertError(res, 409, 'DOMAIN_NOT_VERIFIED');
	assert.match(e.message, /_steward-challenge\.nothing\.verify\.example/);
	assert.match(e.message, /no A or AAAA record/);
	const got = await ok(call(srv, 'GET', `${base}/${d.id}`, owner));
	assert.equal(got.status, 'PENDING');
	assert.match(got.lastCheckedAt, TS);
	assert.equal(got.lastCheckError, e.message);
	assert.equal(got.verifiedAt, null);
});

test('wrong_record_and_wrong_page_are_each_named', async () => {
	const d = await add('wrong.verify.example');
	zone.set('_steward-challenge.wrong.verify.example', { txt: ['not-the-token'] });
	zone.set('wrong.verify.example', { a: ['127.0.0.1'] });
	let e = h.assertError(await verify(d), 409, 'DOMAIN_NOT_VERIFIED');
	assert.match(e.message, /TXT record at _steward-challenge\.wrong\.verify\.example is not the token/);
	assert.match(e.message, /127\.0\.0\.1 port \d+ answered HTTP 404/);
	pages.set(`/.well-known/steward-challenge/${d.verificationToken}`, { status: 200, body: 'something else' });
	e = h.assertError(await verify(d), 409, 'DOMAIN_NOT_VERIFIED');
	assert.match(e.message, /its body is not the token/);
	pages.set(`/.well-known/steward-challenge/${d.verificationToken}`, { status: 302, body: '' });
	e = h.assertError(await verify(d), 409, 'DOMAIN_NOT_VERIFIED');
	assert.match(e.message, /HTTP 302 \(redirects are not followed\)/);
	// Nobody listening there (the web server listens on 127.0.0.1 only).
	zone.set('wrong.verify.example', { a: ['127.0.0.2'] });
	e = h.assertError(await verify(d), 409, 'DOMAIN_NOT_VERIFIED');
	assert.match(e.message, /127\.0\.0\.2 port \d+ refused the connection/);
});

test('a_verified_domain_is_answered_as_it_is', async () => {
	const d = await add('again.verify.example');
	zone.set('_steward-challenge.again.verify.example', { txt: [d.verificationToken] });
	const first = await ok(verify(d));
	zone.delete('_steward-challenge.again.verify.example');
	const before = dnsQueries.length;
	const second = await ok(verify(d));
	assert.deepEqual(second, first, 'unchanged, not checked again');
	assert.equal(dnsQueries.length, before);
});

test('list_filters_and_pages', async () => {
	const all = await ok(call(srv, 'GET', `${base}?limit=200`, owner));
	assert.ok(all.length >= 5);
	const verified = await ok(call(srv, 'GET', `${base}?status=VERIFIED&limit=200`, owner));
	assert.ok(verified.length >= 2 && verified.every((d) => d.status === 'VERIFIED'));
	const pending = await ok(call(srv, 'GET', `${base}?status=PENDING&limit=200`, owner));
	assert.equal(pending.length + verified.length, all.length);
	const one = await ok(call(srv, 'GET', `${base}?hostname=WWW.shop-example.com`, owner));
	assert.deepEqual(one.map((d) => d.hostname), ['www.shop-example.com']);
	const p1 = (await call(srv, 'GET', `${base}?limit=2&order=asc`, owner)).json();
	assert.equal(p1.data.length, 2);
	assert.ok(p1.pagination.nextCursor);
	const p2 = (await call(srv, 'GET', `${base}?limit=2&order=asc&cursor=${encodeURIComponent(p1.pagination.nextCursor)}`, owner)).json();
	assert.ok(!p2.data.some((d) => p1.data.some((x) => x.id === d.id)));
	fieldErrors(await call(srv, 'GET', `${base}?status=DONE`, owner), { status: /PENDING or VERIFIED/ });
	fieldErrors(await call(srv, 'GET', `${base}?hostname=not_a_host`, owner), { hostname: null });
	fieldErrors(await call(srv, 'GET', `${base}?colour=red`, owner), { colour: null });
});

test('delete_frees_the_hostname_and_a_repeat_is_404', async () => {
	const d = await add('free-again.example.com');
	await ok(call(srv, 'DELETE', `${base}/${d.id}`, owner), 204);
	h.assertError(await call(srv, 'DELETE', `${base}/${d.id}`, owner), 404, 'NOT_FOUND');
	h.assertError(await call(srv, 'GET', `${base}/${d.id}`, owner), 404, 'NOT_FOUND');
	h.assertError(await verify(d), 404, 'NOT_FOUND');
	await add('free-again.example.com', other, otherApp);
});

test('another_organizations_objects_are_404', async () => {
	const theirs = await add('theirs.example.com', other, otherApp);
	const tb = `/applications/${otherApp.id}/domains`;
	for (const [method, path, body] of [
		['GET', tb], ['POST', tb, { hostname: 'mine.example.com' }], ['GET', `${tb}/${theirs.id}`],
		['DELETE', `${tb}/${theirs.id}`], ['POST', `/domains/${theirs.id}/verify`],
		['GET', `${base}/${theirs.id}`], ['DELETE', `${base}/${theirs.id}`],
		['GET', `/applications/${randomUUID()}/domains`], ['POST', `/domains/${randomUUID()}/verify`],
		['POST', '/domains/not-a-uuid/verify'], ['GET', `${base}/not-a-uuid`],
	]) {
		h.assertError(await call(srv, method, path, owner, { body }), 404, 'NOT_FOUND');
	}
	assert.equal((await ok(call(srv, 'GET', `${tb}/${theirs.id}`, other))).hostname, 'theirs.example.com');
});

test('in_production_private_addresses_are_not_asked_over_http', async () => {
	const prod = await productionWorld(pg, env);
	const d = await ok(call(prod.srv, 'POST', `/applications/${prod.app.id}/domains`, prod.owner, { body: { hostname: 'private.verify.example' }, ...prod.origin }), 201);
	zone.set('private.verify.example', { a: ['127.0.0.1'] });
	pages.set(`/.well-known/steward-challenge/${d.verificationToken}`, { status: 200, body: d.verificationToken });
	const e = h.assertError(await call(prod.srv, 'POST', `/domains/${d.id}/verify`, prod.owner, prod.origin), 409, 'DOMAIN_NOT_VERIFIED');
	assert.match(e.message, /resolves to 127\.0\.0\.1, which is not a public address/);
	await prod.srv.stop();
});
