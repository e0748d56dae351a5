// Passkeys (WebAuthn) over HTTP, without a browser: a software authenticator
// written here with node:crypto (COSE keys, authenticator data, CBOR
// attestation objects "none" and "packed" self or x5c, assertions) drives
// registration and sign-in, so every check can be broken on purpose. The
// real browser ceremony is tests/browser/passkey.test.mjs.
//
// With no PUBLIC_BASE_URL the relying party is "localhost" and the one
// allowed origin http://localhost:<port>; the API itself is reached on
// 127.0.0.1 (CSRF wants the Host's origin there).
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import * as h from './harness.mjs';

const PASSWORD = 'correct horse battery';
let pg, main;

before(async () => {
	pg = await h.startPostgres();
	main = await server({ SIGNUP_ENABLED: 'true' });
	await h.request(main.port, 'POST', '/setup', { body: h.setupBody({ password: PASSWORD }) });
});
after(async () => {
	await h.cleanupAll();
});

async function server(env = {}) {
	const s = await h.startStewardd({ db: pg, env });
	return { ...s, origin: `http://127.0.0.1:${s.port}`, webOrigin: `http://localhost:${s.port}` };
}

// ---- the software authenticator ----

const UP = 0x01, UV = 0x04, BE = 0x08, BS = 0x10, AT = 0x40;
const b64 = (buf) => Buffer.from(buf).toString('base64url');
const unb64 = (s) => Buffer.from(s, 'base64url');
const sha256 = (b) => crypto.createHash('sha256').update(b).digest();

function cborHead(major, n) {
	if (n < 24) return Buffer.from([(major << 5) | n]);
	if (n < 256) return Buffer.from([(major << 5) | 24, n]);
	const b = Buffer.alloc(n < 65536 ? 3 : 5);
	b[0] = (major << 5) | (n < 65536 ? 25 : 26);
	if (n < 65536) b.writeUInt16BE(n, 1);
	else b.writeUInt32BE(n, 1);
	return b;
}

// Numbers, strings, byte strings, arrays and Maps (keys in insertion order).
function cbor(v) {
	if (typeof v === 'number') return v >= 0 ? cborHead(0, v) : cborHead(1, -1 - v);
	if (typeof v === 'string') return Buffer.concat([cborHead(3, Buffer.byteLength(v)), Buffer.from(v)]);
	if (Buffer.isBuffer(v)) return Buffer.concat([cborHead(2, v.length), v]);
	if (Array.isArray(v)) return Buffer.concat([cborHead(4, v.length), ...v.map(cbor)]);
	if (v instanceof Map) return Buffer.concat([cborHead(5, v.size), ...[...v].flatMap(([k, x]) => [cbor(k), cbor(x)])]);
	throw new Error(`cbor: cannot encode ${v}`);
}

// A credential key pair and its COSE_Key: ES256 (-7), EdDSA (-8), RS256 (-257).
function newKey(alg = -7) {
	const pair = alg === -7 ? crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' })
		: alg === -8 ? crypto.generateKeyPairSync('ed25519')
		: crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
	const j = pair.publicKey.export({ format: 'jwk' });
	const cose = alg === -7 ? new Map([[1, 2], [3, -7], [-1, 1], [-2, unb64(j.x)], [-3, unb64(j.y)]])
		: alg === -8 ? new Map([[1, 1], [3, -8], [-1, 6], [-2, unb64(j.x)]])
		: new Map([[1, 3], [3, -257], [-1, unb64(j.n)], [-2, unb64(j.e)]]);
	return { alg, privateKey: pair.privateKey, cose: cbor(cose) };
}

function sign(key, data) {
	return crypto.sign(key.alg === -8 ? null : 'sha256', data, key.privateKey);
}

function authData(rpId, flags, signCount, attested) {
	const count = Buffer.alloc(4);
	count.writeUInt32BE(signCount);
	const parts = [sha256(rpId), Buffer.from([flags]), count];
	if (attested) {
		const len = Buffer.alloc(2);
		len.writeUInt16BE(attested.credId.length);
		parts.push(attested.aaguid, len, attested.credId, attested.key.cose);
	}
	return Buffer.concat(parts);
}

function clientData(type, challenge, origin) {
	return Buffer.from(JSON.stringify({ type, challenge, origin, crossOrigin: false }));
}

