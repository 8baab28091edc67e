import {render} from 'preact';
import {useEffect, useState} from 'preact/hooks';
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

function OpenBanner() {
	return (
		<div class="banner" role="alert">
			<strong>The API is open.</strong> Authentication is turned off
			(SANDBOXD_API_AUTH_DISABLED), so anything that can reach this address can
			control sandboxd without a password. Turn it back on unless this
			machine is yours alone.
		</div>
	);
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
			{!auth.auth_enabled && <OpenBanner />}
			{auth.signed_in && <Header auth={auth} />}
			{auth.session_ended && <SessionEnded />}
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
		</>
	);
}

render(<LocationProvider><Shell /></LocationProvider>, document.getElementById('root'));
