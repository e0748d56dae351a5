#!/usr/bin/env node
// Time from POST /deployments to SUCCEEDED for a trivial image, with its
// phases (bench/METHODOLOGY.md, "Deployment time"). Runs against a real
// Docker engine, Caddy and PostgreSQL through the integration tests' world
// (tests/integration/deploy_world.mjs): nothing is pulled; the image is
// built FROM the local busybox base image.
//
//   STEWARDD=build-bench/stewardd node bench/deploy_time.mjs
//
// Settings: STEWARDD (required: the binary), BENCH_DEPLOY_RUNS (5),
// BENCH_RESULTS (bench/results/deploy_time.md). Exits 77 with the reason
// when docker, caddy, git, busybox-static or PostgreSQL are missing.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import * as h from '../tests/integration/harness.mjs';
import * as W from '../tests/integration/deploy_world.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const RUNS = Number(process.env.BENCH_DEPLOY_RUNS || 5);
const OUT = process.env.BENCH_RESULTS || path.join(here, 'results', 'deploy_time.md');
const POLL_MS = 20;

// "==> PHASE at <ts>" and "Image ... built at <ts>" lines of a log.
function marks(log) {
	const m = {};
	for (const [, phase, ts] of log.matchAll(/^==> ([A-Z_]+) at (\S+)$/gm)) m[phase] = Date.parse(ts);
	const built = /^Image \S+ built at (\S+) /m.exec(log);
	if (built) m.BUILT = Date.parse(built[1]);
	return m;
}

const median = (a) => {
	const s = [...a].sort((x, y) => x - y);
	return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

const COLUMNS = [
	['queue', 'created', 'started', 'POST answered (row created) to the build job claimed'],
	['clone', 'CLONING', 'BUILDING', 'git clone over file:// (libgit2), commit read'],
	['build', 'BUILDING', 'BUILT', 'plan, base-image check, build context tar streamed, engine build'],
	['handoff', 'BUILT', 'STARTING', 'build recorded, deploy job queued and claimed'],
	['start', 'STARTING', 'HEALTH_GATE', 'old container stopped (RECREATE), new created and started'],
	['health gate', 'HEALTH_GATE', 'SWITCHING', 'GET /health until 200'],
	['switch', 'SWITCHING', 'FINISHING', 'Caddy route set (one admin API request)'],
	['finish', 'FINISHING', 'finished', 'old container removed, image retention, row SUCCEEDED'],
	['total (row)', 'created', 'finished', 'createdAt to finishedAt'],
	['client', 'sent', 'seen', `POST sent to SUCCEEDED seen by a client polling every ${POLL_MS} ms`],
];

async function main() {
	const w = await W.world();
	const rows = [];
	try {
		const app = await W.makeApp(w, 'bench', { healthCheckTimeoutSeconds: 1 });
		const repo = await W.createRepo({ files: W.webFiles('v0\n') });
		await W.gitSource(w, app, repo.fileUrl);
		await W.verifiedDomain(w, app, 'bench.example.com'); // verified directly in PostgreSQL
		for (let i = 0; i <= RUNS; i++) {
			// A new commit each time: a real clone and a real (cached) build.
			fs.writeFileSync(path.join(repo.path, 'www', 'index.html'), `v${i + 1}\n`);
			await repo.git(['commit', '-q', '-am', `run ${i + 1}`]);
			const sent = Date.now();
			const d = await W.deploy(w, app);
			let end;
			for (;;) {
				end = await W.getDeployment(w, d.id);
				if (['SUCCEEDED', 'FAILED', 'CANCELLED'].includes(end.status)) break;
				await h.sleep(POLL_MS);
			}
			const seen = Date.now();
			if (end.status !== 'SUCCEEDED') throw new Error(`run ${i}: ${end.status}: ${end.errorMessage}`);
			const body = (await W.viaCaddy(w, 'bench.example.com')).text;
			if (body !== `v${i + 1}\n`) throw new Error(`run ${i}: Caddy answered ${body}`);
			const m = marks(await W.logText(w, d.id));
			Object.assign(m, { created: Date.parse(end.createdAt), started: Date.parse(end.startedAt),
				finished: Date.parse(end.finishedAt), sent, seen });
			const row = {};
			for (const [name, from, to] of COLUMNS) row[name] = m[to] - m[from];
			row.warm = i > 0;
			rows.push(row);
			process.stderr.write(`run ${i}${i ? '' : ' (warm-up)'}: ${JSON.stringify(row)}\n`);
		}
	} finally {
		await w.cleanup();
		await h.cleanupAll();
	}
	const warm = rows.filter((r) => r.warm);
	const commit = (() => {
		try {
			return execFileSync('git', ['-C', path.join(here, '..'), 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
		} catch {
			return 'unknown';
		}
	})();
	const lines = [
		'# Deployment time: POST /deployments to SUCCEEDED',
		'',
		`${new Date().toISOString()}, commit ${commit} (plus the working tree), ${os.cpus().length} × ${os.cpus()[0]?.model}, ` +
			`${Math.round(os.totalmem() / 2 ** 30)} GiB, ${os.release()}. ${RUNS} measured runs after one warm-up; ms.`,
		'',
		`| phase | ${warm.map((_, i) => `run ${i + 1}`).join(' | ')} | median | what |`,
		`|---|${warm.map(() => '---:').join('|')}|---:|---|`,
		...COLUMNS.map(([name, , , what]) => `| ${name} | ${warm.map((r) => r[name]).join(' | ')} | ${median(warm.map((r) => r[name]))} | ${what} |`),
		'',
		`Warm-up run (the application's first deployment: nothing to replace): ${rows[0] ? COLUMNS.map(([n]) => `${n} ${rows[0][n]}`).join(', ') : 'n/a'}.`,
		'',
	];
	const text = lines.join('\n');
	fs.mkdirSync(path.dirname(OUT), { recursive: true });
	fs.writeFileSync(OUT, text);
	process.stdout.write(text);
}

main().catch((e) => {
	process.stderr.write(`${e.stack || e}\n`);
	process.exit(1);
});
