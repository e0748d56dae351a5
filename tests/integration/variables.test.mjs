// Environment variables: set one (PUT: 201 new, 200 replaced), set and unset many in one
// transaction (PATCH), unset one (DELETE); GET shows keys and value
// lengths, never values; values are sealed at rest under
// "variable:<application id>:<KEY>"; keys only in audit records; the limit
// per application; field errors; 404 across organizations.

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import * as h from './harness.mjs';
const { TS } = h;
import { call, ok } from './identity.mjs';
import { world, unseal, fieldErrors, notInLogs } from './app_config.mjs';

const { srv, owner, other, app, otherApp, sql } = await world();
after(h.cleanupAll);

const base = `/applications/${app.id}/variables`;
const CANARIES = [];
function canary(tag) {
	const v = `canary-${tag}-${randomUUID()}`;
	CANARIES.push(v);
	return v;
}

test('put_creates_201_then_replaces_200_and_answers_no_value', async () => {
	const v1 = canary('put1');
	const res = await call(srv, 'PUT', `${base}/DATABASE_URL`, owner, { body: { value: v1 } });
	assert.equal(res.status, 201, res.text);
	assert.ok(!res.text.includes(v1));
	const created = res.json().data;
	assert.deepEqual(Object.keys(created).sort(), ['createdAt', 'key', 'masked', 'updatedAt', 'valueLength']);
	assert.equal(created.key, 'DATABASE_URL');
	assert.equal(created.valueLength, Buffer.byteLength(v1));
	assert.match(created.createdAt, TS);
	assert.equal(created.updatedAt, created.createdAt, 'just created');
	const v2 = canary('put2') + 'é';
	const replaced = await ok(call(srv, 'PUT', `${base}/DATABASE_URL`, owner, { body: { value: v2 } }), 200);
	assert.equal(replaced.valueLength, Buffer.byteLength(v2), 'valueLength counts UTF-8 bytes');
	assert.equal(replaced.createdAt, created.createdAt);
	assert.ok(replaced.updatedAt >= created.updatedAt);
	const empty = await ok(call(srv, 'PUT', `${base}/EMPTY`, owner, { body: { value: '' } }), 201);
	assert.equal(empty.valueLength, 0);
});

test('each_variable_says_whether_logs_mask_it_shorter_than_4_bytes_not', async () => {
	const masked = async (key, value) => (await ok(call(srv, 'PUT', `${base}/${key}`, owner, { body: { value } }), 201)).masked;
	assert.equal(await masked('MASK_ONE', '1'), false);
	assert.equal(await masked('MASK_THREE', 'dev'), false);
	assert.equal(await masked('MASK_FOUR', 's3cr'), true);
	assert.equal(await masked('MASK_TWO_BYTES_OF_ONE', 'é'), false, 'bytes, not characters');
	assert.equal(await masked('MASK_FOUR_BYTES_OF_TWO', 'éé'), true);
	const list = await ok(call(srv, 'GET', base, owner));
	assert.equal(list.find((x) => x.key === 'MASK_ONE').masked, false);
	assert.equal(list.find((x) => x.key === 'MASK_FOUR').masked, true);
	const patched = await ok(call(srv, 'PATCH', base, owner, { body: { set: { MASK_ONE: 'long enough' }, unset: ['MASK_THREE', 'MASK_FOUR', 'MASK_TWO_BYTES_OF_ONE', 'MASK_FOUR_BYTES_OF_TWO'] } }));
	assert.equal(patched.find((x) => x.key === 'MASK_ONE').masked, true);
	await ok(call(srv, 'DELETE', `${base}/MASK_ONE`, owner), 204);
});

