// An application's git source (the deploy key's public half and the
// webhook to paste into the git host; the webhook secret shown once),
// domains with their verification instructions, volumes and containers.
import { useState } from 'preact/hooks';
import { api, get, post } from './api.js';
import { Badge, EditPanel, ErrorBox, Field, Form, ListOf, Loading, ShownOnce, RowAction, Table, useAction, useData, useForm, useTitle, when } from './ui.jsx';

// What to paste into the git host: the deploy key (read-only) and the push
// webhook. `secret` only in the answer that created or rotated it.
export function GitHostSetup({ source, secret }) {
	return (
		<div>
			<h2>Set up the repository</h2>
			<p>Add this read-only deploy key to the repository, so Steward can fetch it:</p>
			<ShownOnce label="Deploy key (public)" value={source.deployKey.publicKey}>
				(fingerprint <code>{source.deployKey.fingerprint}</code>) is the public half: it stays on this page.
			</ShownOnce>
			<p>Point the repository's push webhook at this URL (content type JSON):</p>
			<ShownOnce label="Webhook URL" value={source.webhookUrl}>
				receives pushes to <code>{source.branch}</code>.
			</ShownOnce>
			{secret && (
				<ShownOnce label="Webhook secret" value={secret}>
					signs the webhook's requests. It is shown once: paste it into the git host now.
				</ShownOnce>
			)}
		</div>
	);
}

// The repository picker: a git credential's repositories (GET
// /git-credentials/:id/repositories asks its host); picking one fills the
// form's repositoryUrl (https, the credential fetches it), branch (the
// repository's default) and credentialId. Without a credential, or for an
// ssh URL, the URL field is typed in.
export function RepositoryPicker({ form, credentials }) {
	const [repos, setRepos] = useState(null);
	const [loading, setLoading] = useState(false);
	const { error, act } = useAction();
	const usable = (credentials || []).filter((c) => c.provider !== 'GENERIC');
	const id = form.values.credentialId;
	const list = act(async () => {
		setRepos(null);
		setLoading(true);
		try {
			setRepos(await get(`/git-credentials/${id}/repositories`));
		} finally {
			setLoading(false);
		}
	});
	const pick = (e) => {
		const r = repos.find((x) => x.fullName === e.currentTarget.value);
		if (r) form.setValues((v) => ({ ...v, repositoryUrl: r.cloneUrlHttps || r.cloneUrlSsh || '', branch: r.defaultBranch || v.branch }));
	};
	return (
		<div class="picker">
			<Field form={form} name="credentialId" label="Git credential (https only)">
				<option value="">None</option>
				{(credentials || []).map((c) => (
					<option key={c.id} value={c.id}>
						{c.name}
					</option>
				))}
			</Field>
			{id && usable.some((c) => c.id === id) && (
				<button type="button" class="secondary" onClick={list} disabled={loading}>
					{loading ? 'Listing repositories…' : 'List repositories'}
				</button>
			)}
			<ErrorBox error={error} />
			{repos && repos.length === 0 && <p class="muted">This credential sees no repository.</p>}
			{repos && repos.length > 0 && (
				<div class="field">
					<label for="repository-pick">Repository</label>
					<select id="repository-pick" onChange={pick} value={repos.find((r) => (r.cloneUrlHttps || r.cloneUrlSsh) === form.values.repositoryUrl)?.fullName || ''}>
						<option value="">Choose a repository…</option>
						{repos.map((r) => (
							<option key={r.fullName} value={r.fullName}>
								{r.fullName}
								{r.private ? ' (private)' : ''}
							</option>
						))}
					</select>
				</div>
			)}
		</div>
	);
}

// Connecting a repository, or changing the connected one's URL, branch
// and credential, filled in with the current ones: both a PUT (creating
// makes a deploy key and a webhook secret; replacing keeps them and reads
// the provider from the URL again).
function SourceForm({ app, source, credentials, saved }) {
	const form = useForm({ repositoryUrl: source?.repositoryUrl || '', branch: source?.branch || 'main', credentialId: source?.credentialId || '' }, async (v) => {
		saved(await api('PUT', `/applications/${app.id}/git-source`, { repositoryUrl: v.repositoryUrl.trim(), branch: v.branch.trim() || 'main', credentialId: v.credentialId || null }));
	});
	return (
		<Form form={form} submit={source ? 'Save' : 'Connect repository'} class="row">
			<Field form={form} name="repositoryUrl" label="Repository URL" placeholder="git@github.com:acme/web.git" autocomplete="off" required />
			<Field form={form} name="branch" label="Branch" autocomplete="off" />
			<RepositoryPicker form={form} credentials={credentials} />
		</Form>
	);
}

