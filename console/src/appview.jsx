import {useState} from 'preact/hooks';
import {useLocation} from 'preact-iso';
import {get, post, patch, del, enc} from './api.js';
import {useLoad, usePoll, ErrorText, Note, StatusBadge, setTitle} from './ui.jsx';
import {Chat} from './chat.jsx';
import {Files} from './files.jsx';
import {Git} from './git.jsx';
import {Config} from './config.jsx';
import {Spend, SpendLine} from './spend.jsx';
import {Preview} from './preview.jsx';
import {Processes} from './processes.jsx';
import {AppTitle} from './apptitle.jsx';
import {SandboxFailed} from './fixit.jsx';

async function loadApp(id) {
	const app = await get('/v1/apps/' + enc(id));
	const sandbox = app.current_sandbox_id ? await get('/v1/sandboxes/' + enc(app.current_sandbox_id)).catch((e) => {
		if (e.status === 404) return null;
		throw e;
	}) : null;
	return {app, sandbox};
}

const tabs = [
	['', 'Build'],
	['files', 'Files'],
	['git', 'Git'],
	['config', 'Config'],
	['spend', 'Spend'],
];

export function AppShell({params}) {
	const id = params.id;
	const tab = params.tab || '';
	const st = useLoad(() => loadApp(id), [id]);
	const {app, sandbox} = st.data || {};
	const settling = sandbox && (sandbox.status === 'creating' || sandbox.active_task_id ||
		(sandbox.status === 'running' && sandbox.preview && sandbox.preview.status !== 'ready' &&
		sandbox.preview.status !== 'frozen'));
	usePoll(st.reload, settling ? 1500 : 5000, !!st.data);
	setTitle(app ? app.name : 'App');
	if (st.error && !st.data)
		return <main class="page"><ErrorText error={st.error} /><p><a href="/apps">Back to your apps</a></p></main>;
	if (!app) return <main class="page" aria-busy="true"><p>Loading…</p></main>;
	if (!tabs.some(([t]) => t === tab))
		return <main class="page"><h1>Page not found</h1><p><a href={'/apps/' + enc(id)}>Back to {app.name}</a></p></main>;
	return (
		<main class="app">
			<div class="app-head">
				<AppTitle app={app} onChange={st.reload} />
				{sandbox ? <StatusBadge status={sandbox.frozen ? 'frozen' : sandbox.status} /> : <StatusBadge status="none" />}
				<nav aria-label="App sections" class="tabs">
					{tabs.map(([t, label]) => (
						<a key={t} href={'/apps/' + enc(id) + (t ? '/' + t : '')} aria-current={t === tab ? 'page' : undefined}>{label}</a>
					))}
				</nav>
				<Visibility app={app} onChange={st.reload} />
				<SpendLine app={app} />
				<SandboxControls app={app} sandbox={sandbox} onChange={st.reload} />
			</div>
			{sandbox && sandbox.status === 'error' && <SandboxFailed app={app} sandbox={sandbox} onChange={st.reload} />}
			{sandbox && sandbox.status === 'stopped' && sandbox.status_reason && sandbox.status_reason !== 'stopped' && (
				<Note kind="warn">The sandbox was stopped: {stopWords[sandbox.status_reason] || sandbox.status_reason}.</Note>
			)}
			{!sandbox && <NoSandbox app={app} onChange={st.reload} />}
			{sandbox && tab === '' && (
				<div class="split">
					<Chat sandbox={sandbox} app={app} onChange={st.reload} />
					<div class="side">
						<Preview sandbox={sandbox} onChange={st.reload} />
						<Processes sandbox={sandbox} />
					</div>
				</div>
			)}
			{sandbox && tab === 'files' && <Files sandbox={sandbox} />}
			{tab === 'git' && <Git app={app} sandbox={sandbox} onChange={st.reload} />}
			{tab === 'config' && <Config app={app} />}
			{tab === 'spend' && <Spend app={app} onChange={st.reload} />}
		</main>
	);
}

const stopWords = {
	idle: 'nobody used it for a while (it wakes when you open the preview or send a task)',
	pressure: 'the host ran short of memory',
	exited: 'its main process ended',
	oom_killed: 'it ran out of memory',
	container_missing: 'its container was gone',
	interrupted: 'sandboxd stopped while it was being made',
};

function NoSandbox({app, onChange}) {
	const [busy, setBusy] = useState(false);
	const [error, setError] = useState(null);
	const make = async () => {
		setBusy(true);
		setError(null);
		try { await post('/v1/apps/' + enc(app.id) + '/sandbox', {}); onChange(); } catch (e) { setError(e); } finally { setBusy(false); }
	};
	return (
		<div class="card">
			<p>This app has no sandbox, so nothing runs and there are no files yet.</p>
			<button class="primary" disabled={busy} onClick={make}>{app.git ? 'Clone the repository and start' : 'Make a sandbox and start'}</button>
			{busy && <Note>{app.git ? 'Cloning the repository…' : 'Starting…'}</Note>}
			<ErrorText error={error} />
		</div>
	);
}

// Who may see the preview: the app's own choice, or the instance default.
function Visibility({app, onChange}) {
	const [busy, setBusy] = useState(false);
	const [error, setError] = useState(null);
	const value = app.preview_visibility || '';
	const eff = app.preview_visibility_effective || 'public';
	const set = async (v) => {
		setBusy(true);
		setError(null);
		try { await patch('/v1/apps/' + enc(app.id), {preview_visibility: v || null}); onChange(); } catch (e) { setError(e); } finally { setBusy(false); }
	};
	return (
		<div class="visibility">
			<label>Preview{' '}
				<select aria-label="Who can see the preview" disabled={busy} value={value} onChange={(e) => set(e.currentTarget.value)}>
					<option value="">{'Server default' + (value === '' ? ' (' + eff + ')' : '')}</option>
					<option value="public">Public: anyone with the address</option>
					<option value="private">Private: signed-in console and preview links</option>
				</select>
			</label>
			<ErrorText error={error} />
		</div>
	);
}

function SandboxControls({app, sandbox, onChange}) {
	const {route} = useLocation();
	const [busy, setBusy] = useState(false);
	const [error, setError] = useState(null);
	const act = async (fn) => {
		setBusy(true);
		setError(null);
		try { await fn(); onChange(); } catch (e) { setError(e); } finally { setBusy(false); }
	};
	const sb = sandbox && '/v1/sandboxes/' + enc(sandbox.id);
	return (
		<div class="controls">
			{sandbox && sandbox.status === 'running' && (
				<button disabled={busy} onClick={() => act(() => post(sb + '/stop', {}))}>Stop</button>
			)}
			{sandbox && sandbox.status === 'stopped' && (
				<button disabled={busy} onClick={() => act(() => post(sb + '/start', {}))}>Start</button>
			)}
			{sandbox && (
				<button disabled={busy} class="danger" onClick={() => {
					if (confirm('Delete this sandbox? Its container and all its files go; the app stays and can get a new one.'))
						act(() => del(sb));
				}}>Delete sandbox</button>
			)}
			<button disabled={busy} class="danger" onClick={() => {
				if (confirm(`Delete the app “${app.name}”? Its sandbox stops and the app moves to the Trash, where you can restore it (files, settings and history) until it is removed for good.`))
					act(async () => { await del('/v1/apps/' + enc(app.id)); route('/trash'); });
			}}>Delete app</button>
			{busy && <span class="muted" role="status">Working…</span>}
			<ErrorText error={error} />
		</div>
	);
}
