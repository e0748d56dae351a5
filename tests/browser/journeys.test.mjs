// The dashboard's journeys beyond the first day (dashboard.test.mjs), in
// a real browser: Debian's chromium driven by playwright-core against the
// built stewardd and a scratch PostgreSQL. In order: passkeys (added in the
// account page with a DevTools virtual authenticator, signing in with no
// password, removed); the organization (an invitation's link shown once and
// accepted in another browser, roles changed by the OWNER; a MEMBER sees
// no OWNER controls and the API refuses them anyway), API tokens (shown
// once, copied), the plan and an operator's grant, the audit log and its
// filters; projects and their environments; an application created from git (the deploy key's public half,
// the webhook URL and its secret shown once), domains with their
// verification instructions, volumes, containers, a rollback; managed
// services (the connection revealed on demand and audited), notification
// channels (the signing secret shown once, a test send), alert rules,
// servers (the agent token and command shown once, status badges). Then a
// walk of every page searching the DOM and every answer the page received
// for the secrets made on the way, axe-core on every page, and the main
// flows with the keyboard alone.
//
// stewardd runs on http://localhost:<port> (PUBLIC_BASE_URL,
// AUTH_PASSKEY_RP_ID=localhost): a secure context, where WebAuthn and the
// clipboard work without TLS. STEWARD_RUNNERS=false: jobs stay queued, no
// docker is needed; deployments are rows written straight into PostgreSQL.
//
// Exits 77 (skipped) without chromium, without node_modules (npm ci
// --prefix tests/browser), or without a built dashboard.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import * as h from '../integration/harness.mjs';
import { deploymentRows } from '../integration/deployment_rows.mjs';
import { accessible as axeCheck, launch, needDashboard, playwright, screenshot, stewarddOn, virtualAuthenticator, walkForSecrets } from './browser.mjs';

const PASSWORD = 'correct horse battery';
const EMAIL = 'olive@example.com';
const MEMBER_EMAIL = 'mia@example.com';

const chromium = await playwright();
needDashboard();

let srv, port, origin, browser, context, page, cdp, authenticatorId, rows;
const problems = [];
// Secrets the API answered once on the way (made here, or read by the test
// through the API): none may appear in a page or an answer of the walk.
const secrets = {};

before(async () => {
	const pg = await h.startPostgres();
	port = await h.freePort();
	origin = `http://localhost:${port}`;
	srv = await stewarddOn(port, {
		db: pg,
		env: {
			STEWARD_RUNNERS: 'false',
			PUBLIC_BASE_URL: origin,
			AUTH_PASSKEY_RP_ID: 'localhost',
			AUTH_PASSKEY_ORIGINS: origin,
			// Nothing answers there: a domain check fails at once.
			DOMAIN_VERIFY_NAMESERVER: '127.0.0.1:9',
		},
	});
	rows = deploymentRows(pg, srv);
	browser = await launch(chromium, ['--host-resolver-rules=MAP localhost 127.0.0.1']);
	context = await browser.newContext({ permissions: ['clipboard-read', 'clipboard-write'] });
	page = await context.newPage();
	page.setDefaultTimeout(15000);
	page.on('console', (m) => {
		if (/Content Security Policy|Refused to/i.test(m.text())) problems.push(m.text());
	});
	page.on('pageerror', (e) => problems.push(String(e)));
	({ cdp, authenticatorId } = await virtualAuthenticator(context, page));
});

after(async () => {
	await browser?.close();
	await h.cleanupAll();
});

const accessible = (what, p = page) => axeCheck(p, what);

const shot = (name, p = page) => screenshot(p, `journeys-${name}`);

const field = (label, p = page) => p.getByLabel(label, { exact: true });
const button = (name, p = page) => p.getByRole('button', { name, exact: true });