// An attestation key with a certificate that meets WebAuthn §8.2.1 (made by
// the openssl command); null when openssl is missing.
let attestationCa;
function attestationCertificate() {
	if (attestationCa !== undefined) return attestationCa;
	attestationCa = null;
	try {
		const dir = h.makeTempDir('sw-att-');
		const pair = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' });
		fs.writeFileSync(path.join(dir, 'k.pem'), pair.privateKey.export({ format: 'pem', type: 'pkcs8' }));
		fs.writeFileSync(path.join(dir, 'c.cnf'), '[req]\ndistinguished_name = dn\n[dn]\n[ext]\nbasicConstraints = critical,CA:FALSE\n');
		execFileSync('openssl', ['req', '-x509', '-new', '-key', path.join(dir, 'k.pem'), '-config', path.join(dir, 'c.cnf'),
			'-extensions', 'ext', '-subj', '/C=US/O=Steward Test/OU=Authenticator Attestation/CN=Steward Test Attestation',
			'-days', '2', '-outform', 'DER', '-out', path.join(dir, 'c.der')], { stdio: 'ignore' });
		attestationCa = { key: { alg: -7, privateKey: pair.privateKey }, cert: fs.readFileSync(path.join(dir, 'c.der')) };
	} catch {}
	return attestationCa;
}

// navigator.credentials.create() for creation options, as toJSON() gives
// it. o overrides what an honest authenticator would do. Returns
// {credential, passkey} where passkey is what the authenticator keeps.
function create(srv, options, o = {}) {
	const key = o.key ?? newKey(o.alg ?? -7);
	const credId = o.credId ?? crypto.randomBytes(32);
	const cd = clientData(o.type ?? 'webauthn.create', o.challenge ?? options.challenge, o.origin ?? srv.webOrigin);
	const ad = authData(o.rpId ?? options.rp.id, o.flags ?? (UP | UV | AT), 0,
		{ aaguid: o.aaguid ?? Buffer.alloc(16), credId, key });
	let fmt = o.fmt ?? 'none';
	let stmt = new Map();
	if (fmt === 'packed' || fmt === 'packed-x5c') {
		const signer = fmt === 'packed' ? key : o.attestation.key;
		let sig = sign(signer, Buffer.concat([ad, sha256(cd)]));
		if (o.corruptAttestation) sig = Buffer.from(sig.map((b, i) => (i === sig.length - 1 ? b ^ 1 : b)));
		stmt = new Map([['alg', signer.alg], ['sig', sig]]);
		if (fmt === 'packed-x5c') stmt.set('x5c', [o.attestation.cert]);
		fmt = 'packed';
	}
	const attestationObject = cbor(new Map([['fmt', fmt], ['attStmt', stmt], ['authData', ad]]));
	const id = b64(o.rawId ?? credId);
	return {
		credential: {
			id, rawId: id, type: 'public-key', authenticatorAttachment: 'platform', clientExtensionResults: {},
			response: { clientDataJSON: b64(cd), attestationObject: b64(attestationObject), transports: ['internal', 'hybrid', 'carrier-pigeon'] },
		},
		passkey: { key, credId, userHandle: options.user.id, flags: o.flags ?? (UP | UV | AT) },
	};
}

// navigator.credentials.get() for request options with passkey.
function get(srv, options, passkey, o = {}) {
	const cd = clientData('webauthn.get', o.challenge ?? options.challenge, o.origin ?? srv.webOrigin);
	const ad = authData(o.rpId ?? options.rpId, o.flags ?? (UP | UV | (passkey.flags & (BE | BS))), o.signCount ?? 0);
	let sig = sign(passkey.key, Buffer.concat([ad, sha256(cd)]));
	if (o.corrupt) sig = Buffer.from(sig.map((b, i) => (i === 8 ? b ^ 0x40 : b)));
	const id = b64(passkey.credId);
	return {
		id, rawId: id, type: 'public-key', authenticatorAttachment: 'platform', clientExtensionResults: {},
		response: { clientDataJSON: b64(cd), authenticatorData: b64(ad), signature: b64(sig), userHandle: 'userHandle' in o ? o.userHandle : passkey.userHandle },
	};
}

// ---- HTTP ----

function cookieOf(res) {
	const c = [].concat(res.headers['set-cookie'] || []).find((v) => v.startsWith('steward_session='));
	return c ? c.split(';')[0] : null;
}

let users = 0;
async function newUser(srv = main) {
	users += 1;
	const email = `pk${users}@example.com`;
	const r = await h.request(srv.port, 'POST', '/signup', { body: { email, password: PASSWORD, name: `Pat ${users}` } });
	assert.equal(r.status, 201, r.text);
	return { srv, email, cookie: cookieOf(r), id: r.json().data.user.id };
}

function call(u, method, p, body, origin = u.srv.origin) {
	return h.request(u.srv.port, method, p, { headers: { Cookie: u.cookie, Origin: origin }, body });
}

async function ok(p, status = 200) {
	const r = await p;
	assert.equal(r.status, status, `${r.head}\n\n${r.text}`);
	return r.status === 204 ? null : r.json().data;
}

