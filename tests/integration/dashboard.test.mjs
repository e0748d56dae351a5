// The dashboard's files as stewardd serves them, and the API beside them
// (no browser here: tests/browser/dashboard.test.mjs walks the pages).
// Against the built stewardd, with the dashboard CMake built next to it
// (<build>/ui), and with folders made here to try what the loader refuses.
//
// Exits 77 when the dashboard was not built (npm ci --prefix ui, then
// cmake --build).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import * as h from './harness.mjs';

// The limit for the whole app.
const MAX_GZIPPED = 150 * 1024;

const UI_DIR = path.join(path.dirname(h.stewarddPath()), 'ui');
if (!fs.existsSync(path.join(UI_DIR, 'index.html'))) {
	h.skip(`${UI_DIR}/index.html not found: the dashboard was not built (npm ci --prefix ui, then cmake --build)`);
}

let pg, srv;
before(async () => {
	pg = await h.startPostgres();
	srv = await h.startStewardd({ db: pg });
});
after(h.cleanupAll);

test('the_whole_app_is_under_150_KB_gzipped', () => {
	let raw = 0, gz = 0, files = 0;
	const walk = (dir) => {
		for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
			const p = path.join(dir, e.name);
			if (e.isDirectory()) walk(p);
			else {
				const b = fs.readFileSync(p);
				raw += b.length;
				gz += zlib.gzipSync(b, { level: 9 }).length;
				files++;
			}
		}
	};
	walk(UI_DIR);
	process.stdout.write(`# dashboard: ${files} files, ${raw} bytes, ${gz} bytes gzipped (${(gz / 1024).toFixed(1)} KB; limit 150 KB)\n`);
	assert.ok(gz < MAX_GZIPPED, `${gz} bytes gzipped`);
});

test('index_html_has_a_strict_csp_no_inline_script_and_is_not_cached', async () => {
	for (const p of ['/', '/app', '/app/applications/x/variables', '/reset-password?token=x']) {
		const r = await h.request(srv.port, 'GET', p, { headers: { Accept: 'text/html' } });
		assert.equal(r.status, 200, `${p}: ${r.text}`);
		assert.equal(r.headers['content-type'], 'text/html; charset=utf-8');
		assert.equal(r.headers['cache-control'], 'no-cache');
		assert.equal(r.headers['x-content-type-options'], 'nosniff');
		const csp = r.headers['content-security-policy'];
		assert.ok(csp, `${p}: a Content-Security-Policy`);
		const directives = Object.fromEntries(csp.split(';').map((d) => d.trim().split(/\s+/)).map(([k, ...v]) => [k, v.join(' ')]));
		assert.equal(directives['default-src'], "'none'");
		assert.equal(directives['script-src'], "'self'");
		assert.equal(directives['style-src'], "'self'");
		assert.equal(directives['connect-src'], "'self'");
		assert.equal(directives['frame-ancestors'], "'none'");
		assert.doesNotMatch(csp, /unsafe|data:|\*/);
		// No inline script or style, no handler attributes.
		const scripts = [...r.text.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/gi)];
		assert.ok(scripts.length >= 1);
		for (const [, attrs, body] of scripts) {
			assert.match(attrs, /\bsrc="\/assets\/[^"]+\.js"/);
			assert.equal(body.trim(), '');
		}
		assert.doesNotMatch(r.text, /<style|\sstyle=|\son[a-z]+=/i);
	}
});

