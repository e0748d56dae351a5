// Metrics: a server's page (its facts, the host-mounts banner, live charts
// from GET /servers/:id/live and history at MINUTE or HOUR resolution from
// GET /servers/:id/metrics) and an application's containers' history
// (GET /applications/:id/metrics).
//
// Charts are uPlot's canvases. uPlot sets its elements' sizes through
// element.style (the CSSOM, which a style-src 'self' policy allows: only
// style attributes in markup and <style> elements are refused) and its
// own rules come from uPlot.min.css, bundled into the app's one
// stylesheet. Its legend is off: each chart's latest figures are text
// beside it, which screen readers read (the canvas is an image with a
// label saying what it shows).
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, get } from './api.js';
import { openLive } from './live.js';
import { ErrorBox, Field, Form, Loading, RecordPage, useData, useForm, useTitle, when } from './ui.jsx';

// The live charts keep this many samples (10 minutes at 15 s).
const LIVE_POINTS = 40;
const COLOURS = ['#0a58ca', '#b3261e', '#116329', '#6a4b00'];

export function bytes(n) {
	if (n === null || n === undefined) return '–';
	const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
	let i = 0;
	while (Math.abs(n) >= 1024 && i < units.length - 1) {
		n /= 1024;
		i++;
	}
	return `${n >= 100 || i === 0 ? Math.round(n) : n.toFixed(1)} ${units[i]}`;
}
const percent = (n) => (n === null || n === undefined ? '–' : `${n.toFixed(1)} %`);
const rate = (n) => (n === null || n === undefined ? '–' : `${bytes(n)}/s`);
const ratio = (used, total) => (used === null || used === undefined || !total ? null : (100 * used) / total);

// Every figure is 0 or more: the y axis starts at 0; percentages show
// at least up to 100, other figures a tenth above their highest.
const yRange = (format) => (u, min, max) => [0, format === percent ? Math.max(100, max) : max > 0 ? max * 1.1 : 1];

// One chart: data is [times in seconds, ...one array per series];
// format(value) writes a figure; span, given, is the time range asked for
// ([from, to] in seconds; else the data's, a minute either side of a lone
// point). The wrapper says how many points it drew (data-points), for
// people reading the page's source and for tests.
export function Chart({ title, series, data, format, span }) {
	const box = useRef(null);
	const plot = useRef(null);
	const spanNow = useRef(span);
	spanNow.current = span;
	useEffect(() => {
		const el = box.current;
		const width = () => Math.max(240, el.clientWidth);
		plot.current = new uPlot(
			{
				width: width(),
				height: 160,
				legend: { show: false },
				scales: { x: { time: true, range: (u, min, max) => spanNow.current || (min === max ? [min - 60, max + 60] : [min, max]) }, y: { range: yRange(format) } },
				series: [{}, ...series.map((label, i) => ({ label, stroke: COLOURS[i % COLOURS.length], width: 2, spanGaps: false }))],
				axes: [{}, { size: 80, values: (u, ticks) => ticks.map((v) => (format === percent ? `${+v.toFixed(2)} %` : format(v))) }],
			},
			data,
			el,
		);
		const observer = new ResizeObserver(() => plot.current.setSize({ width: width(), height: 160 }));
		observer.observe(el);
		return () => {
			observer.disconnect();
			plot.current.destroy();
			plot.current = null;
		};
	}, [series.join('\n')]);
	useEffect(() => {
		plot.current?.setData(data);
	}, [data]);
	const last = data[0].length - 1;
	const latest = series.map((label, i) => `${label} ${last >= 0 ? format(data[i + 1][last]) : '–'}`).join(', ');
	return (
		<figure class="chart" data-points={data[0].length}>
			<figcaption>{title}</figcaption>
			<div ref={box} role="img" aria-label={`${title}: ${data[0].length} points${last >= 0 ? `, latest ${latest}` : ''}`} />
			<p class="muted chart-latest">{last >= 0 ? latest : 'No figures yet.'}</p>
		</figure>
	);
}

// The figures of a sample the charts draw.
function liveFigures(s) {
	const net = (s.network || []).filter((n) => n.interface !== 'lo');
	const sum = (k) => (net.length ? net.reduce((a, n) => a + (n[k] || 0), 0) : null);
	const disks = s.disks || [];
	const root = disks.find((d) => d.mountPoint === '/') || disks[0];
	return {
		t: Date.parse(s.takenAt) / 1000,
		cpu: s.cpu?.totalPercent ?? null,
		memory: ratio(s.memory?.usedBytes, s.memory?.totalBytes),
		rx: sum('rxBytesPerSecond'),
		tx: sum('txBytesPerSecond'),
		disk: root ? ratio(root.usedBytes, root.totalBytes) : null,
	};
}