const begin = (u, password = PASSWORD) => call(u, 'POST', '/auth/passkeys', { password });
const confirm = (u, name, credential) => call(u, 'POST', '/auth/passkeys/confirm', { name, credential });
const list = (u) => ok(call(u, 'GET', '/auth/passkeys'));
const challenge = (srv) => ok(h.request(srv.port, 'POST', '/auth/passkeys/challenge'));
const verify = (srv, credential) => h.request(srv.port, 'POST', '/auth/passkeys/verify', { body: { credential } });

// Registers a passkey for u through both routes: {passkey, record}.
async function register(u, o = {}, name = 'Laptop') {
	const options = await ok(begin(u));
	const made = create(u.srv, options, o);
	const record = await ok(confirm(u, name, made.credential), 201);
	return { passkey: made.passkey, record };
}

async function signInWith(srv, passkey, o = {}) {
	const options = await challenge(srv);
	return verify(srv, get(srv, options, passkey, o));
}

async function audit(srv, userId) {
	const out = await pg.psql(`SELECT action || ' ' || metadata::text FROM audit_logs WHERE actor_user_id = '${userId}' AND action LIKE 'auth.passkey.%' ORDER BY id`, srv.dbName);
	return out.trim().split('\n').filter(Boolean);
}

// ---- registration ----

test('registration_options_follow_the_settings_and_a_cancelled_registration_stores_nothing', async () => {
	const u = await newUser();
	const o = await ok(begin(u));
	assert.match(o.challenge, /^[A-Za-z0-9_-]{75}$/, '56 bytes: nonce, expiry, MAC');
	assert.deepEqual(o.rp, { id: 'localhost', name: 'Steward' });
	assert.equal(unb64(o.user.id).toString('hex'), u.id.replaceAll('-', ''), 'user.id is the bytes of the user id');
	assert.equal(o.user.name, u.email);
	assert.deepEqual(o.pubKeyCredParams.map((p) => [p.type, p.alg]), [['public-key', -7], ['public-key', -8], ['public-key', -257]]);
	assert.equal(o.timeout, 300000);
	assert.equal(o.attestation, 'none');
	assert.deepEqual(o.authenticatorSelection, { residentKey: 'required', requireResidentKey: true, userVerification: 'required' });
	assert.deepEqual(o.excludeCredentials, []);
	// The browser never answers: nothing exists, not even the challenge.
	assert.deepEqual(await list(u), []);
	assert.equal((await pg.psql(`SELECT count(*) FROM passkeys WHERE user_id = '${u.id}'`, main.dbName)).trim(), '0');
	assert.equal((await pg.psql(`SELECT count(*) FROM passkey_registrations WHERE user_id = '${u.id}'`, main.dbName)).trim(), '0', 'registration writes no row');
});

test('confirmation_refuses_authenticator_data_and_public_key_that_are_not_base64url', async () => {
	const u = await newUser();
	const options = await ok(begin(u));
	const made = create(u.srv, options);
	const send = (extra) => confirm(u, 'Laptop', { ...made.credential, response: { ...made.credential.response, ...extra } });
	let r = await send({ authenticatorData: 'not base64url!', publicKey: 'MFkw==', publicKeyAlgorithm: 'ES256' });
	assert.deepEqual(h.assertError(r, 422, 'VALIDATION_FAILED').fields, {
		'credential.response.authenticatorData': ['must be base64url without padding'],
		'credential.response.publicKey': ['must be base64url without padding'],
		'credential.response.publicKeyAlgorithm': ['must be a COSE algorithm (an integer)'],
	});
	r = await send({ authenticatorData: 7, publicKey: 'A'.repeat(2000) });
	assert.deepEqual(h.assertError(r, 422, 'VALIDATION_FAILED').fields, {
		'credential.response.authenticatorData': ['must be a base64url string'],
		'credential.response.publicKey': ['is too long'],
	});
	// Well-formed, they are taken (and never trusted: the attestation is what is verified).
	await ok(send({ authenticatorData: b64(crypto.randomBytes(37)), publicKey: b64(crypto.randomBytes(91)), publicKeyAlgorithm: -7 }), 201);
});

test('registration_needs_the_password_and_a_session', async () => {
	const u = await newUser();
	let r = await begin(u, 'not the password');
	h.assertError(r, 422, 'VALIDATION_FAILED');
	assert.deepEqual(Object.keys(r.json().error.fields), ['password']);
	r = await call(u, 'POST', '/auth/passkeys', {});
	assert.deepEqual(r.json().error.fields, { password: ['is required'] });
	r = await call(u, 'POST', '/auth/passkeys', { password: PASSWORD, extra: 1 });
	assert.deepEqual(r.json().error.fields, { extra: ['is not a known field'] });
	r = await h.request(main.port, 'POST', '/auth/passkeys', { body: { password: PASSWORD } });
	h.assertError(r, 401, 'UNAUTHENTICATED');
	for (const p of ['/auth/passkeys/confirm', '/auth/passkeys']) {
		h.assertError(await h.request(main.port, p === '/auth/passkeys' ? 'GET' : 'POST', p, { body: p === '/auth/passkeys' ? undefined : {} }), 401, 'UNAUTHENTICATED');
	}
});

