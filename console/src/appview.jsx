import {useState, useRef, useEffect} from 'preact/hooks';
import {useLocation} from 'preact-iso';
import {get, post, patch, del, enc} from './api.js';
import {useLoad, usePoll, ErrorText, Note, StatusBadge, setTitle} from './ui.jsx';
import {Chat} from './chat.jsx';
import {Files} from './files.jsx';
import {Git} from './git.jsx';
import {Config} from './config.jsx';
import {Spend, SpendLine} from './spend.jsx';

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
				<h1>{app.name}</h1>
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
			{sandbox && sandbox.status === 'error' && (
				<p class="error" role="alert">The sandbox failed{sandbox.error_message ? ': ' + sandbox.error_message : '.'} Delete it and make a new one to try again.</p>
			)}
			{sandbox && sandbox.status === 'stopped' && sandbox.status_reason && sandbox.status_reason !== 'stopped' && (
				<Note>The sandbox was stopped: {stopWords[sandbox.status_reason] || sandbox.status_reason}.</Note>
			)}
			{!sandbox && <NoSandbox app={app} onChange={st.reload} />}
			{sandbox && tab === '' && (
				<div class="split">
					<Chat sandbox={sandbox} onChange={st.reload} />
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

const previewState = {
	down: 'The app is stopped. Start it to see the preview.',
	starting: 'Warming up: the app is starting…',
	none: 'This app has no web page (it declares no web process).',
};

// A one-time link to a private preview (POST /v1/apps/{id}/preview-link):
// opened once, it gives the browser the preview's cookie on that host.
const mintLink = (sandbox, ttl) =>
	post('/v1/apps/' + enc(sandbox.app_id) + '/preview-link', {ttl_seconds: ttl}).then((l) => l.url);

export function Preview({sandbox, onChange}) {
	const p = sandbox.preview || {status: 'down'};
	const frame = useRef(null);
	const [n, setN] = useState(0);
	const [copied, setCopied] = useState('');
	const [src, setSrc] = useState(null);
	const [linkError, setLinkError] = useState(null);
	const priv = p.visibility === 'private';
	const notListening = p.status === 'starting' && p.detail;
	// A frozen app is shown as it is: loading it thaws it in milliseconds.
	const live = p.status === 'ready' || p.status === 'frozen';
	// A private preview is framed through a fresh link (each reload too).
	useEffect(() => {
		setLinkError(null);
		if (!live || !priv) { setSrc(p.url || null); return; }
		let gone = false;
		setSrc(null);
		mintLink(sandbox, 43200).then((u) => { if (!gone) setSrc(u); }, (e) => { if (!gone) setLinkError(e); });
		return () => { gone = true; };
	}, [n, p.url, priv, live, sandbox.app_id]);
	const note = (t) => { setCopied(t); setTimeout(() => setCopied(''), 3000); };
	const copy = async (text, what) => {
		try {
			await navigator.clipboard.writeText(text);
			note('Copied ' + what + '.');
		} catch (_) {
			note('Copy failed: ' + text);
		}
	};
	const share = async () => {
		try { await copy(await mintLink(sandbox, 86400), 'a link for one person (it works once, for 24 hours)'); } catch (e) { setLinkError(e); }
	};
	const open = async () => {
		const w = window.open('about:blank', '_blank');
		try {
			const u = await mintLink(sandbox, 43200);
			if (w) { w.opener = null; w.location = u; }
		} catch (e) { if (w) w.close(); setLinkError(e); }
	};
	return (
		<section class="preview" aria-label="Preview">
			<div class="preview-bar">
				<input aria-label="Preview address" readOnly value={p.url || ''} onFocus={(e) => e.currentTarget.select()} />
				<button onClick={() => setN(n + 1)} disabled={!live} aria-label="Reload the preview">Reload</button>
				{priv ? (
					<button onClick={open} disabled={!p.url} aria-label="Open the preview in a new tab">Open</button>
				) : (
					<a class="button" href={p.url} target="_blank" rel="noopener noreferrer" aria-label="Open the preview in a new tab">Open</a>
				)}
				<button onClick={() => copy(p.url, 'the address')} disabled={!p.url}>Copy URL</button>
				{priv && <button onClick={share} disabled={!p.url}>Share link</button>}
			</div>
			{priv && <p class="muted">Private preview: only you (signed in here) and people you send a link to can see it.</p>}
			{copied && <p class="note" role="status">{copied}</p>}
			<ErrorText error={linkError} />
			{live ? (
				src ? (
					<iframe key={n + src} ref={frame} src={src} title={'Preview of the app on port ' + p.port}
						sandbox="allow-scripts allow-same-origin allow-forms allow-popups allow-modals allow-downloads" />
				) : <div class="preview-state" role="status"><p>Opening the private preview…</p></div>
			) : (
				<div class={'preview-state ps-' + p.status} role="status">
					{p.status === 'error' ? (
						<>
							<strong>The app's web page is in error.</strong>
							<p>{p.detail || 'Its web process crashed or stopped answering.'} Look at the web process's log below.</p>
						</>
					) : notListening ? (
						<>
							<strong>Nothing answers on port {p.port} yet.</strong>
							<p>{p.detail}</p>
						</>
					) : (
						<p>{previewState[p.status] || p.status}{p.detail ? ' ' + p.detail : ''}</p>
					)}
					{p.status === 'down' && sandbox.status === 'stopped' && (
						<StartButton sandbox={sandbox} onChange={onChange} />
					)}
				</div>
			)}
		</section>
	);
}

function StartButton({sandbox, onChange}) {
	const [busy, setBusy] = useState(false);
	const [error, setError] = useState(null);
	return (
		<>
			<button class="primary" disabled={busy} onClick={async () => {
				setBusy(true);
				try { await post('/v1/sandboxes/' + enc(sandbox.id) + '/start', {}); onChange(); } catch (e) { setError(e); } finally { setBusy(false); }
			}}>Start the app</button>
			<ErrorText error={error} />
		</>
	);
}

const procWords = {starting: 'starting', running: 'running', backoff: 'crashed, restarting soon', crashloop: 'keeps crashing (not restarted any more)', stopped: 'stopped', exited: 'exited'};

function Processes({sandbox}) {
	const procs = sandbox.processes || [];
	const [open, setOpen] = useState(null);
	if (!procs.length && sandbox.status !== 'running') return null;
	return (
		<section class="procs" aria-label="Processes">
			<h2>Processes</h2>
			{sandbox.manifest && sandbox.manifest.valid === false && (
				<p class="error">sandbox.yaml is invalid: {sandbox.manifest.error}</p>
			)}
			{!procs.length && <p class="muted">No process runs yet.</p>}
			<ul>
				{procs.map((p) => (
					<li key={p.name}>
						<span class="proc-name">{p.name}</span> <span class="muted">({p.kind === 'web' ? 'web page' : 'background'}{p.port ? ', port ' + p.port : ''})</span>{' '}
						{procWords[p.state] || p.state}{p.restarts ? `, restarted ${p.restarts}×` : ''}{p.exit_code != null ? `, exit code ${p.exit_code}` : ''}{' '}
						<button class="link" aria-expanded={open === p.name} onClick={() => setOpen(open === p.name ? null : p.name)}>
							{open === p.name ? 'Hide log' : 'Show log'}<span class="sr-only"> of {p.name}</span>
						</button>
						<RestartButton sandbox={sandbox} name={p.name} />
						{open === p.name && <Log sandbox={sandbox} name={p.name} />}
					</li>
				))}
			</ul>
		</section>
	);
}

function RestartButton({sandbox, name}) {
	const [busy, setBusy] = useState(false);
	const [error, setError] = useState(null);
	return (
		<>
			<button class="link" disabled={busy || sandbox.status !== 'running'} onClick={async () => {
				setBusy(true);
				setError(null);
				try { await post(`/v1/sandboxes/${enc(sandbox.id)}/processes/${enc(name)}/restart`, {}); } catch (e) { setError(e); } finally { setBusy(false); }
			}}>Restart<span class="sr-only"> {name}</span></button>
			<ErrorText error={error} />
		</>
	);
}

function Log({sandbox, name}) {
	const log = useLoad(() => get(`/v1/sandboxes/${enc(sandbox.id)}/processes/${enc(name)}/logs?tail=200`), [sandbox.id, name]);
	usePoll(log.reload, 3000, true);
	return (
		<div class="log">
			<ErrorText error={log.error} />
			<pre tabIndex={0} aria-label={'Log of ' + name}>{log.data ? log.data.lines.join('\n') || '(empty)' : 'Loading…'}</pre>
		</div>
	);
}
