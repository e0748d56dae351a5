// Peer for bench/run: GET /auth/sessions (the caller's live sessions) on
// Fastify + pg, written the way a user of that stack would write it, against
// the same PostgreSQL and the same tables as stewardd. No cache, no access
// log, one process.
//
// Authentication is a preHandler hook, as Fastify applications do it: it
// reads the steward_session cookie, hashes it (SHA-256, hex, as stewardd
// does) and runs one prepared query joining what stewardd's guard reads
// (session_resolve in src/db/statements_auth.c: sessions, users,
// memberships, organizations). The route then runs the list query
// (sessions_list there). So GET /auth/sessions is two round trips per
// request (PEER_SESSIONS_QUERIES=2, the default); with
// PEER_SESSIONS_QUERIES=1 it is one query that resolves the session and
// lists in one statement (the fewest round trips possible without a cache).
// GET /auth/session answers the account from the hook's row (bench/run
// compares it with stewardd's, it does not measure it).
// The sliding renewal (an UPDATE once an hour per session) is left out: it
// never triggers during a benchmark run.
//
// Usage: node server.mjs PORT [HOST]
// Database: the libpq variables PGHOST (a socket directory), PGPORT,
// PGDATABASE, PGUSER (PGPASSWORD if needed). Pool of 10 connections.
import { createHash, randomUUID } from 'node:crypto';
import Fastify from 'fastify';
import pg from 'pg';

const port = Number(process.argv[2]);
const host = process.argv[3] ?? '127.0.0.1';
if (!Number.isInteger(port) || port <= 0 || port > 65535) {
  process.stderr.write('usage: node server.mjs PORT [HOST]\n');
  process.exit(2);
}
const listQueries = process.env.PEER_SESSIONS_QUERIES ?? '2';
if (listQueries !== '1' && listQueries !== '2') {
  process.stderr.write('PEER_SESSIONS_QUERIES must be 1 or 2\n');
  process.exit(2);
}

const pool = new pg.Pool({ max: 10 });
pool.on('error', (err) => process.stderr.write(`pg pool: ${err.message}\n`));

const LIVE = " s.token_hash = decode($1, 'hex') AND s.revoked_at IS NULL AND s.expires_at > now()";

const sessionQuery = {
  name: 'bench_session',
  text:
    'SELECT u.id AS user_id, u.email, u.name AS user_name, u.is_operator,' +
    ' steward_rfc3339(u.created_at) AS user_created_at,' +
    ' o.id AS org_id, o.name AS org_name, steward_rfc3339(o.created_at) AS org_created_at,' +
    ' m.role, s.id AS session_id' +
    ' FROM sessions s' +
    ' JOIN users u ON u.id = s.user_id' +
    ' JOIN memberships m ON m.user_id = s.user_id AND m.organization_id = s.organization_id' +
    ' JOIN organizations o ON o.id = s.organization_id' +
    ' WHERE' + LIVE,
};

const SESSION_COLUMNS =
  ' x.id, x.method, x.ip, x.user_agent, steward_rfc3339(x.created_at) AS created_at,' +
  ' steward_rfc3339(x.last_seen_at) AS last_seen_at, steward_rfc3339(x.expires_at) AS expires_at';

// Two round trips: after the hook, the user's live sessions.
const listQuery = {
  name: 'bench_sessions_list',
  text:
    'SELECT' + SESSION_COLUMNS +
    ' FROM sessions x WHERE x.user_id = $1 AND x.revoked_at IS NULL AND x.expires_at > now()' +
    ' ORDER BY x.last_seen_at DESC, x.id LIMIT 200',
};

// One round trip: the caller's session (with its membership, as the guard
// checks) and the list in one statement. The caller's own session is live,
// so no row means no live session.
const joinedListQuery = {
  name: 'bench_sessions_joined',
  text:
    'WITH me AS (SELECT s.id, s.user_id FROM sessions s' +
    ' JOIN memberships m ON m.user_id = s.user_id AND m.organization_id = s.organization_id' +
    ' WHERE' + LIVE + ')' +
    ' SELECT' + SESSION_COLUMNS + ', x.id = me.id AS current' +
    ' FROM me JOIN sessions x ON x.user_id = me.user_id' +
    ' WHERE x.revoked_at IS NULL AND x.expires_at > now()' +
    ' ORDER BY x.last_seen_at DESC, x.id LIMIT 200',
};

const COOKIE = 'steward_session';

function sessionCookie(header) {
  if (typeof header !== 'string') return null;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() === COOKIE) {
      const v = part.slice(eq + 1).trim();
      return v.length > 0 && v.length <= 256 ? v : null;
    }
  }
  return null;
}