test('a_confirmed_passkey_is_listed_and_excluded_from_the_next_registration', async () => {
	const u = await newUser();
	const { passkey, record } = await register(u, {}, '  Work laptop  ');
	assert.equal(record.name, 'Work laptop');
	assert.equal(record.credentialId, b64(passkey.credId));
	assert.equal(record.publicKeyAlgorithm, -7);
	assert.equal(record.deviceType, 'singleDevice');
	assert.equal(record.backedUp, false);
	assert.equal(record.signCount, 0);
	assert.deepEqual(record.transports, ['hybrid', 'internal'], 'known transports, unknown ones dropped');
	assert.equal(record.aaguid, '00000000-0000-0000-0000-000000000000');
	assert.equal(record.lastUsedAt, null);
	assert.deepEqual(await list(u), [record]);
	const o = await ok(begin(u));
	assert.deepEqual(o.excludeCredentials, [{ type: 'public-key', id: record.credentialId }]);
	// A synced passkey (BE and BS) says so.
	const synced = await register(u, { flags: UP | UV | AT | BE | BS }, 'Phone');
	assert.equal(synced.record.deviceType, 'multiDevice');
	assert.equal(synced.record.backedUp, true);
});

test('a_registration_challenge_is_single_use_and_bound_to_its_user', async () => {
	const u = await newUser();
	const other = await newUser();
	let options = await ok(begin(u));
	const made = create(main, options);
	await ok(confirm(u, 'Key', made.credential), 201);
	h.assertError(await confirm(u, 'Key', create(main, options).credential), 409, 'CHALLENGE_INVALID');
	// Another user's challenge is unknown to this one.
	options = await ok(begin(other));
	h.assertError(await confirm(u, 'Key', create(main, options).credential), 409, 'CHALLENGE_INVALID');
	await ok(confirm(other, 'Key', create(main, options).credential), 201);
	// A failed confirmation uses the challenge up too.
	options = await ok(begin(u));
	h.assertError(await confirm(u, 'Key', create(main, options, { flags: UP | AT }).credential), 422, 'VALIDATION_FAILED');
	h.assertError(await confirm(u, 'Key', create(main, options).credential), 409, 'CHALLENGE_INVALID');
	assert.equal((await list(u)).length, 1);
});

// A registration challenge as the server makes one (passkey_registration.c),
// under the server's master key: to make one expired, or for another
// relying party, which the server never would.
function registrationChallenge(srv, userId, { expiresInS, rpId = 'localhost' }) {
	const master = fs.readFileSync(path.join(srv.env.STEWARD_DATA_DIR, 'master.key'));
	const macKey = crypto.createHmac('sha256', master).update('steward-mac-v1').digest();
	const payload = Buffer.alloc(24);
	crypto.randomBytes(16).copy(payload);
	payload.writeBigUInt64BE(BigInt(Math.floor(Date.now() / 1000) + expiresInS), 16);
	const mac = crypto.createHmac('sha256', macKey)
		.update(Buffer.concat([Buffer.from(`passkey-registration\0${userId}\0${rpId}\0`), payload])).digest();
	return b64(Buffer.concat([payload, mac]));
}

test('a_registration_challenge_is_stateless_and_refused_expired_replayed_or_for_another_party', async () => {
	const u = await newUser();
	const rows = async () => (await pg.psql(`SELECT count(*) FROM passkey_registrations WHERE user_id = '${u.id}'`, main.dbName)).trim();
	const options = await ok(begin(u));
	assert.equal(await rows(), '0', 'starting a registration writes nothing');
	const forged = (o) => ({ ...options, challenge: registrationChallenge(main, u.id, o) });
	// Expired a second ago, for another relying party, altered: refused before anything is written.
	h.assertError(await confirm(u, 'Key', create(main, forged({ expiresInS: -1 })).credential), 409, 'CHALLENGE_INVALID');
	h.assertError(await confirm(u, 'Key', create(main, forged({ expiresInS: 60, rpId: 'example.com' })).credential), 409, 'CHALLENGE_INVALID');
	const altered = unb64(options.challenge);
	altered[20] ^= 1; // the expiry, moved
	h.assertError(await confirm(u, 'Key', create(main, { ...options, challenge: b64(altered) }).credential), 409, 'CHALLENGE_INVALID');
	assert.equal(await rows(), '0');
	// The same construction, alive and for this party, is taken: the refusals above were the expiry and the party.
	await ok(confirm(u, 'Made here', create(main, forged({ expiresInS: 60 })).credential), 201);
	// The issued one, once; its replay (even with another credential) is refused.
	const made = create(main, options);
	await ok(confirm(u, 'Key', made.credential), 201);
	h.assertError(await confirm(u, 'Key', made.credential), 409, 'CHALLENGE_INVALID');
	h.assertError(await confirm(u, 'Key', create(main, options).credential), 409, 'CHALLENGE_INVALID');
	assert.equal(await rows(), '2', 'each confirmation recorded its challenge as used');
	assert.equal((await list(u)).length, 2);
});