test('get_lists_keys_and_lengths_by_key_never_values', async () => {
	const v = canary('list');
	await ok(call(srv, 'PUT', `${base}/alpha_lower`, owner, { body: { value: v } }), 201);
	await ok(call(srv, 'PUT', `${base}/Zeta`, owner, { body: { value: 'zz' } }), 201);
	const res = await call(srv, 'GET', base, owner);
	assert.equal(res.status, 200);
	for (const c of CANARIES) assert.ok(!res.text.includes(c), 'no value in the list');
	const list = res.json().data;
	const keys = list.map((x) => x.key);
	assert.deepEqual(keys, [...keys].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)), 'sorted by key, byte order');
	for (const x of list) assert.deepEqual(Object.keys(x).sort(), ['createdAt', 'key', 'masked', 'updatedAt', 'valueLength']);
	assert.equal(list.find((x) => x.key === 'alpha_lower').valueLength, v.length);
	const one = await ok(call(srv, 'GET', `${base}/Zeta`, owner));
	assert.deepEqual(one, list.find((x) => x.key === 'Zeta'));
	h.assertError(await call(srv, 'GET', `${base}/NOT_SET`, owner), 404, 'NOT_FOUND');
	h.assertError(await call(srv, 'GET', `${base}/1BAD`, owner), 404, 'NOT_FOUND');
	assert.equal(res.json().pagination, undefined, 'one answer, no pages');
});

test('value_is_sealed_at_rest_bound_to_application_and_key', async () => {
	const v = canary('sealed');
	await ok(call(srv, 'PUT', `${base}/SECRET_TOKEN`, owner, { body: { value: v } }), 201);
	const row = (await sql(`SELECT value_sealed || '|' || value_length FROM variables WHERE application_id = '${app.id}' AND key = 'SECRET_TOKEN'`)).trim();
	const [sealed, length] = row.split('|');
	assert.match(sealed, /^v1\.[0-9a-f]{8}\.[A-Za-z0-9_-]+$/);
	assert.ok(!sealed.includes(v) && !sealed.includes(Buffer.from(v).toString('base64url')), 'no plaintext in the column');
	assert.equal(Number(length), v.length);
	assert.equal(unseal(sealed, `variable:${app.id}:SECRET_TOKEN`), v);
	assert.throws(() => unseal(sealed, `variable:${app.id}:OTHER_KEY`), 'another key does not open it');
	assert.throws(() => unseal(sealed, `variable:${otherApp.id}:SECRET_TOKEN`), 'another application does not open it');
	const all = await sql(`SELECT string_agg(value_sealed, ' ') FROM variables`);
	for (const c of CANARIES) assert.ok(!all.includes(c));
});

test('patch_sets_and_unsets_in_one_transaction', async () => {
	await ok(call(srv, 'PUT', `${base}/OLD_ONE`, owner, { body: { value: 'x' } }), 201);
	const a = canary('bulk-a');
	const res = await call(srv, 'PATCH', base, owner, { body: { set: { BULK_A: a, BULK_B: 'bb', Zeta: 'zzz' }, unset: ['OLD_ONE', 'NEVER_SET'] } });
	assert.equal(res.status, 200, res.text);
	assert.ok(!res.text.includes(a));
	const list = res.json().data;
	const byKey = Object.fromEntries(list.map((x) => [x.key, x]));
	assert.equal(byKey.BULK_A.valueLength, a.length);
	assert.equal(byKey.Zeta.valueLength, 3, 'replaced');
	assert.ok(!byKey.OLD_ONE, 'unset');
	const sealed = (await sql(`SELECT value_sealed FROM variables WHERE application_id = '${app.id}' AND key = 'BULK_A'`)).trim();
	assert.equal(unseal(sealed, `variable:${app.id}:BULK_A`), a);
	// Unset alone.
	const after1 = await ok(call(srv, 'PATCH', base, owner, { body: { unset: ['BULK_B'] } }));
	assert.ok(!after1.some((x) => x.key === 'BULK_B'));
	// A failing bulk change leaves everything as it was: the unset too.
	const before = await ok(call(srv, 'GET', base, owner));
	const set = {};
	for (let i = 0; i < 501; i++) set[`MANY_${i}`] = 'v';
	h.assertError(await call(srv, 'PATCH', base, owner, { body: { set, unset: ['BULK_A'] } }), 409, 'VARIABLE_LIMIT_REACHED');
	assert.deepEqual(await ok(call(srv, 'GET', base, owner)), before, 'nothing changed');
});

