// Managed services (the connection revealed on demand, audited), alerts
// and their rules, notification channels (the signing secret shown once)
// and servers (the agent token shown once).
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, get, post } from './api.js';
import { Link } from './router.jsx';
import { MountsBanner } from './metrics.jsx';
import { Badge, EditPanel, ErrorBox, Field, Form, jobSentence, Lifecycle, ListOf, Loading, RecordPage, ShownOnce, RowAction, Table, useAction, useData, useDefault, useForm, useJob, useRefresh, useTitle, when } from './ui.jsx';

const envOptions = (projects) =>
	(projects || []).flatMap((p) =>
		p.environments.map((e) => (
			<option key={e.id} value={e.id}>
				{p.name} / {e.name}
			</option>
		)),
	);

export function Services({ projects }) {
	useTitle('Services');
	const list = useData(() => get('/services?limit=200'), []);
	const form = useForm({ name: '', kind: 'POSTGRESQL', version: '', environmentId: '' }, async (v, setValues) => {
		const body = { name: v.name.trim(), kind: v.kind, environmentId: v.environmentId || projects?.[0]?.environments?.[0]?.id };
		if (v.version.trim()) body.version = v.version.trim();
		await post('/services', body);
		setValues((x) => ({ ...x, name: '', version: '' }));
		list.reload();
	});
	useDefault(form, 'environmentId', projects?.[0]?.environments?.[0]?.id);
	return (
		<section>
			<h1>Services</h1>
			<ListOf list={list} what="services" empty="No managed services yet.">
				{(rows) => (
					<Table head={['Name', 'Kind', 'Version', 'Status', 'Created']}>
						{rows.map((s) => (
							<tr key={s.id}>
								<td>
									<Link href={`/app/services/${s.id}`}>{s.name}</Link>
								</td>
								<td>{s.kind}</td>
								<td>{s.version}</td>
								<td>
									<Badge status={s.status} />
								</td>
								<td>{when(s.createdAt)}</td>
							</tr>
						))}
					</Table>
				)}
			</ListOf>
			<h2>New service</h2>
			<Form form={form} submit="Create service" class="row">
				<Field form={form} name="name" label="Service name" autocomplete="off" required />
				<Field form={form} name="kind" label="Kind">
					<option value="POSTGRESQL">PostgreSQL</option>
					<option value="MYSQL">MySQL</option>
					<option value="REDIS">Redis</option>
				</Field>
				<Field form={form} name="version" label="Version (empty: the latest)" autocomplete="off" />
				<Field form={form} name="environmentId" label="Environment">
					{envOptions(projects)}
				</Field>
			</Form>
		</section>
	);
}

// The credentials: fetched only when asked (each GET writes an audit
// record), kept in this component alone, forgotten when hidden.
function Connection({ id }) {
	const [conn, setConn] = useState(null);
	const { error, act } = useAction();
	const reveal = act(async () => setConn(await get(`/services/${id}/connection`)));
	return (
		<div>
			<p class="muted">Revealing the credentials is recorded in the audit log, with who asked and when.</p>
			<ErrorBox error={error} />
			{conn ? (
				<>
					<dl class="facts">
						<dt>Host</dt>
						<dd>{conn.host}</dd>
						<dt>Port</dt>
						<dd>{conn.port}</dd>
						<dt>Database</dt>
						<dd>{conn.database}</dd>
						<dt>User</dt>
						<dd>{conn.username}</dd>
					</dl>
					<ShownOnce label="Connection URL" value={conn.url}>
						holds the password. It is hidden again when you leave.
					</ShownOnce>
					<button type="button" class="secondary" onClick={() => setConn(null)}>
						Hide credentials
					</button>
				</>
			) : (
				<button type="button" onClick={reveal}>
					Reveal credentials
				</button>
			)}
		</div>
	);
}

// Scheduled backups: HOURLY, DAILY at an hour (UTC) or WEEKLY on a day
// at an hour; the newest retentionCount are kept.
function Schedule({ id }) {
	const current = useData(() => get(`/services/${id}/backups/schedule`), [id]);
	if (current.error) return <ErrorBox error={current.error} />;
	if (!current.data) return <Loading what="the backup schedule" />;
	return <ScheduleForm id={id} current={current.data} saved={current.reload} />;
}

