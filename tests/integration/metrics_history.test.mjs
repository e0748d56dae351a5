// Live metrics and metric history: GET /servers/:id/live streams each
// sample of the loop (shared frames, Last-Event-ID, heartbeats); the loop with a shortened interval
// (METRICS_SAMPLE_INTERVAL_MS, a test setting) and a shortened minute
// (METRICS_MINUTE_MS, 10 s here, another) writes minute rows that
// agree with the samples they came from (METRICS_SAMPLE_LOG, another test
// setting, has each sample's host figures); hour roll-ups agree with their
// minutes, twice over (idempotent); GET /servers/:id/metrics answers the
// same at both resolutions and refuses bad values field by field;
// retention drops the whole partitions it should and nothing else.
//
// Real PostgreSQL, real /proc; containers are not part of this file (the
// loop's container series use the sampler measured by metrics_bpf).

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import http from 'node:http';
import * as h from './harness.mjs';
import { call, ok, setup, signup } from './identity.mjs';

const INTERVAL_MS = 1000;
// The loop's minute (METRICS_MINUTE_MS): minute rows of 10 samples.
const MINUTE = 10000;
const PER_MINUTE = MINUTE / INTERVAL_MS;

h.stewarddPath();
const pg = await h.startPostgres();
const logDir = h.makeTempDir('sw-metrics-');
const sampleLog = path.join(logDir, 'samples.jsonl');
const srv = await h.startStewardd({
	db: pg,
	env: { SIGNUP_ENABLED: 'true', METRICS_SAMPLE_INTERVAL_MS: INTERVAL_MS, METRICS_MINUTE_MS: MINUTE, METRICS_SAMPLE_LOG: sampleLog, METRICS_EBPF: '0' },
});
after(h.cleanupAll);

const sql = async (q) => (await pg.psql(q, srv.dbName)).trim();

const owner = await setup(srv);
const created = Date.now();
const other = await signup(srv, 'owner@b.example', 'Org B');
const serverA = await sql(`SELECT id FROM servers WHERE organization_id = '${owner.org.id}' AND is_local`);
const serverB = await sql(`SELECT id FROM servers WHERE organization_id = '${other.org.id}' AND is_local`);

// The samples of the log, in order.
function samples() {
	return fs.readFileSync(sampleLog, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
}

// The minute row of bucketMs as the samples say it should be. Counter
// deltas: from the previous sample, a decrease starting again.
function expectedMinute(all, bucketMs) {
	const d = (a, b) => (b >= a ? b - a : b);
	const e = { samples: 0, cpuSum: 0, cpuMin: Infinity, cpuMax: -Infinity, memSum: 0, memMin: Infinity, memMax: -Infinity,
		load1Sum: 0, load1Max: -Infinity, rx: 0, tx: 0, memTotal: 0, swapMax: 0, diskMax: 0 };
	for (let i = 0; i < all.length; i++) {
		const s = all[i];
		if (s.takenAtMs - (s.takenAtMs % MINUTE) !== bucketMs) continue;
		e.samples++;
		e.cpuSum += s.cpu; e.cpuMin = Math.min(e.cpuMin, s.cpu); e.cpuMax = Math.max(e.cpuMax, s.cpu);
		e.memSum += s.mem; e.memMin = Math.min(e.memMin, s.mem); e.memMax = Math.max(e.memMax, s.mem);
		e.load1Sum += s.load1; e.load1Max = Math.max(e.load1Max, s.load1);
		e.memTotal = s.memTotal; e.swapMax = Math.max(e.swapMax, s.swapUsed); e.diskMax = Math.max(e.diskMax, s.diskUsed);
		assert.ok(i > 0, 'the series existed before this minute');
		e.rx += d(all[i - 1].rx, s.rx); e.tx += d(all[i - 1].tx, s.tx);
	}
	return e;
}

const close = (a, b, what) => assert.ok(Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(b)), `${what}: ${a} != ${b}`);

const ROW = `m.samples, m.cpu_pct_sum, m.cpu_pct_min, m.cpu_pct_max, m.mem_sum, m.mem_min, m.mem_max, m.mem_limit,
	m.load1_sum, m.load1_max, m.swap_used_max, m.disk_used_max, m.net_rx_bytes, m.net_tx_bytes`;