test('at_most_500_variables_per_application', async () => {
	const app2 = (await ok(call(srv, 'POST', '/applications', owner, {
		body: { name: 'limits', environmentId: (await ok(call(srv, 'GET', `/applications/${app.id}`, owner))).environmentId },
	}), 201));
	const b2 = `/applications/${app2.id}/variables`;
	const set = {};
	for (let i = 0; i < 500; i++) set[`K_${i}`] = `value ${i}`;
	const list = await ok(call(srv, 'PATCH', b2, owner, { body: { set } }));
	assert.equal(list.length, 500);
	h.assertError(await call(srv, 'PUT', `${b2}/ONE_MORE`, owner, { body: { value: 'x' } }), 409, 'VARIABLE_LIMIT_REACHED');
	await ok(call(srv, 'PUT', `${b2}/K_1`, owner, { body: { value: 'replacing is fine' } }), 200);
	await ok(call(srv, 'PATCH', b2, owner, { body: { set: { ONE_MORE: 'x' }, unset: ['K_2'] } }));
});

test('delete_unsets_204_and_a_repeat_is_404', async () => {
	await ok(call(srv, 'PUT', `${base}/GONE_SOON`, owner, { body: { value: 'x' } }), 201);
	await ok(call(srv, 'DELETE', `${base}/GONE_SOON`, owner), 204);
	h.assertError(await call(srv, 'DELETE', `${base}/GONE_SOON`, owner), 404, 'NOT_FOUND');
	h.assertError(await call(srv, 'GET', `${base}/GONE_SOON`, owner), 404, 'NOT_FOUND');
	h.assertError(await call(srv, 'DELETE', `${base}/9INVALID`, owner), 404, 'NOT_FOUND');
});

test('put_validation_failures', async () => {
	fieldErrors(await call(srv, 'PUT', `${base}/1STARTS_WITH_DIGIT`, owner, { body: { value: 'x' } }), { key: null });
	fieldErrors(await call(srv, 'PUT', `${base}/${'K'.repeat(129)}`, owner, { body: { value: 'x' } }), { key: null });
	fieldErrors(await call(srv, 'PUT', `${base}/HAS-DASH`, owner, { body: { value: 'x' } }), { key: null });
	fieldErrors(await call(srv, 'PUT', `${base}/OK`, owner, { body: {} }), { value: /required/ });
	fieldErrors(await call(srv, 'PUT', `${base}/OK`, owner, { body: { value: 42 } }), { value: /string/ });
	fieldErrors(await call(srv, 'PUT', `${base}/OK`, owner, { body: { value: null } }), { value: /string/ });
	// A NUL never gets past the JSON parser.
	h.assertError(await call(srv, 'PUT', `${base}/OK`, owner, { body: { value: 'a\u0000b' } }), 400, 'INVALID_JSON');
	fieldErrors(await call(srv, 'PUT', `${base}/OK`, owner, { body: { value: 'x'.repeat(32 * 1024 + 1) } }), { value: null });
	await ok(call(srv, 'PUT', `${base}/MAX_SIZE`, owner, { body: { value: 'x'.repeat(32 * 1024) } }), 201);
	fieldErrors(await call(srv, 'PUT', `${base}/OK`, owner, { body: { value: 'x', secret: true } }), { secret: /not a known field/ });
	h.assertError(await call(srv, 'GET', `${base}/OK`, owner), 404, 'NOT_FOUND');
});

