// Projects and environments (the navigation), applications, their
// deployments, lifecycle and variables.
import { useState } from 'preact/hooks';
import { api, get, post, postForm } from './api.js';
import { Containers, Domains, GitHostSetup, GitSource, RepositoryPicker, Settings, Volumes } from './appparts.jsx';
import { ApplicationMetrics } from './metrics.jsx';
import { Link, navigate } from './router.jsx';
import { Badge, EditPanel, ErrorBox, Field, Form, Lifecycle, Loading, RecordPage, RowAction, Table, duration, useAction, useData, useDefault, useForm, useRefresh, useTitle, when } from './ui.jsx';

const IN_FLIGHT = ['QUEUED', 'BUILDING', 'DEPLOYING'];

const q = (params) => {
	const s = new URLSearchParams();
	for (const [k, v] of Object.entries(params)) if (v) s.set(k, v);
	const t = s.toString();
	return t ? `?${t}` : '';
};

export function ProjectNav({ projects, current, reload }) {
	const form = useForm({ name: '' }, async (v, setValues) => {
		await post('/projects', v);
		setValues({ name: '' });
		reload();
	});
	return (
		<nav class="side" aria-label="Projects">
			<h2>Projects</h2>
			<ul>
				<li>
					<Link href="/app/applications" aria-current={!current ? 'page' : undefined}>
						All applications
					</Link>
				</li>
				{(projects || []).map((p) => (
					<li key={p.id}>
						<Link href={`/app/applications${q({ projectId: p.id })}`} aria-current={current === p.id ? 'page' : undefined}>
							{p.name}
						</Link>
						<ul>
							{p.environments.map((e) => (
								<li key={e.id}>
									<Link href={`/app/applications${q({ environmentId: e.id })}`} aria-current={current === e.id ? 'page' : undefined}>
										{e.name}
									</Link>
								</li>
							))}
						</ul>
					</li>
				))}
			</ul>
			<Form form={form} submit="Add project" class="inline">
				<Field form={form} name="name" label="New project" placeholder="name" required />
			</Form>
			<Link href="/app/projects">Manage projects</Link>
		</nav>
	);
}

function ProjectCard({ project, reload }) {
	const { error, act } = useAction();
	// null, the project, or one of its environments.
	const [editing, setEditing] = useState(null);
	const closed = (saved) => {
		setEditing(null);
		if (saved) reload();
	};
	const form = useForm({ name: '' }, async (v, setValues) => {
		await post(`/projects/${project.id}/environments`, { name: v.name.trim() });
		setValues({ name: '' });
		reload();
	});
	const removeEnv = (e) =>
		act(async () => {
			await api('DELETE', `/projects/${project.id}/environments/${e.id}`);
			reload();
		});
	const remove = act(async () => {
		await api('DELETE', `/projects/${project.id}`);
		reload();
	});
	return (
		<div class="card domain">
			<div class="title-row">
				<h2>{project.name}</h2>
				<RowAction onClick={() => setEditing(project)} label={`Edit project ${project.name}`}>
					Edit
				</RowAction>
				<RowAction onClick={remove} label={`Delete project ${project.name}`}>
					Delete
				</RowAction>
			</div>
			{project.description && <p class="muted">{project.description}</p>}
			<ErrorBox error={error} />
			<Table head={['Environment', 'Applications', <span class="sr-only">Actions</span>]}>
				{project.environments.map((e) => (
					<tr key={e.id}>
						<td>
							<Link href={`/app/applications${q({ environmentId: e.id })}`}>{e.name}</Link>
						</td>
						<td>{e.applicationCount ?? '–'}</td>
						<td>
							<div class="actions">
								<RowAction onClick={() => setEditing(e)} label={`Rename environment ${e.name} of ${project.name}`}>
									Rename
								</RowAction>
								<RowAction onClick={removeEnv(e)} label={`Delete environment ${e.name} of ${project.name}`}>
									Delete
								</RowAction>
							</div>
						</td>
					</tr>
				))}
			</Table>
			{editing === project && (
				<EditPanel
					title={`Edit project ${project.name}`}
					initial={{ name: project.name, description: project.description || '' }}
					fields={[['name', 'Project name', { required: true }], ['description', 'Description']]}
					save={(v) => api('PATCH', `/projects/${project.id}`, { name: v.name.trim(), description: v.description })}
					close={closed}
				/>
			)}
			{editing && editing !== project && (
				<EditPanel
					key={editing.id}
					title={`Rename environment ${editing.name}`}
					initial={{ name: editing.name }}
					fields={[['name', 'Environment name', { required: true }]]}
					save={(v) => api('PATCH', `/projects/${project.id}/environments/${editing.id}`, { name: v.name.trim() })}
					close={closed}
				/>
			)}
			<Form form={form} submit="Add environment" class="row">
				<Field form={form} name="name" label={`New environment in ${project.name}`} placeholder="staging" autocomplete="off" required />
			</Form>
		</div>
	);
}