test('assets_are_immutable_with_their_type_and_only_listed_names_are_served', async () => {
	const index = (await h.request(srv.port, 'GET', '/')).text;
	const refs = [...index.matchAll(/(?:src|href)="(\/assets\/[^"]+)"/g)].map((m) => m[1]);
	assert.ok(refs.some((r) => r.endsWith('.js')) && refs.some((r) => r.endsWith('.css')), refs.join(' '));
	const types = { js: 'text/javascript; charset=utf-8', css: 'text/css; charset=utf-8', svg: 'image/svg+xml' };
	for (const ref of refs) {
		assert.match(ref, /^\/assets\/[A-Za-z0-9_.-]+-[A-Za-z0-9_-]{8}\.[a-z0-9]+$/, 'a content hash in the name');
		const r = await h.request(srv.port, 'GET', ref);
		assert.equal(r.status, 200, ref);
		assert.equal(r.headers['cache-control'], 'public, max-age=31536000, immutable');
		assert.equal(r.headers['content-type'], types[ref.split('.').pop()]);
		assert.ok(r.headers['content-security-policy']);
		assert.ok(r.body.equals(fs.readFileSync(path.join(UI_DIR, ref))), `${ref} byte for byte`);
		const head = await h.request(srv.port, 'HEAD', ref);
		assert.equal(head.headers['content-length'], String(r.body.length));
	}
	// Nothing outside the list: traversal, encoded traversal, index.html
	// (not an asset), a folder, a near miss. Each is the API's JSON 404.
	const name = refs[0].slice('/assets/'.length);
	for (const p of ['/assets/..%2Findex.html', '/assets/%2e%2e', '/assets/index.html', '/assets/.', '/assets/' + name + 'x',
		'/assets/' + name.toUpperCase(), '/assets', `/assets/${name}/x`]) {
		const r = await h.request(srv.port, 'GET', p);
		assert.ok(r.status === 404 || r.status === 400, `${p}: ${r.status}`);
		if (r.status === 404) h.assertError(r, 404, 'NOT_FOUND');
	}
});

test('the_api_still_answers_json_even_to_a_browser_asking_for_html', async () => {
	const html = { Accept: 'text/html,application/xhtml+xml,*/*;q=0.8' };
	const notFound = await h.request(srv.port, 'GET', '/no-such-thing', { headers: html });
	h.assertError(notFound, 404, 'NOT_FOUND');
	h.assertCommonHeaders(notFound);
	// Unknown API paths, near the dashboard's own: the same 404.
	for (const p of ['/applicationz', '/applications/x/nope', '/apps', '/app/', '/asset/x.js', '/signup', '/reset-password/x']) {
		const r = await h.request(srv.port, 'GET', p, { headers: html });
		assert.equal(r.status, 404, p);
		assert.deepEqual({ ...r.json().error, requestId: null }, { ...notFound.json().error, requestId: null }, p);
	}
	// An API client that asks for JSON at the dashboard's own paths gets
	// what it got before the dashboard existed; one that takes anything
	// (curl, fetch: */*) or asks for HTML gets the page.
	for (const p of ['/', '/app/applications', '/reset-password']) {
		const r = await h.request(srv.port, 'GET', p, { headers: { Accept: 'application/json' } });
		h.assertError(r, 404, 'NOT_FOUND');
		h.assertCommonHeaders(r);
		assert.deepEqual({ ...r.json().error, requestId: null }, { ...notFound.json().error, requestId: null }, p);
		assert.equal(r.headers.vary, 'Accept');
		for (const accept of [undefined, '*/*', 'text/html', 'application/json, text/*;q=0.5']) {
			const page = await h.request(srv.port, 'GET', p, { headers: accept ? { Accept: accept } : {} });
			assert.equal(page.status, 200, `${p} with Accept: ${accept}`);
			assert.equal(page.headers['content-type'], 'text/html; charset=utf-8');
			assert.equal(page.headers.vary, 'Accept');
		}
	}
	// POST /signup while signup is off: still exactly an unknown route.
	h.assertError(await h.request(srv.port, 'POST', '/signup', { body: {} }), 404, 'NOT_FOUND');
	// API routes answer JSON, whatever the Accept header says.
	for (const [p, status] of [['/health', 200], ['/setup-status', 200], ['/applications', 401], ['/auth/session', 401]]) {
		const r = await h.request(srv.port, 'GET', p, { headers: html });
		assert.equal(r.status, status, p);
		assert.match(r.headers['content-type'], /^application\/json\b/, p);
		assert.equal(r.headers['cache-control'], 'no-store', p);
		assert.equal(r.headers['content-security-policy'], undefined, `${p}: the API's answers are unchanged`);
	}
	// The dashboard's pages take GET and HEAD only.
	h.assertError(await h.request(srv.port, 'POST', '/app/x', { body: {} }), 405, 'METHOD_NOT_ALLOWED');
	// The OpenAPI document names no dashboard path.
	const doc = (await h.request(srv.port, 'GET', '/docs')).json();
	assert.deepEqual(Object.keys(doc.paths).filter((p) => p === '/' || p.startsWith('/app') && !p.startsWith('/applications') || p.startsWith('/assets') || p === '/reset-password'), []);
});