test('packed_self_and_x5c_attestations_with_eddsa_and_rs256_are_accepted', async () => {
	const u = await newUser();
	const self = await register(u, { alg: -8, fmt: 'packed' }, 'EdDSA key');
	assert.equal(self.record.publicKeyAlgorithm, -8);
	const rsa = await register(u, { alg: -257 }, 'RSA key');
	assert.equal(rsa.record.publicKeyAlgorithm, -257);
	const ca = attestationCertificate();
	if (ca) {
		const aaguid = crypto.randomBytes(16);
		const x5c = await register(u, { fmt: 'packed-x5c', attestation: ca, aaguid }, 'Security key');
		const hex = aaguid.toString('hex');
		assert.equal(x5c.record.aaguid, `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`);
		assert.equal((await signInWith(main, x5c.passkey)).status, 200);
	} else {
		process.stdout.write('# openssl not found: the x5c case is not run\n');
	}
	for (const p of [self.passkey, rsa.passkey]) assert.equal((await signInWith(main, p)).status, 200);
});

test('confirm_refuses_an_attestation_that_fails_any_check_with_422_naming_it', async () => {
	const u = await newUser();
	const cases = [
		[{ origin: 'http://evil.localhost:1' }, 'origin not allowed'],
		[{ origin: main.origin }, 'origin not allowed'],
		[{ type: 'webauthn.get' }, 'wrong client data type'],
		[{ rpId: 'example.org' }, 'rpIdHash mismatch'],
		[{ flags: UP | AT }, 'user verification required'],
		[{ flags: UV | AT }, 'user not present'],
		[{ fmt: 'packed', corruptAttestation: true }, 'attestation signature invalid'],
		[{ rawId: crypto.randomBytes(32) }, "rawId is not the attested credential's id"],
	];
	for (const [o, reason] of cases) {
		const options = await ok(begin(u));
		const r = await confirm(u, 'Key', create(main, options, o).credential);
		const e = h.assertError(r, 422, 'VALIDATION_FAILED');
		assert.deepEqual(e.fields, { credential: [`was not accepted: ${reason}`] }, JSON.stringify(o));
	}
	assert.deepEqual(await list(u), []);
});

test('a_credential_id_is_unique_across_the_installation', async () => {
	const a = await newUser();
	const b = await newUser();
	const { passkey } = await register(a);
	const options = await ok(begin(b));
	h.assertError(await confirm(b, 'Copy', create(main, options, { credId: passkey.credId }).credential), 409, 'PASSKEY_EXISTS');
	assert.deepEqual(await list(b), []);
});

test('confirm_validates_its_body_field_by_field', async () => {
	const u = await newUser();
	const options = await ok(begin(u));
	const good = create(main, options).credential;
	const fields = async (body) => h.assertError(await call(u, 'POST', '/auth/passkeys/confirm', body), 422, 'VALIDATION_FAILED').fields;
	assert.deepEqual(await fields({}), { name: ['is required'], credential: ['is required'] });
	assert.deepEqual(await fields({ name: '', credential: good }), { name: [await nameMessage(u)] });
	assert.deepEqual(await fields({ name: 'x', credential: { ...good, rawId: 'a+b/', extra: 1 } }),
		{ 'credential.extra': ['is not a known field'], 'credential.rawId': ['must be base64url without padding'] });
	assert.deepEqual(await fields({ name: 'x', credential: { ...good, id: 'AAAA', type: 'password' } }),
		{ 'credential.id': ['must equal rawId'], 'credential.type': ['must be "public-key"'] });
	assert.deepEqual(await fields({ name: 'x', credential: { ...good, response: { clientDataJSON: b64('{}'), attestationObject: 'A' } } }),
		{ 'credential.response.clientDataJSON': ['must be client data answering a challenge'], 'credential.response.attestationObject': ['must be base64url without padding'] });
	assert.deepEqual(await fields({ name: 'x', credential: { ...good, response: { ...good.response, transports: 'usb' } } }),
		{ 'credential.response.transports': ['must be an array of at most 16 strings'] });
	// None of these used the challenge up.
	await ok(confirm(u, 'Key', good), 201);
});

async function nameMessage(u) {
	// The message of an empty display name, as the shared validator words it.
	const r = await call(u, 'POST', '/api-tokens', { name: '' });
	return r.json().error.fields.name[0];
}