// Projects and their environments: add an environment, delete what is
// empty (the API refuses a project or environment that holds applications).
export function Projects({ projects, reload }) {
	useTitle('Projects');
	if (!projects) return <Loading what="projects" />;
	return (
		<section>
			<h1>Projects</h1>
			{projects.length === 0 && <p class="muted">No projects yet: add one in the list of projects.</p>}
			{projects.map((p) => (
				<ProjectCard key={p.id} project={p} reload={reload} />
			))}
		</section>
	);
}

export function Applications({ query }) {
	const projectId = query.get('projectId') || '';
	const environmentId = query.get('environmentId') || '';
	const apps = useData(() => get(`/applications${q({ projectId, environmentId, limit: 200 })}`), [projectId, environmentId]);
	useTitle('Applications');
	return (
		<section>
			<div class="title-row">
				<h1>Applications</h1>
				<Link class="button" href={`/app/applications/new${q({ environmentId })}`}>
					New application
				</Link>
			</div>
			<ErrorBox error={apps.error} />
			{apps.loading && !apps.data ? (
				<Loading what="applications" />
			) : apps.data && apps.data.length === 0 ? (
				<p class="muted">No applications here yet.</p>
			) : (
				apps.data && (
					<Table head={['Name', 'Status', 'Source', 'Created']}>
							{apps.data.map((a) => (
								<tr key={a.id}>
									<td>
										<Link href={`/app/applications/${a.id}`}>{a.name}</Link>
									</td>
									<td>
										<Badge status={a.status} />
									</td>
									<td>{a.sourceKind}</td>
									<td>{when(a.createdAt)}</td>
								</tr>
							))}
					</Table>
				)
			)}
		</section>
	);
}

