import {render} from 'preact';
import {useEffect, useRef, useState} from 'preact/hooks';
import {LocationProvider, Router, Route, useLocation} from 'preact-iso';
import {loadAuth, onAuthChange, authState, signOut} from './api.js';
import {SignIn, SessionEnded} from './signin.jsx';
import {AppsList} from './apps.jsx';
import {AppShell} from './appview.jsx';
import {Settings} from './settings.jsx';
import {Trash} from './trash.jsx';
import './style.css';

function Redirect({to}) {
	const {route} = useLocation();
	useEffect(() => { route(to, true); }, [to]);
	return null;
}

function NotFound() {
	return <main class="page"><h1>Page not found</h1><p><a href="/apps">Go to your apps</a></p></main>;
}

// The page's heading, or its main region: where "Skip to content" and a
// route change put the focus (tabindex -1: focusable by script only).
function landing() {
	const el = document.querySelector('main h1') || document.querySelector('main');
	if (el && !el.hasAttribute('tabindex')) el.setAttribute('tabindex', '-1');
	return el;
}

function SkipLink() {
	return (
		<a class="skip" href="#content" onClick={(e) => {
			e.preventDefault();
			const el = landing();
			if (el) el.focus();
		}}>Skip to content</a>
	);
}

// After a route change the focus goes to the new page's h1 (as a page
// load would start there), once it shows: unless something on the new
// page took it already (an autofocused field), or it stayed on a button
// of the page that is still there (a switch that routes).
// Redirects before the user did anything (/ to /apps, to sign-in) leave
// the focus where a page load puts it, so the skip link stays first.
let interacted = false;
for (const ev of ['pointerdown', 'keydown'])
	addEventListener(ev, () => { interacted = true; }, {capture: true, once: true});

function useRouteFocus(path) {
	const first = useRef(true);
	useEffect(() => {
		if (first.current || !interacted) { first.current = false; return undefined; }
		const from = document.activeElement;
		const end = Date.now() + 5000;
		let t = 0;
		const tick = () => {
			const a = document.activeElement;
			const moved = a && a !== document.body && a !== from && a.isConnected;
			const kept = from && from.isConnected && from.tagName === 'BUTTON' && a === from;
			if (moved || kept || document.querySelector('main [autofocus]')) return;
			const h = document.querySelector('main h1');
			if (h) { landing().focus({preventScroll: true}); return; }
			if (Date.now() < end) t = setTimeout(tick, 50);
		};
		// After the next frame: the browser has applied autofocus by then.
		const f = requestAnimationFrame(() => { t = setTimeout(tick, 0); });
		return () => { cancelAnimationFrame(f); clearTimeout(t); };
	}, [path]);
}

function Header({auth}) {
	const {path} = useLocation();
	const [busy, setBusy] = useState(false);
	const cur = (p) => (path === p || path.startsWith(p + '/') ? 'page' : undefined);
	return (
		<header class="top">
			<a class="brand" href="/apps">sandboxd</a>
			<nav aria-label="Main">
				<a href="/apps" aria-current={cur('/apps')}>Apps</a>
				<a href="/trash" aria-current={cur('/trash')}>Trash</a>
				<a href="/settings/agents" aria-current={cur('/settings')}>Settings</a>
			</nav>
			{auth.auth_enabled && auth.via === 'session' && (
				<button class="link" disabled={busy}
					onClick={async () => { setBusy(true); await signOut(false); setBusy(false); }}>
					Log out
				</button>
			)}
		</header>
	);
}

function Shell() {
	const [auth, setAuth] = useState(authState());
	const [err, setErr] = useState(null);
	const {path, url, route} = useLocation();
	useRouteFocus(path);
	useEffect(() => onAuthChange(setAuth), []);
	useEffect(() => { loadAuth().catch(setErr); }, []);
	if (err && !auth)
		return <main class="page"><h1>sandboxd</h1><p class="error" role="alert">Cannot reach sandboxd: {err.message}</p></main>;
	if (!auth) return <main class="page" aria-busy="true"><p>Loading…</p></main>;
	const onSignIn = path.startsWith('/signin');
	if (!auth.signed_in && !onSignIn)
		return <Redirect to={'/signin?next=' + encodeURIComponent(url)} />;
	if (auth.signed_in && onSignIn) {
		const next = new URLSearchParams(location.search).get('next');
		return <Redirect to={next && next.startsWith('/') && !next.startsWith('//') ? next : '/apps'} />;
	}
	return (
		<>
			<SkipLink />
			{auth.signed_in && <Header auth={auth} />}
			{auth.session_ended && <SessionEnded />}
			<div id="content" class="content">
				<Router>
					<Route path="/signin" component={SignIn} />
					<Route path="/" component={() => <Redirect to="/apps" />} />
					<Route path="/apps" component={AppsList} />
					<Route path="/apps/:id" component={AppShell} />
					<Route path="/apps/:id/:tab" component={AppShell} />
					<Route path="/trash" component={Trash} />
					<Route path="/settings" component={() => <Redirect to="/settings/agents" />} />
					<Route path="/settings/:section" component={Settings} />
					<Route default component={NotFound} />
				</Router>
			</div>
		</>
	);
}

render(<LocationProvider><Shell /></LocationProvider>, document.getElementById('root'));