const str = { type: 'string' };
const strOrNull = { type: ['string', 'null'] };
const currentSession = {
  type: 'object',
  properties: {
    data: {
      type: 'object',
      properties: {
        user: {
          type: 'object',
          properties: { id: str, email: str, name: str, isOperator: { type: 'boolean' }, createdAt: str },
        },
        organization: {
          type: 'object',
          properties: { id: str, name: str, role: str, createdAt: str },
        },
        credential: { type: 'object', properties: { type: str, id: str } },
      },
    },
  },
};
const sessionList = {
  type: 'object',
  properties: {
    data: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          id: str, method: str, ip: strOrNull, userAgent: strOrNull,
          createdAt: str, lastSeenAt: str, expiresAt: str, current: { type: 'boolean' },
        },
      },
    },
  },
};

const app = Fastify({
  logger: false,
  genReqId: () => randomUUID(),
  keepAliveTimeout: 300_000, // longer than any hold in bench/run
  connectionTimeout: 0,
  requestTimeout: 0,
  maxRequestsPerSocket: 0,
});
app.server.headersTimeout = 310_000; // must exceed keepAliveTimeout
app.decorateRequest('account', null);

app.addHook('onSend', async (req, reply) => {
  reply.header('Cache-Control', 'no-store');
  reply.header('X-Content-Type-Options', 'nosniff');
  reply.header('X-Request-Id', req.id);
});

function fail(req, reply, status, code, message) {
  return reply.code(status).send({ error: { code, message, requestId: req.id } });
}

// The authentication hook of the routes that need a session.
async function authenticate(req, reply) {
  const secret = sessionCookie(req.headers.cookie);
  if (!secret) return fail(req, reply, 401, 'UNAUTHENTICATED', 'Sign in first.');
  const hash = createHash('sha256').update(secret).digest('hex');
  let rows;
  try {
    ({ rows } = await pool.query({ ...sessionQuery, values: [hash] }));
  } catch (err) {
    return fail(req, reply, 503, 'SERVICE_UNAVAILABLE', 'The database is unavailable.');
  }
  if (rows.length !== 1) return fail(req, reply, 401, 'UNAUTHENTICATED', 'The session has ended.');
  req.account = rows[0];
}

app.get('/auth/session', { preHandler: authenticate, schema: { response: { 200: currentSession } } },
  async (req) => {
    const r = req.account;
    return {
      data: {
        user: {
          id: r.user_id, email: r.email, name: r.user_name,
          isOperator: r.is_operator, createdAt: r.user_created_at,
        },
        organization: { id: r.org_id, name: r.org_name, role: r.role, createdAt: r.org_created_at },
        credential: { type: 'SESSION', id: r.session_id },
      },
    };
  });

const sessionItem = (r, current) => ({
  id: r.id, method: r.method, ip: r.ip, userAgent: r.user_agent,
  createdAt: r.created_at, lastSeenAt: r.last_seen_at, expiresAt: r.expires_at, current,
});
const listSchema = { schema: { response: { 200: sessionList } } };

if (listQueries === '2') {
  app.get('/auth/sessions', { preHandler: authenticate, ...listSchema }, async (req, reply) => {
    let rows;
    try {
      ({ rows } = await pool.query({ ...listQuery, values: [req.account.user_id] }));
    } catch (err) {
      return fail(req, reply, 503, 'SERVICE_UNAVAILABLE', 'The database is unavailable.');
    }
    const me = req.account.session_id;
    return { data: rows.map((r) => sessionItem(r, r.id === me)) };
  });
} else {
  app.get('/auth/sessions', listSchema, async (req, reply) => {
    const secret = sessionCookie(req.headers.cookie);
    if (!secret) return fail(req, reply, 401, 'UNAUTHENTICATED', 'Sign in first.');
    const hash = createHash('sha256').update(secret).digest('hex');
    let rows;
    try {
      ({ rows } = await pool.query({ ...joinedListQuery, values: [hash] }));
    } catch (err) {
      return fail(req, reply, 503, 'SERVICE_UNAVAILABLE', 'The database is unavailable.');
    }
    if (rows.length === 0) return fail(req, reply, 401, 'UNAUTHENTICATED', 'The session has ended.');
    return { data: rows.map((r) => sessionItem(r, r.current)) };
  });
}

// bench/run waits for a 200 here; it checks the database like stewardd's.
app.get('/health', async (req, reply) => {
  try {
    await pool.query('SELECT 1');
  } catch (err) {
    return fail(req, reply, 503, 'DATABASE_UNAVAILABLE', err.message);
  }
  return { data: { status: 'ok', database: 'ok' } };
});

app.setNotFoundHandler((req, reply) => fail(req, reply, 404, 'NOT_FOUND', 'No such resource.'));

const stop = async () => {
  await app.close();
  await pool.end();
  process.exit(0);
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);

await app.listen({ port, host, backlog: 1024 });
process.stdout.write(`listening ${host}:${port}\n`);