function parseRow(line) {
	const v = line.split('|');
	const n = v.map(Number);
	return { samples: n[0], cpuSum: n[1], cpuMin: n[2], cpuMax: n[3], memSum: n[4], memMin: n[5], memMax: n[6], memTotal: n[7],
		load1Sum: n[8], load1Max: n[9], swapMax: n[10], diskMax: n[11], rx: n[12], tx: n[13] };
}
function assertAgrees(row, e, what) {
	assert.equal(row.samples, e.samples, `${what} samples`);
	for (const k of ['cpuSum', 'cpuMin', 'cpuMax', 'memSum', 'load1Sum', 'load1Max']) close(row[k], e[k], `${what} ${k}`);
	for (const k of ['memMin', 'memMax', 'memTotal', 'swapMax', 'diskMax', 'rx', 'tx']) assert.equal(row[k], e[k], `${what} ${k}`);
}

// Reads GET path as a stream for ms, then leaves: {status, headers, text}.
function readStream(path, who, ms, headers = {}) {
	return new Promise((resolve, reject) => {
		const req = http.get({ host: '127.0.0.1', port: srv.port, path, agent: false,
			headers: { Cookie: `steward_session=${who.cookie}`, ...headers } }, (res) => {
			let text = '';
			res.setEncoding('utf8');
			res.on('data', (d) => (text += d));
			setTimeout(() => { req.destroy(); resolve({ status: res.statusCode, headers: res.headers, text }); }, ms);
		});
		req.on('error', (e) => { if (e.code !== 'ECONNRESET') reject(e); });
	});
}

test('GET /servers/:id/live: samples as they are taken, one frame per sample, Last-Event-ID', { timeout: 60000 }, async () => {
	const a = await readStream(`/servers/${serverA}/live`, owner, 3500);
	assert.equal(a.status, 200);
	assert.match(a.headers['content-type'], /^text\/event-stream/);
	const evs = h.sseEvents(a.text);
	// The latest cached sample at once, then about one a second.
	assert.ok(evs.length >= 3 && evs.length <= 6, `${evs.length} events:\n${a.text.slice(0, 300)}`);
	const ids = evs.map((e) => Number(e.id));
	for (let i = 1; i < ids.length; i++) assert.ok(ids[i] > ids[i - 1], 'event ids grow');
	for (const e of evs) {
		assert.equal(e.event, 'sample');
		const d = JSON.parse(e.data);
		assert.equal(d.serverId, serverA);
		assert.equal(new Date(d.takenAt).getTime(), Number(e.id));
		assert.ok(d.memory.totalBytes > 0 && d.cpu.logicalCores >= 1);
	}
	// Resuming: every cached sample after the id given, none twice.
	const from = ids[0];
	const b = await readStream(`/servers/${serverA}/live`, owner, 300, { 'Last-Event-ID': String(from) });
	const again = h.sseEvents(b.text).map((e) => Number(e.id));
	assert.ok(again.length >= ids.length - 1, `${again} after ${from}`);
	assert.ok(again.every((id) => id > from));
	assert.deepEqual(again.slice(0, ids.length - 1), ids.slice(1));
	// Another organization sees its own server's frames, never A's.
	const o = await readStream(`/servers/${serverB}/live`, other, 1500);
	assert.ok(h.sseEvents(o.text).length >= 1);
	for (const e of h.sseEvents(o.text)) assert.equal(JSON.parse(e.data).serverId, serverB);
	h.assertError(await call(srv, 'GET', `/servers/${serverB}/live`, owner), 404, 'NOT_FOUND');
	h.assertError(await h.request(srv.port, 'GET', `/servers/${serverA}/live`), 401, 'UNAUTHENTICATED');
});

test('GET /servers/:id/live: a remote server without a connected agent is not streamed (409)', async () => {
	const remote = await sql(`INSERT INTO servers (organization_id, name) VALUES ('${owner.org.id}', 'far') RETURNING id`);
	h.assertError(await call(srv, 'GET', `/servers/${remote}/live`, owner), 409, 'SERVER_NOT_CONNECTED');
	// Its history is there all the same (empty: no agent was ever there to sample it).
	assert.deepEqual((await ok(call(srv, 'GET', `/servers/${remote}/metrics`, owner))).points, []);
});