export function GitSource({ app }) {
	const source = useData(() => get(`/applications/${app.id}/git-source`).catch((e) => (e.status === 404 ? null : Promise.reject(e))), [app.id]);
	const [secret, setSecret] = useState(null);
	const { error, act } = useAction();
	const credentials = useData(() => get('/git-credentials?limit=200'), []);
	const rotate = act(async () => {
		const r = await post(`/applications/${app.id}/git-source/webhook-secret`);
		setSecret(r.webhookSecret);
	});
	if (source.error) return <ErrorBox error={source.error} />;
	if (source.loading && source.data === null) return <Loading what="the git source" />;
	const s = source.data;
	return (
		<div>
			{s && (
				<dl class="facts">
					<dt>Repository</dt>
					<dd>{s.repositoryUrl}</dd>
					<dt>Branch</dt>
					<dd>{s.branch}</dd>
					<dt>Provider</dt>
					<dd>{s.provider}</dd>
					<dt>Credential</dt>
					<dd>{(s.credentialId && credentials.data?.find((c) => c.id === s.credentialId)?.name) || (s.credentialId ? s.credentialId : 'none (public, or ssh with the deploy key)')}</dd>
				</dl>
			)}
			{s && <GitHostSetup source={s} secret={secret} />}
			{s && (
				<div class="actions">
					<button type="button" class="secondary" onClick={rotate}>
						New webhook secret
					</button>
					<ErrorBox error={error} />
				</div>
			)}
			<h2>{s ? 'Change the repository' : 'Connect a repository'}</h2>
			<SourceForm
				key={s ? s.updatedAt : 'new'}
				app={app}
				source={s}
				credentials={credentials.data}
				saved={(made) => {
					if (made.webhookSecret) setSecret(made.webhookSecret);
					source.reload();
				}}
			/>
		</div>
	);
}

export function Domains({ app }) {
	const list = useData(() => get(`/applications/${app.id}/domains?limit=100`), [app.id]);
	const { error, act } = useAction();
	const [checked, setChecked] = useState(null);
	const form = useForm({ hostname: '' }, async (v, setValues) => {
		await post(`/applications/${app.id}/domains`, { hostname: v.hostname.trim() });
		setValues({ hostname: '' });
		list.reload();
	});
	const verify = (d) =>
		act(async () => {
			setChecked(null);
			try {
				await post(`/domains/${d.id}/verify`);
				setChecked(`${d.hostname} is verified.`);
			} finally {
				list.reload();
			}
		});
	const remove = (d) =>
		act(async () => {
			await api('DELETE', `/applications/${app.id}/domains/${d.id}`);
			list.reload();
		});
	return (
		<div>
			<ErrorBox error={error} />
			{checked && <p role="status">{checked}</p>}
			<ListOf list={list} what="domains" empty="No domains.">
				{(rows) =>
					rows.map((d) => (
						<div class="card domain" key={d.id}>
							<div class="title-row">
								<h3>{d.hostname}</h3>
								<Badge status={d.status} />
							</div>
							{d.status === 'VERIFIED' ? (
								<p>
									Verified {when(d.verifiedAt)} by {d.verificationMethod}.
								</p>
							) : (
								<>
									<p>Prove you control this hostname in one of two ways, then check:</p>
									<ol>
										<li>
											A DNS {d.instructions.dns.type} record named <code>{d.instructions.dns.name}</code> with the value{' '}
											<code>{d.instructions.dns.value}</code>
										</li>
										<li>
											Or <code>{d.instructions.http.url}</code> answering 200 with the body <code>{d.instructions.http.body}</code>
										</li>
									</ol>
									{d.lastCheckError && (
										<p class="muted">
											Last check {when(d.lastCheckedAt)}: {d.lastCheckError}
										</p>
									)}
								</>
							)}
							<div class="actions">
								{d.status !== 'VERIFIED' && (
									<button type="button" onClick={verify(d)} aria-label={`Check now: ${d.hostname}`}>
										Check now
									</button>
								)}
								<RowAction onClick={remove(d)} label={`Remove ${d.hostname}`}>Remove</RowAction>
							</div>
						</div>
					))
				}
			</ListOf>
			<Form form={form} submit="Add domain" class="row">
				<Field form={form} name="hostname" label="Hostname" placeholder="www.example.com" autocomplete="off" required />
			</Form>
		</div>
	);
}