test('patch_validation_failures', async () => {
	fieldErrors(await call(srv, 'PATCH', base, owner, { body: {} }), { set: /set or unset/ });
	fieldErrors(await call(srv, 'PATCH', base, owner, { body: { set: ['A'] } }), { set: /object/ });
	fieldErrors(await call(srv, 'PATCH', base, owner, { body: { unset: 'A' } }), { unset: /array/ });
	fieldErrors(await call(srv, 'PATCH', base, owner, { body: { unset: ['OK', 'not-valid'] } }), { unset: /valid keys/ });
	fieldErrors(await call(srv, 'PATCH', base, owner, { body: { unset: [7] } }), { unset: null });
	fieldErrors(await call(srv, 'PATCH', base, owner, { body: { set: { 'BAD KEY': 'x' } } }), { set: /not a valid key/ });
	fieldErrors(await call(srv, 'PATCH', base, owner, { body: { set: { GOOD: 1 } } }), { 'set.GOOD': /string/ });
	fieldErrors(await call(srv, 'PATCH', base, owner, { body: { set: { GOOD: 'x' }, unset: ['GOOD'] } }), { unset: /also sets/ });
	fieldErrors(await call(srv, 'PATCH', base, owner, { body: { set: { A: 'x' }, extra: 1 } }), { extra: /not a known field/ });
	h.assertError(await call(srv, 'GET', `${base}/GOOD`, owner), 404, 'NOT_FOUND');
	h.assertError(await call(srv, 'GET', `${base}/A`, owner), 404, 'NOT_FOUND');
});

test('bodies_over_256_kib_are_413', async () => {
	const res = await call(srv, 'PATCH', base, owner, { body: { set: { BIG: 'x'.repeat(257 * 1024) } } });
	h.assertError(res, 413, 'PAYLOAD_TOO_LARGE');
});

test('another_organizations_application_is_404', async () => {
	const theirs = `/applications/${otherApp.id}/variables`;
	await ok(call(srv, 'PUT', `${theirs}/THEIRS`, other, { body: { value: 'b' } }), 201);
	for (const [method, path, body] of [
		['GET', theirs], ['PATCH', theirs, { set: { X: 'y' } }], ['GET', `${theirs}/THEIRS`],
		['PUT', `${theirs}/THEIRS`, { value: 'mine now' }], ['DELETE', `${theirs}/THEIRS`],
		['GET', `/applications/${randomUUID()}/variables`], ['PUT', `/applications/${randomUUID()}/variables/X`, { value: 'y' }],
		['GET', '/applications/not-a-uuid/variables'],
	]) {
		h.assertError(await call(srv, method, path, owner, { body }), 404, 'NOT_FOUND');
	}
	const mine = await ok(call(srv, 'GET', theirs, other));
	assert.deepEqual(mine.map((x) => x.key), ['THEIRS'], 'untouched');
});

test('audit_records_name_keys_never_values', async () => {
	const v = canary('audit');
	await ok(call(srv, 'PUT', `${base}/AUDITED`, owner, { body: { value: v } }), 201);
	await ok(call(srv, 'PATCH', base, owner, { body: { set: { AUDITED_TOO: v }, unset: ['AUDITED'] } }));
	await ok(call(srv, 'DELETE', `${base}/AUDITED_TOO`, owner), 204);
	let rows = '';
	for (let i = 0; i < 50 && !/variable\.unset/.test(rows); i++) {
		rows = await sql(`SELECT action || ' ' || coalesce(metadata::text, '') FROM audit_logs WHERE action LIKE 'variable%' ORDER BY created_at`);
		await h.sleep(20);
	}
	assert.match(rows, /variable\.set .*"AUDITED"/);
	assert.match(rows, /variables\.updated .*"AUDITED_TOO".*"AUDITED"/);
	assert.match(rows, /variable\.unset .*"AUDITED_TOO"/);
	const all = await sql('SELECT string_agg(coalesce(metadata::text, \'\'), \' \') FROM audit_logs');
	for (const c of CANARIES) assert.ok(!all.includes(c), 'no value in the audit log');
});

test('values_never_reach_the_logs', () => {
	notInLogs(srv, CANARIES);
});