// ---- sign-in ----

test('a_passkey_signs_in_without_password_or_second_factor', async () => {
	const u = await newUser();
	const { passkey, record } = await register(u);
	// Two-factor on (as confirmation would leave it): the password alone no longer signs in.
	await pg.psql(`INSERT INTO two_factor (user_id, secret, enabled_at) VALUES ('${u.id}', '\\x${'11'.repeat(20)}', now())`, main.dbName);
	const pw = await h.request(main.port, 'POST', '/auth/sign-in', { body: { email: u.email, password: PASSWORD } });
	assert.equal(pw.json().data.twoFactorRequired, true, pw.text);

	const options = await challenge(main);
	assert.deepEqual(Object.keys(options).sort(), ['challenge', 'rpId', 'timeout', 'userVerification']);
	assert.equal(options.rpId, 'localhost');
	assert.equal(options.userVerification, 'required');
	const r = await verify(main, get(main, options, passkey, { signCount: 7 }));
	assert.equal(r.status, 200, r.text);
	const d = r.json().data;
	assert.equal(d.user.id, u.id);
	assert.equal(d.session.method, 'PASSKEY');
	const cookie = cookieOf(r);
	assert.ok(cookie, 'a session cookie');
	const s = await h.request(main.port, 'GET', '/auth/session', { headers: { Cookie: cookie } });
	assert.equal(s.status, 200, s.text);
	assert.equal(s.json().data.user.id, u.id);
	const [after] = await list(u);
	assert.equal(after.id, record.id);
	assert.equal(after.signCount, 7);
	assert.ok(after.lastUsedAt, 'lastUsedAt is set');
});

test('a_sign_in_challenge_works_once_and_must_be_issued_here', async () => {
	const u = await newUser();
	const { passkey } = await register(u);
	const options = await challenge(main);
	assert.equal((await verify(main, get(main, options, passkey))).status, 200);
	const again = await verify(main, get(main, options, passkey));
	h.assertError(again, 401, 'CHALLENGE_INVALID');
	assert.equal(cookieOf(again), null);
	h.assertError(await verify(main, get(main, { ...options, challenge: b64(crypto.randomBytes(32)) }, passkey)), 401, 'CHALLENGE_INVALID');
	const fresh = await challenge(main);
	await pg.psql(`UPDATE passkey_challenges SET expires_at = now() - interval '1 second'`, main.dbName);
	h.assertError(await verify(main, get(main, fresh, passkey)), 401, 'CHALLENGE_INVALID');
});

test('sign_in_refuses_a_bad_signature_no_user_verification_and_a_wrong_user_handle', async () => {
	const u = await newUser();
	const other = await newUser();
	const { passkey } = await register(u);
	const cases = [
		{ corrupt: true },
		{ flags: UP },
		{ flags: UV },
		{ origin: 'http://evil.localhost:1' },
		{ rpId: 'example.org' },
		{ userHandle: b64(Buffer.from(other.id.replaceAll('-', ''), 'hex')) },
		{ userHandle: null },
		{ flags: UP | UV | BE },
	];
	for (const o of cases) {
		const r = await signInWith(main, passkey, o);
		assert.equal(r.status, 401, `${JSON.stringify(o)}: ${r.text}`);
		h.assertError(r, 401, 'PASSKEY_INVALID');
		assert.equal(cookieOf(r), null, JSON.stringify(o));
	}
	assert.equal((await signInWith(main, passkey)).status, 200, 'the passkey still works');
});

test('an_unknown_or_deleted_passkey_cannot_sign_in', async () => {
	const u = await newUser();
	const { passkey, record } = await register(u);
	const stranger = { ...passkey, credId: crypto.randomBytes(32) };
	h.assertError(await signInWith(main, stranger), 401, 'PASSKEY_UNKNOWN');
	await ok(call(u, 'DELETE', `/auth/passkeys/${record.id}`), 204);
	h.assertError(await signInWith(main, passkey), 401, 'PASSKEY_UNKNOWN');
	// The password still works: passkeys sit beside it.
	const pw = await h.request(main.port, 'POST', '/auth/sign-in', { body: { email: u.email, password: PASSWORD } });
	assert.equal(pw.status, 200, pw.text);
});

test('the_signature_counter_is_recorded_not_enforced', async () => {
	const u = await newUser();
	const { passkey } = await register(u);
	assert.equal((await signInWith(main, passkey, { signCount: 5 })).status, 200);
	assert.equal((await signInWith(main, passkey, { signCount: 3 })).status, 200);
	assert.equal((await signInWith(main, passkey, { signCount: 0 })).status, 200);
	assert.equal((await list(u))[0].signCount, 0);
	await h.sleep(200); // audit records are written in the background
	const signedIn = (await audit(main, u.id)).filter((l) => l.startsWith('auth.passkey.signed_in'));
	const regressed = Object.fromEntries(signedIn.map((l) => JSON.parse(l.slice(l.indexOf('{')))).map((m) => [m.signCount, m.signCountRegressed]));
	assert.deepEqual(regressed, { 5: false, 3: true, 0: true });
});

