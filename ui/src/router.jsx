// The app's own routes, all under /app (the API owns every other first
// segment; stewardd answers index.html for /app and anything below it).
import { useEffect, useState } from 'preact/hooks';

const listeners = new Set();

export function navigate(to, { replace = false } = {}) {
	if (to === location.pathname + location.search) return;
	history[replace ? 'replaceState' : 'pushState'](null, '', to);
	for (const l of listeners) l();
}

export function useLocation() {
	const read = () => ({ path: location.pathname, query: new URLSearchParams(location.search) });
	const [loc, setLoc] = useState(read);
	useEffect(() => {
		const update = () => setLoc(read());
		listeners.add(update);
		addEventListener('popstate', update);
		return () => {
			listeners.delete(update);
			removeEventListener('popstate', update);
		};
	}, []);
	return loc;
}

// "/app/applications/:id" against a path: {id} or null.
export function match(pattern, path) {
	const p = pattern.split('/');
	const s = path.split('/');
	if (p.length !== s.length) return null;
	const params = {};
	for (let i = 0; i < p.length; i++) {
		if (p[i].startsWith(':')) params[p[i].slice(1)] = decodeURIComponent(s[i]);
		else if (p[i] !== s[i]) return null;
	}
	return params;
}

export function Link({ href, children, ...rest }) {
	const click = (e) => {
		if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
		e.preventDefault();
		navigate(href);
	};
	return (
		<a href={href} onClick={click} {...rest}>
			{children}
		</a>
	);
}
