// First run (POST /setup) and sign-in (password, then the TOTP code or a
// recovery code when the account has two-factor authentication).
import { useState } from 'preact/hooks';
import { post } from './api.js';
import { passkeysAvailable, signInWithPasskey } from './passkey.js';
import { Link, navigate, useLocation } from './router.jsx';
import { ErrorBox, Field, Form, useAction, useForm, useTitle } from './ui.jsx';

export function Setup({ done }) {
	useTitle('Welcome');
	const form = useForm({ name: '', email: '', password: '', organizationName: '' }, async (v) => {
		await post('/setup', v);
		await done();
	});
	return (
		<main class="card narrow">
			<h1>Welcome to Steward</h1>
			<p>Create the first account. It owns the first organization and is the installation's operator.</p>
			<Form form={form} submit="Create account">
				<Field form={form} name="name" label="Your name" autocomplete="name" required />
				<Field form={form} name="email" label="E-mail" type="email" autocomplete="username" required />
				<Field form={form} name="password" label="Password (10 characters or more)" type="password" autocomplete="new-password" required />
				<Field form={form} name="organizationName" label="Organization" required />
			</Form>
		</main>
	);
}

export function SignIn({ done }) {
	useTitle('Sign in');
	const { query } = useLocation();
	const [challenge, setChallenge] = useState(null);
	const form = useForm({ email: '', password: '' }, async (v) => {
		const r = await post('/auth/sign-in', v);
		if (r && r.twoFactorRequired) setChallenge(r.challenge);
		else await done();
	});
	const second = useForm({ code: '' }, async (v) => {
		const c = v.code.trim();
		const body = /^[0-9]{3} ?[0-9]{3}$/.test(c) ? { challenge, code: c } : { challenge, recoveryCode: c };
		await post('/auth/two-factor/verify', body);
		await done();
	});
	const passkey = useAction();
	if (challenge) {
		return (
			<main class="card narrow">
				<h1>Two-factor authentication</h1>
				<Form form={second} submit="Verify">
					<Field form={second} name="code" label="Code from your authenticator app, or a recovery code" autocomplete="one-time-code" inputmode="text" required />
				</Form>
			</main>
		);
	}
	return (
		<main class="card narrow">
			<h1>Sign in to Steward</h1>
			{query.get('reset') && <p role="status">Your password was changed, and every session signed out: sign in with the new one.</p>}
			<Form form={form} submit="Sign in">
				<Field form={form} name="email" label="E-mail" type="email" autocomplete="username" required />
				<Field form={form} name="password" label="Password" type="password" autocomplete="current-password" required />
			</Form>
			{passkeysAvailable() && (
				<div class="alt">
					<button type="button" class="secondary" onClick={passkey.act(async () => {
						await signInWithPasskey();
						await done();
					})}>
						Sign in with a passkey
					</button>
					<ErrorBox error={passkey.error} />
				</div>
			)}
			<p>
				<Link href="/app/forgot-password">Forgot your password?</Link>
			</p>
		</main>
	);
}

// Public pages: asking for a reset link, and the page the mailed link opens.
export const PUBLIC_PATHS = ['/app/forgot-password', '/reset-password', '/app/accept-invitation'];

// The page an invitation's link opens: a name and a password make the
// account (the address is the invitation's), and sign it in.
export function AcceptInvitation({ token, done }) {
	useTitle('Join an organization');
	const form = useForm({ name: '', password: '' }, async (v) => {
		await post('/invitations/accept', { token, name: v.name, password: v.password });
		navigate('/app/applications', { replace: true });
		await done();
	});
	const bad = form.error?.fields?.token;
	return (
		<main class="card narrow">
			<h1>Join an organization</h1>
			{bad && (
				<p class="error" role="alert">
					This invitation does not work any more ({bad.join(' ')}). Ask for a new one.
				</p>
			)}
			<Form form={form} submit="Create account and join">
				<Field form={form} name="name" label="Your name" autocomplete="name" required />
				<Field form={form} name="password" label="Password (10 characters or more)" type="password" autocomplete="new-password" required />
			</Form>
		</main>
	);
}

export function ForgotPassword() {
	useTitle('Forgotten password');
	const [sent, setSent] = useState(false);
	const form = useForm({ email: '' }, async (v) => {
		await post('/auth/password-reset', v);
		setSent(true);
	});
	return (
		<main class="card narrow">
			<h1>Forgotten password</h1>
			{sent ? (
				<p role="status">If an account has this address, a link to set a new password is on its way. It works once, for one hour.</p>
			) : (
				<Form form={form} submit="Send the link">
					<Field form={form} name="email" label="E-mail" type="email" autocomplete="username" required />
				</Form>
			)}
			<p>
				<Link href="/app/sign-in">Back to sign-in</Link>
			</p>
		</main>
	);
}

export function ResetPassword({ token }) {
	useTitle('New password');
	const form = useForm({ newPassword: '' }, async (v) => {
		await post('/auth/password-reset/confirm', { token, newPassword: v.newPassword });
		navigate('/app/sign-in?reset=1');
	});
	const bad = form.error?.fields?.token;
	return (
		<main class="card narrow">
			<h1>Set a new password</h1>
			{bad && (
				<p class="error" role="alert">
					This link does not work any more ({bad.join(' ')}). <Link href="/app/forgot-password">Ask for a new one.</Link>
				</p>
			)}
			<Form form={form} submit="Set password">
				<Field form={form} name="newPassword" label="New password (10 characters or more)" type="password" autocomplete="new-password" required />
			</Form>
		</main>
	);
}
