// A real agent across control plane restarts and replicas: a second
// dockerd and a second Caddy on this machine (a second server), the real
// steward-agent pointed at them and dialing stewardd over 127.0.0.1.
//
// - stewardd SIGKILLed while the agent runs a command (a container.stop
//   held at the engine by engine_hold.mjs, a fault injector, so the
//   command is in flight exactly while the process dies) and started again
//   on the same address and database: the agent comes back, the command is
//   sent again and answered from the agent's journal: its row ends
//   SUCCEEDED (not lost), the agent ran it once and the engine saw one stop
//   (not run twice).
// - Two replicas on one database: the agent held by replica A (no job
//   runners), operations requested on replica B (runners) are run by B,
//   cross to A through agent_commands and NOTIFY, and act on the agent's
//   server. A deployment is one more case of CROSS once remote image builds
//   land; its live log is then read on both replicas.

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import * as h from './harness.mjs';
import { call, ok } from './identity.mjs';
import { world, BASE_IMAGE, dockerRequest, waitJob as waitJobOf } from './deploy_world.mjs';
import { agentBinary, remoteWorld } from './remote_world.mjs';

agentBinary();
const w = await world({ STEWARD_AGENT_HEARTBEAT_MS: 500 }, { tsan: true });
const { second, engine, server, startAgent } = await remoteWorld(w);
const waitJob = (id, timeoutMs) => waitJobOf(w, id, timeoutMs);
const sql1 = async (q) => (await w.sql(q)).trim();
const port = w.srv.port;

const decoys = [];
after(async () => {
	for (const id of decoys) await dockerRequest('DELETE', `/containers/${id}?force=1`).catch(() => {});
	await h.cleanupAll();
});

const agent = startAgent();
const agentLog = () => agent.log();
const count = (text, needle) => text.split(needle).length - 1;

async function until(what, fn, timeoutMs = 20000) {
	const deadline = Date.now() + timeoutMs * h.SLACK;
	for (;;) {
		const v = await fn();
		if (v) return v;
		if (Date.now() > deadline) assert.fail(`${what}: not within ${timeoutMs} ms\nagent:\n${agentLog()}`);
		await h.sleep(50);
	}
}
const serverStatus = async () => (await ok(w.call('GET', `/servers/${server.id}`))).status;
const online = () => until('the server ONLINE', async () => (await serverStatus()) === 'ONLINE');

await online();

const project = await ok(w.call('POST', '/projects', { body: { name: 'far' } }), 201);
const env = project.environments[0].id;
const makeApp = (name, on = w.srv) => ok(call(on, 'POST', '/applications', w.owner, { body: { name, environmentId: env, serverId: server.id } }), 201);
const containerName = (app) => `sw-${app.id.replace(/-/g, '').slice(0, 12)}-1`;

// A started container of app on engine (second.request or dockerRequest)
// that exits on SIGTERM.
async function appContainer(request, app) {
	const res = await request('POST', `/containers/create?name=${containerName(app)}`, {
		Image: BASE_IMAGE, Cmd: ['sh', '-c', 'trap "exit 0" TERM; sleep 600 & wait'],
		Labels: { 'steward.application': app.id, 'steward.managed': 'true' }, HostConfig: { NetworkMode: 'none' },
	});
	assert.equal(res.status, 201, res.text);
	const id = res.json().Id;
	assert.equal((await request('POST', `/containers/${id}/start`)).status, 204);
	return id;
}
const running = async (request, id) => (await request('GET', `/containers/${id}/json`)).json().State.Running;