const columns = (rows, keys) => [rows.map((r) => r.t), ...keys.map((k) => rows.map((r) => r[k]))];

// The four charts of one set of rows ({t, cpu, memory, rx, tx, disk}).
function HostCharts({ rows, netTitle, netFormat, span }) {
	return (
		<div class="charts">
			<Chart title="CPU" series={['total']} data={columns(rows, ['cpu'])} format={percent} span={span} />
			<Chart title="Memory used" series={['used']} data={columns(rows, ['memory'])} format={percent} span={span} />
			<Chart title={netTitle} series={['received', 'sent']} data={columns(rows, ['rx', 'tx'])} format={netFormat} span={span} />
			<Chart title="Disk used" series={['used']} data={columns(rows, ['disk'])} format={percent} span={span} />
		</div>
	);
}

const LIVE_TEXT = { connecting: 'Connecting…', live: 'Live', reconnecting: 'Connection lost; reconnecting…', refused: 'Not available', 'not-found': 'No such server', 'signed-out': 'Signed out' };

// The spec's banner: without the host's trees mounted, a Steward in a
// container measures that container.
export function MountsBanner() {
	return (
		<div class="banner" role="alert" data-scope="CONTAINER">
			<strong>These figures describe Steward's container, not the host.</strong> Mount the host's <code>/proc</code>, <code>/sys</code> and <code>/</code> into the container and set{' '}
			<code>HOST_PROC_PATH</code>, <code>HOST_SYS_PATH</code> and <code>HOST_ROOT_PATH</code> to them.
		</div>
	);
}

function Live({ id, onSample }) {
	const [rows, setRows] = useState([]);
	const [last, setLast] = useState(null);
	const [state, setState] = useState('connecting');
	const [refusal, setRefusal] = useState(null);
	useEffect(() => {
		setRows([]);
		const live = openLive(`/servers/${id}/live`, {
			onEvent(e) {
				if (e.event !== 'sample') return;
				let s;
				try {
					s = JSON.parse(e.data);
				} catch {
					return;
				}
				const f = liveFigures(s);
				setLast(s);
				onSample(s);
				setRows((r) => (r.length && r[r.length - 1].t >= f.t ? r : [...r, f].slice(-LIVE_POINTS)));
			},
			onState: setState,
			onRefused: setRefusal,
		});
		return () => live.close();
	}, [id]);
	return (
		<div>
			<p class="live-state" data-state={state} role="status">
				{LIVE_TEXT[state]}
				{last ? ` · last sample ${when(last.takenAt)}` : ''}
			</p>
			<ErrorBox error={refusal} />
			{last && (
				<dl class="facts">
					<dt>Host</dt>
					<dd>
						{[last.host.hostname, last.host.osName, last.host.osVersion, last.host.kernel, last.host.architecture].filter(Boolean).join(' · ') || '–'}
					</dd>
					<dt>CPU</dt>
					<dd>
						{last.cpu.model || '–'}, {last.cpu.logicalCores} logical cores, load {last.cpu.load1.toFixed(2)} / {last.cpu.load5.toFixed(2)} / {last.cpu.load15.toFixed(2)}
					</dd>
					<dt>Memory</dt>
					<dd>
						{bytes(last.memory.usedBytes)} of {bytes(last.memory.totalBytes)} used
					</dd>
					<dt>Containers</dt>
					<dd>
						{last.containers.running} running, {last.containers.stopped} stopped, {last.containers.unhealthy} unhealthy
					</dd>
				</dl>
			)}
			{state !== 'refused' && <HostCharts rows={rows} netTitle="Network" netFormat={rate} />}
		</div>
	);
}

const RESOLUTIONS = [
	['MINUTE', 'Per minute (last hour)'],
	['HOUR', 'Per hour (last day)'],
];

// A resolution picker: radio buttons, so that the arrow keys move along.
function Resolution({ value, set, name }) {
	return (
		<fieldset class="resolution">
			<legend>Resolution</legend>
			{RESOLUTIONS.map(([r, label]) => (
				<label key={r}>
					<input type="radio" name={name} value={r} checked={value === r} onChange={() => set(r)} /> {label}
				</label>
			))}
		</fieldset>
	);
}

// The range a history answer covers, in seconds.
const spanOf = (h) => [Date.parse(h.since) / 1000, Date.parse(h.until) / 1000];