// A new application; from git, the repository too, then what to paste
// into the git host (the webhook secret is in this answer only).
export function NewApplication({ projects, query }) {
	useTitle('New application');
	const [created, setCreated] = useState(null);
	const envs = (projects || []).flatMap((p) => p.environments.map((e) => ({ id: e.id, label: `${p.name} / ${e.name}` })));
	const credentials = useData(() => get('/git-credentials?limit=200'), []);
	const form = useForm({ name: '', environmentId: query.get('environmentId') || '', sourceKind: 'GIT', credentialId: '', repositoryUrl: '', branch: 'main', port: '3000' }, async (v) => {
		const body = { name: v.name, environmentId: v.environmentId || envs[0]?.id, sourceKind: v.sourceKind, port: Number(v.port) };
		const git = v.sourceKind === 'GIT' && v.repositoryUrl.trim();
		const a = created?.app || (await post('/applications', body));
		if (!git) {
			navigate(`/app/applications/${a.id}`);
			return;
		}
		setCreated({ app: a });
		const source = await api('PUT', `/applications/${a.id}/git-source`, { repositoryUrl: v.repositoryUrl.trim(), branch: v.branch.trim() || 'main', credentialId: v.credentialId || null });
		setCreated({ app: a, source });
	});
	useDefault(form, 'environmentId', envs[0]?.id);
	if (!projects) return <Loading what="projects" />;
	if (envs.length === 0) return <p class="muted">Create a project first (in the list of projects).</p>;
	if (created?.source) {
		return (
			<section class="card">
				<h1>{created.app.name} is created</h1>
				<GitHostSetup source={created.source} secret={created.source.webhookSecret} />
				<Link class="button" href={`/app/applications/${created.app.id}`}>
					Go to {created.app.name}
				</Link>
			</section>
		);
	}
	const git = form.values.sourceKind === 'GIT';
	return (
		<section class="card">
			<h1>New application</h1>
			{created && <p role="status">{created.app.name} is created; its repository is not connected yet.</p>}
			<Form form={form} submit={created ? 'Connect repository' : 'Create application'}>
				<Field form={form} name="name" label="Name (lower-case letters, digits, hyphens)" required disabled={!!created} />
				<Field form={form} name="environmentId" label="Project and environment" disabled={!!created}>
					{envs.map((e) => (
						<option key={e.id} value={e.id}>
							{e.label}
						</option>
					))}
				</Field>
				<Field form={form} name="sourceKind" label="Source" disabled={!!created}>
					<option value="GIT">Git repository</option>
					<option value="UPLOAD">Uploaded archives</option>
				</Field>
				{git && <RepositoryPicker form={form} credentials={credentials.data} />}
				{git && <Field form={form} name="repositoryUrl" label="Repository URL (optional now)" placeholder="git@github.com:acme/web.git" autocomplete="off" />}
				{git && <Field form={form} name="branch" label="Branch" autocomplete="off" />}
				<Field form={form} name="port" label="Port the application listens on" type="number" min="1" max="65535" disabled={!!created} />
			</Form>
		</section>
	);
}

// Deploy: a git application from its source's branch; an upload
// application from an archive chosen or dropped here, with the upload's
// progress. Then the new deployment's page.
function Deploy({ app }) {
	const [error, setError] = useState(null);
	const [progress, setProgress] = useState(null);
	const [over, setOver] = useState(false);
	const upload = app.sourceKind === 'UPLOAD';
	const deploy = async (file) => {
		const form = new FormData();
		form.append('applicationId', app.id);
		if (file) form.append('archive', file);
		setError(null);
		setProgress(file ? 0 : null);
		try {
			const d = await postForm('/deployments', form, (sent, total) => setProgress(sent / total));
			navigate(`/app/deployments/${d.id}`);
		} catch (e) {
			setError(e);
			setProgress(null);
		}
	};
	if (!upload) {
		return (
			<div class="actions">
				<button type="button" onClick={() => deploy(null)}>
					Deploy
				</button>
				<ErrorBox error={error} />
			</div>
		);
	}
	const drop = (e) => {
		e.preventDefault();
		setOver(false);
		const file = e.dataTransfer?.files?.[0];
		if (file) deploy(file);
	};
	const dragOver = (e) => {
		e.preventDefault();
		setOver(true);
	};
	return (
		<div class={over ? 'drop over' : 'drop'} onDragOver={dragOver} onDragLeave={() => setOver(false)} onDrop={drop}>
			<label for="archive">Deploy an archive (tar, tar.gz or zip): choose it, or drop it here</label>
			<input id="archive" type="file" accept=".tar,.tgz,.gz,.zip" onChange={(e) => e.currentTarget.files[0] && deploy(e.currentTarget.files[0])} />
			{progress !== null && (
				<progress max="1" value={progress} aria-label="Upload">
					{Math.round(progress * 100)}%
				</progress>
			)}
			<ErrorBox error={error} />
		</div>
	);
}

