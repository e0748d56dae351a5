// What the metrics benchmarks start from: a scratch PostgreSQL database
// migrated by stewardd (then stopped, so nothing of its own runs), one
// organization made by POST /setup, its local server, a project and an
// environment. Returns {srv (stopped), db, sql, org, server, project, env}.

import { spawn } from 'node:child_process';
import * as h from '../tests/integration/harness.mjs';

export async function benchOrganization(pg, env = {}) {
	const srv = await h.startStewardd({ db: pg, env });
	const db = srv.dbName;
	const sql = async (q) => (await pg.psql(q, db)).trim();
	await h.request(srv.port, 'POST', '/setup', { body: { email: 'o@example.com', password: 'correct horse battery', name: 'O', organizationName: 'Bench' } });
	await srv.stop();
	const org = await sql(`SELECT id FROM organizations LIMIT 1`);
	const server = await sql(`SELECT id FROM servers WHERE is_local LIMIT 1`);
	const project = await sql(`INSERT INTO projects (organization_id, name) VALUES ('${org}', 'bench') RETURNING id`);
	const environment = await sql(`INSERT INTO environments (organization_id, project_id, name) VALUES ('${org}', '${project}', 'production') RETURNING id`);
	return { srv, db, sql, org, server, project, env: environment };
}

// perf stat's task-clock of pid over `seconds` (ms, to the microsecond), or
// null without perf; the window's wait either way.
export async function taskClockMs(pid, seconds) {
	const p = spawn('perf', ['stat', '-x', ',', '-e', 'task-clock', '-p', String(pid), '--', 'sleep', String(seconds)], { stdio: ['ignore', 'ignore', 'pipe'] });
	let text = '';
	p.stderr.on('data', (b) => { text += b; });
	const ok = await new Promise((resolve) => { p.once('error', () => resolve(false)); p.once('exit', (code) => resolve(code === 0)); });
	if (!ok) { await h.sleep(seconds * 1000); return null; }
	const m = /^([\d.]+),msec,task-clock/m.exec(text);
	return m ? Number(Number(m[1]).toFixed(2)) : null;
}