test('without_a_dashboard_slash_answers_the_api_404', async () => {
	const off = await h.startStewardd({ db: pg, env: { STEWARD_UI_DIR: 'off' } });
	try {
		for (const p of ['/', '/app/applications', '/assets/x.js']) h.assertError(await h.request(off.port, 'GET', p), 404, 'NOT_FOUND');
	} finally {
		await off.stop();
	}
	const bad = await h.startStewardd({ db: pg, env: { STEWARD_UI_DIR: '/nonexistent/ui' }, waitHealth: false });
	assert.notEqual(await bad.exited.then((r) => r.code), 0, 'a folder that is not there stops start-up');
	assert.match(bad.logs.text(), /STEWARD_UI_DIR/);
});


test('the_loader_lists_only_plain_files_with_plain_names', async () => {
	// A dashboard folder holding what must never be served: a link out of
	// it, a hidden file, names outside the alphabet or without a known
	// extension, a folder with a served extension, a file beside assets/.
	const dir = h.makeTempDir('sw-ui-');
	const assets = path.join(dir, 'assets');
	fs.mkdirSync(assets);
	fs.writeFileSync(path.join(dir, 'index.html'), '<!doctype html><title>t</title><script type="module" src="/assets/app-AbCd1234.js"></script>');
	fs.writeFileSync(path.join(dir, 'secret.js'), 'beside assets/');
	fs.writeFileSync(path.join(assets, 'app-AbCd1234.js'), 'export const ok = 1;\n');
	fs.writeFileSync(path.join(assets, 'site-AbCd1234.css'), 'body{}\n');
	fs.writeFileSync(path.join(assets, '.hidden.js'), 'hidden');
	fs.writeFileSync(path.join(assets, 'bad name.js'), 'space');
	fs.writeFileSync(path.join(assets, 'tool.exe'), 'unknown type');
	fs.writeFileSync(path.join(assets, 'noext'), 'no extension');
	fs.mkdirSync(path.join(assets, 'folder.js'));
	fs.symlinkSync('/etc/passwd', path.join(assets, 'passwd.js'));
	fs.symlinkSync(path.join(dir, 'secret.js'), path.join(assets, 'inside.js'));
	const s = await h.startStewardd({ db: pg, env: { STEWARD_UI_DIR: dir } });
	try {
		const ok = await h.request(s.port, 'GET', '/assets/app-AbCd1234.js');
		assert.equal(ok.status, 200);
		assert.equal(ok.text, 'export const ok = 1;\n');
		assert.equal(ok.headers['content-type'], 'text/javascript; charset=utf-8');
		assert.equal((await h.request(s.port, 'GET', '/assets/site-AbCd1234.css')).headers['content-type'], 'text/css; charset=utf-8');
		for (const name of ['.hidden.js', 'bad%20name.js', 'tool.exe', 'noext', 'folder.js', 'passwd.js', 'inside.js', '..%2Fsecret.js', '..']) {
			const r = await h.request(s.port, 'GET', `/assets/${name}`);
			assert.ok(r.status === 404 || r.status === 400, `${name}: ${r.status} ${r.text.slice(0, 100)}`);
			assert.doesNotMatch(r.text, /root:|beside assets|hidden|unknown type|no extension/, name);
		}
		// An asset replaced by a link after start-up is refused too (O_NOFOLLOW).
		fs.rmSync(path.join(assets, 'site-AbCd1234.css'));
		fs.symlinkSync('/etc/passwd', path.join(assets, 'site-AbCd1234.css'));
		h.assertError(await h.request(s.port, 'GET', '/assets/site-AbCd1234.css'), 404, 'NOT_FOUND');
		assert.match((await h.request(s.port, 'GET', '/app/x')).text, /app-AbCd1234\.js/, 'its index.html');
	} finally {
		await s.stop();
	}
});
