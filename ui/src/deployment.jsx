// One deployment: its record and the live build log (GET /deployments/:id/live).
import { useEffect, useRef, useState } from 'preact/hooks';
import { get, post } from './api.js';
import { openLive } from './live.js';
import { LogView } from './logview.js';
import { Link, navigate } from './router.jsx';
import { Badge, ErrorBox, Loading, duration, useAction, useData, useTitle, when } from './ui.jsx';

const STATE_TEXT = {
	connecting: 'Connecting…',
	live: 'Live',
	reconnecting: 'Connection lost; reconnecting…',
	ended: 'Ended',
	'not-found': 'No such deployment',
	'signed-out': 'Signed out',
};

function LiveLog({ id, ended }) {
	const box = useRef(null);
	const [state, setState] = useState('connecting');
	useEffect(() => {
		const view = new LogView(box.current);
		const live = openLive(`/deployments/${id}/live`, {
			onEvent(e) {
				if (e.event === 'log') view.append(e.data);
				else if (e.event === 'status') {
					live.close();
					setState('ended');
					ended();
				}
			},
			onState: setState,
		});
		return () => live.close();
	}, [id]);
	return (
		<div>
			<p class="live-state" data-state={state} role="status">
				{STATE_TEXT[state]} · <a href={`/deployments/${id}/logs`} target="_blank" rel="noopener">Full log</a>
			</p>
			<div class="log" ref={box} tabIndex={0} role="log" aria-label="Build log" />
		</div>
	);
}

// Rollback: a SUCCEEDED deployment whose image is kept is applied again
// as a new deployment (trigger ROLLBACK); the API refuses any other.
function Rollback({ d }) {
	const { error, act } = useAction();
	if (d.status !== 'SUCCEEDED' || !d.imageTag) return null;
	const roll = act(async () => {
		const r = await post(`/deployments/${d.id}/rollback`);
		navigate(`/app/deployments/${r.id}`);
	});
	return (
		<div class="actions">
			<button type="button" class="secondary" onClick={roll}>
				Roll back to #{d.number}
			</button>
			<span class="muted">Runs image {d.imageTag} again, without a rebuild.</span>
			<ErrorBox error={error} />
		</div>
	);
}

export function DeploymentPage({ id }) {
	const dep = useData(() => get(`/deployments/${id}`), [id]);
	useTitle(dep.data ? `Deployment #${dep.data.number}` : 'Deployment');
	if (dep.error) return <ErrorBox error={dep.error} />;
	const d = dep.data;
	return (
		<section>
			{!d ? (
				<Loading what="the deployment" />
			) : (
				<>
					<p>
						<Link href={`/app/applications/${d.applicationId}`}>← Application</Link>
					</p>
					<div class="title-row">
						<h1>Deployment #{d.number}</h1>
						<Badge status={d.status} />
					</div>
					<dl class="facts">
						<dt>Trigger</dt>
						<dd>{d.trigger}</dd>
						<dt>Commit</dt>
						<dd>{d.commitSha ? `${d.commitSha.slice(0, 12)} ${d.commitMessage || ''}` : '–'}</dd>
						<dt>Started</dt>
						<dd>{when(d.startedAt)}</dd>
						<dt>Duration</dt>
						<dd>{duration(d.durationMs)}</dd>
						{d.rollbackOf && (
							<>
								<dt>Rolls back</dt>
								<dd>
									<Link href={`/app/deployments/${d.rollbackOf}`}>the deployment it re-applies</Link>
								</dd>
							</>
						)}
					</dl>
					<Rollback d={d} />
					{d.errorMessage && (
						<p class="error" role="alert">
							{d.errorMessage}
						</p>
					)}
				</>
			)}
			<LiveLog id={id} ended={dep.reload} />
		</section>
	);
}