// fetch() in the page (its cookie, its Origin): {status, body}.
function api(p, method, url, body) {
	return p.evaluate(async ([method, url, body]) => {
		const r = await fetch(url, { method, headers: body === undefined ? {} : { 'Content-Type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
		const text = await r.text();
		return { status: r.status, body: text ? JSON.parse(text) : null };
	}, [method, url, body]);
}

// The text of the value shown once under `label`, and its copy button
// puts exactly that on the clipboard.
async function shownOnce(label, p = page) {
	const box = p.getByRole('group', { name: label });
	const value = await box.locator('code.secret').textContent();
	await box.getByRole('button', { name: `Copy ${label}` }).click();
	await box.getByRole('status').filter({ hasText: 'Copied' }).waitFor();
	assert.equal(await p.evaluate(() => navigator.clipboard.readText()), value);
	return value;
}

async function signOut(p = page) {
	await p.getByRole('button', { name: 'Sign out' }).click();
	await p.waitForURL(`${origin}/app/sign-in`);
}

async function signInWithPassword(p = page, email = EMAIL) {
	await field('E-mail', p).fill(email);
	await field('Password', p).fill(PASSWORD);
	await button('Sign in', p).click();
	await p.waitForURL(`${origin}/app/applications`);
}

// Presses Tab until `target` has the focus (the keyboard alone).
async function tabTo(target, max = 80) {
	for (let i = 0; i < max; i++) {
		await page.keyboard.press('Tab');
		if (await target.evaluate((el) => el === document.activeElement).catch(() => false)) return;
	}
	throw new Error(`Tab never reached ${target}`);
}

let session;

test('first_run_then_a_passkey_is_added_in_the_account_page', async () => {
	await page.goto(`${origin}/app/setup`);
	await field('Your name').fill('Olive Owner');
	await field('E-mail').fill(EMAIL);
	await field('Password (10 characters or more)').fill(PASSWORD);
	await field('Organization').fill('Acme');
	await button('Create account').click();
	await page.waitForURL(`${origin}/app/applications`);
	session = (await api(page, 'GET', '/auth/session')).body.data;
	assert.equal(session.user.isOperator, true);

	await page.getByRole('link', { name: 'Account' }).click();
	await page.getByText('No passkeys.').waitFor();
	// The wrong password: the API's field error next to the field, nothing stored.
	await field('Passkey name').fill('Laptop');
	await field('Password, to add a passkey').fill('not the password');
	await button('Add a passkey').click();
	await page.locator('.field-error').waitFor();
	assert.equal((await cdp.send('WebAuthn.getCredentials', { authenticatorId })).credentials.length, 0);
	await field('Password, to add a passkey').fill(PASSWORD);
	await button('Add a passkey').click();
	await page.getByRole('cell', { name: 'Laptop', exact: true }).waitFor();
	const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
	assert.equal(credentials.length, 1);
	assert.equal(credentials[0].rpId, 'localhost');
	assert.equal(await field('Password, to add a passkey').inputValue(), '', 'the form forgets the password');
	await accessible('the account page with a passkey');
	await shot('account-passkey');
});

test('sign_in_with_the_passkey_needs_no_password', async () => {
	await signOut();
	await accessible('the sign-in page with its passkey button');
	await button('Sign in with a passkey').click();
	await page.waitForURL(`${origin}/app/applications`);
	const s = (await api(page, 'GET', '/auth/sessions')).body.data.find((x) => x.current);
	assert.equal(s.method, 'PASSKEY');
	await page.goto(`${origin}/app/account`);
	await page.getByRole('cell', { name: 'Laptop', exact: true }).waitFor();
	assert.notEqual(await page.getByRole('row').filter({ hasText: 'Laptop' }).locator('td').nth(2).textContent(), '–', 'last used is recorded');
});

test('a_passkey_is_renamed_then_removed_and_no_longer_signs_in', async () => {
	await button('Rename passkey Laptop').click();
	await field('New name for Laptop').fill('Work laptop');
	await button('Save name').click();
	await page.getByRole('cell', { name: 'Work laptop', exact: true }).waitFor();
	await button('Remove passkey Work laptop').click();
	await page.getByText('No passkeys.').waitFor();
	await signOut();
	// The authenticator still holds it; the server no longer knows it.
	await button('Sign in with a passkey').click();
	await page.getByRole('alert').waitFor();
	assert.equal(page.url(), `${origin}/app/sign-in`);
	await signInWithPassword();
});

let memberContext, member;

test('an_invitation_link_is_shown_once_and_accepted_in_another_browser', async () => {
	await page.getByRole('link', { name: 'Organization' }).click();
	await page.getByRole('heading', { name: 'Acme' }).waitFor();
	await page.getByRole('cell', { name: EMAIL, exact: true }).waitFor();
	await field('E-mail to invite').fill('not an address');
	await button('Invite').click();
	await page.locator('.field-error').waitFor();
	await field('E-mail to invite').fill(MEMBER_EMAIL);
	await field('Role').selectOption('MEMBER');
	await button('Invite').click();
	const link = await shownOnce(`Invitation link for ${MEMBER_EMAIL}`);
	assert.match(link, new RegExp(`^${origin}/app/accept-invitation\\?token=[A-Za-z0-9_-]{43}$`));
	secrets.invitation = new URL(link).searchParams.get('token');
	await page.getByRole('cell', { name: MEMBER_EMAIL, exact: true }).waitFor();
	await accessible('the organization page of an OWNER');
	await shot('organization-owner');
	await page.reload();
	await page.getByRole('cell', { name: MEMBER_EMAIL, exact: true }).waitFor();
	assert.ok(!(await page.content()).includes(secrets.invitation), 'the link is not shown again');

	memberContext = await browser.newContext();
	member = await memberContext.newPage();
	member.setDefaultTimeout(15000);
	await member.goto(link);
	await member.getByRole('heading', { name: 'Join an organization' }).waitFor();
	await accessible('the invitation page', member);
	await field('Your name', member).fill('Mia Member');
	await field('Password (10 characters or more)', member).fill(PASSWORD);
	await button('Create account and join', member).click();
	await member.waitForURL(`${origin}/app/applications`);
	await member.getByText(`Acme · ${MEMBER_EMAIL}`).waitFor();
});

test('a_member_sees_no_owner_controls_and_the_api_refuses_them', async () => {
	await member.getByRole('link', { name: 'Organization' }).click();
	await member.getByRole('cell', { name: MEMBER_EMAIL, exact: true }).waitFor();
	await member.getByText('You are MEMBER. Only an OWNER changes members and invitations.').waitFor();
	assert.equal(await member.getByRole('button', { name: 'Invite' }).count(), 0);
	assert.equal(await member.getByRole('button', { name: 'Rename' }).count(), 0);
	assert.equal(await member.getByRole('combobox').count(), 0, 'no role menus');
	assert.equal(await member.getByRole('button', { name: /^Remove|^Cancel/ }).count(), 0);
	assert.equal(await member.getByRole('link', { name: 'Audit log' }).count(), 0, 'not an operator');
	await accessible('the organization page of a MEMBER', member);
	await shot('organization-member', member);
	const org = session.organization.id;
	const ownerId = session.user.id;
	const refused = [
		await api(member, 'POST', `/organizations/${org}/invitations`, { email: 'x@example.com', role: 'MEMBER' }),
		await api(member, 'PATCH', `/organizations/${org}/members/${ownerId}`, { role: 'MEMBER' }),
		await api(member, 'DELETE', `/organizations/${org}/members/${ownerId}`),
		await api(member, 'PATCH', `/organizations/${org}`, { name: 'Mine' }),
		await api(member, 'GET', '/audit-logs'),
		await api(member, 'PUT', '/subscription', { planId: 'team' }),
	];
	for (const r of refused) assert.equal(r.status, 403, JSON.stringify(r.body));
	// The plan page shows no grant form to a member.
	await member.getByRole('link', { name: 'Plan' }).click();
	await member.getByRole('heading', { name: 'Plans' }).waitFor();
	assert.equal(await member.getByRole('button', { name: 'Grant plan' }).count(), 0);
});

test('the_owner_changes_a_members_role', async () => {
	await page.reload();
	await page.getByLabel(`Role of ${MEMBER_EMAIL}`).selectOption('ADMIN');
	await page.waitForFunction(async () => true);
	for (let i = 0; i < 50; i++) {
		const m = (await api(page, 'GET', `/organizations/${session.organization.id}/members`)).body.data.find((x) => x.email === MEMBER_EMAIL);
		if (m.role === 'ADMIN') break;
		assert.ok(i < 49, 'the role changed');
		await h.sleep(100);
	}
	await page.reload();
	assert.equal(await page.getByLabel(`Role of ${MEMBER_EMAIL}`).inputValue(), 'ADMIN');
	// The last OWNER cannot demote itself: the API's message is shown.
	await page.getByLabel(`Role of ${EMAIL}`).selectOption('MEMBER');
	await page.getByRole('alert').filter({ hasText: 'OWNER' }).waitFor();
	await memberContext.close();
	// The OWNER renames the organization: the header follows.
	await field('Organization name').fill('Acme Corp');
	await button('Rename').click();
	await page.getByText(`Acme Corp · ${EMAIL}`).waitFor();
	await page.getByRole('heading', { name: 'Acme Corp' }).waitFor();
	await field('Organization name').fill('Acme');
	await button('Rename').click();
	await page.getByText(`Acme · ${EMAIL}`).waitFor();
});

test('an_api_token_is_shown_once_with_a_copy_button_then_revoked', async () => {
	await page.getByRole('link', { name: 'API tokens' }).click();
	await page.getByText('No tokens.').waitFor();
	await field('Token name').fill('ci');
	await field('Expires after (days, empty: never)').fill('400');
	await button('Create token').click();
	await page.locator('.field-error').waitFor();
	assert.equal(await field('Expires after (days, empty: never)').getAttribute('aria-invalid'), 'true');
	await field('Expires after (days, empty: never)').fill('');
	await button('Create token').click();
	const token = await shownOnce('Token ci');
	assert.match(token, /^st_/);
	secrets.token = token;
	await page.getByRole('cell', { name: 'ci', exact: true }).waitFor();
	await accessible('the API tokens');
	await shot('tokens');
	// It works, then the page forgets it.
	const r = await h.request(port, 'GET', '/auth/session', { headers: { Authorization: `Bearer ${token}` } });
	assert.equal(r.status, 200);
	await page.reload();
	await page.getByRole('cell', { name: 'ci', exact: true }).waitFor();
	assert.ok(!(await page.content()).includes(token));
	await button('Revoke ci').click();
	await page.locator('.badge-revoked').waitFor();
	assert.equal((await h.request(port, 'GET', '/auth/session', { headers: { Authorization: `Bearer ${token}` } })).status, 401);
});

test('the_plan_and_an_operators_grant', async () => {
	await page.getByRole('link', { name: 'Plan' }).click();
	await page.getByRole('definition').filter({ hasText: 'Unlimited' }).waitFor();
	await page.getByRole('cell', { name: /^Team/ }).waitFor();
	await accessible('the plan page');
	await field('Plan to grant').selectOption('team');
	await button('Grant plan').click();
	await page.getByRole('definition').filter({ hasText: /^Team/ }).waitFor();
	await field('Organization id (empty: this one)').fill('not-an-id');
	await button('Grant plan').click();
	await page.locator('.field-error, [role=alert]').first().waitFor();
	await shot('plan');
});

test('the_audit_log_for_operators_with_filters', async () => {
	await page.getByRole('link', { name: 'Audit log' }).click();
	await page.getByRole('heading', { name: 'Audit log' }).waitFor();
	await page.getByRole('cell', { name: 'subscription.granted' }).waitFor();
	await field('Action (or its start)').fill('auth.passkey');
	await button('Filter').click();
	await page.getByRole('cell', { name: 'auth.passkey.registered' }).waitFor();
	const actions = await page.locator('tbody td:nth-child(2)').allTextContents();
	assert.ok(actions.length > 0 && actions.every((a) => a.startsWith('auth.passkey')), actions.join(' '));
	await accessible('the audit log');
	await shot('audit');
	// A filter the API refuses: its field error next to the field.
	await field('Action (or its start)').fill('');
	await field('Actor (user id)').fill('nobody');
	await button('Filter').click();
	await page.locator('.field-error').waitFor();
	assert.equal(await field('Actor (user id)').getAttribute('aria-invalid'), 'true');
	await field('Actor (user id)').fill(session.user.id);
	await button('Filter').click();
	await page.locator('tbody tr').first().waitFor();
	assert.equal(await page.locator('.field-error').count(), 0);
	// A time window: until before since is refused; a window around now lists.
	await field('Since').fill('2030-01-02T00:00');
	await field('Until').fill('2030-01-01T00:00');
	await button('Filter').click();
	await page.locator('.field-error').waitFor();
	assert.equal(await field('Until').getAttribute('aria-invalid'), 'true');
	await field('Since').fill('2020-01-01T00:00');
	await field('Until').fill('2099-01-01T00:00');
	await button('Filter').click();
	await page.locator('tbody tr').first().waitFor();
	await field('Since').fill('2098-01-01T00:00');
	await button('Filter').click();
	await page.getByText('Nothing recorded matches.').waitFor();
});

let appId;

test('an_application_from_git_shows_the_deploy_key_and_the_webhook_once', async () => {
	await page.getByRole('link', { name: 'Applications' }).first().click();
	await field('New project').fill('shop');
	await button('Add project').click();
	await page.getByRole('navigation', { name: 'Projects' }).getByRole('link', { name: 'shop' }).waitFor();
	await page.getByRole('link', { name: 'New application' }).click();
	await field('Name (lower-case letters, digits, hyphens)').fill('web');
	await field('Repository URL (optional now)').fill('git@github.com:acme/web.git');
	await field('Branch').fill('release');
	await button('Create application').click();
	await page.getByRole('heading', { name: 'web is created' }).waitFor();
	const key = await shownOnce('Deploy key (public)');
	assert.match(key, /^ssh-ed25519 [A-Za-z0-9+/=]+/);
	const hook = await shownOnce('Webhook URL');
	assert.equal(hook, `${origin}/webhooks/github`);
	secrets.webhook = await shownOnce('Webhook secret');
	assert.match(secrets.webhook, /^[A-Za-z0-9_-]{43}$/);
	await accessible('the new git application');
	await shot('git-created');
	await page.getByRole('link', { name: 'Go to web' }).click();
	await page.waitForURL(/\/app\/applications\/[0-9a-f-]{36}$/);
	appId = page.url().split('/').pop();
	// The git tab: the public key and the webhook URL again, never the secret.
	await page.getByRole('link', { name: 'Git', exact: true }).click();
	await page.getByRole('definition').filter({ hasText: 'release' }).waitFor();
	assert.equal(await page.getByRole('group', { name: 'Deploy key (public)' }).locator('code.secret').textContent(), key);
	assert.equal(await page.getByRole('group', { name: 'Webhook secret' }).count(), 0);
	assert.ok(!(await page.content()).includes(secrets.webhook));
	await accessible('the git tab');
	// A rotation shows the new secret once.
	await button('New webhook secret').click();
	const rotated = await shownOnce('Webhook secret');
	assert.notEqual(rotated, secrets.webhook);
	secrets.webhook2 = rotated;
});

test('a_git_credential_is_write_only_and_a_git_source_uses_it', async () => {
	secrets.gitToken = 'glpat-only-the-git-host-sees-4321';
	await page.getByRole('link', { name: 'Git credentials' }).click();
	await page.getByText('No git credentials.').waitFor();
	await field('Credential name').fill('internal');
	await field('Git host').selectOption('GENERIC');
	await field('Token').fill('short');
	await button('Add credential').click();
	await page.locator('.field-error').waitFor();
	await field('Token').fill(secrets.gitToken);
	await button('Add credential').click();
	await page.getByRole('cell', { name: '…4321' }).waitFor();
	assert.equal(await field('Token').inputValue(), '', 'the form forgets the token');
	assert.ok(!(await page.content()).includes(secrets.gitToken));
	await accessible('the git credentials');
	await shot('git-credentials');
	// A host without an API cannot list repositories: the API's message.
	await button('Repositories of internal').click();
	await page.getByRole('alert').waitFor();
	// The application's git source fetches over https with it.
	await page.goto(`${origin}/app/applications/${appId}/git`);
	// The form starts from the connected repository.
	assert.equal(await field('Repository URL').inputValue(), 'git@github.com:acme/web.git');
	await field('Repository URL').fill('https://git.example.com/acme/web.git');
	await field('Git credential (https only)').selectOption({ label: 'internal' });
	await button('Save').click();
	await page.getByRole('definition').filter({ hasText: 'https://git.example.com/acme/web.git' }).waitFor();
	await page.getByRole('definition').filter({ hasText: /^internal$/ }).waitFor();
});

test('projects_hold_environments_added_and_deleted_from_their_page', async () => {
	await page.getByRole('link', { name: 'Manage projects' }).click();
	await page.getByRole('heading', { name: 'shop' }).waitFor();
	await field('New environment in shop').fill('staging');
	await button('Add environment').click();
	const nav = page.getByRole('navigation', { name: 'Projects' });
	await nav.getByRole('link', { name: 'staging' }).waitFor();
	await accessible('the projects');
	await shot('projects');
	// An environment that holds an application: the API's refusal, shown.
	await button('Delete environment production of shop').click();
	await page.getByRole('alert').waitFor();
	await button('Delete environment staging of shop').click();
	await nav.getByRole('link', { name: 'staging' }).waitFor({ state: 'detached' });
	await page.goto(`${origin}/app/applications/${appId}`);
	await page.getByRole('heading', { name: 'web', exact: true }).waitFor();
});

test('domains_show_their_verification_instructions_and_state', async () => {
	await page.getByRole('link', { name: 'Domains' }).click();
	await page.getByText('No domains.').waitFor();
	await field('Hostname').fill('not a host');
	await button('Add domain').click();
	await page.locator('.field-error').waitFor();
	await field('Hostname').fill('www.example.com');
	await button('Add domain').click();
	const card = page.locator('.domain').filter({ hasText: 'www.example.com' });
	await card.locator('.badge-pending').waitFor();
	const token = (await rows.sql(`SELECT verification_token FROM domains WHERE hostname = 'www.example.com'`)).trim();
	await card.getByText('_steward-challenge.www.example.com').waitFor();
	await card.getByText(token).first().waitFor();
	await card.getByText(`http://www.example.com/.well-known/steward-challenge/${token}`).waitFor();
	await accessible('the domains');
	// No proof anywhere: the API's reason, kept as the last check's error.
	await button('Check now: www.example.com').click();
	await page.getByRole('alert').waitFor();
	await card.getByText(/^Last check/).waitFor();
	// Verified (as a check would leave it): the state, no instructions.
	await rows.sql(`UPDATE domains SET verified_at = now(), verification_method = 'DNS' WHERE hostname = 'www.example.com'`);
	await page.reload();
	await card.locator('.badge-verified').waitFor();
	await card.getByText(/^Verified .* by DNS\.$/).waitFor();
	await shot('domains');
});

test('volumes_are_added_and_removed', async () => {
	await page.getByRole('link', { name: 'Volumes' }).click();
	await page.getByText('No volumes.').waitFor();
	await field('Volume name').fill('data');
	await field('Mount path').fill('relative');
	await button('Add volume').click();
	await page.locator('.field-error').waitFor();
	await field('Mount path').fill('/data');
	await button('Add volume').click();
	await page.getByRole('cell', { name: '/data' }).waitFor();
	await accessible('the volumes');
	await button('Remove volume data').click();
	await page.getByText('No volumes.').waitFor();
});

test('an_applications_settings_are_changed_with_the_apis_field_errors', async () => {
	await page.getByRole('link', { name: 'Settings' }).click();
	await field('Port the application listens on').fill('70000');
	await button('Save settings').click();
	await page.locator('.field-error').waitFor();
	assert.equal(await field('Port the application listens on').getAttribute('aria-invalid'), 'true');
	await field('Port the application listens on').fill('8080');
	await field('Health check path').fill('/healthz');
	await field('Deploy strategy').selectOption('BLUE_GREEN');
	await button('Save settings').click();
	await page.getByRole('status').filter({ hasText: 'Settings saved.' }).waitFor();
	await accessible('the settings');
	const a = (await api(page, 'GET', `/applications/${appId}`)).body.data;
	assert.deepEqual([a.port, a.healthCheckPath, a.deployStrategy], [8080, '/healthz', 'BLUE_GREEN']);
	await page.reload();
	assert.equal(await field('Health check path').inputValue(), '/healthz');
});

test('containers_are_read_from_the_engine_or_its_refusal_shown', async () => {
	await page.getByRole('link', { name: 'Containers' }).click();
	// Without a container engine the API's message; with one, the list.
	await page.locator('main table, main [role=alert], main p.muted').filter({ hasNotText: 'Loading' }).first().waitFor();
	await accessible('the containers');
	await shot('containers');
});

test('a_succeeded_deployment_is_rolled_back_from_its_page', async () => {
	const org = { id: session.organization.id };
	const first = await rows.insertDeployment({ org }, appId, { status: 'SUCCEEDED' });
	await rows.sql(`UPDATE deployments SET image_tag = 'steward/web:1' WHERE id = '${first}'`);
	const failed = await rows.insertDeployment({ org }, appId, { status: 'FAILED', error: 'the build failed' });
	// A failed deployment offers no rollback.
	await page.goto(`${origin}/app/deployments/${failed}`);
	await page.getByRole('heading', { name: 'Deployment #2' }).waitFor();
	await page.getByText('the build failed').waitFor();
	assert.equal(await page.getByRole('button', { name: /^Roll back/ }).count(), 0);
	await page.goto(`${origin}/app/deployments/${first}`);
	await page.getByRole('heading', { name: 'Deployment #1' }).waitFor();
	await accessible('a deployment that can be rolled back');
	await button('Roll back to #1').click();
	await page.getByRole('heading', { name: 'Deployment #3' }).waitFor();
	await page.getByRole('definition').filter({ hasText: 'ROLLBACK' }).waitFor();
	await page.getByRole('link', { name: 'the deployment it re-applies' }).waitFor();
	const made = (await rows.sql(`SELECT trigger, rollback_of FROM deployments WHERE application_id = '${appId}' AND number = 3`)).trim();
	assert.equal(made, `ROLLBACK|${first}`);
	await page.getByRole('link', { name: '← Application' }).click();
	await page.locator('table .badge').first().waitFor();
	assert.equal(await page.getByRole('link', { name: '#3' }).count(), 1);
});

let serviceId;

test('a_service_is_created_and_its_connection_revealed_on_demand', async () => {
	// A variable too, for the walk below.
	secrets.variable = 'variable-value-9f3c1e-only-the-server-knows';
	await page.goto(`${origin}/app/applications/${appId}/variables`);
	await field('Key').fill('API_SECRET');
	await field('Value').fill(secrets.variable);
	await button('Set variable').click();
	await page.getByRole('cell', { name: 'API_SECRET', exact: true }).waitFor();

	await page.getByRole('link', { name: 'Services' }).click();
	await page.getByText('No managed services yet.').waitFor();
	await field('Service name').fill('db');
	await field('Version (empty: the latest)').fill('99');
	await button('Create service').click();
	await page.locator('.field-error').waitFor();
	await field('Version (empty: the latest)').fill('');
	await button('Create service').click();
	await page.getByRole('link', { name: 'db', exact: true }).waitFor();
	await accessible('the services');
	await page.getByRole('link', { name: 'db', exact: true }).click();
	await page.waitForURL(/\/app\/services\/[0-9a-f-]{36}$/);
	serviceId = page.url().split('/').pop();
	await page.getByText('Revealing the credentials is recorded in the audit log').waitFor();
	await accessible('a service');
	const viewed = async () => Number((await rows.sql(`SELECT count(*) FROM audit_logs WHERE action = 'service.connection.viewed'`)).trim());
	assert.equal(await viewed(), 0, 'nothing is fetched before it is asked for');
	await button('Reveal credentials').click();
	const url = await shownOnce('Connection URL');
	assert.match(url, /^postgres(ql)?:\/\//);
	secrets.servicePassword = decodeURIComponent(new URL(url).password);
	assert.ok(secrets.servicePassword.length >= 16, url);
	assert.equal(await viewed(), 1, 'the reveal is audited');
	await shot('service-revealed');
	await button('Hide credentials').click();
	assert.ok(!(await page.content()).includes(secrets.servicePassword));
	await button('Back up now').click();
	await page.locator('table .badge-queued').waitFor();
	// A weekly schedule.
	await page.getByText('No scheduled backups.').waitFor();
	await field('Scheduled backups').selectOption('yes');
	await field('Every').selectOption('WEEKLY');
	await field('On').selectOption('FRIDAY');
	await field('At (hour, UTC)').fill('4');
	await field('Backups kept').fill('500');
	await button('Save schedule').click();
	await page.locator('.field-error').waitFor();
	await field('Backups kept').fill('5');
	await button('Save schedule').click();
	await page.getByText(/^Next scheduled backup:/).waitFor();
	const schedule = (await api(page, 'GET', `/services/${serviceId}/backups/schedule`)).body.data;
	assert.deepEqual([schedule.enabled, schedule.frequency, schedule.weekday, schedule.hourUtc, schedule.retentionCount], [true, 'WEEKLY', 'FRIDAY', 4, 5]);
	await accessible('a service with its schedule');
});

test('a_notification_channel_shows_its_signing_secret_once_and_sends_a_test', async () => {
	await page.getByRole('link', { name: 'Channels' }).click();
	await page.getByText('No channels.').waitFor();
	await field('Channel name').fill('ops-hook');
	await field('URL').fill('ftp://example.com/');
	await button('Add channel').click();
	await page.locator('.field-error').waitFor();
	await field('URL').fill('https://hooks.example.com/steward');
	await button('Add channel').click();
	secrets.channel = await shownOnce('Signing secret of ops-hook');
	assert.ok(secrets.channel.length >= 32);
	await page.getByRole('cell', { name: 'https://hooks.example.com/steward' }).waitFor();
	await accessible('the channels');
	await shot('channels');
	await button('Send a test to ops-hook').click();
	await page.getByRole('status').filter({ hasText: 'A test message to ops-hook is on its way.' }).waitFor();
	await page.reload();
	await page.getByRole('cell', { name: 'ops-hook', exact: true }).waitFor();
	assert.ok(!(await page.content()).includes(secrets.channel));
	// Disabled, then enabled again.
	await button('Disable channel ops-hook').click();
	await button('Enable channel ops-hook').click();
	await button('Disable channel ops-hook').waitFor();
	assert.equal((await api(page, 'GET', '/notification-channels')).body.data[0].enabled, true);
});

test('alert_rules_and_the_navigation_badge', async () => {
	await page.getByRole('link', { name: 'Alerts' }).click();
	await page.getByText('No alerts.').waitFor();
	await field('Rule name').fill('hot-cpu');
	await field('Notify').selectOption({ label: 'ops-hook' });
	await button('Add rule').click();
	await page.getByRole('cell', { name: 'hot-cpu', exact: true }).waitFor();
	await page.getByRole('cell', { name: 'CPU_PERCENT ABOVE 90 for 300 s' }).waitFor();
	await button('Disable rule hot-cpu').click();
	await button('Enable rule hot-cpu').waitFor();
	assert.equal((await api(page, 'GET', '/alerts/rules')).body.data[0].enabled, false);
	await button('Enable rule hot-cpu').click();
	await button('Disable rule hot-cpu').waitFor();
	await accessible('the alerts');
	// An open alert (as the evaluator raises them): listed, counted in the navigation, resolved.
	const ruleId = (await rows.sql(`SELECT id FROM alert_rules WHERE name = 'hot-cpu'`)).trim();
	await rows.sql(`INSERT INTO alerts (organization_id, rule_id, severity, status, title, message) VALUES ('${session.organization.id}', '${ruleId}', 'WARNING', 'OPEN', 'CPU above 90%', 'local: 97% for 5 min')`).catch((e) => {
		throw new Error(`inserting an alert: ${e.message}`);
	});
	await page.reload();
	await page.getByRole('cell', { name: /^CPU above 90%/ }).waitFor();
	await page.getByLabel('1 open alerts').waitFor();
	await button('Resolve CPU above 90%').click();
	await page.locator('tbody .badge-resolved').waitFor();
	await shot('alerts');
});

test('servers_show_status_badges_and_a_new_servers_agent_token_once', async () => {
	await page.getByRole('link', { name: 'Servers' }).click();
	await page.getByText('(this host)').waitFor();
	await field('Server name').fill('edge-1');
	await field('Host (optional)').fill('10.0.0.5');
	await button('Add server').click();
	secrets.agent = await shownOnce('Agent token of edge-1');
	assert.match(secrets.agent, /^sta_/);
	const command = await shownOnce('Command to start the agent');
	assert.ok(command.includes(`STEWARD_URL=${origin}`) && command.includes(secrets.agent), command);
	const row = page.getByRole('row').filter({ hasText: 'edge-1' });
	await row.locator('.badge-pending').waitFor();
	// The host's ingress as Caddy reports it, or why it cannot be read.
	const proxy = (await api(page, 'GET', '/proxy')).body.data;
	await page.locator(`[data-reachable="${proxy.reachable}"]`).waitFor();
	// The reason is read twice (the page's request and ours): curl's timing
	// in it ("after 3 ms") may differ between the two, so the rest is compared.
	if (!proxy.reachable) {
		const esc = (t) => t.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
		const [before, after] = proxy.error.split(/ after \d+ ms/);
		const shown = new RegExp(`^Caddy does not answer on this host: ${esc(before)}${after === undefined ? '' : ` after \\d+ ms${esc(after)}`}$`);
		await page.getByText(shown).waitFor();
	}
	await accessible('the servers');
	await shot('servers');
	await page.reload();
	await row.waitFor();
	assert.ok(!(await page.content()).includes(secrets.agent));
	// A new token, once; the old one is gone.
	await button('New agent token for edge-1').click();
	const again = await shownOnce('Agent token of edge-1');
	assert.match(again, /^sta_/);
	assert.notEqual(again, secrets.agent);
	secrets.agent2 = again;
	// Nothing deployed there: it can be removed.
	await button('Remove server edge-1').click();
	await row.waitFor({ state: 'detached' });
});

test('every_page_is_walked_and_no_secret_is_in_the_dom_or_the_network_log', async () => {
	// The service's password, read by the test through the API (audited).
	const cookie = (await context.cookies(origin)).find((c) => c.name === 'steward_session');
	const conn = await h.request(port, 'GET', `/services/${serviceId}/connection`, { headers: { Cookie: `${cookie.name}=${cookie.value}` } });
	assert.equal(conn.status, 200, conn.text);
	assert.equal(conn.json().data.password, secrets.servicePassword);
	const deployment = (await rows.sql(`SELECT id FROM deployments WHERE application_id = '${appId}' AND number = 1`)).trim();
	const local = (await api(page, 'GET', '/servers')).body.data.find((s) => s.isLocal);
	const pages = [
		['/app/applications', 'Applications'],
		[`/app/applications/${appId}`, 'web'],
		[`/app/applications/${appId}/variables`, 'web'],
		[`/app/applications/${appId}/git`, 'web'],
		[`/app/applications/${appId}/domains`, 'web'],
		[`/app/applications/${appId}/volumes`, 'web'],
		[`/app/applications/${appId}/containers`, 'web'],
		[`/app/applications/${appId}/settings`, 'web'],
		[`/app/applications/${appId}/metrics`, 'web'],
		[`/app/deployments/${deployment}`, 'Deployment #1'],
		['/app/services', 'Services'],
		[`/app/services/${serviceId}`, 'db'],
		['/app/servers', 'Servers'],
		[`/app/servers/${local.id}`, local.name],
		['/app/alerts', 'Alerts'],
		['/app/channels', 'Notification channels'],
		['/app/organization', 'Acme'],
		['/app/tokens', 'API tokens'],
		['/app/plan', 'Plan'],
		['/app/audit', 'Audit log'],
		['/app/account', 'Account'],
		['/app/projects', 'Projects'],
		['/app/git-credentials', 'Git credentials'],
	];
	const values = Object.values(secrets).filter(Boolean);
	assert.ok(values.length >= 8, Object.keys(secrets).join(' '));
	await walkForSecrets(page, { origin, pages, secrets });
});

test('the_main_flows_work_with_the_keyboard_alone', async () => {
	// Sign in with the password, keys only.
	await signOut();
	await field('E-mail').waitFor();
	await tabTo(field('E-mail'));
	await page.keyboard.type(EMAIL);
	await page.keyboard.press('Tab');
	await page.keyboard.type(PASSWORD);
	await page.keyboard.press('Enter');
	await page.waitForURL(`${origin}/app/applications`);
	// To the API tokens through the header, a token made and copied.
	await tabTo(page.getByRole('link', { name: 'API tokens' }));
	await page.keyboard.press('Enter');
	await page.getByRole('heading', { name: 'API tokens' }).waitFor();
	await tabTo(field('Token name'));
	await page.keyboard.type('keyboard');
	await page.keyboard.press('Enter');
	const box = page.getByRole('group', { name: 'Token keyboard' });
	await box.waitFor();
	await tabTo(box.getByRole('button', { name: 'Copy Token keyboard' }));
	await page.keyboard.press('Enter');
	// The clipboard is read once the page says the (asynchronous) write ended.
	await box.getByRole('status').filter({ hasText: 'Copied' }).waitFor();
	assert.equal(await page.evaluate(() => navigator.clipboard.readText()), await box.locator('code.secret').textContent());
	// A new application, through the form's fields in order.
	await tabTo(page.getByRole('link', { name: 'Applications' }).first());
	await page.keyboard.press('Enter');
	await tabTo(page.getByRole('link', { name: 'New application' }));
	await page.keyboard.press('Enter');
	await tabTo(field('Name (lower-case letters, digits, hyphens)'));
	await page.keyboard.type('keys');
	await page.keyboard.press('Enter');
	await page.getByRole('heading', { name: 'keys', exact: true }).waitFor();
	// Its variables tab, a variable set.
	await tabTo(page.getByRole('link', { name: 'Variables' }));
	await page.keyboard.press('Enter');
	await tabTo(field('Key'));
	await page.keyboard.type('PORT');
	await page.keyboard.press('Tab');
	await page.keyboard.type('8080');
	await page.keyboard.press('Enter');
	await page.getByRole('cell', { name: 'PORT', exact: true }).waitFor();
	// A service's credentials revealed and hidden.
	await page.goto(`${origin}/app/services/${serviceId}`);
	await tabTo(button('Reveal credentials'));
	await page.keyboard.press('Enter');
	await page.getByRole('group', { name: 'Connection URL' }).waitFor();
	await tabTo(button('Hide credentials'));
	await page.keyboard.press('Enter');
	await button('Reveal credentials').waitFor();
	// A passkey added in the account page, then signing in with it.
	await cdp.send('WebAuthn.clearCredentials', { authenticatorId });
	await tabTo(page.getByRole('link', { name: 'Account' }));
	await page.keyboard.press('Enter');
	await tabTo(field('Passkey name'));
	await page.keyboard.type('Keys');
	await page.keyboard.press('Tab');
	await page.keyboard.type(PASSWORD);
	await page.keyboard.press('Enter');
	await page.getByRole('cell', { name: 'Keys', exact: true }).waitFor();
	await tabTo(button('Sign out'));
	await page.keyboard.press('Enter');
	await page.waitForURL(`${origin}/app/sign-in`);
	await tabTo(button('Sign in with a passkey'));
	await page.keyboard.press('Enter');
	await page.waitForURL(`${origin}/app/applications`);
});

test('the_pages_met_no_csp_refusal_and_no_script_error', () => {
	assert.deepEqual(problems, []);
});