test('verify_validates_its_body', async () => {
	const fields = async (body) => h.assertError(await h.request(main.port, 'POST', '/auth/passkeys/verify', { body }), 422, 'VALIDATION_FAILED').fields;
	assert.deepEqual(await fields({}), { credential: ['is required'] });
	assert.deepEqual(await fields({ credential: { id: 'AA', rawId: 'AA', type: 'public-key', response: { userHandle: 7 } } }), {
		'credential.response.clientDataJSON': ['is required'],
		'credential.response.authenticatorData': ['is required'],
		'credential.response.signature': ['is required'],
		'credential.response.userHandle': ['must be a base64url string'],
	});
	const challengeFields = h.assertError(await h.request(main.port, 'POST', '/auth/passkeys/challenge', { body: { x: 1 } }), 422, 'VALIDATION_FAILED').fields;
	assert.deepEqual(challengeFields, { x: ['is not a known field'] });
});

test('verify_is_rate_limited_per_address_with_retry_after', async () => {
	const s = await server();
	const options = await challenge(s);
	const bogus = get(s, options, { key: newKey(), credId: crypto.randomBytes(16), userHandle: 'AA', flags: 0 });
	let last;
	for (let i = 0; i < 31; i++) last = await verify(s, bogus);
	h.assertError(last, 429, 'RATE_LIMITED');
	assert.match(String(last.headers['retry-after']), /^\d+$/);
});

// ---- the list ----

test('rename_and_delete_touch_only_the_callers_passkeys', async () => {
	const u = await newUser();
	const other = await newUser();
	const { record } = await register(u);
	const renamed = await ok(call(u, 'PATCH', `/auth/passkeys/${record.id}`, { name: 'Desk key' }));
	assert.equal(renamed.name, 'Desk key');
	assert.equal(renamed.credentialId, record.credentialId);
	h.assertError(await call(u, 'PATCH', `/auth/passkeys/${record.id}`, { name: '' }), 422, 'VALIDATION_FAILED');
	h.assertError(await call(other, 'PATCH', `/auth/passkeys/${record.id}`, { name: 'Mine' }), 404, 'NOT_FOUND');
	h.assertError(await call(other, 'DELETE', `/auth/passkeys/${record.id}`), 404, 'NOT_FOUND');
	h.assertError(await call(u, 'DELETE', '/auth/passkeys/not-a-uuid'), 404, 'NOT_FOUND');
	h.assertError(await call(u, 'PATCH', '/auth/passkeys/not-a-uuid', { name: 'x' }), 404, 'NOT_FOUND');
	h.assertError(await call(u, 'DELETE', `/auth/passkeys/${record.id}`, undefined, 'http://evil.example'), 403, 'CSRF_REJECTED');
	await ok(call(u, 'DELETE', `/auth/passkeys/${record.id}`), 204);
	h.assertError(await call(u, 'DELETE', `/auth/passkeys/${record.id}`), 404, 'NOT_FOUND');
	assert.deepEqual(await list(u), []);
});

test('a_user_holds_at_most_twenty_passkeys', async () => {
	const u = await newUser();
	await pg.psql(`INSERT INTO passkeys (user_id, credential_id, public_key, algorithm, sign_count, device_type, backed_up, name, aaguid, attestation_format)
		SELECT '${u.id}', gen_random_uuid()::text::bytea, '\\x00', -7, 0, 'singleDevice', false, 'k' || g, gen_random_uuid(), 'none' FROM generate_series(1, 19) g`, main.dbName);
	const options = await ok(begin(u));
	assert.equal(options.excludeCredentials.length, 19);
	await ok(confirm(u, 'Twentieth', create(main, options).credential), 201);
	h.assertError(await begin(u), 409, 'PASSKEY_LIMIT_REACHED');
});