// The first minute every sample of which was folded into A's host series
// (which exists from the first tick after the organization was made).
const firstFull = created + 2 * INTERVAL_MS + MINUTE - ((created + 2 * INTERVAL_MS) % MINUTE);
let bucket = null;

test('minute rows agree with the 15-second samples they came from', { timeout: 200000 }, async () => {
	for (let deadline = Date.now() + 3 * MINUTE + 60000; Date.now() < deadline;) {
		const v = await sql(`SELECT (extract(epoch FROM m.bucket) * 1000)::bigint FROM metric_minutes m
			JOIN metric_series s ON s.id = m.series_id WHERE s.server_id = '${serverA}' AND s.application_id IS NULL
			AND m.bucket >= to_timestamp(${firstFull} / 1000.0) ORDER BY m.bucket LIMIT 1`);
		if (v) { bucket = Number(v); break; }
		await h.sleep(250);
	}
	assert.ok(bucket, `no minute row was written; output:\n${srv.logs.text()}`);
	const all = samples();
	const e = expectedMinute(all, bucket);
	assert.ok(e.samples >= Math.ceil(0.7 * PER_MINUTE) && e.samples <= PER_MINUTE + 1, `about a sample an interval: ${e.samples}`);
	for (const server of [serverA, serverB]) {
		const line = await sql(`SELECT ${ROW} FROM metric_minutes m JOIN metric_series s ON s.id = m.series_id
			WHERE s.server_id = '${server}' AND s.application_id IS NULL AND m.bucket = to_timestamp(${bucket} / 1000.0)`);
		assertAgrees(parseRow(line), e, `server ${server}`);
	}
	// One row per series and minute, whatever was written.
	assert.equal(await sql(`SELECT count(*) FROM (SELECT series_id, bucket FROM metric_minutes GROUP BY 1, 2 HAVING count(*) > 1) x`), '0');
	// Written again (a restart, a second replica): nothing changes.
	const before = await sql(`SELECT ${ROW} FROM metric_minutes m WHERE m.bucket = to_timestamp(${bucket} / 1000.0) ORDER BY series_id`);
	await sql(`INSERT INTO metric_minutes (series_id, bucket, samples, cpu_pct_sum) SELECT series_id, bucket, 1, 0
		FROM metric_minutes WHERE bucket = to_timestamp(${bucket} / 1000.0) ON CONFLICT (series_id, bucket) DO NOTHING`);
	assert.equal(await sql(`SELECT ${ROW} FROM metric_minutes m WHERE m.bucket = to_timestamp(${bucket} / 1000.0) ORDER BY series_id`), before);
});

