// The API, called from the page: same origin, so the browser sends the
// session cookie (HttpOnly: script never sees it) and the Origin header the
// server's CSRF check reads. Every answer is the API's envelope: {data} or
// {error: {code, message, requestId, fields?}}.

export class ApiError extends Error {
	constructor(status, body) {
		const e = body && body.error;
		super(e ? e.message : `The server answered ${status}.`);
		this.status = status;
		this.code = e ? e.code : 'HTTP_' + status;
		this.fields = (e && e.fields) || {};
	}
}

// Called with every 401 from a route that needs a session (the session
// ended or was revoked): the app then shows the sign-in page.
let onSignedOut = () => {};
export function whenSignedOut(fn) {
	onSignedOut = fn;
}

// Resolves with the envelope's data (null for 204), or rejects with an ApiError.
export async function api(method, path, body) {
	const init = { method, headers: { Accept: 'application/json' }, credentials: 'same-origin' };
	if (body !== undefined) {
		init.headers['Content-Type'] = 'application/json';
		init.body = JSON.stringify(body);
	}
	let res;
	try {
		res = await fetch(path, init);
	} catch {
		throw new ApiError(0, { error: { code: 'NETWORK', message: 'The server cannot be reached.' } });
	}
	if (res.status === 204) return null;
	let json = null;
	try {
		json = await res.json();
	} catch {}
	if (!res.ok) {
		const err = new ApiError(res.status, json);
		if (res.status === 401 && err.code === 'UNAUTHENTICATED') onSignedOut();
		throw err;
	}
	return json ? json.data : null;
}

export const get = (path) => api('GET', path);
export const post = (path, body) => api('POST', path, body);

// POST of a multipart body (POST /deployments, the API's only non-JSON
// request body) through XMLHttpRequest, whose upload reports progress:
// onProgress(sent, total). Resolves with the envelope's data.
export function postForm(path, form, onProgress = () => {}) {
	return new Promise((resolve, reject) => {
		const xhr = new XMLHttpRequest();
		xhr.open('POST', path);
		xhr.setRequestHeader('Accept', 'application/json');
		xhr.responseType = 'json';
		xhr.upload.onprogress = (e) => e.lengthComputable && onProgress(e.loaded, e.total);
		xhr.onload = () => {
			if (xhr.status >= 200 && xhr.status < 300) resolve(xhr.response ? xhr.response.data : null);
			else reject(new ApiError(xhr.status, xhr.response));
		};
		xhr.onerror = () => reject(new ApiError(0, { error: { code: 'NETWORK', message: 'The server cannot be reached.' } }));
		xhr.send(form);
	});
}