const WEEKDAYS = ['MONDAY', 'TUESDAY', 'WEDNESDAY', 'THURSDAY', 'FRIDAY', 'SATURDAY', 'SUNDAY'];

function ScheduleForm({ id, current, saved }) {
	const c = current;
	const form = useForm(
		{ enabled: c.enabled ? 'yes' : 'no', frequency: c.frequency || 'DAILY', hourUtc: c.hourUtc === null || c.hourUtc === undefined ? '3' : String(c.hourUtc), weekday: c.weekday || 'SUNDAY', retentionCount: String(c.retentionCount || 7) },
		async (v) => {
			const body = { enabled: v.enabled === 'yes', frequency: v.frequency, retentionCount: Number(v.retentionCount) };
			if (v.frequency !== 'HOURLY') body.hourUtc = Number(v.hourUtc);
			if (v.frequency === 'WEEKLY') body.weekday = v.weekday;
			await api('PUT', `/services/${id}/backups/schedule`, body);
			saved();
		},
	);
	const f = form.values.frequency;
	return (
		<>
			<p class="muted">{c.enabled && c.nextRunAt ? `Next scheduled backup: ${when(c.nextRunAt)}.` : 'No scheduled backups.'}</p>
			<Form form={form} submit="Save schedule" class="row">
				<Field form={form} name="enabled" label="Scheduled backups">
					<option value="yes">On</option>
					<option value="no">Off</option>
				</Field>
				<Field form={form} name="frequency" label="Every">
					<option value="HOURLY">hour</option>
					<option value="DAILY">day</option>
					<option value="WEEKLY">week</option>
				</Field>
				{f === 'WEEKLY' && (
					<Field form={form} name="weekday" label="On">
						{WEEKDAYS.map((d) => (
							<option key={d} value={d}>
								{d[0] + d.slice(1).toLowerCase()}
							</option>
						))}
					</Field>
				)}
				{f !== 'HOURLY' && <Field form={form} name="hourUtc" label="At (hour, UTC)" type="number" min="0" max="23" />}
				<Field form={form} name="retentionCount" label="Backups kept" type="number" min="1" max="100" />
			</Form>
		</>
	);
}

// A backup's restore, asked for in a modal dialog: it replaces the
// service's data with the dump's. The answer is the queued job, read until
// it ends (Backups: useJob); its state is said.
function Restore({ id, backup, done }) {
	const dialog = useRef(null);
	const [error, setError] = useState(null);
	const [busy, setBusy] = useState(false);
	const label = `Restore the backup of ${when(backup.createdAt)}`;
	const open = () => {
		setError(null);
		dialog.current.showModal();
	};
	const confirm = async () => {
		setBusy(true);
		setError(null);
		try {
			const job = await post(`/services/${id}/backups/${backup.id}/restore`);
			dialog.current.close();
			done(job);
		} catch (e) {
			setError(e);
		} finally {
			setBusy(false);
		}
	};
	return (
		<>
			<RowAction onClick={open} label={label}>
				Restore
			</RowAction>
			<dialog ref={dialog} aria-labelledby={`restore-${backup.id}`}>
				<h2 id={`restore-${backup.id}`}>{label}?</h2>
				<p>The service's data is replaced by this dump's (taken {when(backup.finishedAt || backup.createdAt)}). Changes made since are lost. The service must be running.</p>
				<ErrorBox error={error} />
				<div class="actions">
					<button type="button" onClick={confirm} disabled={busy}>
						Restore now
					</button>
					<button type="button" class="secondary" onClick={() => dialog.current.close()}>
						Cancel
					</button>
				</div>
			</dialog>
		</>
	);
}

const BACKUP_IN_FLIGHT = ['QUEUED', 'RUNNING'];

