// The organization: members and roles, invitations (the controls that
// change them shown to OWNERs only; the API refuses everyone else anyway),
// API tokens (the token shown once), the plan and its usage (an operator
// grants another), and the audit log (operators).
import { useState } from 'preact/hooks';
import { api, get, post } from './api.js';
import { Badge, ErrorBox, Field, Form, ListOf, ShownOnce, RowAction, Table, useAction, useData, useForm, useTitle, when } from './ui.jsx';

const ROLES = ['OWNER', 'ADMIN', 'MEMBER'];

function RoleSelect({ member, orgId, changed }) {
	const { error, act } = useAction();
	const set = (e) => {
		const role = e.currentTarget.value;
		act(async () => {
			await api('PATCH', `/organizations/${orgId}/members/${member.userId}`, { role });
			changed();
		})();
	};
	return (
		<>
			<select value={member.role} onChange={set} aria-label={`Role of ${member.email}`}>
				{ROLES.map((r) => (
					<option key={r} value={r}>
						{r}
					</option>
				))}
			</select>
			<ErrorBox error={error} />
		</>
	);
}

function Members({ session, owner }) {
	const orgId = session.organization.id;
	const list = useData(() => get(`/organizations/${orgId}/members?limit=200`), [orgId]);
	const { error, act } = useAction();
	const remove = (m) =>
		act(async () => {
			await api('DELETE', `/organizations/${orgId}/members/${m.userId}`);
			list.reload();
		});
	return (
		<>
			<ErrorBox error={error} />
			<ListOf list={list} what="members" empty="No members.">
				{(rows) => (
					<Table head={owner ? ['Name', 'E-mail', 'Role', 'Joined', <span class="sr-only">Actions</span>] : ['Name', 'E-mail', 'Role', 'Joined']}>
						{rows.map((m) => (
							<tr key={m.userId}>
								<td>{m.name}</td>
								<td>{m.email}</td>
								<td>{owner ? <RoleSelect member={m} orgId={orgId} changed={list.reload} /> : m.role}</td>
								<td>{when(m.joinedAt)}</td>
								{owner && (
									<td>
										{m.userId !== session.user.id && (
											<RowAction onClick={remove(m)} label={`Remove ${m.email}`}>Remove</RowAction>
										)}
									</td>
								)}
							</tr>
						))}
					</Table>
				)}
			</ListOf>
		</>
	);
}

function Invitations({ session, owner }) {
	const orgId = session.organization.id;
	const list = useData(() => get(`/organizations/${orgId}/invitations`), [orgId]);
	const [made, setMade] = useState(null);
	const { error, act } = useAction();
	const form = useForm({ email: '', role: 'MEMBER' }, async (v, setValues) => {
		setMade(await post(`/organizations/${orgId}/invitations`, v));
		setValues({ email: '', role: 'MEMBER' });
		list.reload();
	});
	const cancel = (i) =>
		act(async () => {
			await api('DELETE', `/organizations/${orgId}/invitations/${i.id}`);
			list.reload();
		});
	return (
		<>
			{made && (
				<ShownOnce label={`Invitation link for ${made.email}`} value={`${location.origin}/app/accept-invitation?token=${made.token}`}>
					is shown once: send it to them. It works once, until {when(made.expiresAt)}.
				</ShownOnce>
			)}
			<ErrorBox error={error} />
			<ListOf list={list} what="invitations" empty="No open invitations.">
				{(rows) => (
					<Table head={owner ? ['E-mail', 'Role', 'Expires', <span class="sr-only">Actions</span>] : ['E-mail', 'Role', 'Expires']}>
						{rows.map((i) => (
							<tr key={i.id}>
								<td>{i.email}</td>
								<td>{i.role}</td>
								<td>{when(i.expiresAt)}</td>
								{owner && (
									<td>
										<RowAction onClick={cancel(i)} label={`Cancel the invitation of ${i.email}`}>Cancel</RowAction>
									</td>
								)}
							</tr>
						))}
					</Table>
				)}
			</ListOf>
			{owner && (
				<Form form={form} submit="Invite" class="row">
					<Field form={form} name="email" label="E-mail to invite" type="email" autocomplete="off" required />
					<Field form={form} name="role" label="Role">
						{ROLES.map((r) => (
							<option key={r} value={r}>
								{r}
							</option>
						))}
					</Field>
				</Form>
			)}
		</>
	);
}

