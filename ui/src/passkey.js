// WebAuthn ceremonies with the API's JSON forms of the options and of the
// credential (base64url for every binary member), as the browsers'
// PublicKeyCredential.parse*OptionsFromJSON and toJSON() define them; the
// conversion is done here so that browsers without those helpers work too.
import { post } from './api.js';

const b64u = {
	decode(s) {
		const b = atob(s.replace(/-/g, '+').replace(/_/g, '/') + '='.repeat((4 - (s.length % 4)) % 4));
		return Uint8Array.from(b, (c) => c.charCodeAt(0)).buffer;
	},
	encode(buf) {
		let s = '';
		for (const x of new Uint8Array(buf)) s += String.fromCharCode(x);
		return btoa(s).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
	},
};

const ids = (list) => (list || []).map((c) => ({ ...c, id: b64u.decode(c.id) }));

function creationOptions(o) {
	return { ...o, challenge: b64u.decode(o.challenge), user: { ...o.user, id: b64u.decode(o.user.id) }, excludeCredentials: ids(o.excludeCredentials) };
}

function requestOptions(o) {
	return { ...o, challenge: b64u.decode(o.challenge), allowCredentials: ids(o.allowCredentials) };
}

function credentialJSON(c) {
	if (typeof c.toJSON === 'function') return c.toJSON();
	const r = c.response;
	const response = { clientDataJSON: b64u.encode(r.clientDataJSON) };
	if (r.attestationObject) {
		response.attestationObject = b64u.encode(r.attestationObject);
		response.transports = r.getTransports ? r.getTransports() : [];
	} else {
		response.authenticatorData = b64u.encode(r.authenticatorData);
		response.signature = b64u.encode(r.signature);
		if (r.userHandle) response.userHandle = b64u.encode(r.userHandle);
	}
	return { id: c.id, rawId: b64u.encode(c.rawId), type: c.type, response, clientExtensionResults: c.getClientExtensionResults(), authenticatorAttachment: c.authenticatorAttachment };
}

export const passkeysAvailable = () => typeof window.PublicKeyCredential === 'function';

// A browser's refusal (cancelled, timed out, no authenticator) as an error
// the forms show like the API's.
function refused(e) {
	const err = new Error(e.name === 'NotAllowedError' ? 'The passkey request was cancelled or timed out.' : `The browser refused: ${e.message}`);
	return err;
}

// Registration: POST /auth/passkeys (the password), the browser creates
// the credential, POST /auth/passkeys/confirm stores it under `name`.
export async function registerPasskey(password, name) {
	const options = await post('/auth/passkeys', { password });
	let created;
	try {
		created = await navigator.credentials.create({ publicKey: creationOptions(options) });
	} catch (e) {
		throw refused(e);
	}
	return post('/auth/passkeys/confirm', { name, credential: credentialJSON(created) });
}

// Sign-in: a challenge, the authenticator picks the account (discoverable
// credential), POST /auth/passkeys/verify issues the session cookie.
export async function signInWithPasskey() {
	const options = await post('/auth/passkeys/challenge');
	let got;
	try {
		got = await navigator.credentials.get({ publicKey: requestOptions(options) });
	} catch (e) {
		throw refused(e);
	}
	return post('/auth/passkeys/verify', { credential: credentialJSON(got) });
}
