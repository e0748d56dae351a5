// Steward's dashboard. Boot: GET /setup-status (the first-run form while
// setupRequired), then GET /auth/session (the sign-in form on 401), then
// the page the path names. Every page under /app; "/" goes to the list of
// applications.
import { render } from 'preact';
import { useCallback, useEffect, useState } from 'preact/hooks';
import { ApiError, get, post, whenSignedOut } from './api.js';
import { Account } from './account.jsx';
import { ApplicationPage, Applications, NewApplication, ProjectNav, Projects, TABS } from './apps.jsx';
import { AcceptInvitation, ForgotPassword, PUBLIC_PATHS, ResetPassword, SignIn, Setup } from './auth.jsx';
import { GitCredentials } from './appparts.jsx';
import { DeploymentPage } from './deployment.jsx';
import { ServerPage } from './metrics.jsx';
import { AlertCount, Alerts, Channels, ServicePage, Servers, Services } from './ops.jsx';
import { Audit, Organization, Plans, Tokens } from './org.jsx';
import { Link, match, navigate, useLocation } from './router.jsx';
import { ErrorBox, Loading, useData } from './ui.jsx';
import './style.css';

// The header's sections: [path, label, operators only].
const SECTIONS = [
	['/app/applications', 'Applications'],
	['/app/services', 'Services'],
	['/app/servers', 'Servers'],
	['/app/alerts', 'Alerts'],
	['/app/channels', 'Channels'],
	['/app/git-credentials', 'Git credentials'],
	['/app/organization', 'Organization'],
	['/app/tokens', 'API tokens'],
	['/app/plan', 'Plan'],
	['/app/audit', 'Audit log', true],
];

function Shell({ session, signOut, reloadSession }) {
	const { path, query } = useLocation();
	const projects = useData(() => get('/projects?limit=200'), []);
	let page;
	let m;
	if (path === '/app/applications') page = <Applications query={query} />;
	else if (path === '/app/applications/new') page = <NewApplication projects={projects.data} query={query} />;
	else if ((m = match('/app/applications/:id', path))) page = <ApplicationPage id={m.id} tab="deployments" />;
	else if ((m = match('/app/applications/:id/:tab', path)) && TABS.some(([t]) => t === m.tab)) page = <ApplicationPage id={m.id} tab={m.tab} />;
	else if ((m = match('/app/deployments/:id', path))) page = <DeploymentPage id={m.id} />;
	else if (path === '/app/account') page = <Account session={session} />;
	else if (path === '/app/projects') page = <Projects projects={projects.data} reload={projects.reload} />;
	else if (path === '/app/organization') page = <Organization session={session} renamed={reloadSession} />;
	else if (path === '/app/tokens') page = <Tokens />;
	else if (path === '/app/plan') page = <Plans session={session} />;
	else if (path === '/app/audit' && session.user.isOperator) page = <Audit />;
	else if (path === '/app/services') page = <Services projects={projects.data} />;
	else if ((m = match('/app/services/:id', path))) page = <ServicePage id={m.id} projects={projects.data} />;
	else if (path === '/app/servers') page = <Servers />;
	else if ((m = match('/app/servers/:id', path))) page = <ServerPage id={m.id} />;
	else if (path === '/app/alerts') page = <Alerts />;
	else if (path === '/app/channels') page = <Channels />;
	else if (path === '/app/git-credentials') page = <GitCredentials />;
	else page = <p>This page does not exist. <Link href="/app/applications">Applications</Link></p>;
	const current = query.get('environmentId') || query.get('projectId');
	return (
		<div class="shell">
			<header>
				<Link href="/app/applications" class="brand">
					Steward
				</Link>
				<nav class="topnav" aria-label="Sections">
					{SECTIONS.filter(([, , op]) => !op || session.user.isOperator).map(([href, label]) => (
						<Link key={href} href={href} aria-current={path.startsWith(href) ? 'page' : undefined}>
							{label}
							{href === '/app/alerts' && <AlertCount key={path} />}
						</Link>
					))}
				</nav>
				<span class="who">
					{session.organization.name} · {session.user.email}
				</span>
				<Link href="/app/account" class="account">
					Account
				</Link>
				<button type="button" class="secondary" onClick={signOut}>
					Sign out
				</button>
			</header>
			<ProjectNav projects={projects.data} current={path === '/app/applications' ? current : null} reload={projects.reload} />
			<main>
				<ErrorBox error={projects.error} />
				{page}
			</main>
		</div>
	);
}

function App() {
	const [boot, setBoot] = useState({ phase: 'loading' });
	const load = useCallback(async () => {
		try {
			const status = await get('/setup-status');
			if (status.setupRequired) {
				setBoot({ phase: 'setup' });
				navigate('/app/setup', { replace: true });
				return;
			}
			const session = await get('/auth/session');
			setBoot({ phase: 'ready', session });
			const { pathname } = location;
			if (PUBLIC_PATHS.includes(pathname)) return;
			if (!pathname.startsWith('/app/') || pathname === '/app/setup' || pathname === '/app/sign-in') {
				const next = new URLSearchParams(location.search).get('next');
				navigate(next && next.startsWith('/app/') ? next : '/app/applications', { replace: true });
			}
		} catch (e) {
			if (e instanceof ApiError && e.status === 401) {
				setBoot({ phase: 'sign-in' });
				if (location.pathname !== '/app/sign-in' && !PUBLIC_PATHS.includes(location.pathname)) {
					const here = location.pathname + location.search;
					navigate(here.startsWith('/app/') ? `/app/sign-in?next=${encodeURIComponent(here)}` : '/app/sign-in', { replace: true });
				}
			} else {
				setBoot({ phase: 'error', error: e });
			}
		}
	}, []);
	useEffect(() => {
		whenSignedOut(() => setBoot((b) => (b.phase === 'ready' ? { phase: 'sign-in' } : b)));
		load();
	}, []);
	useEffect(() => {
		if (boot.phase === 'sign-in' && location.pathname !== '/app/sign-in' && !PUBLIC_PATHS.includes(location.pathname))
			navigate('/app/sign-in', { replace: true });
	}, [boot.phase]);
	const { path, query } = useLocation();
	// A password set through the mailed link signs every session out.
	useEffect(() => {
		if (path === '/app/sign-in' && query.get('reset') && boot.phase === 'ready') load();
	}, [path]);
	const signOut = async () => {
		try {
			await post('/auth/sign-out');
		} catch {}
		setBoot({ phase: 'sign-in' });
		navigate('/app/sign-in', { replace: true });
	};
	if (path === '/app/forgot-password') return <ForgotPassword />;
	if (path === '/reset-password') return <ResetPassword token={query.get('token') || ''} />;
	if (path === '/app/accept-invitation') return <AcceptInvitation token={query.get('token') || ''} done={load} />;
	switch (boot.phase) {
		case 'loading':
			return <Loading what="Steward" />;
		case 'setup':
			return <Setup done={load} />;
		case 'sign-in':
			return <SignIn done={load} />;
		case 'error':
			return (
				<main class="card narrow">
					<ErrorBox error={boot.error} />
					<button type="button" onClick={load}>
						Try again
					</button>
				</main>
			);
		default:
			return <Shell session={boot.session} signOut={signOut} reloadSession={load} />;
	}
}

render(<App />, document.getElementById('app'));
