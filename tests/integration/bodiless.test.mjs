// Routes that take no body, as clients call them: fetch, axios and most
// SDKs send "{}" (or a small object) on every POST. An empty body or an
// empty object is no body; an object with members is refused by naming
// them (422); past 1 KiB it is still 413, unread.

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import * as h from './harness.mjs';
import * as id from './identity.mjs';

h.stewarddPath();
const pg = await h.startPostgres();
const srv = await h.startStewardd({ db: pg });
after(h.cleanupAll);
const owner = await id.setup(srv);

const challenge = (body, headers = {}) => h.request(srv.port, 'POST', '/auth/passkeys/challenge', { body, headers });

test('an_empty_object_on_a_bodiless_route_is_no_body', async () => {
	assert.equal((await challenge({})).status, 200);
	assert.equal((await challenge(' { } ', { 'Content-Type': 'application/json' })).status, 200);
	// fetch's default Content-Type for a string body; {} carries nothing either way.
	assert.equal((await challenge('{}', { 'Content-Type': 'text/plain;charset=UTF-8' })).status, 200);
});

test('an_empty_body_on_a_bodiless_route_is_taken', async () => {
	assert.equal((await challenge()).status, 200);
	assert.equal((await challenge('', { 'Content-Length': '0' })).status, 200);
	assert.equal((await challenge('\r\n', { 'Content-Type': 'application/json' })).status, 200);
});

test('members_on_a_bodiless_route_are_422_naming_them', async () => {
	const e = h.assertError(await challenge({ x: 1, name: 'n' }), 422, 'VALIDATION_FAILED');
	assert.deepEqual(e.fields, { x: ['is not a known field'], name: ['is not a known field'] });
	// A member whose number no JSON parser here holds is still a member.
	const big = await challenge('{"n": {"deep": 1e400}}', { 'Content-Type': 'application/json' });
	assert.deepEqual(h.assertError(big, 422, 'VALIDATION_FAILED').fields, { n: ['is not a known field'] });
});

test('a_body_that_is_not_an_object_on_a_bodiless_route_is_400', async () => {
	h.assertError(await challenge('[1]', { 'Content-Type': 'application/json' }), 400, 'INVALID_JSON');
	h.assertError(await challenge('nonsense', { 'Content-Type': 'application/json' }), 400, 'INVALID_JSON');
});

test('over_1_KiB_on_a_bodiless_route_is_still_413', async () => {
	const r = await h.raw(srv.port, Buffer.from(`POST /auth/passkeys/challenge HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1025\r\n\r\n`));
	h.assertRefusedAndClosed(r, 413, 'PAYLOAD_TOO_LARGE');
});

test('an_authenticated_bodiless_post_with_an_empty_object_runs', async () => {
	const signIn = await h.request(srv.port, 'POST', '/auth/sign-in', { body: { email: owner.email, password: id.PASSWORD } });
	const cookie = id.cookieOf(signIn);
	const refused = await id.call(srv, 'POST', '/auth/sign-out', { cookie }, { body: { everywhere: true } });
	assert.deepEqual(h.assertError(refused, 422, 'VALIDATION_FAILED').fields, { everywhere: ['is not a known field'] });
	assert.equal((await id.call(srv, 'GET', '/auth/session', { cookie })).status, 200, 'a refused body changed nothing');
	assert.equal((await id.call(srv, 'POST', '/auth/sign-out', { cookie }, { body: {} })).status, 204);
	assert.equal((await id.call(srv, 'GET', '/auth/session', { cookie })).status, 401);
});

test('the_document_gives_every_bodiless_unsafe_operation_an_optional_empty_body', async () => {
	const doc = (await h.request(srv.port, 'GET', '/docs')).json();
	const empty = doc.components.schemas.EmptyBody;
	assert.equal(empty.maxProperties, 0);
	assert.equal(empty.additionalProperties, false);
	const op = doc.paths['/auth/passkeys/challenge'].post;
	assert.equal(op.requestBody.required, false);
	assert.equal(op.requestBody.content['application/json'].schema.$ref, '#/components/schemas/EmptyBody');
	assert.ok(doc.paths['/auth/sign-out'].post.responses['422'], 'its 422 is documented');
	// Every POST, PUT, PATCH and DELETE documents a body: its own, or the optional empty one.
	const missing = [];
	for (const [p, item] of Object.entries(doc.paths)) {
		for (const m of ['post', 'put', 'patch', 'delete']) {
			const op = item[m];
			if (!op) continue;
			if (!op.requestBody) missing.push(`${m.toUpperCase()} ${p}`);
			else if (op.requestBody.required === false && !op.responses['422']) missing.push(`${m.toUpperCase()} ${p}: its 422`);
		}
	}
	assert.deepEqual(missing, []);
});