function Backups({ id }) {
	const backups = useData(() => get(`/services/${id}/backups?limit=50`), [id]);
	const [msg, setMsg] = useState(null);
	const { error, act } = useAction();
	const [restore, watchRestore, restoreError] = useJob();
	useRefresh(!!backups.data?.some((b) => BACKUP_IN_FLIGHT.includes(b.status)), backups.reload);
	const backup = act(async () => {
		setMsg(null);
		watchRestore(null);
		const b = await post(`/services/${id}/backups`);
		setMsg(`Backup ${b.status.toLowerCase()}.`);
		backups.reload();
	});
	const restored = (job) => {
		setMsg(null);
		watchRestore(job);
	};
	const said = msg || (restore && jobSentence('Restore', restore));
	return (
		<>
			<div class="actions">
				<button type="button" class="secondary" onClick={backup}>
					Back up now
				</button>
				<button type="button" class="secondary" onClick={backups.reload}>
					Refresh backups
				</button>
				{said && (
					<span class={!msg && restore?.status === 'FAILED' ? 'error' : 'ok'} role="status">
						{said}
					</span>
				)}
			</div>
			<ErrorBox error={error || restoreError} />
			<ListOf list={backups} what="backups" empty="No backups yet.">
				{(rows) => (
					<Table head={['Requested', 'Status', 'Size', 'Finished', <span class="sr-only">Actions</span>]}>
						{rows.map((b) => (
							<tr key={b.id} data-backup={b.id}>
								<td>{when(b.createdAt)}</td>
								<td>
									<Badge status={b.status} />
									{b.errorMessage ? ` ${b.errorMessage}` : ''}
								</td>
								<td>{b.sizeBytes === null ? '–' : `${b.sizeBytes} bytes`}</td>
								<td>{when(b.finishedAt)}</td>
								<td>
									{b.status === 'SUCCEEDED' && (
										<div class="actions">
											<a class="button secondary" href={`/services/${id}/backups/${b.id}/download`} download aria-label={`Download the backup of ${when(b.createdAt)}`}>
												Download
											</a>
											<Restore id={id} backup={b} done={restored} />
										</div>
									)}
								</td>
							</tr>
						))}
					</Table>
				)}
			</ListOf>
		</>
	);
}

// What PATCH /services/:id changes: description, version, environment.
function ServiceEdit({ service, projects, saved }) {
	const [done, setDone] = useState(false);
	const form = useForm({ description: service.description || '', version: service.version || '', environmentId: service.environmentId || '' }, async (v) => {
		setDone(false);
		const body = { description: v.description };
		if (v.version.trim() && v.version.trim() !== service.version) body.version = v.version.trim();
		if (v.environmentId && v.environmentId !== service.environmentId) body.environmentId = v.environmentId;
		await api('PATCH', `/services/${service.id}`, body);
		setDone(true);
		saved();
	});
	return (
		<>
			{done && <p role="status">Service saved.</p>}
			<Form form={form} submit="Save service" class="row">
				<Field form={form} name="description" label="Description" autocomplete="off" />
				<Field form={form} name="version" label="Version" autocomplete="off" />
				<Field form={form} name="environmentId" label="Environment">
					{envOptions(projects)}
				</Field>
			</Form>
		</>
	);
}

export function ServicePage({ id, projects }) {
	const svc = useData(() => get(`/services/${id}`), [id]);
	useTitle(svc.data ? svc.data.name : 'Service');
	return (
		<RecordPage record={svc} what="the service" back={['/app/services', 'Services']}>
			{(s) => (
				<>
					<p class="muted">
						{s.kind} {s.version}
						{s.description ? ` · ${s.description}` : ''}
					</p>
					<Lifecycle path={`/services/${id}`} changed={svc.reload} />
					<h2>Connection</h2>
					<Connection id={id} />
					<h2>Backups</h2>
					<Schedule id={id} />
					<Backups id={id} />
					<h2>Settings</h2>
					<ServiceEdit key={s.updatedAt} service={s} projects={projects} saved={svc.reload} />
				</>
			)}
		</RecordPage>
	);
}

// The navigation's badge: open alerts (GET /alerts/summary).
export function AlertCount() {
	const s = useData(() => get('/alerts/summary'), []);
	if (!s.data || !s.data.open) return null;
	return (
		<span class="count" aria-label={`${s.data.open} open alerts`}>
			{s.data.open}
		</span>
	);
}

const METRICS = ['CPU_PERCENT', 'MEMORY_PERCENT', 'DISK_PERCENT', 'SWAP_PERCENT', 'LOAD_AVERAGE_1M', 'NETWORK_RX_BYTES_PER_SECOND', 'NETWORK_TX_BYTES_PER_SECOND'];