function History({ id }) {
	const [resolution, setResolution] = useState('MINUTE');
	const history = useData(() => get(`/servers/${id}/metrics?resolution=${resolution}`), [id, resolution]);
	const per = resolution === 'MINUTE' ? 'minute' : 'hour';
	const rows = (history.data?.points || []).map((p) => ({
		t: Date.parse(p.bucket) / 1000,
		cpu: p.cpuPercent?.avg ?? null,
		memory: ratio(p.memoryUsedBytes?.avg, p.memoryTotalBytes),
		rx: p.networkRxBytes,
		tx: p.networkTxBytes,
		disk: ratio(p.diskUsedBytesMax, p.diskTotalBytes),
	}));
	return (
		<div data-resolution={resolution}>
			<div class="actions">
				<Resolution value={resolution} set={setResolution} name={`resolution-${id}`} />
				<button type="button" class="secondary" onClick={history.reload}>
					Refresh history
				</button>
			</div>
			<ErrorBox error={history.error} />
			{history.data && rows.length === 0 && <p class="muted">No {per} has been recorded yet: a {per} is written once it is over.</p>}
			{rows.length > 0 && <HostCharts rows={rows} netTitle={`Network (bytes per ${per})`} netFormat={bytes} span={spanOf(history.data)} />}
			{!history.data && !history.error && <Loading what="the history" />}
		</div>
	);
}

// The name, host and description of a server (PATCH /servers/:id).
function ServerEdit({ server, saved }) {
	const [done, setDone] = useState(false);
	const form = useForm({ name: server.name, host: server.host || '', description: server.description || '' }, async (v) => {
		setDone(false);
		await api('PATCH', `/servers/${server.id}`, { name: v.name.trim(), host: v.host.trim() || null, description: v.description });
		setDone(true);
		saved();
	});
	return (
		<>
			{done && <p role="status">Server saved.</p>}
			<Form form={form} submit="Save server" class="row">
				<Field form={form} name="name" label="Server name" autocomplete="off" required />
				<Field form={form} name="host" label="Host" autocomplete="off" />
				<Field form={form} name="description" label="Description" autocomplete="off" />
			</Form>
		</>
	);
}

export function ServerPage({ id }) {
	const server = useData(() => get(`/servers/${id}`), [id]);
	const [scope, setScope] = useState(null);
	useTitle(server.data ? server.data.name : 'Server');
	return (
		<RecordPage record={server} what="the server" back={['/app/servers', 'Servers']} extra={server.data?.isLocal && <span class="muted">this host</span>}>
			{(s) => (
				<>
					{scope === 'CONTAINER' && <MountsBanner />}
					<p class="muted">
						{s.host || 'No host given'}
						{s.description ? ` · ${s.description}` : ''} · last seen {when(s.lastSeenAt)}
					</p>
					<h2>Live</h2>
					<Live id={id} onSample={(x) => setScope(x.scope)} />
					<h2>History</h2>
					<History id={id} />
					<h2>Settings</h2>
					<ServerEdit key={s.updatedAt} server={s} saved={server.reload} />
				</>
			)}
		</RecordPage>
	);
}

// An application's containers, per minute or hour: CPU % (of one core)
// and memory, one series per container (a new container is a new series).
export function ApplicationMetrics({ app }) {
	const [resolution, setResolution] = useState('MINUTE');
	const history = useData(() => get(`/applications/${app.id}/metrics?resolution=${resolution}`), [app.id, resolution]);
	const points = history.data?.points || [];
	const ids = [...new Set(points.map((p) => p.containerId))].sort().slice(0, COLOURS.length);
	const times = [...new Set(points.map((p) => Date.parse(p.bucket) / 1000))].sort((a, b) => a - b);
	const of = (pick) => [
		times,
		...ids.map((c) => times.map((t) => {
			const p = points.find((x) => x.containerId === c && Date.parse(x.bucket) / 1000 === t);
			return p ? pick(p) : null;
		})),
	];
	const names = ids.map((c) => c.slice(0, 12));
	const per = resolution === 'MINUTE' ? 'minute' : 'hour';
	return (
		<div data-resolution={resolution}>
			<div class="actions">
				<Resolution value={resolution} set={setResolution} name={`app-resolution-${app.id}`} />
			</div>
			<ErrorBox error={history.error} />
			{!history.data && !history.error && <Loading what="the metrics" />}
			{history.data && points.length === 0 && <p class="muted">No container of this application has been measured in this range yet.</p>}
			{history.data && ids.length > 0 && (
				<div class="charts">
					<Chart title="CPU (% of one core)" series={names} data={of((p) => p.cpuPercent?.avg ?? null)} format={percent} span={spanOf(history.data)} />
					<Chart title="Memory" series={names} data={of((p) => p.memoryBytes?.avg ?? null)} format={bytes} span={spanOf(history.data)} />
					<Chart title={`Network received (bytes per ${per})`} series={names} data={of((p) => p.networkRxBytes)} format={bytes} span={spanOf(history.data)} />
					<Chart title={`Network sent (bytes per ${per})`} series={names} data={of((p) => p.networkTxBytes)} format={bytes} span={spanOf(history.data)} />
				</div>
			)}
		</div>
	);
}
