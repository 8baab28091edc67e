import {useState} from 'preact/hooks';
import {get, post, enc} from './api.js';
import {useLoad, usePoll, ErrorText, Rich} from './ui.jsx';


// A process's state in words (no supervisor jargon such as "backoff").
const procWords = {
	starting: 'starting',
	running: 'running',
	backoff: 'crashed; it restarts in a moment',
	crashloop: 'keeps crashing, so it is not restarted any more: look at its log',
	stopped: 'stopped',
	exited: 'finished',
	paused: 'paused — it resumes when you open the preview or send a task',
};

export function Processes({sandbox}) {
	const procs = sandbox.processes || [];
	const [open, setOpen] = useState(null);
	if (!procs.length && sandbox.status !== 'running' && !sandbox.frozen) return null;
	return (
		<section class="procs" aria-label="Processes">
			<h2>Processes</h2>
			{sandbox.manifest && sandbox.manifest.valid === false && (
				<p class="error">sandbox.yaml is invalid: <Rich text={sandbox.manifest.error} /></p>
			)}
			{!procs.length && (sandbox.frozen ?
				<p class="muted">The app is paused — its processes resume when you open the preview or send a task.</p> :
				<p class="muted">No process runs yet.</p>)}
			<ul>
				{procs.map((p) => (
					<li key={p.name}>
						<span class="proc-name">{p.name}</span> <span class="muted">({p.kind === 'web' ? 'web page' : 'background'}{p.port ? ', port ' + p.port : ''})</span>{' '}
						{procWords[p.state] || 'state unknown'}{p.restarts ? `, restarted ${p.restarts}×` : ''}{p.exit_code != null ? `, exit code ${p.exit_code}` : ''}{' '}
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