// A rule's name, severity and, for a metric, its condition; for all
// but deployments, how long it must hold; the channel it notifies.
function RuleEdit({ rule: r, channels, close }) {
	const metric = r.kind === 'METRIC_THRESHOLD';
	const fields = [
		['name', 'Rule name', { required: true }],
		['severity', 'Severity', {}, [['WARNING', 'WARNING'], ['CRITICAL', 'CRITICAL']]],
		...(metric ? [['metric', 'Metric', {}, METRICS.map((m) => [m, m])], ['operator', 'Is', {}, [['ABOVE', 'above'], ['BELOW', 'below']]], ['threshold', 'Threshold', { type: 'number', step: 'any' }]] : []),
		...(r.kind !== 'DEPLOYMENT_FAILED' ? [['durationSeconds', 'For (seconds)', { type: 'number', min: '60' }]] : []),
		['channelId', 'Notify', {}, [['', 'No channel'], ...channels.map((c) => [c.id, c.name])]],
	];
	const initial = { name: r.name, severity: r.severity, metric: r.metric || 'CPU_PERCENT', operator: r.operator || 'ABOVE', threshold: String(r.threshold ?? ''), durationSeconds: String(r.durationSeconds ?? ''), channelId: (r.channelIds || [])[0] || '' };
	const save = (v) => {
		const body = { name: v.name.trim(), severity: v.severity, channelIds: v.channelId ? [v.channelId] : [] };
		if (metric) Object.assign(body, { metric: v.metric, operator: v.operator, threshold: Number(v.threshold) });
		if (r.kind !== 'DEPLOYMENT_FAILED') body.durationSeconds = Number(v.durationSeconds);
		return api('PATCH', `/alerts/rules/${r.id}`, body);
	};
	return <EditPanel title={`Edit rule ${r.name}`} initial={initial} fields={fields} save={save} close={close} />;
}

