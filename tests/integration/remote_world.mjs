// A second server on this machine for the agent tests: a second dockerd
// (reached through engine_hold.mjs's pass-through proxy, so a test can
// hold one Engine API request), a second Caddy, a server row and its
// token, and the real steward-agent dialing stewardd over 127.0.0.1.
//
//   remoteWorld(w) -> {second, caddy2, engine, server, startAgent(), waitStatus()}
//     w: deploy_world.mjs's world. startAgent(url?) -> the agent's process
//     (dialing url, by default the server's own STEWARD_URL: another
//     replica's), with log() (its output so far); killed after the file's
//     tests. waitStatus(status, timeoutMs?) waits for the server's status
//     ('ONLINE', 'OFFLINE') and returns the server.
// Exits 77 when SW_BUILD_DIR or the steward-agent binary is missing.

import { after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import * as h from './harness.mjs';
import { ok } from './identity.mjs';
import { startSecondDocker, startCaddy } from './docker.mjs';
import { holdingEngine } from './engine_hold.mjs';

export function agentBinary() {
	const buildDir = process.env.SW_BUILD_DIR;
	if (!buildDir) h.skip('SW_BUILD_DIR is not set (ctest sets it)');
	const bin = path.join(buildDir, 'steward-agent');
	if (!fs.existsSync(bin)) h.skip(`${bin} does not exist (cmake --build ... --target steward-agent)`);
	return bin;
}

export async function remoteWorld(w) {
	const AGENT = agentBinary();
	const second = await startSecondDocker();
	await second.baseImage();
	const caddy2 = await startCaddy();
	const engine = await holdingEngine(second.socket);
	const agents = [];
	after(() => {
		for (const a of agents) if (a.exitCode === null && a.signalCode === null) a.kill('SIGKILL');
		caddy2.stop();
		engine.close();
		// Each agent's sanitizer reports fail the file, as stewardd's do.
		for (const a of agents) {
			const i = a.log().search(h.SANITIZER_REPORT);
			if (i >= 0) throw new Error(`sanitizer report from steward-agent:\n${a.log().slice(Math.max(0, i - 200), i + 4000)}`);
		}
	});
	const server = await ok(w.call('POST', '/servers', { body: { name: 'second', host: '127.0.0.1' } }), 201);
	const [, url, token] = /^STEWARD_URL='([^']+)' STEWARD_AGENT_TOKEN='(sta_[A-Za-z0-9_-]{43})'/.exec(server.agentCommand);
	// Each start a new journal: a new agent install on that server.
	function startAgent(steward = url) {
		const log = [];
		const proc = spawn(AGENT, [], {
			env: { PATH: process.env.PATH, STEWARD_URL: steward, STEWARD_AGENT_TOKEN: token,
				STEWARD_AGENT_DATA_DIR: h.makeTempDir('sw-agent-'), DOCKER_HOST: engine.host, ...caddy2.env,
				ASAN_OPTIONS: process.env.ASAN_OPTIONS || '', TSAN_OPTIONS: process.env.TSAN_OPTIONS || '',
				UBSAN_OPTIONS: process.env.UBSAN_OPTIONS || '' },
			stdio: ['ignore', 'pipe', 'pipe'],
		});
		for (const s of [proc.stdout, proc.stderr]) s.on('data', (d) => {
			log.push(String(d));
			if (process.env.SW_TEST_VERBOSE) process.stderr.write(`[agent] ${d}`);
		});
		proc.log = () => log.join('');
		agents.push(proc);
		return proc;
	}
	async function waitStatus(status, timeoutMs = 15000) {
		const deadline = Date.now() + timeoutMs * h.SLACK;
		for (;;) {
			const s = await ok(w.call('GET', `/servers/${server.id}`));
			if (s.status === status) return s;
			if (Date.now() > deadline) assert.fail(`the server is ${s.status}, not ${status}`);
			await h.sleep(100);
		}
	}
	return { second, caddy2, engine, server, startAgent, waitStatus };
}