function Deployments({ app }) {
	const list = useData(() => get(`/deployments${q({ applicationId: app.id, limit: 50 })}`), [app.id]);
	// Statuses change while work is in flight: the list follows them.
	useRefresh(!!list.data && list.data.some((d) => IN_FLIGHT.includes(d.status)), list.reload);
	if (list.error) return <ErrorBox error={list.error} />;
	if (!list.data) return <Loading what="deployments" />;
	if (list.data.length === 0) return <p class="muted">No deployments yet.</p>;
	return (
		<Table head={['#', 'Status', 'Trigger', 'Commit', 'Started', 'Duration']}>
				{list.data.map((d) => (
					<tr key={d.id}>
						<td>
							<Link href={`/app/deployments/${d.id}`}>#{d.number}</Link>
						</td>
						<td>
							<Badge status={d.status} />
						</td>
						<td>{d.trigger}</td>
						<td>{d.commitSha ? `${d.commitSha.slice(0, 7)} ${d.commitMessage || ''}` : '–'}</td>
						<td>{when(d.startedAt || d.createdAt)}</td>
						<td>{duration(d.durationMs)}</td>
					</tr>
				))}
		</Table>
	);
}

function Variables({ app }) {
	const list = useData(() => get(`/applications/${app.id}/variables`), [app.id]);
	const { error, act } = useAction();
	const form = useForm({ key: '', value: '' }, async (v, setValues) => {
		await api('PUT', `/applications/${app.id}/variables/${encodeURIComponent(v.key)}`, { value: v.value });
		setValues({ key: '', value: '' });
		list.reload();
	});
	const unset = (key) =>
		act(async () => {
			await api('DELETE', `/applications/${app.id}/variables/${encodeURIComponent(key)}`);
			list.reload();
		});
	return (
		<div>
			<p class="muted">Values are sealed on the server and never shown again; only their length is.</p>
			<ErrorBox error={list.error || error} />
			{list.data && list.data.length > 0 && (
				<Table head={['Key', 'Value', 'Updated', <span class="sr-only">Actions</span>]}>
						{list.data.map((v) => (
							<tr key={v.key}>
								<td>
									<code>{v.key}</code>
								</td>
								<td>{v.valueLength} bytes</td>
								<td>{when(v.updatedAt)}</td>
								<td>
									<RowAction onClick={unset(v.key)} label={`Unset ${v.key}`}>Unset</RowAction>
								</td>
							</tr>
						))}
				</Table>
			)}
			{list.data && list.data.length === 0 && <p class="muted">No variables.</p>}
			<Form form={form} submit="Set variable" class="row">
				<Field form={form} name="key" label="Key" autocomplete="off" required />
				<Field form={form} name="value" label="Value" type="password" autocomplete="off" />
			</Form>
		</div>
	);
}

export const TABS = [
	['deployments', 'Deployments'],
	['variables', 'Variables'],
	['git', 'Git'],
	['domains', 'Domains'],
	['volumes', 'Volumes'],
	['containers', 'Containers'],
	['metrics', 'Metrics'],
	['settings', 'Settings'],
];

export function ApplicationPage({ id, tab }) {
	const app = useData(() => get(`/applications/${id}`), [id]);
	useTitle(app.data ? app.data.name : 'Application');
	return (
		<RecordPage record={app} what="the application">
			{(a) => (
				<>
					<Lifecycle path={`/applications/${a.id}`} changed={app.reload} />
					<nav class="tabs" aria-label="Application">
						{TABS.map(([t, label]) => (
							<Link key={t} href={`/app/applications/${id}${t === 'deployments' ? '' : `/${t}`}`} aria-current={tab === t ? 'page' : undefined}>
								{label}
							</Link>
						))}
					</nav>
					{tab === 'variables' && <Variables app={a} />}
					{tab === 'git' && <GitSource app={a} />}
					{tab === 'domains' && <Domains app={a} />}
					{tab === 'volumes' && <Volumes app={a} />}
					{tab === 'containers' && <Containers app={a} />}
					{tab === 'metrics' && <ApplicationMetrics app={a} />}
					{tab === 'settings' && <Settings app={a} changed={app.reload} />}
					{tab === 'deployments' && (
						<>
							<Deploy app={a} />
							<Deployments app={a} />
						</>
					)}
				</>
			)}
		</RecordPage>
	);
}
