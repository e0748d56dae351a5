// A git host over https for the tests that fetch with a git credential:
// Node's https server on 127.0.0.1 (a free port) with a certificate made
// here by /usr/bin/openssl (CN=127.0.0.1; stewardd trusts it through
// GIT_CA_FILE), handing each request to `git http-backend` (git's own
// smart-HTTP CGI program, run with an argument list and a CGI environment,
// never a shell). When `username` and `token` are given, every request
// must carry them as HTTP Basic credentials (401 with WWW-Authenticate
// otherwise), as GitHub, GitLab and Gitea ask for a private repository.
//
//   const host = await startGitHttps({ root: path.dirname(repo.path), username: 'deploy', token });
//   host.url('repo')          // https://127.0.0.1:<port>/repo
//   host.caFile               // the certificate, for GIT_CA_FILE
//   host.requests             // [{method, path, authorization}] as received
//   await host.stop();
//
// A machine without git or openssl makes the file exit 77 with the reason.

import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import { makeTempDir, freePort, need } from './harness.mjs';

const GIT = '/usr/bin/git';
const OPENSSL = '/usr/bin/openssl';

// Splits a CGI answer's head from its body: {status, headers, rest}, or
// null while the blank line has not arrived.
function cgiHead(buf) {
	let end = buf.indexOf('\r\n\r\n');
	let sep = 4;
	if (end < 0) {
		end = buf.indexOf('\n\n');
		sep = 2;
	}
	if (end < 0) return null;
	const headers = {};
	let status = 200;
	for (const line of buf.subarray(0, end).toString('latin1').split(/\r?\n/)) {
		const i = line.indexOf(':');
		if (i < 0) continue;
		const k = line.slice(0, i).trim();
		const v = line.slice(i + 1).trim();
		if (k.toLowerCase() === 'status') status = parseInt(v, 10);
		else headers[k] = v;
	}
	return { status, headers, rest: buf.subarray(end + sep) };
}

export async function startGitHttps({ root, username = null, token = null }) {
	need(GIT, 'git');
	need(OPENSSL, 'openssl');
	const dir = makeTempDir('sw-githttps-');
	const keyFile = path.join(dir, 'key.pem');
	const caFile = path.join(dir, 'cert.pem');
	execFileSync(OPENSSL, ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes',
		'-keyout', keyFile, '-out', caFile, '-days', '1', '-subj', '/CN=127.0.0.1'], { stdio: 'ignore' });
	const requests = [];
	const expected = username && token ? `Basic ${Buffer.from(`${username}:${token}`).toString('base64')}` : null;

	const server = https.createServer({ key: fs.readFileSync(keyFile), cert: fs.readFileSync(caFile) }, (req, res) => {
		const u = new URL(req.url, 'https://127.0.0.1');
		requests.push({ method: req.method, path: u.pathname, authorization: req.headers.authorization ?? null });
		if (expected && req.headers.authorization !== expected) {
			req.resume();
			res.writeHead(401, { 'WWW-Authenticate': 'Basic realm="git"', 'Content-Length': '0' });
			res.end();
			return;
		}
		const env = {
			PATH: '/usr/bin:/bin',
			GIT_PROJECT_ROOT: root,
			GIT_HTTP_EXPORT_ALL: '1',
			GIT_CONFIG_NOSYSTEM: '1',
			HOME: dir,
			PATH_INFO: decodeURIComponent(u.pathname),
			QUERY_STRING: u.search.slice(1),
			REQUEST_METHOD: req.method,
			CONTENT_TYPE: req.headers['content-type'] ?? '',
			REMOTE_ADDR: '127.0.0.1',
			GATEWAY_INTERFACE: 'CGI/1.1',
			SERVER_PROTOCOL: 'HTTP/1.1',
		};
		if (req.headers['content-length'] !== undefined) env.CONTENT_LENGTH = req.headers['content-length'];
		if (req.headers['content-encoding'] !== undefined) env.HTTP_CONTENT_ENCODING = req.headers['content-encoding'];
		if (req.headers['git-protocol'] !== undefined) env.GIT_PROTOCOL = req.headers['git-protocol'];
		if (username) env.REMOTE_USER = username;
		const cgi = spawn(GIT, ['http-backend'], { env, stdio: ['pipe', 'pipe', 'ignore'] });
		req.pipe(cgi.stdin);
		cgi.stdin.on('error', () => {});
		let head = Buffer.alloc(0);
		let started = false;
		cgi.stdout.on('data', (chunk) => {
			if (started) {
				res.write(chunk);
				return;
			}
			head = Buffer.concat([head, chunk]);
			const h = cgiHead(head);
			if (!h) return;
			started = true;
			res.writeHead(h.status, h.headers);
			if (h.rest.length) res.write(h.rest);
		});
		cgi.on('close', () => {
			if (!started) res.writeHead(502);
			res.end();
		});
	});
	const port = await freePort();
	await new Promise((resolve, reject) => {
		server.once('error', reject);
		server.listen(port, '127.0.0.1', resolve);
	});
	return {
		port,
		caFile,
		requests,
		url: (name) => `https://127.0.0.1:${port}/${name}`,
		stop: () =>
			new Promise((resolve) => {
				server.closeAllConnections?.();
				server.close(() => {
					fs.rmSync(dir, { recursive: true, force: true });
					resolve();
				});
			}),
	};
}
