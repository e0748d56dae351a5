// What the browser tests share: the skips (77) when chromium, playwright-core
// or the built dashboard are missing, launching Debian's chromium, a
// DevTools virtual authenticator for passkeys, and axe-core in a page.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import * as h from '../integration/harness.mjs';

export const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';

// playwright-core's chromium, or a skip saying what is missing. Not under
// ThreadSanitizer: the browser files drive the API the integration files
// already run there, and at 2 to 3 minutes of the TSan stage they kept CI
// past its 30 minutes; they run in the plain and ASan+UBSan builds.
export async function playwright() {
	if (/thread/.test(process.env.SW_SANITIZER ?? '')) {
		h.skip('browser files run in the plain and ASan+UBSan builds (CI time); the API they drive runs under TSan in the integration files');
	}
	h.need(CHROMIUM, 'chromium');
	try {
		return (await import('playwright-core')).chromium;
	} catch {
		h.skip('playwright-core is not installed (npm ci --prefix tests/browser)');
	}
}

// Skips unless the dashboard was built next to stewardd.
export function needDashboard() {
	const dir = path.join(path.dirname(h.stewarddPath()), 'ui');
	if (!fs.existsSync(path.join(dir, 'index.html'))) {
		h.skip(`${dir}/index.html not found: the dashboard was not built (npm ci --prefix ui, then cmake --build)`);
	}
}

// A headless chromium with a fresh temporary profile (playwright's
// --user-data-dir); `args` are added to the usual ones.
export function launch(chromium, args = []) {
	return chromium.launch({
		executablePath: CHROMIUM,
		headless: true,
		timeout: 30000,
		args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
			'--disable-component-update', '--disable-sync', ...args],
	});
}

// A virtual authenticator (CTAP2, internal transport, resident keys, user
// verification) in the page's browser: {cdp, authenticatorId}.
export async function virtualAuthenticator(context, page) {
	const cdp = await context.newCDPSession(page);
	await cdp.send('WebAuthn.enable', { enableUI: false });
	const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
		options: {
			protocol: 'ctap2',
			transport: 'internal',
			hasResidentKey: true,
			hasUserVerification: true,
			isUserVerified: true,
			automaticPresenceSimulation: true,
		},
	});
	return { cdp, authenticatorId };
}

let axe;

// Runs axe-core in the page: no serious or critical violation. The
// checker is evaluated over the DevTools protocol, which the page's
// Content-Security-Policy does not govern (the app's own code could not
// load it inline, and should not).
export async function accessible(page, what) {
	axe ??= fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
	await page.evaluate(axe);
	const result = await page.evaluate(async () => {
		const r = await window.axe.run(document, { resultTypes: ['violations'] });
		return r.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => n.target.join(' ')).slice(0, 3) }));
	});
	const bad = result.filter((v) => v.impact === 'serious' || v.impact === 'critical');
	assert.deepEqual(bad, [], `axe-core on ${what}: ${JSON.stringify(bad, null, 1)}`);
}

// stewardd on a port chosen before it starts (the origin is in its
// settings, or a restart keeps the page's origin), once GET /health answers
// 200 there (the harness's own wait would ask another port).
export async function stewarddOn(port, { db, env = {} }) {
	const srv = await h.startStewardd({ db, waitHealth: false, env: { ...env, STEWARD_LISTEN: `127.0.0.1:${port}` } });
	let exited = false;
	srv.exited.then(() => (exited = true));
	for (let i = 0; ; i++) {
		try {
			if ((await h.request(port, 'GET', '/health', { timeoutMs: 2000 })).status === 200) return srv;
		} catch {}
		if (exited || i > 300) throw new Error(`stewardd did not answer GET /health on port ${port}:\n${srv.logs.text()}`);
		await h.sleep(100);
	}
}

// A full-page screenshot kept as a test artifact:
// <build>/browser-artifacts/<name>.png (SW_BROWSER_ARTIFACTS elsewhere).
export async function screenshot(page, name) {
	const dir = process.env.SW_BROWSER_ARTIFACTS || path.join(process.env.SW_BUILD_DIR || path.dirname(h.stewarddPath()), 'browser-artifacts');
	fs.mkdirSync(dir, { recursive: true });
	await page.screenshot({ path: path.join(dir, `${name}.png`), fullPage: true });
}

// Opens every [path, heading] of `pages` in `page` and asserts that no
// value of `secrets` ({name: value}) is in its DOM (markup, text, input
// values) or in any answer the page received on the way (bodies and
// headers; the SSE streams aside, which never end), and that axe-core
// finds nothing serious there. visit(path), when given, acts on a page
// once it is loaded (e.g. opens a listing). Returns the number of
// answers searched.
export async function walkForSecrets(page, { origin, pages, secrets, visit = async () => {} }) {
	const answers = [];
	const onResponse = async (r) => {
		if (new URL(r.url()).pathname.endsWith('/live')) return;
		try {
			answers.push({ url: r.url(), headers: JSON.stringify(await r.allHeaders()), body: await r.text() });
		} catch {}
	};
	const values = Object.entries(secrets).filter(([, v]) => v);
	page.on('response', onResponse);
	try {
		for (const [where, heading] of pages) {
			await page.goto(`${origin}${where}`);
			await page.getByRole('heading', { name: heading, exact: true }).first().waitFor();
			await page.waitForLoadState('networkidle').catch(() => {});
			await page.locator('.muted').filter({ hasText: /^Loading/ }).first().waitFor({ state: 'detached' }).catch(() => {});
			await visit(where);
			const dom = await page.evaluate(() => document.documentElement.outerHTML + document.body.innerText + [...document.querySelectorAll('input')].map((i) => i.value).join(' '));
			for (const [name, v] of values) assert.ok(!dom.includes(v), `${name} is in the page ${where}`);
			await accessible(page, where);
		}
	} finally {
		page.off('response', onResponse);
	}
	assert.ok(answers.length > pages.length, `${answers.length} answers`);
	for (const a of answers) for (const [name, v] of values) assert.ok(!a.body.includes(v) && !a.headers.includes(v), `${name} is in the answer of ${a.url}`);
	process.stdout.write(`# walked ${pages.length} pages, searched ${answers.length} answers for ${values.length} secrets (${values.map(([n]) => n).join(', ')})\n`);
	return answers.length;
}

// How many pixels of a <canvas> (a locator) are painted (alpha not 0): a
// chart that drew its lines has more than its empty background.
export function paintedPixels(canvas) {
	return canvas.evaluate((c) => {
		const px = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
		let n = 0;
		for (let i = 3; i < px.length; i += 4) if (px[i] !== 0) n++;
		return n;
	});
}

// Drops a file named `name` holding `bytes` (a Buffer) on `target` (a
// locator), as a drag from the desktop does: a drop event whose
// DataTransfer carries it.
export async function dropFile(page, target, name, bytes) {
	const dataTransfer = await page.evaluateHandle(([name, b64]) => {
		const dt = new DataTransfer();
		dt.items.add(new File([Uint8Array.from(atob(b64), (c) => c.charCodeAt(0))], name, { type: 'application/x-tar' }));
		return dt;
	}, [name, bytes.toString('base64')]);
	await target.dispatchEvent('drop', { dataTransfer });
}
