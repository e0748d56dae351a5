// The caller's account: two-factor authentication (enrol with the password,
// confirm with a code, recovery codes shown once; disable with the
// password), passkeys (add with the password and a name; remove) and the
// live sessions (revoke any but the current one).
import { useState } from 'preact/hooks';
import { api, get, post } from './api.js';
import { passkeysAvailable, registerPasskey } from './passkey.js';
import { ErrorBox, Field, Form, Loading, RowAction, Table, useAction, useData, useForm, useTitle, when } from './ui.jsx';

function TwoFactor() {
	const status = useData(() => get('/auth/two-factor'), []);
	const [enrolment, setEnrolment] = useState(null);
	const [codes, setCodes] = useState(null);
	const start = useForm({ password: '' }, async (v, setValues) => {
		setEnrolment(await post('/auth/two-factor', v));
		setValues({ password: '' });
	});
	const confirm = useForm({ code: '' }, async (v) => {
		const r = await post('/auth/two-factor/confirm', { code: v.code.trim() });
		setEnrolment(null);
		setCodes(r.recoveryCodes);
	});
	const disable = useForm({ password: '' }, async (v, setValues) => {
		await api('DELETE', '/auth/two-factor', v);
		setValues({ password: '' });
		status.reload();
	});
	if (status.error) return <ErrorBox error={status.error} />;
	if (!status.data) return <Loading what="two-factor authentication" />;
	if (codes) {
		return (
			<div>
				<p>
					Two-factor authentication is on. These recovery codes are shown once: keep them where you keep your passwords. Each signs in
					once in place of a code.
				</p>
				<ul class="codes">
					{codes.map((c) => (
						<li key={c}>
							<code>{c}</code>
						</li>
					))}
				</ul>
				<button
					type="button"
					onClick={() => {
						setCodes(null);
						status.reload();
					}}
				>
					I have saved them
				</button>
			</div>
		);
	}
	if (enrolment) {
		return (
			<div>
				<p>Add this key to your authenticator app, then enter the code it shows.</p>
				<p>
					Key: <code class="secret">{enrolment.secret.replace(/(.{4})/g, '$1 ').trim()}</code>
				</p>
				<p class="muted">
					Or open this link on the device that has the app: <a href={enrolment.otpauthUri}>otpauth link</a>
				</p>
				<Form form={confirm} submit="Turn on" class="row">
					<Field form={confirm} name="code" label="Code from the app" autocomplete="one-time-code" inputmode="numeric" required />
				</Form>
			</div>
		);
	}
	const s = status.data;
	if (s.enabled) {
		return (
			<div>
				<p>
					On since {when(s.enabledAt)}; {s.recoveryCodesRemaining} recovery codes left.
				</p>
				<Form form={disable} submit="Turn off" secondary class="row">
					<Field form={disable} name="password" label="Password, to turn it off" type="password" autocomplete="current-password" required />
				</Form>
			</div>
		);
	}
	return (
		<div>
			<p>Off. With it on, signing in also asks for a code from an authenticator app.</p>
			<Form form={start} submit="Set up" class="row">
				<Field form={start} name="password" label="Password, to turn it on" type="password" autocomplete="current-password" required />
			</Form>
		</div>
	);
}

function RenamePasskey({ passkey, done }) {
	const form = useForm({ name: passkey.name }, async (v) => {
		await api('PATCH', `/auth/passkeys/${passkey.id}`, { name: v.name.trim() });
		done();
	});
	return (
		<Form form={form} submit="Save name" class="row">
			<Field form={form} name="name" label={`New name for ${passkey.name}`} autocomplete="off" required />
		</Form>
	);
}

function Passkeys() {
	const list = useData(() => get('/auth/passkeys'), []);
	const { error, act } = useAction();
	const [renaming, setRenaming] = useState(null);
	const add = useForm({ name: '', password: '' }, async (v, setValues) => {
		await registerPasskey(v.password, v.name.trim() || 'Passkey');
		setValues({ name: '', password: '' });
		list.reload();
	});
	const remove = (p) =>
		act(async () => {
			await api('DELETE', `/auth/passkeys/${p.id}`);
			list.reload();
		});
	return (
		<div>
			<p class="muted">A passkey signs you in with no password and no code: your device checks it is you.</p>
			<ErrorBox error={list.error || error} />
			{list.data && list.data.length === 0 && <p class="muted">No passkeys.</p>}
			{list.data && list.data.length > 0 && (
				<Table head={['Name', 'Added', 'Last used', <span class="sr-only">Actions</span>]}>
					{list.data.map((p) => (
						<tr key={p.id}>
							<td>{p.name}</td>
							<td>{when(p.createdAt)}</td>
							<td>{when(p.lastUsedAt)}</td>
							<td>
								{renaming === p.id ? (
									<RenamePasskey
										passkey={p}
										done={() => {
											setRenaming(null);
											list.reload();
										}}
									/>
								) : (
									<div class="actions">
										<RowAction onClick={() => setRenaming(p.id)} label={`Rename passkey ${p.name}`}>Rename</RowAction>
										<RowAction onClick={remove(p)} label={`Remove passkey ${p.name}`}>Remove</RowAction>
									</div>
								)}
							</td>
						</tr>
					))}
				</Table>
			)}
			{passkeysAvailable() ? (
				<Form form={add} submit="Add a passkey" class="row">
					<Field form={add} name="name" label="Passkey name" placeholder="e.g. laptop" autocomplete="off" />
					<Field form={add} name="password" label="Password, to add a passkey" type="password" autocomplete="current-password" required />
				</Form>
			) : (
				<p class="muted">This browser has no passkey support.</p>
			)}
		</div>
	);
}

function Sessions() {
	const list = useData(() => get('/auth/sessions'), []);
	const { error, act } = useAction();
	const revoke = (id) =>
		act(async () => {
			await api('DELETE', `/auth/sessions/${id}`);
			list.reload();
		});
	if (list.error) return <ErrorBox error={list.error} />;
	if (!list.data) return <Loading what="sessions" />;
	return (
		<div>
			<ErrorBox error={error} />
			<Table head={['Signed in', 'How', 'From', 'Last seen', <span class="sr-only">Actions</span>]}>
				{list.data.map((s) => (
					<tr key={s.id}>
						<td>{when(s.createdAt)}</td>
						<td>{s.method}</td>
						<td>
							{s.ip || '–'} <span class="muted">{s.userAgent || ''}</span>
						</td>
						<td>{when(s.lastSeenAt)}</td>
						<td>
							{s.current ? (
								<strong>This session</strong>
							) : (
								<button type="button" class="secondary" onClick={revoke(s.id)}>
									Revoke
								</button>
							)}
						</td>
					</tr>
				))}
			</Table>
		</div>
	);
}

export function Account({ session }) {
	useTitle('Account');
	return (
		<section>
			<h1>Account</h1>
			<p>
				{session.user.name} · {session.user.email} · {session.organization.role} of {session.organization.name}
			</p>
			<h2>Two-factor authentication</h2>
			<TwoFactor />
			<h2>Passkeys</h2>
			<Passkeys />
			<h2>Sessions</h2>
			<Sessions />
		</section>
	);
}
