// A minimal SMTP server for the tests: it listens on 127.0.0.1 (a free
// port), accepts every message and keeps it. Enough of RFC 5321 for
// libcurl: EHLO/HELO, AUTH PLAIN (any credentials are accepted and kept),
// MAIL FROM, RCPT TO, DATA (dot-unstuffed), RSET, NOOP, QUIT; anything else
// is 502. No TLS. Node 20, no dependencies.
//
//   const sink = await startSmtpSink();
//   ... SMTP_URL = sink.url ...
//   const mail = await sink.waitForMessage((m) => m.to.includes('a@b.c'));
//   await sink.close();
//
// A message is {from, to: [addresses], auth ({user, pass} or null), data
// (text as sent, CRLF), headers ({lower-case name: value}), body (text
// after the header block, with LF line ends)}.

import net from 'node:net';

const MAX_DATA = 1024 * 1024;

function parseMessage(from, to, auth, data) {
	const split = data.indexOf('\r\n\r\n');
	const head = split < 0 ? data : data.slice(0, split);
	const body = split < 0 ? '' : data.slice(split + 4);
	const headers = {};
	for (const line of head.replace(/\r\n[ \t]+/g, ' ').split('\r\n')) {
		const i = line.indexOf(':');
		if (i > 0) headers[line.slice(0, i).toLowerCase()] = line.slice(i + 1).trim();
	}
	return { from, to, auth, data, headers, body: body.replace(/\r\n/g, '\n') };
}

// AUTH PLAIN's response: base64 of "authzid NUL user NUL password".
function decodePlain(b64) {
	const parts = Buffer.from(b64, 'base64').toString('utf8').split('\0');
	return parts.length === 3 ? { user: parts[1], pass: parts[2] } : null;
}

export async function startSmtpSink() {
	const messages = [];
	const waiters = new Set();
	const sockets = new Set();
	let commands = 0;

	function handle(sock) {
		sockets.add(sock);
		sock.setEncoding('latin1');
		let buf = '';
		let state = 'command'; // or 'data', 'auth'
		let auth = null;
		let from = null;
		let to = [];
		let data = [];
		let dataBytes = 0;
		const reply = (line) => sock.write(`${line}\r\n`);
		const reset = () => {
			from = null;
			to = [];
			data = [];
			dataBytes = 0;
		};
		reply('220 127.0.0.1 steward-test-sink ESMTP');
		sock.on('data', (chunk) => {
			buf += chunk;
			let eol;
			while ((eol = buf.indexOf('\r\n')) >= 0) {
				const line = buf.slice(0, eol);
				buf = buf.slice(eol + 2);
				if (state === 'data') {
					if (line === '.') {
						state = 'command';
						const msg = parseMessage(from, to, auth, Buffer.from(data.join('\r\n') + '\r\n', 'latin1').toString('utf8'));
						messages.push(msg);
						reset();
						reply('250 2.0.0 queued');
						for (const w of waiters) w();
					} else {
						const l = line.startsWith('.') ? line.slice(1) : line;
						dataBytes += l.length + 2;
						if (dataBytes <= MAX_DATA) data.push(l);
					}
					continue;
				}
				if (state === 'auth') {
					state = 'command';
					auth = decodePlain(line);
					reply(auth ? '235 2.7.0 accepted' : '501 5.5.2 cannot decode');
					continue;
				}
				commands++;
				const verb = line.slice(0, 4).toUpperCase();
				const arg = line.slice(4).trim();
				const addr = (s) => {
					const m = /<([^>]*)>/.exec(s);
					return m ? m[1] : null;
				};
				if (verb === 'EHLO') {
					reply('250-127.0.0.1 greets you');
					reply('250-8BITMIME');
					reply('250-AUTH PLAIN');
					reply('250 SIZE 1048576');
				} else if (verb === 'HELO') {
					reply('250 127.0.0.1');
				} else if (verb === 'MAIL' && /^FROM:/i.test(arg)) {
					from = addr(arg);
					to = [];
					reply(from === null ? '501 5.5.4 syntax: MAIL FROM:<address>' : '250 2.1.0 ok');
				} else if (verb === 'RCPT' && /^TO:/i.test(arg)) {
					const a = addr(arg);
					if (from === null) reply('503 5.5.1 MAIL first');
					else if (!a) reply('501 5.5.4 syntax: RCPT TO:<address>');
					else {
						to.push(a);
						reply('250 2.1.5 ok');
					}
				} else if (verb === 'DATA') {
					if (!to.length) reply('503 5.5.1 RCPT first');
					else {
						state = 'data';
						reply('354 end data with <CR><LF>.<CR><LF>');
					}
				} else if (verb === 'AUTH' && /^PLAIN\b/i.test(arg)) {
					const initial = arg.slice(5).trim();
					if (initial) {
						auth = decodePlain(initial);
						reply(auth ? '235 2.7.0 accepted' : '501 5.5.2 cannot decode');
					} else {
						state = 'auth';
						reply('334 ');
					}
				} else if (verb === 'RSET') {
					reset();
					reply('250 2.0.0 ok');
				} else if (verb === 'NOOP') {
					reply('250 2.0.0 ok');
				} else if (verb === 'QUIT') {
					reply('221 2.0.0 bye');
					sock.end();
				} else {
					reply('502 5.5.2 command not implemented');
				}
			}
		});
		sock.on('error', () => {});
		sock.on('close', () => sockets.delete(sock));
	}

	const server = net.createServer(handle);
	await new Promise((resolve, reject) => {
		server.once('error', reject);
		server.listen(0, '127.0.0.1', resolve);
	});
	const { port } = server.address();

	return {
		port,
		url: `smtp://127.0.0.1:${port}`,
		messages,
		// How many SMTP commands (not DATA lines) the sink has received.
		get commands() {
			return commands;
		},
		// Resolves with the first message (kept or arriving) matching pred;
		// rejects after timeoutMs.
		waitForMessage(pred = () => true, timeoutMs = 10000) {
			return new Promise((resolve, reject) => {
				const check = () => {
					const m = messages.find(pred);
					if (!m) return false;
					done();
					resolve(m);
					return true;
				};
				const timer = setTimeout(() => {
					done();
					reject(new Error(`no matching mail within ${timeoutMs} ms (${messages.length} received)`));
				}, timeoutMs);
				const done = () => {
					clearTimeout(timer);
					waiters.delete(check);
				};
				if (!check()) waiters.add(check);
			});
		},
		close() {
			for (const s of sockets) s.destroy();
			return new Promise((resolve) => server.close(() => resolve()));
		},
	};
}
