// steward-agent over wss: a control plane played by the npm ws package
// behind node's https server, with certificates from a private CA made
// here with the openssl command. The agent trusts STEWARD_CA_FILE, checks
// the certificate's name against STEWARD_URL's host (an IP name for an
// address, a DNS name and SNI for a name) and refuses anything else.

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import { createRequire } from 'node:module';
import { makeTempDir, skip, sleep, SLACK, cleanupAll } from './harness.mjs';

const buildDir = process.env.SW_BUILD_DIR;
if (!buildDir) skip('SW_BUILD_DIR is not set (ctest sets it)');
const AGENT = path.join(buildDir, 'steward-agent');
if (!fs.existsSync(AGENT)) skip(`${AGENT} does not exist (cmake --build ... --target steward-agent)`);
let WebSocketServer;
try {
	({ WebSocketServer } = createRequire(import.meta.url)('ws'));
} catch {
	skip('the npm package ws is missing: npm ci --prefix tests/integration');
}
try {
	execFileSync('openssl', ['version']);
} catch {
	skip('the openssl command is missing (apt-get install openssl)');
}

const TOKEN = 'sta_' + 'A'.repeat(43);
const dir = makeTempDir('sw-agent-tls-');
const f = (n) => path.join(dir, n);
const ossl = (...args) => execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
const EC = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

function makeCa(name) {
	ossl('req', '-x509', ...EC, '-keyout', f(`${name}.key`), '-out', f(`${name}.pem`), '-subj', `/CN=${name}`, '-days', '1');
}
function makeCert(name, ca, san) {
	ossl('req', ...EC, '-keyout', f(`${name}.key`), '-out', f(`${name}.csr`), '-subj', `/CN=${name}`);
	fs.writeFileSync(f(`${name}.ext`), `subjectAltName=${san}\n`);
	ossl('x509', '-req', '-in', f(`${name}.csr`), '-CA', f(`${ca}.pem`), '-CAkey', f(`${ca}.key`), '-CAcreateserial',
		'-out', f(`${name}.pem`), '-days', '1', '-extfile', f(`${name}.ext`));
}
makeCa('ca');
makeCa('other-ca');
makeCert('srv', 'ca', 'DNS:localhost,IP:127.0.0.1');
makeCert('misnamed', 'ca', 'DNS:other.example');

async function controlPlane(certName) {
	const wss = new WebSocketServer({ noServer: true });
	const cp = { upgrades: [], hellos: [], servernames: [] };
	const server = https.createServer({ key: fs.readFileSync(f(`${certName}.key`)), cert: fs.readFileSync(f(`${certName}.pem`)) });
	server.on('secureConnection', (s) => cp.servernames.push(s.servername));
	server.on('upgrade', (req, socket, head) => {
		cp.upgrades.push(req.headers);
		if (req.headers['x-agent-token'] !== TOKEN) return socket.end('HTTP/1.1 401 Unauthorized\r\ncontent-length: 0\r\n\r\n');
		wss.handleUpgrade(req, socket, head, (ws) => {
			ws.on('message', (d) => {
				const m = JSON.parse(d.toString());
				if (m.type === 'hello') {
					cp.hellos.push(m);
					ws.send(JSON.stringify({ type: 'welcome', connectionId: 'tls-1', protocol: 1, heartbeatMs: 1000 }));
					ws.send(JSON.stringify({ type: 'heartbeat', seq: 5 }));
				} else if (m.type === 'heartbeat') {
					cp.echo = m.seq;
				}
			});
		});
	});
	await new Promise((r) => server.listen(0, '127.0.0.1', r));
	cp.port = server.address().port;
	cp.close = () => new Promise((r) => { wss.close(); server.closeAllConnections(); server.close(r); });
	return cp;
}

const agents = [];
function startAgent(url, ca) {
	const proc = spawn(AGENT, [], {
		env: { PATH: process.env.PATH, STEWARD_URL: url, STEWARD_AGENT_TOKEN: TOKEN, STEWARD_CA_FILE: f(ca),
			STEWARD_AGENT_DATA_DIR: makeTempDir('sw-agent-') },
		stdio: ['ignore', 'pipe', 'pipe'],
	});
	let log = '';
	proc.stdout.on('data', (d) => { log += d; });
	proc.stderr.on('data', (d) => { log += d; });
	const a = { proc, log: () => log };
	agents.push(a);
	return a;
}

async function until(cond, what, ms = 8000 * SLACK) {
	const end = Date.now() + ms;
	while (!cond()) {
		if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
		await sleep(20);
	}
}

after(async () => {
	for (const a of agents) if (a.proc.exitCode === null) a.proc.kill('SIGKILL');
	for (const a of agents) if (/AddressSanitizer|runtime error: /.test(a.log())) throw new Error(a.log());
	await cleanupAll();
});

test('wss to an address: the IP name of the certificate is checked against the private CA', async () => {
	const cp = await controlPlane('srv');
	const a = startAgent(`https://127.0.0.1:${cp.port}`, 'ca.pem');
	await until(() => cp.echo === 5, 'hello and a heartbeat over TLS');
	assert.equal(cp.upgrades[0]['x-agent-token'], TOKEN);
	assert.equal(cp.hellos[0].type, 'hello');
	a.proc.kill('SIGTERM');
	assert.equal(await new Promise((r) => a.proc.on('exit', r)), 0);
	await cp.close();
});

test('wss to a name: SNI is sent and the DNS name is checked', async () => {
	const cp = await controlPlane('srv');
	const a = startAgent(`https://localhost:${cp.port}/`, 'ca.pem');
	await until(() => cp.echo === 5, 'hello and a heartbeat over TLS');
	assert.ok(cp.servernames.includes('localhost'), JSON.stringify(cp.servernames));
	a.proc.kill('SIGTERM');
	await new Promise((r) => a.proc.on('exit', r));
	await cp.close();
});

test('a certificate from another CA, or for another name, is refused before the token is sent', async () => {
	const cp = await controlPlane('srv');
	const wrongCa = startAgent(`https://127.0.0.1:${cp.port}`, 'other-ca.pem');
	const misnamedCp = await controlPlane('misnamed');
	const misnamed = startAgent(`https://127.0.0.1:${misnamedCp.port}`, 'ca.pem');
	await until(() => /TLS with 127\.0\.0\.1 failed/.test(wrongCa.log()) && /TLS with 127\.0\.0\.1 failed/.test(misnamed.log()),
		'both agents to report the TLS failure');
	await sleep(300);
	assert.equal(cp.upgrades.length, 0);
	assert.equal(misnamedCp.upgrades.length, 0);
	assert.doesNotMatch(wrongCa.log() + misnamed.log(), /sta_/);
	await cp.close();
	await misnamedCp.close();
});