test('the_audit_log_records_passkey_changes_and_sign_ins_without_secrets', async () => {
	const u = await newUser();
	h.assertError(await begin(u, 'wrong password!'), 422, 'VALIDATION_FAILED');
	const options = await ok(begin(u));
	const { passkey, record } = await register(u);
	h.assertError(await confirm(u, 'Key', create(main, options, { flags: UP | AT }).credential), 422, 'VALIDATION_FAILED');
	await ok(call(u, 'PATCH', `/auth/passkeys/${record.id}`, { name: 'Renamed' }));
	const good = await challenge(main);
	assert.equal((await verify(main, get(main, good, passkey))).status, 200);
	h.assertError(await signInWith(main, passkey, { corrupt: true }), 401, 'PASSKEY_INVALID');
	await ok(call(u, 'DELETE', `/auth/passkeys/${record.id}`), 204);
	await h.sleep(200);
	const lines = await audit(main, u.id);
	// Written in the background on several connections: the order is not the requests'.
	assert.deepEqual(lines.map((l) => l.split(' ')[0]).sort(), [
		'auth.passkey.deleted', 'auth.passkey.reauthentication_failed', 'auth.passkey.registered',
		'auth.passkey.registration_failed', 'auth.passkey.renamed', 'auth.passkey.sign_in_failed',
		'auth.passkey.signed_in',
	]);
	assert.match(lines.find((l) => l.startsWith('auth.passkey.sign_in_failed')), /"reason": "signature invalid"/);
	assert.match(lines.find((l) => l.startsWith('auth.passkey.registration_failed')), /"reason": "user verification required"/);
	const text = lines.join('\n');
	for (const secret of [PASSWORD, options.challenge, good.challenge]) assert.ok(!text.includes(secret));
});

// ---- settings ----

test('the_relying_party_follows_public_base_url_or_the_passkey_settings', async () => {
	const s = await server({ SIGNUP_ENABLED: 'true', PUBLIC_BASE_URL: 'https://steward.example.org/app/' });
	s.webOrigin = 'https://steward.example.org';
	await h.request(s.port, 'POST', '/setup', { body: h.setupBody({ password: PASSWORD }) });
	const u = await newUser(s);
	const call2 = (m, p, body) => call(u, m, p, body, s.webOrigin);
	const options = await ok(call2('POST', '/auth/passkeys', { password: PASSWORD }));
	assert.equal(options.rp.id, 'steward.example.org');
	const made = create(s, options);
	await ok(call2('POST', '/auth/passkeys/confirm', { name: 'k', credential: made.credential }), 201);
	assert.equal((await signInWith(s, made.passkey)).status, 200);
	assert.ok(s.logs.find(/passkeys rp_id=steward\.example\.org origins=https:\/\/steward\.example\.org$/));

	const t = await server({ AUTH_PASSKEY_RP_ID: 'Example.org', AUTH_PASSKEY_ORIGINS: 'https://App.Example.org:8443, HTTPS://example.org:443/ ,' });
	const o = await challenge(t);
	assert.equal(o.rpId, 'example.org');
	assert.ok(t.logs.find(/passkeys rp_id=example\.org origins=https:\/\/app\.example\.org:8443,https:\/\/example\.org$/), t.logs.text());
	await t.stop();
});

test('invalid_passkey_settings_refuse_the_ceremonies_with_503_and_say_why_once', async () => {
	for (const [env, why] of [
		[{ AUTH_PASSKEY_RP_ID: 'https://example.org' }, /AUTH_PASSKEY_RP_ID must be a bare domain/],
		[{ AUTH_PASSKEY_RP_ID: 'example.org', AUTH_PASSKEY_ORIGINS: 'http://example.org' }, /only on localhost/],
		[{ AUTH_PASSKEY_RP_ID: 'example.org', AUTH_PASSKEY_ORIGINS: 'https://example.com' }, /not on the rp id example\.org/],
		[{ PUBLIC_BASE_URL: 'http://127.0.0.1:8080' }, /PUBLIC_BASE_URL .*set them/],
	]) {
		const s = await server(env);
		h.assertError(await h.request(s.port, 'POST', '/auth/passkeys/challenge'), 503, 'PASSKEYS_NOT_CONFIGURED');
		h.assertError(await h.request(s.port, 'POST', '/auth/passkeys/challenge'), 503, 'PASSKEYS_NOT_CONFIGURED');
		const lines = s.logs.all().filter((l) => /passkeys disabled/.test(l));
		assert.equal(lines.length, 1, s.logs.text());
		assert.match(lines[0], why);
		await s.stop();
	}
});

test('the_openapi_document_lists_the_passkey_routes', async () => {
	const r = await h.request(main.port, 'GET', '/docs');
	assert.equal(r.status, 200);
	const doc = r.json();
	assert.ok(doc.paths['/auth/passkeys'].post && doc.paths['/auth/passkeys'].get);
	assert.ok(doc.paths['/auth/passkeys/{id}'].patch && doc.paths['/auth/passkeys/{id}'].delete);
	for (const p of ['/auth/passkeys/confirm', '/auth/passkeys/challenge', '/auth/passkeys/verify']) assert.ok(doc.paths[p].post, p);
	for (const name of ['Passkey', 'PasskeyList', 'PasskeyCreationOptions', 'PasskeyRequestOptions', 'PasskeyConfirmRequest', 'PasskeyVerifyRequest']) {
		assert.ok(doc.components.schemas[name], name);
	}
});
