import {useEffect, useRef, useState} from 'preact/hooks';
import {useLocation} from 'preact-iso';
import {get, post, patch, del, enc} from './api.js';
import {useLoad, usePoll, ErrorText, Note, StatusBadge, setTitle} from './ui.jsx';
import {Chat} from './chat.jsx';
import {Files} from './files.jsx';
import {Git} from './git.jsx';
import {History} from './history.jsx';
import {Config} from './config.jsx';
import {Spend, SpendLine} from './spend.jsx';
import {Preview} from './preview.jsx';
import {Processes} from './processes.jsx';
import {AppTitle} from './apptitle.jsx';
import {SandboxFailed} from './fixit.jsx';
import {Terminal} from './terminal.jsx';
import {Detected} from './detect.jsx';
import {Publish} from './publish.jsx';

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
	['terminal', 'Terminal'],
	['git', 'Git'],
	['config', 'Config'],
	['spend', 'Spend'],
	['history', 'History'],
	['publish', 'Publish'],
];

export function AppShell({params}) {
	const id = params.id;
	const tab = params.tab || '';
	const st = useLoad(() => loadApp(id), [id]);
	const [pane, setPane] = usePane();
	const {app, sandbox} = st.data || {};
	const settling = sandbox && (sandbox.status === 'creating' || sandbox.active_task_id ||
		(sandbox.status === 'running' && sandbox.preview && sandbox.preview.status !== 'ready' &&
		sandbox.preview.status !== 'frozen' && sandbox.preview.status !== 'none'));
	usePoll(st.reload, settling ? 1500 : 5000, !!st.data);
	setTitle(app ? app.name : 'App');
	if (st.error && !st.data)
		return <main class="page"><ErrorText error={st.error} /><p><a href="/apps">Back to your apps</a></p></main>;
	if (!app) return <main class="page" aria-busy="true"><p>Loading…</p></main>;
	if (!tabs.some(([t]) => t === tab))
		return <main class="page"><h1>Page not found</h1><p><a href={'/apps/' + enc(id)}>Back to {app.name}</a></p></main>;
	const fit = !!sandbox && (tab === '' || tab === 'files' || tab === 'terminal');
	return (
		<main class={'app' + (fit ? ' fit' : '')}>
			<div class="app-head">
				<div class="app-title"><AppTitle app={app} onChange={st.reload} /></div>
				{sandbox ? <StatusBadge status={sandbox.frozen ? 'frozen' : sandbox.status} /> : <StatusBadge status="none" />}
				<nav aria-label="App sections" class="tabs">
					{tabs.map(([t, label]) => (
						<a key={t} href={'/apps/' + enc(id) + (t ? '/' + t : '')} aria-current={t === tab ? 'page' : undefined}>{label}</a>
					))}
				</nav>
				<span class="app-spend"><SpendLine app={app} /></span>
				<AppMenu app={app} sandbox={sandbox} onChange={st.reload} />
			</div>
			{sandbox && sandbox.status === 'error' && <SandboxFailed app={app} sandbox={sandbox} onChange={st.reload} />}
			{sandbox && sandbox.status === 'stopped' && sandbox.status_reason && sandbox.status_reason !== 'stopped' && (
				<Note kind="warn">The sandbox was stopped: {stopWords[sandbox.status_reason] || sandbox.status_reason}.</Note>
			)}
			{!sandbox && <NoSandbox app={app} onChange={st.reload} />}
			{sandbox && tab === '' && <Detected app={app} sandbox={sandbox} onChange={st.reload} />}
			{fit && tab !== 'terminal' && <PaneSwitch id={id} tab={tab} pane={pane} setPane={setPane} />}
			{sandbox && tab === '' && (
				<div class={'split pane-' + pane}>
					<Chat sandbox={sandbox} app={app} onChange={st.reload} />
					<div class="side">
						<Preview sandbox={sandbox} onChange={st.reload} />
						<Processes sandbox={sandbox} />
					</div>
				</div>
			)}
			{sandbox && tab === 'files' && <Files sandbox={sandbox} />}
			{sandbox && tab === 'terminal' && <Terminal sandbox={sandbox} />}
			{tab === 'git' && <Git app={app} sandbox={sandbox} onChange={st.reload} />}
			{tab === 'config' && <Config app={app} />}
			{tab === 'spend' && <Spend app={app} onChange={st.reload} />}
			{tab === 'history' && <History app={app} sandbox={sandbox} onChange={st.reload} />}
			{tab === 'publish' && <Publish app={app} />}
		</main>
	);
}

