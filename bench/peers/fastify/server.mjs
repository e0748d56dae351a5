// Peer for bench/run: GET /auth/session on Fastify + pg, written the way a
// user of that stack would write it, against the same PostgreSQL and the
// same tables as stewardd. Each request reads the steward_session cookie,
// hashes it (SHA-256, hex, as stewardd does) and runs one prepared query
// that joins what stewardd reads with two (session_resolve, then account;
// src/db/statements_auth.c). No cache, no access log, one process.
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

const pool = new pg.Pool({ max: 10 });
pool.on('error', (err) => process.stderr.write(`pg pool: ${err.message}\n`));

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
    " WHERE s.token_hash = decode($1, 'hex') AND s.revoked_at IS NULL AND s.expires_at > now()",
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

const app = Fastify({
  logger: false,
  genReqId: () => randomUUID(),
  keepAliveTimeout: 300_000, // longer than any hold in bench/run
  connectionTimeout: 0,
  requestTimeout: 0,
  maxRequestsPerSocket: 0,
});
app.server.headersTimeout = 310_000; // must exceed keepAliveTimeout

app.addHook('onSend', async (req, reply) => {
  reply.header('Cache-Control', 'no-store');
  reply.header('X-Content-Type-Options', 'nosniff');
  reply.header('X-Request-Id', req.id);
});

function fail(req, reply, status, code, message) {
  return reply.code(status).send({ error: { code, message, requestId: req.id } });
}

app.get('/auth/session', { schema: { response: { 200: currentSession } } }, async (req, reply) => {
  const secret = sessionCookie(req.headers.cookie);
  if (!secret) return fail(req, reply, 401, 'UNAUTHENTICATED', 'Sign in first.');
  const hash = createHash('sha256').update(secret).digest('hex');
  let rows;
  try {
    ({ rows } = await pool.query({ ...sessionQuery, values: [hash] }));
  } catch (err) {
    req.log.error(err);
    return fail(req, reply, 503, 'SERVICE_UNAVAILABLE', 'The database is unavailable.');
  }
  if (rows.length !== 1) return fail(req, reply, 401, 'UNAUTHENTICATED', 'The session has ended.');
  const r = rows[0];
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
