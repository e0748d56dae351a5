// The setup race: many concurrent POST /setup calls, exactly one wins.

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import * as h from './harness.mjs';

h.stewarddPath();
const pg = await h.startPostgres();
after(h.cleanupAll);

const N = 50;

async function race(env) {
	const srv = await h.startStewardd({ db: pg, env });
	const bodies = Array.from({ length: N }, (_, i) => h.setupBody({ email: `racer${i}@example.com`, organizationName: `Org ${i}` }));
	// Open every connection first, then send all requests at once.
	const conns = await Promise.all(bodies.map(() => h.Conn.open(srv.port)));
	try {
		const bytes = bodies.map((b) => h.buildRequest(srv.port, 'POST', '/setup', { body: b, headers: { Connection: 'close' } }));
		await Promise.all(conns.map((c, i) => c.write(bytes[i])));
		const results = await Promise.all(conns.map((c) => c.responses(1, 60000).then((rs) => rs[rs.length - 1])));
		const created = results.filter((r) => r.status === 201);
		const conflicts = results.filter((r) => r.status === 409);
		const other = results.filter((r) => r.status !== 201 && r.status !== 409);
		assert.deepEqual(other.map((r) => `${r.status} ${r.text}`), [], 'only 201 and 409');
		assert.equal(created.length, 1, `exactly one setup succeeds, got ${created.length}`);
		assert.equal(conflicts.length, N - 1);
		for (const r of conflicts) h.assertError(r, 409, 'SETUP_COMPLETE');
		const winner = created[0].json().data;
		assert.equal(winner.user.isOperator, true);
		assert.equal(winner.organization.role, 'OWNER');

		const status = await h.request(srv.port, 'GET', '/setup-status');
		assert.deepEqual(status.json(), { data: { setupRequired: false } });

		// Only the winner's data was stored: one hash, one user, one organization.
		const dump = await pg.dump(srv.dbName);
		const distinct = (re) => new Set(dump.match(re) || []);
		assert.equal(distinct(/\$argon2id\$[^\s\t]+/g).size, 1, 'one password hash stored');
		assert.deepEqual([...distinct(/racer\d+@example\.com/g)], [winner.user.email], 'only the winner is stored');
		assert.deepEqual([...distinct(/\bOrg \d+\b/g)], [winner.organization.name], 'only the winner\'s organization is stored');
	} finally {
		for (const c of conns) c.destroy();
		await srv.stop();
	}
}

test('fifty_concurrent_setups_exactly_one_succeeds', async () => {
	await race({});
});

test('fifty_concurrent_setups_across_two_loop_threads_exactly_one_succeeds', async () => {
	await race({ STEWARD_THREADS: 2 });
});