// Under 800 px the Build view shows one pane at a time: this switch picks
// it (Chat or Preview), or goes to the Files tab.  Wider screens hide it
// (style.css) and show chat and preview side by side.  The choice lasts
// while the console is open.
let lastPane = 'chat';

function usePane() {
	const [pane, set] = useState(lastPane);
	return [pane, (p) => { lastPane = p; set(p); }];
}

function PaneSwitch({id, tab, pane, setPane}) {
	const {route} = useLocation();
	const base = '/apps/' + enc(id);
	const cur = tab === 'files' ? 'files' : pane;
	const go = (p) => {
		if (p === 'files') { if (tab !== 'files') route(base + '/files'); return; }
		setPane(p);
		if (tab !== '') route(base);
	};
	return (
		<div class="pane-switch" role="group" aria-label="Show">
			{[['chat', 'Chat'], ['preview', 'Preview'], ['files', 'Files']].map(([p, label]) => (
				<button key={p} type="button" aria-pressed={cur === p} onClick={() => go(p)}>{label}</button>
			))}
		</div>
	);
}

// The app's less frequent actions, out of the header's one row: who sees
// the preview, stop/start, reset the sandbox, delete the app.  A
// disclosure: the button says whether it is open; Escape or a click
// outside closes it, and Escape gives the focus back to the button.
function AppMenu({app, sandbox, onChange}) {
	const [open, setOpen] = useState(false);
	const btn = useRef(null);
	const box = useRef(null);
	useEffect(() => {
		if (!open) return undefined;
		const key = (e) => {
			if (e.key !== 'Escape') return;
			setOpen(false);
			if (btn.current) btn.current.focus();
		};
		const down = (e) => { if (box.current && !box.current.contains(e.target)) setOpen(false); };
		document.addEventListener('keydown', key);
		document.addEventListener('pointerdown', down);
		return () => {
			document.removeEventListener('keydown', key);
			document.removeEventListener('pointerdown', down);
		};
	}, [open]);
	return (
		<div class="menu" ref={box}>
			<button ref={btn} type="button" aria-expanded={open} aria-controls="app-menu" onClick={() => setOpen(!open)}>
				App<span class="sr-only"> actions</span> <span aria-hidden="true">▾</span>
			</button>
			<div id="app-menu" class="menu-panel" hidden={!open}>
				<Visibility app={app} onChange={onChange} />
				<SandboxControls app={app} sandbox={sandbox} onChange={onChange} onDone={() => setOpen(false)} />
			</div>
		</div>
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

function SandboxControls({app, sandbox, onChange, onDone}) {
	const {route} = useLocation();
	const [busy, setBusy] = useState(false);
	const [error, setError] = useState(null);
	const act = async (fn) => {
		setBusy(true);
		setError(null);
		try { await fn(); onDone(); onChange(); } catch (e) { setError(e); } finally { setBusy(false); }
	};
	const sb = sandbox && '/v1/sandboxes/' + enc(sandbox.id);
	return (
		<div class="controls">
			{sandbox && sandbox.status === 'running' && (
				<button disabled={busy} onClick={() => act(() => post(sb + '/stop', {}))}>Stop the app</button>
			)}
			{sandbox && sandbox.status === 'stopped' && (
				<button disabled={busy} onClick={() => act(() => post(sb + '/start', {}))}>Start the app</button>
			)}
			{sandbox && (
				<button disabled={busy} class="danger" aria-describedby="reset-what" onClick={() => {
					if (confirm('Reset the sandbox? Its container is deleted and its files and task history go to the Trash (restorable there for a while). The app, its settings and its configuration stay, and it can get a fresh sandbox.'))
						act(() => del(sb));
				}}>Reset the sandbox</button>
			)}
			{sandbox && <p id="reset-what" class="muted">Reset deletes the sandbox’s container and moves its files to the Trash; the app and its settings stay.</p>}
			<button disabled={busy} class="danger" onClick={() => {
				if (confirm(`Delete the app “${app.name}”? Its sandbox stops and the app moves to the Trash, where you can restore it (files, settings and history) until it is removed for good.`))
					act(async () => { await del('/v1/apps/' + enc(app.id)); route('/trash'); });
			}}>Delete the app (to the Trash)</button>
			{busy && <span class="muted" role="status">Working…</span>}
			<ErrorText error={error} />
		</div>
	);
}
