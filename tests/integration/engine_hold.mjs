// A FAKE, for failure injection only: a pass-through proxy in front of a
// real dockerd's socket that can hold the Engine API requests whose request
// line matches a pattern, so a test pauses an agent's command at an exact
// point (a container.create waiting in the table, a container.stop in
// flight while stewardd restarts) without timing. Everything else passes
// through untouched to the real engine; nothing is answered by the proxy.
//
//   holdingEngine(socket) -> {host, requests, hold(re), waitHeld(ms), release(), close()}
//     host: "unix:///..." for the agent's DOCKER_HOST. requests: every
//     request line seen, in order. hold(re): the next requests whose line
//     matches re (and whatever follows on their connection) wait until
//     release(). waitHeld(ms): resolves with the first held line, fails
//     after ms.

import net from 'node:net';
import path from 'node:path';
import * as h from './harness.mjs';

const LINE = /^([A-Z]+ \S+) HTTP\/1\.[01]\r\n/;

export async function holdingEngine(socket) {
	const p = { requests: [], held: [], pattern: null };
	const dir = h.makeTempDir('sw-engine-hold-');
	const at = path.join(dir, 'docker.sock');
	const server = net.createServer((c) => {
		const u = net.connect(socket);
		const queue = []; // this connection's held bytes, in order
		let holding = false;
		u.pipe(c);
		u.on('error', () => c.destroy());
		c.on('error', () => u.destroy());
		c.on('close', () => u.destroy());
		c.on('data', (chunk) => {
			const m = LINE.exec(chunk.toString('latin1', 0, Math.min(chunk.length, 512)));
			if (m) {
				p.requests.push(m[1]);
				if (!holding && p.pattern && p.pattern.test(m[1])) {
					holding = true;
					p.held.push({ line: m[1], flush: () => { holding = false; for (const b of queue.splice(0)) u.write(b); } });
				}
			}
			if (holding) queue.push(chunk);
			else u.write(chunk);
		});
	});
	await new Promise((resolve, reject) => server.listen(at, resolve).once('error', reject));
	return {
		host: `unix://${at}`,
		requests: p.requests,
		hold(re) { p.pattern = re; },
		async waitHeld(timeoutMs) {
			const deadline = Date.now() + timeoutMs * h.SLACK;
			while (!p.held.length) {
				if (Date.now() > deadline) throw new Error(`no request matching ${p.pattern} came; seen: ${p.requests.join(', ')}`);
				await h.sleep(20);
			}
			return p.held[0].line;
		},
		release() {
			p.pattern = null;
			for (const x of p.held.splice(0)) x.flush();
		},
		close() { server.close(); },
	};
}
