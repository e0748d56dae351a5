// The global rate limit per client address (STEWARD_RATE_LIMIT_PER_MINUTE):
// every route, public ones included, answers 429 RATE_LIMITED with
// Retry-After once an address has used its burst; the webhook route's own
// limit (60 a minute) stays the tighter one; a value below the floor stops
// start-up.

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import * as h from './harness.mjs';

h.stewarddPath();
const pg = await h.startPostgres();
after(h.cleanupAll);

// Requests on one keep-alive connection until the first 429 (at most max).
async function untilRefused(srv, method, path, max, body) {
	const c = await h.Conn.open(srv.port);
	try {
		for (let i = 1; i <= max; i++) {
			await c.write(h.buildRequest(srv.port, method, path, { body }));
			const res = (await c.responses(i, 10000)).filter((r) => r.status >= 200)[i - 1];
			if (res.status === 429) return { n: i, res };
		}
		return { n: max + 1, res: null };
	} finally {
		c.destroy();
	}
}

test('every_route_is_429_with_retry_after_past_the_global_limit', async () => {
	const srv = await h.startStewardd({ db: pg, env: { STEWARD_RATE_LIMIT_PER_MINUTE: '120' } });
	const { n, res } = await untilRefused(srv, 'GET', '/health', 200);
	// A burst of 120 (less the harness's own health checks at start-up),
	// then two a second refill while the loop runs.
	assert.ok(n > 100 && n < 140, `refused at request ${n}`);
	h.assertError(res, 429, 'RATE_LIMITED');
	assert.match(String(res.headers['retry-after']), /^[1-9]\d*$/);
	// The whole address is limited: authenticated routes, unknown paths, OPTIONS.
	// The bucket refills two a second while these run (a slow sanitizer
	// build can let a token in between two requests), so each route is asked
	// until it is refused: within a few requests, where an unlimited route
	// would answer every one of them.
	for (const [method, path, body] of [['GET', '/auth/session'], ['GET', '/no-such-path'], ['OPTIONS', '/health'],
		['POST', '/auth/sign-in', { email: 'a@example.com', password: 'x' }]]) {
		const r = await untilRefused(srv, method, path, 10, body);
		assert.ok(r.n <= 10, `${method} ${path} was never refused`);
		h.assertError(r.res, 429, 'RATE_LIMITED');
	}
	await srv.stop();
});

test('the_webhook_route_keeps_its_tighter_limit', async () => {
	const srv = await h.startStewardd({ db: pg, env: { STEWARD_RATE_LIMIT_PER_MINUTE: '120' } });
	const { n, res } = await untilRefused(srv, 'POST', '/webhooks/github', 100, {});
	assert.ok(n > 60 && n < 70, `webhooks refused at request ${n}`);
	h.assertError(res, 429, 'RATE_LIMITED');
	// The global bucket still has room for other routes.
	assert.equal((await h.request(srv.port, 'GET', '/health')).status, 200);
	await srv.stop();
});

test('a_limit_below_the_floor_stops_start_up_naming_the_variable', async () => {
	const bad = await h.startStewardd({ db: pg, env: { STEWARD_RATE_LIMIT_PER_MINUTE: '60' }, waitHealth: false });
	assert.notEqual(await bad.exited.then((r) => r.code), 0);
	assert.match(bad.logs.text(), /STEWARD_RATE_LIMIT_PER_MINUTE must be a whole number from 120/);
});