function Rename({ session, renamed }) {
	const form = useForm({ name: session.organization.name }, async (v) => {
		await api('PATCH', `/organizations/${session.organization.id}`, { name: v.name });
		await renamed();
	});
	return (
		<Form form={form} submit="Rename" class="row">
			<Field form={form} name="name" label="Organization name" autocomplete="organization" required />
		</Form>
	);
}

export function Organization({ session, renamed }) {
	useTitle('Organization');
	const owner = session.organization.role === 'OWNER';
	return (
		<section>
			<h1>{session.organization.name}</h1>
			{owner && <Rename session={session} renamed={renamed} />}
			<p class="muted">
				You are {session.organization.role}.{owner ? '' : ' Only an OWNER changes members and invitations.'}
			</p>
			<h2>Members</h2>
			<Members session={session} owner={owner} />
			<h2>Invitations</h2>
			<Invitations session={session} owner={owner} />
		</section>
	);
}

export function Tokens() {
	useTitle('API tokens');
	const list = useData(() => get('/api-tokens'), []);
	const [made, setMade] = useState(null);
	const { error, act } = useAction();
	const form = useForm({ name: '', expiresInDays: '' }, async (v, setValues) => {
		const body = { name: v.name };
		if (v.expiresInDays) body.expiresInDays = Number(v.expiresInDays);
		setMade(await post('/api-tokens', body));
		setValues({ name: '', expiresInDays: '' });
		list.reload();
	});
	const revoke = (t) =>
		act(async () => {
			await api('DELETE', `/api-tokens/${t.id}`);
			list.reload();
		});
	return (
		<section>
			<h1>API tokens</h1>
			<p class="muted">A token acts as you in this organization: send it as <code>Authorization: Bearer st_…</code>.</p>
			{made && <ShownOnce label={`Token ${made.name}`} value={made.token} />}
			<ErrorBox error={error} />
			<ListOf list={list} what="tokens" empty="No tokens.">
				{(rows) => (
					<Table head={['Name', 'Prefix', 'Created', 'Expires', 'Last used', <span class="sr-only">Actions</span>]}>
						{rows.map((t) => (
							<tr key={t.id}>
								<td>{t.name}</td>
								<td>
									<code>{t.prefix}…</code>
								</td>
								<td>{when(t.createdAt)}</td>
								<td>{t.expiresAt ? when(t.expiresAt) : 'never'}</td>
								<td>{when(t.lastUsedAt)}</td>
								<td>
									{t.revokedAt ? (
										<Badge status="REVOKED" />
									) : (
										<RowAction onClick={revoke(t)} label={`Revoke ${t.name}`}>Revoke</RowAction>
									)}
								</td>
							</tr>
						))}
					</Table>
				)}
			</ListOf>
			<Form form={form} submit="Create token" class="row">
				<Field form={form} name="name" label="Token name" autocomplete="off" required />
				<Field form={form} name="expiresInDays" label="Expires after (days, empty: never)" type="number" min="1" max="365" />
			</Form>
		</section>
	);
}

const quota = (n) => (n === null || n === undefined ? 'no limit' : String(n));