export function Alerts() {
	useTitle('Alerts');
	const alerts = useData(() => get('/alerts?limit=100'), []);
	const rules = useData(() => get('/alerts/rules?limit=100'), []);
	const channels = useData(() => get('/notification-channels?limit=100'), []);
	const { error, act } = useAction();
	const [editing, setEditing] = useState(null);
	const servers = useData(() => get('/servers?limit=200'), []);
	const form = useForm({ name: '', kind: 'METRIC_THRESHOLD', severity: 'WARNING', metric: 'CPU_PERCENT', operator: 'ABOVE', threshold: '90', durationSeconds: '300', serverId: '', channelId: '' }, async (v, setValues) => {
		const body = { name: v.name.trim(), kind: v.kind, severity: v.severity };
		// A metric is watched on one server; unreachable: one server, or every one.
		const serverId = v.serverId || (v.kind === 'METRIC_THRESHOLD' ? servers.data?.[0]?.id : null);
		if (v.kind === 'METRIC_THRESHOLD') Object.assign(body, { metric: v.metric, operator: v.operator, threshold: Number(v.threshold) });
		if (v.kind !== 'DEPLOYMENT_FAILED') Object.assign(body, { durationSeconds: Number(v.durationSeconds), serverId: serverId || null });
		if (v.channelId) body.channelIds = [v.channelId];
		await post('/alerts/rules', body);
		setValues((x) => ({ ...x, name: '' }));
		rules.reload();
	});
	const resolve = (a) =>
		act(async () => {
			await post(`/alerts/${a.id}/resolve`);
			alerts.reload();
		});
	const toggleRule = (r) =>
		act(async () => {
			await api('PATCH', `/alerts/rules/${r.id}`, { enabled: !r.enabled });
			rules.reload();
		});
	const removeRule = (r) =>
		act(async () => {
			await api('DELETE', `/alerts/rules/${r.id}`);
			rules.reload();
		});
	const metric = form.values.kind === 'METRIC_THRESHOLD';
	return (
		<section>
			<h1>Alerts</h1>
			<ErrorBox error={error} />
			<ListOf list={alerts} what="alerts" empty="No alerts.">
				{(rows) => (
					<Table head={['Raised', 'Severity', 'Alert', 'Status', <span class="sr-only">Actions</span>]}>
						{rows.map((a) => (
							<tr key={a.id}>
								<td>{when(a.createdAt)}</td>
								<td>
									<Badge status={a.severity} />
								</td>
								<td>
									<strong>{a.title}</strong> <span class="muted">{a.message}</span>
								</td>
								<td>
									<Badge status={a.status} />
								</td>
								<td>
									{a.status === 'OPEN' && (
										<RowAction onClick={resolve(a)} label={`Resolve ${a.title}`}>Resolve</RowAction>
									)}
								</td>
							</tr>
						))}
					</Table>
				)}
			</ListOf>
			<h2>Rules</h2>
			<ListOf list={rules} what="rules" empty="No rules.">
				{(rows) => (
					<Table head={['Name', 'Kind', 'Condition', 'Severity', 'Channels', 'Enabled', <span class="sr-only">Actions</span>]}>
						{rows.map((r) => (
							<tr key={r.id}>
								<td>{r.name}</td>
								<td>{r.kind}</td>
								<td>{r.metric ? `${r.metric} ${r.operator} ${r.threshold} for ${r.durationSeconds} s` : '–'}</td>
								<td>
									<Badge status={r.severity} />
								</td>
								<td>{(r.channelIds || []).length}</td>
								<td>{r.enabled ? 'yes' : 'no'}</td>
								<td>
									<div class="actions">
										<RowAction onClick={() => setEditing(r)} label={`Edit rule ${r.name}`}>Edit</RowAction>
										<RowAction onClick={toggleRule(r)} label={`${r.enabled ? 'Disable' : 'Enable'} rule ${r.name}`}>{r.enabled ? 'Disable' : 'Enable'}</RowAction>
										<RowAction onClick={removeRule(r)} label={`Remove rule ${r.name}`}>Remove</RowAction>
									</div>
								</td>
							</tr>
						))}
					</Table>
				)}
			</ListOf>
			{editing && <RuleEdit key={editing.id} rule={editing} channels={channels.data || []} close={(saved) => {
				setEditing(null);
				if (saved) rules.reload();
			}} />}
			<Form form={form} submit="Add rule" class="row">
				<Field form={form} name="name" label="Rule name" autocomplete="off" required />
				<Field form={form} name="kind" label="When">
					<option value="METRIC_THRESHOLD">A metric crosses a threshold</option>
					<option value="SERVER_UNREACHABLE">A server is unreachable</option>
					<option value="DEPLOYMENT_FAILED">A deployment fails</option>
				</Field>
				<Field form={form} name="severity" label="Severity">
					<option value="WARNING">WARNING</option>
					<option value="CRITICAL">CRITICAL</option>
				</Field>
				{metric && (
					<Field form={form} name="metric" label="Metric">
						{METRICS.map((m) => (
							<option key={m} value={m}>
								{m}
							</option>
						))}
					</Field>
				)}
				{metric && (
					<Field form={form} name="operator" label="Is">
						<option value="ABOVE">above</option>
						<option value="BELOW">below</option>
					</Field>
				)}
				{metric && <Field form={form} name="threshold" label="Threshold" type="number" step="any" />}
				{form.values.kind !== 'DEPLOYMENT_FAILED' && <Field form={form} name="durationSeconds" label="For (seconds)" type="number" min="60" />}
				{form.values.kind !== 'DEPLOYMENT_FAILED' && (
					<Field form={form} name="serverId" label="Server">
						{!metric && <option value="">Every server</option>}
						{(servers.data || []).map((x) => (
							<option key={x.id} value={x.id}>
								{x.name}
							</option>
						))}
					</Field>
				)}
				<Field form={form} name="channelId" label="Notify">
					<option value="">No channel</option>
					{(channels.data || []).map((c) => (
						<option key={c.id} value={c.id}>
							{c.name}
						</option>
					))}
				</Field>
			</Form>
		</section>
	);
}