test('GET /servers/:id/metrics: minutes and hours from the same rows', async () => {
	assert.ok(bucket);
	const iso = (ms) => new Date(ms).toISOString();
	const m = await ok(call(srv, 'GET', `/servers/${serverA}/metrics?resolution=MINUTE&since=${iso(bucket)}&until=${iso(bucket + MINUTE)}`, owner));
	assert.equal(m.serverId, serverA);
	assert.equal(m.resolution, 'MINUTE');
	assert.equal(m.since, iso(bucket));
	assert.equal(m.points.length, 1);
	const p = m.points[0];
	const e = expectedMinute(samples(), bucket);
	assert.equal(p.bucket, iso(bucket));
	assert.equal(p.samples, e.samples);
	close(p.cpuPercent.avg, Math.round((e.cpuSum / e.samples) * 100) / 100, 'cpu avg');
	assert.equal(p.memoryUsedBytes.max, e.memMax);
	assert.equal(p.memoryTotalBytes, e.memTotal);
	assert.equal(p.networkRxBytes, e.rx);

	// The default range is the last hour, by minutes.
	const recent = await ok(call(srv, 'GET', `/servers/${serverA}/metrics`, owner));
	assert.equal(recent.resolution, 'MINUTE');
	assert.ok(recent.points.some((q) => q.bucket === iso(bucket)));

	// The hour, folded from minutes when read, then rolled up (twice).
	const hour = bucket - (bucket % 3600000);
	const q = `/servers/${serverA}/metrics?resolution=HOUR&since=${iso(hour)}&until=${iso(hour + 3600000)}`;
	const folded = await ok(call(srv, 'GET', q, owner));
	assert.equal(folded.points.length, 1);
	const sums = await sql(`SELECT sum(m.samples), max(m.cpu_pct_max), sum(m.net_rx_bytes), max(m.mem_max)
		FROM metric_minutes m JOIN metric_series s ON s.id = m.series_id
		WHERE s.server_id = '${serverA}' AND s.application_id IS NULL
		AND m.bucket >= to_timestamp(${hour} / 1000.0) AND m.bucket < to_timestamp(${hour + 3600000} / 1000.0)`);
	const [nSamples, cpuMax, rx, memMax] = sums.split('|').map(Number);
	assert.equal(folded.points[0].samples, nSamples);
	assert.equal(folded.points[0].networkRxBytes, rx);
	assert.equal(folded.points[0].memoryUsedBytes.max, memMax);
	close(folded.points[0].cpuPercent.max, Math.round(cpuMax * 100) / 100, 'cpu max');
	await sql(`SELECT steward_metrics_rollup_hour(to_timestamp(${bucket} / 1000.0))`);
	const once = await sql(`SELECT ${ROW} FROM metric_hours m ORDER BY series_id, bucket`);
	await sql(`SELECT steward_metrics_rollup_hour(to_timestamp(${bucket} / 1000.0))`);
	assert.equal(await sql(`SELECT ${ROW} FROM metric_hours m ORDER BY series_id, bucket`), once, 'a roll-up done twice is the same');
	const hourRow = parseRow(await sql(`SELECT ${ROW} FROM metric_hours m JOIN metric_series s ON s.id = m.series_id
		WHERE s.server_id = '${serverA}' AND s.application_id IS NULL AND m.bucket = to_timestamp(${hour} / 1000.0)`));
	// Still the sums of its minutes at the time of the roll-up (a minute
	// written meanwhile only adds): never an average of averages.
	assert.ok(hourRow.samples >= nSamples);
	const rolled = await ok(call(srv, 'GET', q, owner));
	assert.equal(rolled.points.length, 1);
	assert.equal(rolled.points[0].samples, hourRow.samples);
	close(rolled.points[0].cpuPercent.avg, Math.round((hourRow.cpuSum / hourRow.samples) * 100) / 100, 'hour cpu avg');
});

test('GET /servers/:id/metrics and /applications/:id/metrics: validation and scope', async () => {
	const fields = async (p) => h.assertError(await p, 422, 'VALIDATION_FAILED').fields;
	const get = (q, who = owner) => call(srv, 'GET', q, who);
	assert.ok((await fields(get(`/servers/${serverA}/metrics?resolution=DAY`))).resolution);
	assert.ok((await fields(get(`/servers/${serverA}/metrics?resolution=minute`))).resolution);
	assert.ok((await fields(get(`/servers/${serverA}/metrics?since=yesterday`))).since);
	assert.ok((await fields(get(`/servers/${serverA}/metrics?until=2026-13-01T00:00:00Z`))).until);
	assert.ok((await fields(get(`/servers/${serverA}/metrics?since=2026-11-02T00:00:00Z&until=2026-11-01T00:00:00Z`))).until);
	assert.ok((await fields(get(`/servers/${serverA}/metrics?since=2026-11-01T00:00:00Z&until=2026-11-03T00:00:00Z`))).since, 'two days of minutes');
	await ok(get(`/servers/${serverA}/metrics?resolution=HOUR&since=2026-11-01T00:00:00Z&until=2026-11-03T00:00:00Z`));
	assert.ok((await fields(get(`/servers/${serverA}/metrics?resolution=HOUR&since=2026-01-01T00:00:00Z&until=2026-11-03T00:00:00Z`))).since);
	const f = await fields(get(`/servers/${serverA}/metrics?resolution=SECOND&since=x&until=y`));
	assert.ok(f.resolution && f.since && f.until, JSON.stringify(f));
	assert.ok((await fields(get(`/servers/${serverA}/metrics?bogus=1`))).bogus);
	// Another organization's server, an unknown one, a malformed id: 404.
	h.assertError(await get(`/servers/${serverB}/metrics`), 404, 'NOT_FOUND');
	h.assertError(await get(`/servers/${h.NIL}/metrics`), 404, 'NOT_FOUND');
	h.assertError(await get(`/servers/nope/metrics`), 404, 'NOT_FOUND');
	h.assertError(await get(`/applications/${h.NIL}/metrics`), 404, 'NOT_FOUND');
	h.assertError(await h.request(srv.port, 'GET', `/servers/${serverA}/metrics`), 401, 'UNAUTHENTICATED');
	// B reads its own host's history.
	const b = await ok(get(`/servers/${serverB}/metrics`, other));
	assert.equal(b.serverId, serverB);
	assert.ok(b.points.length >= 1);
	// An application without containers has an empty history.
	const project = await sql(`INSERT INTO projects (organization_id, name) VALUES ('${owner.org.id}', 'p') RETURNING id`);
	const env = await sql(`INSERT INTO environments (organization_id, project_id, name) VALUES ('${owner.org.id}', '${project}', 'production') RETURNING id`);
	const app = await sql(`INSERT INTO applications (organization_id, project_id, environment_id, server_id, name)
		VALUES ('${owner.org.id}', '${project}', '${env}', '${serverA}', 'web') RETURNING id`);
	const a = await ok(get(`/applications/${app}/metrics?resolution=HOUR`));
	assert.deepEqual([a.applicationId, a.resolution, a.points], [app, 'HOUR', []]);
	h.assertError(await get(`/applications/${app}/metrics`, other), 404, 'NOT_FOUND');
});