export function Plans({ session }) {
	useTitle('Plan');
	const plans = useData(() => get('/plans'), []);
	const sub = useData(() => get('/subscription'), []);
	const operator = session.user.isOperator;
	const grant = useForm({ planId: '', organizationId: '' }, async (v) => {
		const body = { planId: v.planId || sub.data?.plan.id };
		if (v.organizationId.trim()) body.organizationId = v.organizationId.trim();
		await api('PUT', '/subscription', body);
		sub.reload();
	});
	const s = sub.data;
	return (
		<section>
			<h1>Plan</h1>
			<ErrorBox error={sub.error || plans.error} />
			{s && (
				<dl class="facts">
					<dt>Plan</dt>
					<dd>
						{s.plan.name} <Badge status={s.status} />
					</dd>
					<dt>Applications</dt>
					<dd>
						{s.usage.applications} of {quota(s.plan.quotas.applications)}
					</dd>
					<dt>Servers</dt>
					<dd>
						{s.usage.servers} of {quota(s.plan.quotas.servers)}
					</dd>
					<dt>Members</dt>
					<dd>
						{s.usage.members} of {quota(s.plan.quotas.members)}
					</dd>
					<dt>Granted</dt>
					<dd>{s.grantedAt ? when(s.grantedAt) : 'never (the default)'}</dd>
				</dl>
			)}
			<h2>Plans</h2>
			<ListOf list={plans} what="plans" empty="No plans.">
				{(rows) => (
					<Table head={['Plan', 'Price a month', 'Applications', 'Servers', 'Members']}>
						{rows.map((p) => (
							<tr key={p.id}>
								<td>
									{p.name} <span class="muted">{p.description}</span>
								</td>
								<td>{(p.priceCentsMonthly / 100).toFixed(2)}</td>
								<td>{quota(p.quotas.applications)}</td>
								<td>{quota(p.quotas.servers)}</td>
								<td>{quota(p.quotas.members)}</td>
							</tr>
						))}
					</Table>
				)}
			</ListOf>
			{operator && plans.data && (
				<>
					<h2>Grant a plan</h2>
					<p class="muted">As the installation's operator you may put any organization on any plan (audited).</p>
					<Form form={grant} submit="Grant plan" class="row">
						<Field form={grant} name="planId" label="Plan to grant">
							<option value="">Choose…</option>
							{plans.data.map((p) => (
								<option key={p.id} value={p.id}>
									{p.name}
								</option>
							))}
						</Field>
						<Field form={grant} name="organizationId" label="Organization id (empty: this one)" autocomplete="off" />
					</Form>
				</>
			)}
		</section>
	);
}

export function Audit() {
	useTitle('Audit log');
	const [filters, setFilters] = useState({});
	const list = useData(() => {
		const q = new URLSearchParams({ limit: '100' });
		for (const [k, v] of Object.entries(filters)) if (v) q.set(k, k === 'since' || k === 'until' ? new Date(v).toISOString() : v);
		return get(`/audit-logs?${q}`);
	}, [filters]);
	const form = useForm({ action: '', actorUserId: '', since: '', until: '' }, async (v) => setFilters({ ...v }));
	const fieldError = list.error?.fields ? list.error : null;
	const shown = { ...form, error: fieldError || form.error };
	return (
		<section>
			<h1>Audit log</h1>
			<Form form={shown} submit="Filter" class="filters">
				<Field form={shown} name="action" label="Action (or its start)" placeholder="auth.session" autocomplete="off" />
				<Field form={shown} name="actorUserId" label="Actor (user id)" autocomplete="off" />
				<Field form={shown} name="since" label="Since" type="datetime-local" />
				<Field form={shown} name="until" label="Until" type="datetime-local" />
			</Form>
			{!fieldError && (
				<ListOf list={list} what="the audit log" empty="Nothing recorded matches.">
					{(rows) => (
						<Table head={['When', 'Action', 'Actor', 'Target', 'From', 'Details']}>
							{rows.map((r) => (
								<tr key={r.id}>
									<td>{when(r.createdAt)}</td>
									<td>
										<code>{r.action}</code>
									</td>
									<td>{r.actorUserId || '–'}</td>
									<td>{r.targetType ? `${r.targetType} ${r.targetId || ''}` : '–'}</td>
									<td>{r.ip || '–'}</td>
									<td>{r.metadata && Object.keys(r.metadata).length ? <code>{JSON.stringify(r.metadata)}</code> : '–'}</td>
								</tr>
							))}
						</Table>
					)}
				</ListOf>
			)}
		</section>
	);
}
