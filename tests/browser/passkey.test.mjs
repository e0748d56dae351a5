// Passkeys in a real browser: Debian's chromium, driven by playwright-core
// over the DevTools protocol, with a DevTools virtual authenticator
// (CTAP2, internal transport, resident keys, user verification). The page
// is any page of stewardd's own origin (GET /health) so that cookies, the
// Origin header and the origin in the signed client data are the browser's
// own; the ceremonies run in the page with fetch() and
// navigator.credentials, through the browsers' JSON forms
// (parseCreationOptionsFromJSON, toJSON) of what the API exchanges.
//
// stewardd runs with PUBLIC_BASE_URL=http://localhost:<port>,
// AUTH_PASSKEY_RP_ID=localhost and AUTH_PASSKEY_ORIGINS=http://localhost:<port>:
// http://localhost is a secure context, where WebAuthn works without TLS.
//
// Exits 77 (skipped) without chromium (apt-get install chromium; or set
// CHROMIUM) or without node_modules (npm ci --prefix tests/browser).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import * as h from '../integration/harness.mjs';
import { launch, playwright, stewarddOn, virtualAuthenticator } from './browser.mjs';

const PASSWORD = 'correct horse battery';

const chromium = await playwright();
h.stewarddPath(); // exits 77 when STEWARDD is not there

let browser, page, cdp, authenticatorId, origin;

before(async () => {
	const pg = await h.startPostgres();
	const port = await h.freePort();
	origin = `http://localhost:${port}`;
	// Our own port, known before start: it is in the settings.
	await stewarddOn(port, { db: pg, env: { PUBLIC_BASE_URL: origin, AUTH_PASSKEY_RP_ID: 'localhost', AUTH_PASSKEY_ORIGINS: origin } });
	browser = await launch(chromium, ['--host-resolver-rules=MAP localhost 127.0.0.1']);
	const context = await browser.newContext();
	page = await context.newPage();
	page.setDefaultTimeout(15000);
	({ cdp, authenticatorId } = await virtualAuthenticator(context, page));
	const res = await page.goto(`${origin}/health`);
	assert.equal(res.status(), 200);
});

after(async () => {
	await browser?.close();
	await h.cleanupAll();
});

// fetch() in the page: {status, body}. The browser adds Origin and the cookie.
function api(method, path, body) {
	return page.evaluate(async ([method, path, body]) => {
		const r = await fetch(path, {
			method,
			headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
			body: body === undefined ? undefined : JSON.stringify(body),
		});
		const text = await r.text();
		return { status: r.status, body: text ? JSON.parse(text) : null };
	}, [method, path, body]);
}

// The sign-in ceremony in the page. uv: the userVerification the page asks
// the browser for; corrupt: flip a bit of the signature before sending.
// Returns {error} when the browser refuses, else the answer of verify.
function passkeySignIn({ uv = 'required', corrupt = false } = {}) {
	return page.evaluate(async ({ uv, corrupt }) => {
		const post = async (path, body) => {
			const r = await fetch(path, {
				method: 'POST',
				headers: body ? { 'Content-Type': 'application/json' } : {},
				body: body ? JSON.stringify(body) : undefined,
			});
			return { status: r.status, body: await r.json() };
		};
		const c = await post('/auth/passkeys/challenge');
		if (c.status !== 200) return { challengeStatus: c.status, body: c.body };
		const options = PublicKeyCredential.parseRequestOptionsFromJSON({ ...c.body.data, userVerification: uv });
		let assertion;
		try {
			assertion = await navigator.credentials.get({ publicKey: options });
		} catch (e) {
			return { error: `${e.name}: ${e.message}` };
		}
		const credential = assertion.toJSON();
		if (corrupt) {
			const b64 = credential.response.signature.replace(/-/g, '+').replace(/_/g, '/');
			const sig = Uint8Array.from(atob(b64 + '='.repeat((4 - (b64.length % 4)) % 4)), (ch) => ch.charCodeAt(0));
			sig[10] ^= 0x01;
			credential.response.signature = btoa(String.fromCharCode(...sig)).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
		}
		return post('/auth/passkeys/verify', { credential });
	}, { uv, corrupt });
}