export function Volumes({ app }) {
	const list = useData(() => get(`/applications/${app.id}/volumes?limit=100`), [app.id]);
	const { error, act } = useAction();
	const [editing, setEditing] = useState(null);
	const form = useForm({ name: '', mountPath: '' }, async (v, setValues) => {
		await post(`/applications/${app.id}/volumes`, { name: v.name.trim(), mountPath: v.mountPath.trim() });
		setValues({ name: '', mountPath: '' });
		list.reload();
	});
	const remove = (v) =>
		act(async () => {
			await api('DELETE', `/applications/${app.id}/volumes/${v.id}`);
			list.reload();
		});
	return (
		<div>
			<p class="muted">Volumes keep their files across deployments. A change applies at the next deployment.</p>
			<ErrorBox error={error} />
			<ListOf list={list} what="volumes" empty="No volumes.">
				{(rows) => (
					<Table head={['Name', 'Mounted at', 'On the host', <span class="sr-only">Actions</span>]}>
						{rows.map((v) => (
							<tr key={v.id}>
								<td>{v.name}</td>
								<td>
									<code>{v.mountPath}</code>
								</td>
								<td>
									<code>{v.hostPath || 'managed'}</code>
								</td>
								<td>
									<div class="actions">
										<RowAction onClick={() => setEditing(v)} label={`Edit volume ${v.name}`}>Edit</RowAction>
										<RowAction onClick={remove(v)} label={`Remove volume ${v.name}`}>Remove</RowAction>
									</div>
								</td>
							</tr>
						))}
					</Table>
				)}
			</ListOf>
			{editing && (
				<EditPanel
					key={editing.id}
					title={`Edit volume ${editing.name}`}
					initial={{ mountPath: editing.mountPath }}
					fields={[['mountPath', 'Mount path', { required: true }]]}
					save={(v) => api('PATCH', `/applications/${app.id}/volumes/${editing.id}`, { mountPath: v.mountPath.trim() })}
					close={(saved) => {
						setEditing(null);
						if (saved) list.reload();
					}}
				/>
			)}
			<Form form={form} submit="Add volume" class="row">
				<Field form={form} name="name" label="Volume name" autocomplete="off" required />
				<Field form={form} name="mountPath" label="Mount path" placeholder="/data" autocomplete="off" required />
			</Form>
		</div>
	);
}

export function Containers({ app }) {
	const list = useData(() => get(`/applications/${app.id}/containers`), [app.id]);
	return (
		<div>
			<div class="actions">
				<button type="button" class="secondary" onClick={list.reload}>
					Refresh
				</button>
			</div>
			<ListOf list={list} what="containers" empty="No containers: the application has not run yet.">
				{(rows) => (
					<Table head={['Name', 'Deployment', 'State', 'Status', 'Image', 'Created']}>
						{rows.map((c) => (
							<tr key={c.id}>
								<td>
									{c.name} {c.colour && <span class="muted">({c.colour})</span>}
								</td>
								<td>{c.deploymentNumber ? `#${c.deploymentNumber}` : '–'}</td>
								<td>
									<Badge status={c.state} />
								</td>
								<td>{c.status}</td>
								<td>
									<code>{c.image}</code>
								</td>
								<td>{when(c.createdAt)}</td>
							</tr>
						))}
					</Table>
				)}
			</ListOf>
		</div>
	);
}

// The settings a deployment reads (each applies at the next deployment).
export function Settings({ app, changed }) {
	const [saved, setSaved] = useState(false);
	const form = useForm(
		{
			description: app.description || '',
			port: String(app.port),
			healthCheckPath: app.healthCheckPath,
			deployStrategy: app.deployStrategy,
			imageRetentionCount: String(app.imageRetentionCount),
		},
		async (v) => {
			setSaved(false);
			await api('PATCH', `/applications/${app.id}`, {
				description: v.description,
				port: Number(v.port),
				healthCheckPath: v.healthCheckPath,
				deployStrategy: v.deployStrategy,
				imageRetentionCount: Number(v.imageRetentionCount),
			});
			setSaved(true);
			changed();
		},
	);
	return (
		<div>
			<p class="muted">Changes apply at the next deployment.</p>
			{saved && <p role="status">Settings saved.</p>}
			<Form form={form} submit="Save settings">
				<Field form={form} name="description" label="Description" autocomplete="off" />
				<Field form={form} name="port" label="Port the application listens on" type="number" min="1" max="65535" />
				<Field form={form} name="healthCheckPath" label="Health check path" autocomplete="off" />
				<Field form={form} name="deployStrategy" label="Deploy strategy">
					<option value="RECREATE">Recreate (a few seconds of downtime)</option>
					<option value="BLUE_GREEN">Blue-green (needs a verified domain)</option>
				</Field>
				<Field form={form} name="imageRetentionCount" label="Images kept for rollback" type="number" min="1" />
			</Form>
		</div>
	);
}

