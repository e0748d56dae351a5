// Two replicas on one database: one writes the metric history at a time
// (the loop's advisory lock), so a minute is never counted twice; when the
// writer goes, the other takes over within a minute, and the minute rows
// go on with no duplicate and no minute folded from both.
//
// Both sample every half second (METRICS_SAMPLE_INTERVAL_MS, a test
// setting), and their minute lasts 5 s (METRICS_MINUTE_MS, another): a
// minute row of one replica holds about 10 samples, of both about 20.

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import * as h from './harness.mjs';
import { setup } from './identity.mjs';

h.stewarddPath();
const pg = await h.startPostgres();
const INTERVAL_MS = 500;
const MINUTE = 5000;
const PER_MINUTE = MINUTE / INTERVAL_MS;
const env = { METRICS_SAMPLE_INTERVAL_MS: INTERVAL_MS, METRICS_MINUTE_MS: MINUTE, METRICS_EBPF: '0' };
const a = await h.startStewardd({ db: pg, env });
const b = await h.startStewardd({ env: { ...env, DATABASE_URL: a.env.DATABASE_URL } });
after(h.cleanupAll);
const sql = async (q) => (await pg.psql(q, a.dbName)).trim();
const WRITES = 'metrics: this process writes the metric history';

await setup(a);

async function rows() {
	return (await sql(`SELECT (extract(epoch FROM m.bucket) * 1000)::bigint || ' ' || m.samples FROM metric_minutes m
		JOIN metric_series s ON s.id = m.series_id WHERE s.application_id IS NULL ORDER BY m.bucket`)).split('\n').filter(Boolean)
		.map((l) => l.split(' ').map(Number));
}

test('one replica writes; the other takes over when it goes; no minute twice', { timeout: 300000 }, async () => {
	const writers = [a, b].filter((s) => s.logs.text().includes(WRITES));
	assert.equal(writers.length, 1, 'exactly one writer');
	const [writer] = writers;
	const other = writer === a ? b : a;
	// A full minute written by the writer alone: about PER_MINUTE samples, not twice that.
	let before = [];
	for (const deadline = Date.now() + 4 * MINUTE + 60000; Date.now() < deadline && before.length < 2;) {
		before = await rows();
		if (before.length < 2) await h.sleep(250);
	}
	assert.ok(before.length >= 2, `minute rows: ${JSON.stringify(before)}`);
	for (const [, samples] of before.slice(1)) assert.ok(samples <= PER_MINUTE + 1, `one replica's samples: ${samples}`);
	assert.ok(!other.logs.text().includes(WRITES));

	// The writer goes; the other writes from the next minute on.
	const gone = Date.now();
	writer.kill();
	for (const deadline = Date.now() + 75000; Date.now() < deadline && !other.logs.text().includes(WRITES);) await h.sleep(100);
	assert.ok(other.logs.text().includes(WRITES), 'the other replica took over');
	const next = Math.ceil((gone + 2 * INTERVAL_MS) / MINUTE) * MINUTE;
	let after_ = [];
	for (const deadline = Date.now() + 3 * MINUTE + 60000; Date.now() < deadline;) {
		after_ = (await rows()).filter(([bucket]) => bucket >= next);
		if (after_.length >= 1) break;
		await h.sleep(250);
	}
	assert.ok(after_.length >= 1, 'minute rows go on after the hand-over');
	assert.ok(after_[0][1] >= Math.ceil(0.7 * PER_MINUTE) && after_[0][1] <= PER_MINUTE + 1, `a whole minute by the new writer: ${after_[0][1]}`);
	assert.equal(await sql(`SELECT count(*) FROM (SELECT series_id, bucket FROM metric_minutes GROUP BY 1, 2 HAVING count(*) > 1) x`), '0');
});