async function signedOut() {
	const s = await api('GET', '/auth/session');
	assert.equal(s.status, 401, JSON.stringify(s.body));
}

let userId;

test('a_passkey_is_registered_through_the_browser_ceremony', async () => {
	const setup = await api('POST', '/setup', h.setupBody({ password: PASSWORD }));
	assert.equal(setup.status, 201, JSON.stringify(setup.body));
	userId = setup.body.data.user.id;
	const result = await page.evaluate(async (password) => {
		const post = async (path, body) => {
			const r = await fetch(path, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
			return { status: r.status, body: await r.json() };
		};
		const begin = await post('/auth/passkeys', { password });
		if (begin.status !== 200) return { begin };
		const publicKey = PublicKeyCredential.parseCreationOptionsFromJSON(begin.body.data);
		const created = await navigator.credentials.create({ publicKey });
		const confirm = await post('/auth/passkeys/confirm', { name: 'Headless Chromium', credential: created.toJSON() });
		return { begin, confirm };
	}, PASSWORD);
	assert.equal(result.begin.status, 200, JSON.stringify(result.begin.body));
	assert.equal(result.begin.body.data.rp.id, 'localhost');
	assert.equal(result.confirm?.status, 201, JSON.stringify(result.confirm?.body));
	const passkey = result.confirm.body.data;
	assert.equal(passkey.name, 'Headless Chromium');
	assert.deepEqual(passkey.transports, ['internal']);

	// The authenticator holds one discoverable credential for localhost,
	// whose id and user handle are the ones the server knows.
	const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
	assert.equal(credentials.length, 1);
	assert.equal(credentials[0].isResidentCredential, true);
	assert.equal(credentials[0].rpId, 'localhost');
	assert.equal(Buffer.from(credentials[0].credentialId, 'base64').toString('base64url'), passkey.credentialId);
	assert.equal(Buffer.from(credentials[0].userHandle, 'base64').toString('hex'), userId.replaceAll('-', ''));

	const listed = await api('GET', '/auth/passkeys');
	assert.deepEqual(listed.body.data.map((p) => p.id), [passkey.id]);
});

test('the_passkey_signs_in_with_no_password', async () => {
	assert.equal((await api('POST', '/auth/sign-out')).status, 204);
	await signedOut();
	const r = await passkeySignIn();
	assert.equal(r.status, 200, JSON.stringify(r));
	assert.equal(r.body.data.session.method, 'PASSKEY');
	assert.equal(r.body.data.user.id, userId);
	const s = await api('GET', '/auth/session');
	assert.equal(s.status, 200, JSON.stringify(s.body));
	assert.equal(s.body.data.user.id, userId);
	const [passkey] = (await api('GET', '/auth/passkeys')).body.data;
	assert.ok(passkey.lastUsedAt, 'the use is recorded');
	assert.equal((await api('POST', '/auth/sign-out')).status, 204);
});

test('without_user_verification_sign_in_fails', async () => {
	await cdp.send('WebAuthn.setUserVerified', { authenticatorId, isUserVerified: false });
	try {
		// Asked for user verification, the browser refuses, or the server does.
		const required = await passkeySignIn({ uv: 'required' });
		assert.ok(required.error || required.status === 401, JSON.stringify(required));
		// A page that does not ask gets an assertion without UV: the server refuses it.
		const discouraged = await passkeySignIn({ uv: 'discouraged' });
		assert.equal(discouraged.status, 401, JSON.stringify(discouraged));
		assert.equal(discouraged.body.error.code, 'PASSKEY_INVALID');
		await signedOut();
	} finally {
		await cdp.send('WebAuthn.setUserVerified', { authenticatorId, isUserVerified: true });
	}
});

test('a_corrupted_signature_fails_to_sign_in', async () => {
	const r = await passkeySignIn({ corrupt: true });
	assert.equal(r.status, 401, JSON.stringify(r));
	assert.equal(r.body.error.code, 'PASSKEY_INVALID');
	await signedOut();
	// The same passkey, untouched, still works.
	assert.equal((await passkeySignIn()).status, 200);
});