// Git credentials: a token for a git host (write-only: only its last four
// characters come back), used by https fetches and to list repositories.
export function GitCredentials() {
	useTitle('Git credentials');
	const list = useData(() => get('/git-credentials?limit=200'), []);
	const [repos, setRepos] = useState(null);
	const [editing, setEditing] = useState(null);
	const { error, act } = useAction();
	const form = useForm({ name: '', provider: 'GITHUB', token: '', username: '', apiBaseUrl: '' }, async (v, setValues) => {
		const body = { name: v.name.trim(), provider: v.provider, token: v.token };
		if (v.username.trim()) body.username = v.username.trim();
		if (v.apiBaseUrl.trim()) body.apiBaseUrl = v.apiBaseUrl.trim();
		await post('/git-credentials', body);
		setValues({ name: '', provider: v.provider, token: '', username: '', apiBaseUrl: '' });
		list.reload();
	});
	const browse = (c) =>
		act(async () => {
			setRepos(null);
			setRepos({ credential: c, rows: await get(`/git-credentials/${c.id}/repositories`) });
		});
	const remove = (c) =>
		act(async () => {
			await api('DELETE', `/git-credentials/${c.id}`);
			list.reload();
		});
	return (
		<section>
			<h1>Git credentials</h1>
			<p class="muted">A token is sent only to its git host; it is never shown again, only its last four characters.</p>
			<ErrorBox error={error} />
			<ListOf list={list} what="git credentials" empty="No git credentials.">
				{(rows) => (
					<Table head={['Name', 'Provider', 'Token', 'Last used', <span class="sr-only">Actions</span>]}>
						{rows.map((c) => (
							<tr key={c.id}>
								<td>{c.name}</td>
								<td>{c.provider}</td>
								<td>
									<code>…{c.tokenHint}</code>
								</td>
								<td>{when(c.lastUsedAt)}</td>
								<td>
									<div class="actions">
										<RowAction onClick={browse(c)} label={`Repositories of ${c.name}`}>Repositories</RowAction>
										<RowAction onClick={() => setEditing(c)} label={`Edit credential ${c.name}`}>Edit</RowAction>
										<RowAction onClick={remove(c)} label={`Remove credential ${c.name}`}>Remove</RowAction>
									</div>
								</td>
							</tr>
						))}
					</Table>
				)}
			</ListOf>
			{editing && (
				<EditPanel
					key={editing.id}
					title={`Edit credential ${editing.name}`}
					initial={{ name: editing.name, token: '', username: editing.username || '', apiBaseUrl: editing.provider === 'GENERIC' ? '' : editing.apiBaseUrl || '' }}
					fields={[
						['name', 'Credential name', { required: true }],
						['token', 'New token (empty: keep the current one)', { type: 'password' }],
						['username', 'Username (Bitbucket)'],
						...(editing.provider === 'GENERIC' ? [] : [['apiBaseUrl', 'API URL (empty: the provider’s default)']]),
					]}
					save={(v) => {
						const body = { name: v.name.trim(), username: v.username.trim() || null };
						if (v.token) body.token = v.token;
						if (editing.provider !== 'GENERIC') body.apiBaseUrl = v.apiBaseUrl.trim() || null;
						return api('PATCH', `/git-credentials/${editing.id}`, body);
					}}
					close={(saved) => {
						setEditing(null);
						if (saved) list.reload();
					}}
				/>
			)}
			{repos && (
				<>
					<h2>Repositories {repos.credential.name} can read</h2>
					<Table head={['Repository', 'Default branch', 'Clone (https)', 'Private']}>
						{repos.rows.map((r) => (
							<tr key={r.fullName}>
								<td>{r.fullName}</td>
								<td>{r.defaultBranch}</td>
								<td>
									<code>{r.cloneUrlHttps}</code>
								</td>
								<td>{r.private ? 'yes' : 'no'}</td>
							</tr>
						))}
					</Table>
				</>
			)}
			<h2>New git credential</h2>
			<Form form={form} submit="Add credential" class="row">
				<Field form={form} name="name" label="Credential name" autocomplete="off" required />
				<Field form={form} name="provider" label="Git host">
					<option value="GITHUB">GitHub</option>
					<option value="GITLAB">GitLab</option>
					<option value="BITBUCKET">Bitbucket</option>
					<option value="GENERIC">Other</option>
				</Field>
				<Field form={form} name="token" label="Token" type="password" autocomplete="off" required />
				<Field form={form} name="username" label="Username (Bitbucket)" autocomplete="off" />
				<Field form={form} name="apiBaseUrl" label="API URL (self-hosted only)" autocomplete="off" />
			</Form>
		</section>
	);
}
