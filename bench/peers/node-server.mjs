// Reference peer for bench/run: a plain node:http server answering
// GET /health with the same body and the same headers as stewardd.
// Usage: node bench/peers/node-server.mjs PORT [HOST]
// Keep-alive stays open well past the benchmark's hold times; no logging.
import http from 'node:http';
import { randomUUID } from 'node:crypto';

const port = Number(process.argv[2]);
const host = process.argv[3] ?? '127.0.0.1';
if (!Number.isInteger(port) || port <= 0 || port > 65535) {
  process.stderr.write('usage: node node-server.mjs PORT [HOST]\n');
  process.exit(2);
}

const body = Buffer.from('{"data":{"status":"ok","database":"ok"}}');
const notFound = Buffer.from(
  '{"error":{"code":"NOT_FOUND","message":"No such resource."}}');

const server = http.createServer((req, res) => {
  const ok = req.url === '/health' && (req.method === 'GET' || req.method === 'HEAD');
  const payload = ok ? body : notFound;
  res.writeHead(ok ? 200 : 404, {
    'Content-Type': 'application/json',
    'Content-Length': payload.length,
    'Cache-Control': 'no-store',
    'X-Content-Type-Options': 'nosniff',
    'X-Request-Id': randomUUID(),
  });
  res.end(req.method === 'HEAD' ? undefined : payload);
});

server.keepAliveTimeout = 300_000; // longer than any hold in bench/run
server.headersTimeout = 310_000;   // must exceed keepAliveTimeout
server.requestTimeout = 0;
server.maxRequestsPerSocket = 0;   // unlimited requests per connection

server.listen(port, host, 1024, () => {
  process.stdout.write(`listening ${host}:${port}\n`);
});

const stop = () => process.exit(0); // nothing to flush
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
