// Server-Sent Events over fetch(), for GET /deployments/:id/live and
// GET /servers/:id/live.
//
// Not EventSource: once a reconnection is answered with anything but 200
// (a restarting server answers 503 while its database pool connects)
// EventSource gives up for good, and a new one cannot send Last-Event-ID.
// Here every reconnection sends the id of the last event received, so the
// log resumes right after the last line shown: no gap, no repeat. Backoff:
// 0.5 s doubling to 8 s. 401 and 404 end it (nothing to resume), and so
// does any other 4xx but 429: onRefused(ApiError) says why (a remote
// server's live metrics are 409 SERVER_NOT_CONNECTED).
import { ApiError } from './api.js';

export function openLive(url, { onEvent, onState, onRefused = () => {} }) {
	let lastId = null;
	let stopped = false;
	let controller = null;
	let delay = 500;

	function dispatch(block) {
		let event = 'message';
		let id = null;
		const data = [];
		for (const line of block.split('\n')) {
			if (!line || line[0] === ':') continue;
			const i = line.indexOf(':');
			const field = i < 0 ? line : line.slice(0, i);
			let value = i < 0 ? '' : line.slice(i + 1);
			if (value[0] === ' ') value = value.slice(1);
			if (field === 'event') event = value;
			else if (field === 'data') data.push(value);
			else if (field === 'id') id = value;
		}
		if (id !== null) lastId = id;
		if (data.length) onEvent({ event, id, data: data.join('\n') });
	}

	async function once() {
		controller = new AbortController();
		const headers = { Accept: 'text/event-stream' };
		if (lastId !== null) headers['Last-Event-ID'] = lastId;
		const res = await fetch(url, { headers, credentials: 'same-origin', cache: 'no-store', signal: controller.signal });
		if (res.status === 401 || res.status === 404) {
			stopped = true;
			onState(res.status === 401 ? 'signed-out' : 'not-found');
			return;
		}
		if (res.status >= 400 && res.status < 500 && res.status !== 429) {
			stopped = true;
			let body = null;
			try {
				body = await res.json();
			} catch {}
			onState('refused');
			onRefused(new ApiError(res.status, body));
			return;
		}
		if (res.status !== 200 || !res.body) throw new Error(`live log: ${res.status}`);
		onState('live');
		delay = 500;
		const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
		let buf = '';
		for (;;) {
			const { value, done } = await reader.read();
			if (done || stopped) break;
			buf += value;
			let start = 0;
			for (let end; (end = buf.indexOf('\n\n', start)) >= 0; start = end + 2) dispatch(buf.slice(start, end));
			buf = buf.slice(start);
		}
	}

	(async () => {
		while (!stopped) {
			try {
				await once();
			} catch {}
			if (stopped) break;
			onState('reconnecting');
			await new Promise((r) => setTimeout(r, delay));
			delay = Math.min(delay * 2, 8000);
		}
	})();

	return {
		// The stream's end (the status event) or leaving the page.
		close() {
			stopped = true;
			controller?.abort();
		},
	};
}
