// Small pieces every page uses: loading data, forms with the API's field
// errors, status badges.
import { useCallback, useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { ApiError, get, post } from './api.js';
import { Link } from './router.jsx';

// Runs load() now and whenever deps change; reload() runs it again. Only
// the latest run's answer is shown: an earlier one still in flight (the
// page's first load, a reload before an edit) may answer last, and would
// put back what the later one replaced.
export function useData(load, deps) {
	const [state, setState] = useState({ data: null, error: null, loading: true });
	const latest = useRef(0);
	const run = useCallback(() => {
		const n = ++latest.current;
		setState((s) => ({ ...s, loading: true }));
		load().then(
			(data) => n === latest.current && setState({ data, error: null, loading: false }),
			(error) => n === latest.current && setState({ data: null, error, loading: false }),
		);
		// Unmounted, or deps changed: no answer of this run or before is shown.
		return () => void latest.current++;
	}, deps);
	useEffect(run, [run]);
	return { ...state, reload: run };
}

// A form: submit(values) is the API call; its ApiError's message shows
// above the form and its field errors next to their fields.
export function useForm(initial, submit) {
	const [values, setValues] = useState(initial);
	const [error, setError] = useState(null);
	const [busy, setBusy] = useState(false);
	const set = (name) => (e) => setValues((v) => ({ ...v, [name]: e.currentTarget.value }));
	const onSubmit = async (e) => {
		e.preventDefault();
		setBusy(true);
		setError(null);
		try {
			await submit(values, setValues);
		} catch (err) {
			setError(err instanceof ApiError ? err : new ApiError(0, { error: { code: 'CLIENT', message: String(err.message || err) } }));
		} finally {
			setBusy(false);
		}
	};
	return { values, set, setValues, error, busy, onSubmit };
}

// Sets form's `name` to `first` while it is empty: a select whose
// options come later (the projects' environments) shows what a submit
// would send, not a blank.
export function useDefault(form, name, first) {
	useEffect(() => {
		if (!form.values[name] && first) form.setValues((v) => ({ ...v, [name]: first }));
	}, [first, form.values[name]]);
}

export function ErrorBox({ error }) {
	if (!error) return null;
	return (
		<p class="error" role="alert">
			{error.message}
		</p>
	);
}

let fieldIds = 0;
export function Field({ form, name, label, type = 'text', children, ...rest }) {
	const [id] = useState(() => `f${++fieldIds}`);
	const errors = form.error?.fields?.[name];
	const control = children ? (
		<select id={id} name={name} value={form.values[name]} onChange={form.set(name)} aria-invalid={errors ? 'true' : undefined} aria-describedby={errors ? `${id}-e` : undefined} {...rest}>
			{children}
		</select>
	) : (
		<input id={id} name={name} type={type} value={form.values[name]} onInput={form.set(name)} aria-invalid={errors ? 'true' : undefined} aria-describedby={errors ? `${id}-e` : undefined} {...rest} />
	);
	return (
		<div class="field">
			<label for={id}>{label}</label>
			{control}
			{errors && (
				<span class="field-error" id={`${id}-e`}>
					{errors.join(' ')}
				</span>
			)}
		</div>
	);
}

export function Badge({ status }) {
	return <span class={`badge badge-${String(status).toLowerCase()}`}>{status}</span>;
}

export function when(ts) {
	return ts ? new Date(ts).toLocaleString() : '–';
}

export function duration(ms) {
	if (ms === null || ms === undefined) return '–';
	const s = Math.round(ms / 1000);
	return s < 60 ? `${s} s` : `${Math.floor(s / 60)} min ${s % 60} s`;
}

export function Loading({ what }) {
	return <p class="muted">Loading {what}…</p>;
}

// A table with one header row (head: the column titles; a title may be
// markup, e.g. a visually hidden one).
export function Table({ head, children }) {
	return (
		<table>
			<thead>
				<tr>
					{head.map((h, i) => (
						<th key={i}>{h}</th>
					))}
				</tr>
			</thead>
			<tbody>{children}</tbody>
		</table>
	);
}

// The document's title: the page's, then the product's. Set in the same
// commit as the page it names (a layout effect), so the tab, a screen
// reader and a test never see a heading with the previous page's title.
export function useTitle(title) {
	useLayoutEffect(() => {
		document.title = title ? `${title} · Steward` : 'Steward';
	}, [title]);
}

// Reloads every `ms` while `active` (a list with work still in flight).
export function useRefresh(active, reload, ms = 5000) {
	useEffect(() => {
		if (!active) return undefined;
		const t = setInterval(reload, ms);
		return () => clearInterval(t);
	}, [active, reload, ms]);
}

const JOB_ENDED = ['SUCCEEDED', 'FAILED', 'CANCELLED'];

// A job a 202 answered with, read again with GET /jobs/:id every `ms`
// until it ends; ended(job) is called once with its end. Returns [job,
// watch, error]: watch(job) starts with the 202's job; error is the API's
// when a read fails (the reading stops there).
export function useJob(ended, ms = 1000) {
	const [job, setJob] = useState(null);
	const [error, setError] = useState(null);
	const endedRef = useRef(ended);
	endedRef.current = ended;
	useEffect(() => {
		if (!job || JOB_ENDED.includes(job.status)) return undefined;
		let live = true;
		const t = setTimeout(async () => {
			try {
				const next = await get(`/jobs/${job.id}`);
				if (!live) return;
				setJob(next);
				if (JOB_ENDED.includes(next.status)) endedRef.current?.(next);
			} catch (e) {
				if (live) setError(e);
			}
		}, ms);
		return () => {
			live = false;
			clearTimeout(t);
		};
	}, [job, ms]);
	const watch = useCallback((j) => {
		setError(null);
		setJob(j && j.id ? j : null);
	}, []);
	return [job, watch, error];
}

// What a job of `name` ("Restore") has come to, in a sentence.
export function jobSentence(name, job) {
	switch (job.status) {
		case 'RUNNING':
			return `${name} running.`;
		case 'SUCCEEDED':
			return `${name} succeeded.`;
		case 'FAILED':
			return `${name} failed: ${job.errorMessage || 'no reason was recorded.'}`;
		case 'CANCELLED':
			return `${name} cancelled.`;
		default:
			return `${name} queued.`;
	}
}

// A form of useForm(): the API's error above its fields, one submit button.
export function Form({ form, submit, secondary = false, class: cls, children }) {
	return (
		<form onSubmit={form.onSubmit} class={cls} noValidate>
			<ErrorBox error={form.error} />
			{children}
			<button type="submit" class={secondary ? 'secondary' : undefined} disabled={form.busy}>
				{submit}
			</button>
		</form>
	);
}

// A button's call to the API: act(fn) is its click handler; the API's
// error, if any, is kept for display until the next click.
export function useAction() {
	const [error, setError] = useState(null);
	const act = (fn) => async () => {
		setError(null);
		try {
			await fn();
		} catch (e) {
			setError(e);
		}
	};
	return { error, act };
}

// A secret the API answers once (a token, a signing secret): shown in
// full with a copy button, and never again after this page is left.
export function ShownOnce({ label, value, children }) {
	const [copied, setCopied] = useState(null);
	const copy = async () => {
		try {
			await navigator.clipboard.writeText(value);
			setCopied(value);
		} catch {
			setCopied(null);
		}
	};
	return (
		<div class="once" role="group" aria-label={label}>
			<p>
				<strong>{label}</strong> {children || 'is shown once: copy it now.'}
			</p>
			<div class="once-value">
				<code class="secret">{value}</code>
				<button type="button" class="secondary" onClick={copy} aria-label={`Copy ${label}`}>
					Copy
				</button>
				<span role="status" class="ok">
					{copied === value ? 'Copied' : ''}
				</span>
			</div>
		</div>
	);
}

// A list page's data: `path` loaded, the API's error shown, `empty` when
// the list is empty, else render(rows).
export function ListOf({ list, what, empty, children }) {
	if (list.error) return <ErrorBox error={list.error} />;
	if (!list.data) return <Loading what={what} />;
	if (list.data.length === 0) return <p class="muted">{empty}</p>;
	return children(list.data);
}

// A record's page: the API's error, or "Loading <what>", until the
// record is there; then children(record), under its title row (its name,
// its status badge, then `extra`) and, given, a link back to its list.
export function RecordPage({ record, what, back, extra, children }) {
	if (record.error) return <ErrorBox error={record.error} />;
	if (!record.data) return <Loading what={what} />;
	const r = record.data;
	return (
		<section>
			{back && (
				<p>
					<Link href={back[0]}>← {back[1]}</Link>
				</p>
			)}
			<div class="title-row">
				<h1>{r.name}</h1>
				<Badge status={r.status} />
				{extra}
			</div>
			{children(r)}
		</section>
	);
}

// A row's button (Remove, Revoke...): its label names the row, so that
// every one reads differently to a screen reader; the visible text starts it.
export function RowAction({ onClick, label, children }) {
	return (
		<button type="button" class="secondary" onClick={onClick} aria-label={label}>
			{children}
		</button>
	);
}

// Start, stop and restart of an application or a service (`path`): each
// queues a job, read until it ends (useJob); its state is said, and
// changed() reloads the record when it is queued and when it ends.
export function Lifecycle({ path, changed }) {
	const [name, setName] = useState(null);
	const [job, watch, jobError] = useJob(() => changed());
	const { error, act: run } = useAction();
	const act = (verb) =>
		run(async () => {
			setName(null);
			watch(null);
			const queued = await post(`${path}/${verb}`);
			setName(`${verb[0].toUpperCase()}${verb.slice(1)}`);
			watch(queued);
			changed();
		});
	const msg = name && (job ? jobSentence(name, job) : `${name} queued.`);
	return (
		<div class="actions">
			{['start', 'stop', 'restart'].map((verb) => (
				<button key={verb} type="button" onClick={act(verb)}>
					{verb[0].toUpperCase() + verb.slice(1)}
				</button>
			))}
			{msg && (
				<span class={job?.status === 'FAILED' ? 'error' : 'ok'} role="status">
					{msg}
				</span>
			)}
			<ErrorBox error={error || jobError} />
		</div>
	);
}

// The form that changes one record (a PATCH), opened by a row's Edit
// button and shown under the list: fields are [name, label, props,
// options] (options [[value, text]] make a select); save(values) is the
// API call; close(saved) hides it. Its first field takes the focus as the
// panel appears: a layout effect, run in the same task as the click or key
// that opened it. (An effect runs after the next frame, up to tens of
// milliseconds later on a busy machine, and took the focus away from a
// field the user had already moved to: what they typed next went into the
// first field instead.)
export function EditPanel({ title, initial, fields, save, close }) {
	const form = useForm(initial, async (v) => {
		await save(v);
		close(true);
	});
	const box = useRef(null);
	useLayoutEffect(() => box.current?.querySelector('input, select')?.focus(), []);
	return (
		<div class="card edit" role="group" aria-label={title} ref={box}>
			<h3>{title}</h3>
			<Form form={form} submit="Save" class="row">
				{fields.map(([name, label, props = {}, options]) => (
					<Field key={name} form={form} name={name} label={label} autocomplete="off" {...props}>
						{options && options.map(([v, text]) => (
							<option key={v} value={v}>
								{text}
							</option>
						))}
					</Field>
				))}
			</Form>
			<button type="button" class="secondary" onClick={() => close(false)}>
				Cancel
			</button>
		</div>
	);
}