test('retention drops whole partitions past their days, and nothing else', async () => {
	const series = await sql(`SELECT id FROM metric_series WHERE server_id = '${serverA}' AND application_id IS NULL`);
	// Days back from today (UTC): partitions made for the last 12 days,
	// a row in each table at noon of days 10, 8, 6 and 1 back.
	await sql(`SELECT steward_metrics_partitions((now() AT TIME ZONE 'UTC')::date - 12, (now() AT TIME ZONE 'UTC')::date)`);
	for (const back of [10, 8, 6, 1]) {
		for (const t of ['metric_minutes', 'metric_hours']) {
			await sql(`INSERT INTO ${t} (series_id, bucket, samples, cpu_pct_sum) VALUES (${series},
				((now() AT TIME ZONE 'UTC')::date - ${back} + time '12:00') AT TIME ZONE 'UTC', 4, 1)`);
		}
	}
	const todayMinutes = await sql(`SELECT count(*) FROM metric_minutes WHERE bucket >= date_trunc('day', now(), 'UTC')`);
	const others = await sql(`SELECT count(*) FROM pg_class WHERE relkind IN ('r', 'p') AND relname NOT LIKE 'metric\\_%'`);
	// Minutes kept 7 days, hours 9: a partition goes when its end is
	// at least that old.
	const dropped = (await sql(`SELECT steward_metrics_retention(7, 9)`)).split('\n').filter(Boolean).sort();
	const day = (back) => new Date(Date.now() - back * 86400000).toISOString().slice(0, 10).replaceAll('-', '');
	const want = [];
	for (let back = 12; back >= 8; back--) want.push(`metric_minutes_p${day(back)}`);
	for (let back = 12; back >= 10; back--) want.push(`metric_hours_p${day(back)}`);
	assert.deepEqual(dropped, want.sort());
	const left = async (t) => (await sql(`SELECT string_agg(((now() AT TIME ZONE 'UTC')::date - (bucket AT TIME ZONE 'UTC')::date)::text, ',' ORDER BY bucket)
		FROM ${t} WHERE cpu_pct_sum = 1 AND samples = 4`));
	assert.equal(await left('metric_minutes'), '6,1');
	assert.equal(await left('metric_hours'), '8,6,1');
	assert.ok(Number(await sql(`SELECT count(*) FROM metric_minutes WHERE bucket >= date_trunc('day', now(), 'UTC')`)) >= Number(todayMinutes));
	assert.equal(await sql(`SELECT count(*) FROM pg_class WHERE relkind IN ('r', 'p') AND relname NOT LIKE 'metric\\_%'`), others);
	// Applied again: nothing more to drop.
	assert.equal(await sql(`SELECT count(*) FROM steward_metrics_retention(7, 9)`), '0');
	// The daemon applies it at start-up and every hour, and made the
	// partitions ahead: tomorrow's and the day after's exist.
	assert.equal(await sql(`SELECT count(*) FROM pg_class WHERE relname IN ('metric_minutes_p${day(-1)}', 'metric_minutes_p${day(-2)}', 'metric_hours_p${day(-2)}')`), '3');
});
