// The local driver (src/driver) against a real Docker engine and a real
// Caddy: docker.mjs provides the engine, the base image and Caddy, then the
// C cases of tests/unit/test_driver.c run against them (builds with their
// log, a failing build, the context cap, cancel; containers with host
// networking, listing, idempotent stop/remove; Caddy routes carrying real
// requests, the upstream switch, proxy_state, removal; named volumes
// labelled, listed, busy while a container holds them, removed). Then
// tests/unit/test_driver_tls.c sets a route on a Caddy serving HTTPS with its
// internal issuer, and an HTTPS request verified against that CA's root
// reaches a server of this file through it. Whatever happens, everything
// labelled with this run's application id is removed after.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import path from 'node:path';
import { after, test } from 'node:test';
import { sleep } from './harness.mjs';
import { startDocker, baseImage, startCaddy, removeByLabel, dockerSkip, httpGet, dockerRequest } from './docker.mjs';

function testBinary(name) {
	const build = process.env.SW_BUILD_DIR || (process.env.STEWARDD && path.dirname(process.env.STEWARDD));
	if (!build) dockerSkip(`SW_BUILD_DIR (or STEWARDD) is not set: the build directory holding tests/${name}`);
	const bin = path.join(build, 'tests', name);
	if (!fs.existsSync(bin)) dockerSkip(`${bin} does not exist (build it first)`);
	return bin;
}

const bin = testBinary('test_driver');
const tlsBin = testBinary('test_driver_tls');
const engine = await startDocker();
const image = await baseImage();
const caddy = await startCaddy();
const appId = randomUUID();

after(async () => {
	await removeByLabel(`steward.application=${appId}`);
	// Named volumes are not removeByLabel's: the ones a failed case left.
	for (const label of [`steward.application=${appId}`, `steward.service=${appId}`]) {
		const filters = encodeURIComponent(JSON.stringify({ label: [label] }));
		const vols = (await dockerRequest('GET', `/volumes?filters=${filters}`).catch(() => null))?.json().Volumes ?? [];
		for (const v of vols) await dockerRequest('DELETE', `/volumes/${v.Name}`).catch(() => {});
	}
	caddy.stop();
});

function run(env, program = bin) {
	return new Promise((resolve) => {
		const p = spawn(program, [], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
		let out = '';
		p.stdout.on('data', (d) => {
			out += d;
			process.stdout.write(d);
		});
		p.stderr.on('data', (d) => {
			out += d;
			process.stderr.write(d);
		});
		p.on('close', (code) => resolve({ code, out }));
	});
}

test('the driver against dockerd and Caddy (tests/unit/test_driver.c)', { timeout: 300000 }, async () => {
	const r = await run({
		SW_TEST_DRIVER: '1',
		DOCKER_HOST: engine.host,
		...caddy.env,
		SW_TEST_CADDY_HTTP_PORT: String(caddy.httpPort),
		SW_TEST_BASE_IMAGE: image,
		SW_TEST_APP_ID: appId,
	});
	assert.equal(r.code, 0, 'every C case passes');
	assert.match(r.out, / 0 failed/);
	assert.doesNotMatch(r.out, /not-in-any-answer/, 'no environment value in any output');
	// Nothing of this run is left behind by the driver's own removals.
	const left = await httpGet(caddy.httpPort, `app-${appId.slice(0, 8)}.steward.test`, { timeoutMs: 3000 }).catch(() => null);
	assert.ok(!left || !/blue|green/.test(left.text));
});

test('a route on an HTTPS listener with internal certificates (tests/unit/test_driver_tls.c)', { timeout: 60000 }, async () => {
	const tls = await startCaddy({ internalTls: true });
	const upstream = http.createServer((req, res) => res.end(`upstream saw ${req.headers.host}`));
	await new Promise((resolve) => upstream.listen(0, '127.0.0.1', resolve));
	const host = `tls-${appId.slice(0, 8)}.steward.test`;
	try {
		const r = await run(
			{
				SW_TEST_DRIVER_TLS: '1',
				CADDY_ADMIN_URL: tls.adminUrl,
				CADDY_HTTP_LISTEN: `127.0.0.1:${tls.httpsPort}`,
				SW_TEST_APP_ID: appId,
				SW_TEST_HOST: host,
				SW_TEST_UPSTREAM: `127.0.0.1:${upstream.address().port}`,
			},
			tlsBin,
		);
		assert.equal(r.code, 0, 'every C case passes');
		const ca = (await tls.request('GET', '/pki/ca/local')).json();
		// Caddy issues the certificate in the background: a few tries.
		let answer = null;
		let lastError = null;
		for (let i = 0; i < 50 && !answer; i++) {
			answer = await new Promise((resolve) => {
				const req = https.get(
					{ host: '127.0.0.1', port: tls.httpsPort, path: '/', servername: host, headers: { Host: host }, ca: ca.root_certificate, agent: false, timeout: 3000 },
					(res) => {
						let body = '';
						res.on('data', (d) => (body += d));
						res.on('end', () => resolve({ status: res.statusCode, body, cert: res.socket.getPeerCertificate?.() }));
					},
				);
				req.on('error', (e) => {
					lastError = e;
					resolve(null);
				});
			});
			if (!answer) await sleep(200);
		}
		assert.ok(answer, `no HTTPS answer through Caddy: ${lastError}`);
		assert.equal(answer.status, 200);
		assert.equal(answer.body, `upstream saw ${host}`);
	} finally {
		upstream.close();
		tls.stop();
	}
});