export function Channels() {
	useTitle('Notification channels');
	const list = useData(() => get('/notification-channels?limit=100'), []);
	const [made, setMade] = useState(null);
	const [msg, setMsg] = useState(null);
	const [editing, setEditing] = useState(null);
	const { error, act } = useAction();
	const form = useForm({ name: '', kind: 'WEBHOOK', url: '', addresses: '' }, async (v, setValues) => {
		const body = { name: v.name.trim(), kind: v.kind };
		if (v.kind === 'EMAIL') body.addresses = v.addresses.split(/[\s,]+/).filter(Boolean);
		else body.url = v.url.trim();
		setMade(await post('/notification-channels', body));
		setValues((x) => ({ ...x, name: '', url: '', addresses: '' }));
		list.reload();
	});
	const test = (c) =>
		act(async () => {
			setMsg(null);
			await post(`/notification-channels/${c.id}/test`);
			setMsg(`A test message to ${c.name} is on its way.`);
		});
	const toggle = (c) =>
		act(async () => {
			await api('PATCH', `/notification-channels/${c.id}`, { enabled: !c.enabled });
			list.reload();
		});
	const remove = (c) =>
		act(async () => {
			await api('DELETE', `/notification-channels/${c.id}`);
			list.reload();
		});
	const email = form.values.kind === 'EMAIL';
	return (
		<section>
			<h1>Notification channels</h1>
			{made && made.signingSecret && (
				<ShownOnce label={`Signing secret of ${made.name}`} value={made.signingSecret}>
					signs every message to this channel (HMAC-SHA256). It is shown once: give it to the receiver now.
				</ShownOnce>
			)}
			{msg && <p role="status">{msg}</p>}
			<ErrorBox error={error} />
			<ListOf list={list} what="channels" empty="No channels.">
				{(rows) => (
					<Table head={['Name', 'Kind', 'Target', 'Enabled', <span class="sr-only">Actions</span>]}>
						{rows.map((c) => (
							<tr key={c.id}>
								<td>{c.name}</td>
								<td>{c.kind}</td>
								<td>{c.url || (c.addresses || []).join(', ')}</td>
								<td>{c.enabled ? 'yes' : 'no'}</td>
								<td>
									<div class="actions">
										<RowAction onClick={test(c)} label={`Send a test to ${c.name}`}>Test</RowAction>
										<RowAction onClick={() => setEditing(c)} label={`Edit channel ${c.name}`}>Edit</RowAction>
										<RowAction onClick={toggle(c)} label={`${c.enabled ? 'Disable' : 'Enable'} channel ${c.name}`}>{c.enabled ? 'Disable' : 'Enable'}</RowAction>
										<RowAction onClick={remove(c)} label={`Remove channel ${c.name}`}>Remove</RowAction>
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
					title={`Edit channel ${editing.name}`}
					initial={{ name: editing.name, url: editing.url || '', addresses: (editing.addresses || []).join(', ') }}
					fields={[['name', 'Channel name', { required: true }], editing.kind === 'EMAIL' ? ['addresses', 'Addresses (comma separated)', { required: true }] : ['url', 'URL', { type: 'url', required: true }]]}
					save={(v) =>
						api('PATCH', `/notification-channels/${editing.id}`, editing.kind === 'EMAIL' ? { name: v.name.trim(), addresses: v.addresses.split(/[\s,]+/).filter(Boolean) } : { name: v.name.trim(), url: v.url.trim() })
					}
					close={(saved) => {
						setEditing(null);
						if (saved) list.reload();
					}}
				/>
			)}
			<h2>New channel</h2>
			<Form form={form} submit="Add channel" class="row">
				<Field form={form} name="name" label="Channel name" autocomplete="off" required />
				<Field form={form} name="kind" label="Kind">
					<option value="WEBHOOK">Webhook</option>
					<option value="SLACK">Slack</option>
					<option value="DISCORD">Discord</option>
					<option value="EMAIL">E-mail</option>
				</Field>
				{email ? (
					<Field form={form} name="addresses" label="Addresses (comma separated)" autocomplete="off" required />
				) : (
					<Field form={form} name="url" label="URL" type="url" autocomplete="off" required />
				)}
			</Form>
		</section>
	);
}

// The local server's ingress as Caddy reports it now (GET /proxy): the
// routes of this organization's applications and the certificates'
// policies; a Caddy that does not answer is shown with the reason.
function Ingress() {
	const proxy = useData(() => get('/proxy'), []);
	if (proxy.error) return <ErrorBox error={proxy.error} />;
	if (!proxy.data) return <Loading what="the ingress" />;
	const p = proxy.data;
	if (!p.reachable) {
		return (
			<p class="muted" data-reachable="false">
				Caddy does not answer on this host: {p.error}
			</p>
		);
	}
	return (
		<div data-reachable="true">
			<p>{p.server ? `Listening on ${p.server.listen.join(', ')}${p.server.automaticHttps ? ', with automatic HTTPS' : ''}.` : 'No route set yet.'}</p>
			{p.routes.length > 0 && (
				<Table head={['Hostnames', 'Forwarded to', 'Application']}>
					{p.routes.map((r) => (
						<tr key={r.id}>
							<td>{r.hosts.join(', ')}</td>
							<td>{r.upstreams.join(', ')}</td>
							<td>
								<Link href={`/app/applications/${r.applicationId}`}>{r.applicationId}</Link>
							</td>
						</tr>
					))}
				</Table>
			)}
			{p.certificates.length > 0 && (
				<Table head={['Certificates for', 'Issuers', 'On demand']}>
					{p.certificates.map((c, i) => (
						<tr key={i}>
							<td>{c.subjects.length ? c.subjects.join(', ') : 'every name'}</td>
							<td>{c.issuers.join(', ')}</td>
							<td>{c.onDemand ? 'yes' : 'no'}</td>
						</tr>
					))}
				</Table>
			)}
		</div>
	);
}

// The list's badge for a server whose figures describe a container: one
// on-demand sample (GET /servers/:id/sample, which only the local server
// answers; a remote server's agent does not carry samples yet) says its
// scope. Nothing is shown while it is asked, or when it cannot say.
function ScopeBadge({ id, onContainer }) {
	const sample = useData(() => get(`/servers/${id}/sample`), [id]);
	const contained = sample.data?.scope === 'CONTAINER';
	useEffect(() => {
		if (contained) onContainer(true);
	}, [contained]);
	if (!contained) return null;
	return (
		<span class="badge badge-warning" data-scope="CONTAINER">
			container figures
		</span>
	);
}

export function Servers() {
	useTitle('Servers');
	const list = useData(() => get('/servers?limit=200'), []);
	const [made, setMade] = useState(null);
	const { error, act } = useAction();
	const [contained, setContained] = useState(false);
	// A new token for a server: the old one stops working at once.
	const rotate = (s) => act(async () => setMade(await post(`/servers/${s.id}/agent-token`)));
	const remove = (s) =>
		act(async () => {
			await api('DELETE', `/servers/${s.id}`);
			list.reload();
		});
	const form = useForm({ name: '', host: '' }, async (v, setValues) => {
		const body = { name: v.name.trim() };
		if (v.host.trim()) body.host = v.host.trim();
		setMade(await post('/servers', body));
		setValues({ name: '', host: '' });
		list.reload();
	});
	return (
		<section>
			<h1>Servers</h1>
			{contained && <MountsBanner />}
			{made && (
				<>
					<ShownOnce label={`Agent token of ${made.name}`} value={made.agentToken}>
						lets the agent on {made.name} connect. It is shown once.
					</ShownOnce>
					<ShownOnce label="Command to start the agent" value={`STEWARD_URL=${location.origin} STEWARD_AGENT_TOKEN=${made.agentToken} steward-agent`}>
						to run on the server.
					</ShownOnce>
				</>
			)}
			<ErrorBox error={error} />
			<ListOf list={list} what="servers" empty="No servers.">
				{(rows) => (
					<Table head={['Name', 'Host', 'Status', 'Applications', 'Services', 'Last seen', <span class="sr-only">Actions</span>]}>
						{rows.map((s) => (
							<tr key={s.id}>
								<td>
									<Link href={`/app/servers/${s.id}`}>{s.name}</Link> {s.isLocal && <span class="muted">(this host)</span>}
								</td>
								<td>{s.host || '–'}</td>
								<td>
									<Badge status={s.status} /> {s.isLocal && <ScopeBadge id={s.id} onContainer={setContained} />}
								</td>
								<td>{s.applicationCount}</td>
								<td>{s.serviceCount}</td>
								<td>{when(s.lastSeenAt)}</td>
								<td>
									{!s.isLocal && (
										<div class="actions">
											<RowAction onClick={rotate(s)} label={`New agent token for ${s.name}`}>New agent token</RowAction>
											<RowAction onClick={remove(s)} label={`Remove server ${s.name}`}>Remove</RowAction>
										</div>
									)}
								</td>
							</tr>
						))}
					</Table>
				)}
			</ListOf>
			<h2>Ingress of this host</h2>
			<Ingress />
			<h2>Add a server</h2>
			<Form form={form} submit="Add server" class="row">
				<Field form={form} name="name" label="Server name" autocomplete="off" required />
				<Field form={form} name="host" label="Host (optional)" autocomplete="off" />
			</Form>
		</section>
	);
}