test('stewardd killed and restarted while a command runs on the agent: the command is answered once, neither lost nor run twice', async () => {
	const app = await makeApp('far-restart');
	const there = await appContainer(second.request, app);
	const STOP = /^POST \S*\/containers\/\S+\/stop/;
	engine.hold(STOP);
	const job = await ok(w.call('POST', `/applications/${app.id}/stop`), 202);
	try {
		await engine.waitHeld(30000);
		const id = await sql1(`SELECT id FROM agent_commands WHERE server_id = '${server.id}' AND kind = 'container.stop'`);
		assert.match(id, h.UUID);
		await until('the agent running it', () => agentLog().includes(`running command ${id} `));

		// The process dies with the command in flight on the agent. Its
		// job goes back to the queue (the reaper); once the server reads
		// OFFLINE (three heartbeats unanswered), the retried job in the new
		// process, told not to wait for the agent to reconnect
		// (STEWARD_AGENT_RECONNECT_WAIT_MS=0; remote_agent.test.mjs tests
		// that wait), fails at once without issuing anything, so that the
		// engine sees the one stop of the command resent.
		w.srv.kill();
		await w.srv.exited;
		assert.match(await sql1(`SELECT status FROM agent_commands WHERE id = '${id}'`), /^(SENT|ACKED)$/);
		await until('the server read OFFLINE', async () => (await sql1(`SELECT count(*) FROM servers WHERE id = '${server.id}' AND last_seen_at < now() - interval '1600 milliseconds'`)) === '1');
		await w.restart({ STEWARD_AGENT_RECONNECT_WAIT_MS: '0' }, { port });
		assert.deepEqual(await waitJob(job.id, 30000),
			{ status: 'FAILED', error: "The server's agent is not connected: nothing was done on the server." });
		engine.release();

		// The agent finishes it, journals it, dials the new process, which
		// sends the command again; the journal answers it.
		await until('its answer recorded', async () => (await sql1(`SELECT status FROM agent_commands WHERE id = '${id}'`)) === 'SUCCEEDED', 30000);
		await online();
		const text = agentLog();
		assert.equal(count(text, `running command ${id} `), 1, 'run once');
		assert.equal(count(text, `command ${id} answered from the journal`), 1, 'the resend answered from the journal');
		assert.equal(engine.requests.filter((r) => STOP.test(r)).length, 1, 'one stop reached the engine');
		assert.equal(await running(second.request, there), false, 'stopped on the second engine');
		assert.equal(await sql1(`SELECT count(*) FROM agent_commands WHERE server_id = '${server.id}' AND kind = 'container.stop'`), '1', 'no second command');
	} finally {
		engine.release();
	}
});

// Operations asked on replica B for an application on the agent's server,
// with what each must leave on the second engine. (A deployment joins
// these once remote builds exist: deploy on B, SUCCEEDED, its container on
// the second engine, its live log read on A and on B.)
const CROSS = [
	{ verb: 'stop', running: false },
	{ verb: 'start', running: true },
	{ verb: 'restart', running: true },
];

test('two replicas: the agent held by A; lifecycle operations asked on B run on the agent\'s server', async () => {
	// A again, without job runners: whatever runs, B runs it.
	w.srv.kill();
	await w.srv.exited;
	const a = await w.restart({ STEWARD_RUNNERS: 'false' }, { port });
	const b = await h.startStewardd({ env: { ...w.env, DATABASE_URL: a.env.DATABASE_URL, STEWARD_RUNNERS: 'true' } });
	await until('the agent on A', () => a.logs.text().includes(`agent online server=${server.id}`));
	await online();

	const app = await makeApp('far-cross', b);
	const there = await appContainer(second.request, app);
	const decoy = await appContainer(dockerRequest, app);
	decoys.push(decoy);
	for (const c of CROSS) {
		const from = agentLog().length;
		const job = await ok(call(b, 'POST', `/applications/${app.id}/${c.verb}`, w.owner), 202);
		assert.deepEqual(await waitJob(job.id), { status: 'SUCCEEDED', error: '' }, c.verb);
		assert.equal(await running(second.request, there), c.running, `${c.verb} on the second engine`);
		assert.equal(await running(dockerRequest, decoy), true, `${c.verb}: the first engine's container runs on`);
		assert.match(agentLog().slice(from), /running command \S+ \(container\.(stop|start|restart)\)/, `${c.verb} ran on the agent`);
	}
	// The agent dialed A only; B ran the jobs and never held a session.
	assert.ok(!b.logs.text().includes('agent online'), 'B holds no agent');
	assert.ok(b.logs.text().length > 0);
	assert.equal((await ok(call(b, 'GET', `/servers/${server.id}`, w.owner))).status, 'ONLINE');
	// The lifecycle commands this test asked for, only: the metrics loop
	// sends the server a metrics.sample every tick, and one may be in
	// flight at this moment (a clean-clone CI run counted one).
	assert.equal(await sql1(`SELECT count(*) FROM agent_commands WHERE server_id = '${server.id}' AND kind IN ('container.stop', 'container.start', 'container.restart') AND status IN ('QUEUED', 'SENT', 'ACKED')`), '0', 'every lifecycle command answered');
});

test('the agent stops on SIGTERM, cleanly', async () => {
	const exited = new Promise((resolve) => agent.once('exit', (code, signal) => resolve({ code, signal })));
	agent.kill('SIGTERM');
	assert.deepEqual(await exited, { code: 0, signal: null });
	assert.doesNotMatch(agentLog(), h.SANITIZER_REPORT);
});
