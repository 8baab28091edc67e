import {Component} from 'preact';
import {useEffect, useRef, useState} from 'preact/hooks';
import {get, post, enc} from './api.js';
import {useLoad, ErrorText, Note, when} from './ui.jsx';
import {Composer} from './composer.jsx';
import {FailedTask, Working, composerBlock, failureInfo, providerWords, relPath} from './fixit.jsx';
import {usd} from './spend.jsx';

const phaseWords = {
	starting: 'Starting the task',
	checkpoint: 'Saving a checkpoint of your files',
	agent_running: 'The agent is working',
	build_check: 'Checking that the app builds',
	health_check: 'Checking that the app answers',
};


const statusWords = {running: 'Running', succeeded: 'Done', failed: 'Failed', cancelled: 'Cancelled'};
const toolWords = {pending: 'waiting', running: 'running', completed: 'done', error: 'failed'};

// Folds one event into the list of chat rows.  Each row keeps the id of
// the last event that changed it (data-ev), so a bench can time it.
export function fold(rows, ev) {
	const {type, id, data} = ev;
	if (type === 'tool') {
		for (let i = rows.length - 1; i >= 0; i--) {
			const r = rows[i];
			if (r.type !== 'tool') break;
			if (r.data.name === data.name && (r.data.path || '') === (data.path || '') &&
				r.data.status !== 'completed' && r.data.status !== 'error') {
				const out = rows.slice();
				out[i] = {...r, id, data};
				return out;
			}
		}
	}
	return [...rows, {type, id, data, key: id}];
}

// What the task cost: the credential proxy's count (task.spend), which is
// what the app's spend line adds up; the agent's own figure only without it.
function Cost({t}) {
	const s = t.spend;
	if (s && (s.requests || s.tokens)) {
		return <span> · {usd(s.usd)} for {s.tokens.toLocaleString()} tokens</span>;
	}
	const k = t.tokens;
	if (!k || !k.total) return null;
	return <span> · {k.total.toLocaleString()} tokens</span>;
}

export function Outcome({t, appId, onRetry}) {
	const st = statusWords[t.status] || t.status;
	const failed = t.status === 'failed' || t.status === 'cancelled';
	return (
		<div class={'outcome o-' + t.status}>
			<strong>{st}</strong>
			{failed && <span>: {failureInfo(t.failure_reason, appId).words.replace(/\.$/, '')}</span>}
			{t.model && <span> · model {t.model}</span>}
			<Cost t={t} />
			{t.duration_ms != null && <span> · {(t.duration_ms / 1000).toFixed(1)} s</span>}
			{failed && <FailedTask t={t} appId={appId} onRetry={onRetry} />}
			{t.files_changed && t.files_changed.length > 0 && (
				<p>Files changed: {t.files_changed.map((f) => <code key={f}>{f}</code>).reduce((a, b) => [a, ', ', b])}</p>
			)}
			{t.status === 'succeeded' && t.files_changed && t.files_changed.length === 0 && <p class="muted">No file changed.</p>}
			{t.build_status === 'failed' && !failed && <p class="error">The build failed after the task.</p>}
			{t.preview_status_after && t.preview_status_after !== 'ready' && t.preview_status_after !== 'none' && (
				<p>The app's web page is {t.preview_status_after === 'error' ? 'in error' : 'still starting'}{t.preview_detail ? ': ' + t.preview_detail : '.'}</p>
			)}
		</div>
	);
}

function Row({r, appId, onRetry}) {
	const d = r.data || {};
	switch (r.type) {
	case 'status':
		if (d.phase === 'model') return <li class="phase" data-ev={r.id}>Model: <code>{d.model}</code></li>;
		return <li class="phase" data-ev={r.id}>{phaseWords[d.phase] || d.phase}{d.build ? <> (<code>{d.build}</code>)</> : ''}</li>;
	case 'message':
		if (d.role === 'agent_error')
			return (
				<li class="msg agent-error" data-ev={r.id}><span class="who">The agent reported an error</span>
					<details class="fail-details"><summary>Details</summary><pre>{d.text}</pre></details></li>
			);
		return <li class="msg agent" data-ev={r.id}><span class="who">Agent</span><div class="text">{d.text}</div></li>;
	case 'tool':
		return (
			<li class={'tool t-' + d.status} data-ev={r.id}>
				<span class="tool-name">{d.name}</span> {d.path && <code>{relPath(d.path)}</code>} <span class="muted">{toolWords[d.status] || d.status}</span>
			</li>
		);
	case 'build':
		return (
			<li class={'build ' + (d.build_ok ? 'ok' : 'bad')} data-ev={r.id}>
				{d.build_ok ? 'The build passed' : d.build_status === 'skipped' ? 'No build check' : 'The build failed'}
				{d.build_error_message && <pre>{d.build_error_message}</pre>}
			</li>
		);
	case 'provider_error':
		return (
			<li class={'provider-warn' + (d.permanent ? ' permanent' : '')} data-ev={r.id}>
				<span>{providerWords(d, r.attempt || 1)}</span>
				{d.message && <details class="fail-details"><summary>Details</summary><pre>{d.message}</pre></details>}
			</li>
		);
	case 'done':
		return <li class="done" data-ev={r.id}><Outcome t={d} appId={appId} onRetry={onRetry} /></li>;
	default:
		return <li class="phase" data-ev={r.id}>{r.type}</li>;
	}
}

// A row renders again only when its event changed (fold keeps the other
// rows' objects), so a long task's stream costs one row per event.
class MemoRow extends Component {
	shouldComponentUpdate(next) {
		return next.r !== this.props.r;
	}

	render({r, appId, onRetry}) {
		return <Row r={r} appId={appId} onRetry={onRetry} />;
	}
}

// The rows to show: no build check after the agent failed (it says
// nothing about the task), an agent error once (in the outcome's details
// when the outcome repeats it), provider errors numbered as retries.
export function shown(rows) {
	const out = [];
	let agentFailed = false, tries = 0;
	const done = rows.length && rows[rows.length - 1].type === 'done' ? rows[rows.length - 1].data || {} : null;
	for (const r of rows) {
		const d = r.data || {};
		if (r.type === 'message' && d.role === 'agent_error') {
			agentFailed = true;
			if (done && done.error_message && done.error_message.trim() === String(d.text || '').trim()) continue;
		}
		if (r.type === 'provider_error') {
			if (d.permanent) agentFailed = true;
			out.push({...r, attempt: ++tries});
			continue;
		}
		if (r.type === 'build' && (agentFailed || (done && done.status !== 'succeeded'))) continue;
		out.push(r);
	}
	return out;
}

// Follows one task's events.  EventSource resends Last-Event-ID by itself
// after a drop; we close it at `done` (the server ends the stream there).
function useTaskStream(sbId, taskId, onDone) {
	const [rows, setRows] = useState([]);
	const [conn, setConn] = useState('idle');
	const [done, setDone] = useState(null);
	const [gen, setGen] = useState(0);
	const [lastAt, setLastAt] = useState(0);
	const doneRef = useRef(onDone);
	doneRef.current = onDone;
	useEffect(() => {
		setRows([]);
		setDone(null);
		if (!taskId) { setConn('idle'); return undefined; }
		const seen = new Set();
		const es = new EventSource(`/v1/sandboxes/${enc(sbId)}/tasks/${enc(taskId)}/events`);
		setConn('connecting');
		const on = (type) => (e) => {
			const id = Number(e.lastEventId);
			if (seen.has(id)) return;
			seen.add(id);
			let data = null;
			try { data = JSON.parse(e.data); } catch (_) { data = {text: e.data}; }
			setRows((rs) => fold(rs, {type, id, data}));
			setLastAt(Date.now());
			if (type === 'done') {
				es.close();
				setConn('closed');
				setDone(data);
				doneRef.current && doneRef.current(data);
			}
		};
		for (const t of ['status', 'message', 'tool', 'build', 'provider_error', 'done']) es.addEventListener(t, on(t));
		es.onopen = () => setConn('open');
		es.onerror = () => setConn(es.readyState === EventSource.CLOSED ? 'failed' : 'reconnecting');
		return () => es.close();
	}, [sbId, taskId, gen]);
	return {rows, conn, done, lastAt, retry: () => setGen((g) => g + 1)};
}

// Reverting a finished task (after a confirmation): its state and action.
function useRevert(sbId, t, onDone) {
	const [busy, setBusy] = useState(false);
	const [error, setError] = useState(null);
	const revert = async () => {
		if (!confirm('Put the files back as they were before this task? Changes made since are lost.')) return;
		setBusy(true);
		setError(null);
		try {
			await post(`/v1/sandboxes/${enc(sbId)}/tasks/${enc(t.id)}/revert`, {});
			onDone();
		} catch (e) { setError(e); } finally { setBusy(false); }
	};
	return {busy, error, revert};
}

// Revert is offered for a task that changed files and was not reverted;
// a reverted one says so instead.
function revertable(t) {
	if (!t || t.reverted_at || !t.can_revert) return false;
	return !(Array.isArray(t.files_changed) && t.files_changed.length === 0);
}

function Reverted({t}) {
	if (!t || !t.reverted_at) return null;
	return <p class="reverted" role="status">Reverted: the files are as before this task.</p>;
}

function RevertButton({sbId, t, onDone}) {
	const {busy, error, revert} = useRevert(sbId, t, onDone);
	return <>{<button disabled={busy} onClick={revert}>Revert this task</button>}<ErrorText error={error} /></>;
}

function PastTask({t, sbId, appId, onReverted, canRevert, onRetry}) {
	const [open, setOpen] = useState(false);
	const failed = t.status === 'failed';
	return (
		<li class="past">
			<div class="prompt-bubble">{t.prompt}</div>
			<div class="muted">{when(t.created_at)} · {statusWords[t.status] || t.status}
				{failed ? ': ' + failureInfo(t.failure_reason, appId).words.replace(/\.$/, '') : ''}</div>
			{t.agent_message && !failed && <div class="msg agent"><span class="who">Agent</span><div class="text">{t.agent_message}</div></div>}
			{failed && <FailedTask t={{...t, error_message: t.error_message || t.agent_message}} appId={appId} onRetry={() => onRetry(t.prompt)} />}
			<Reverted t={t} />
			<div class="row">
				<button class="link" aria-expanded={open} onClick={() => setOpen(!open)}>{open ? 'Hide the steps' : 'Show the steps'}</button>
				{canRevert && revertable(t) && <RevertButton sbId={sbId} t={t} onDone={onReverted} />}
			</div>
			{open && <Replay sbId={sbId} taskId={t.id} appId={appId} />}
		</li>
	);
}

function Replay({sbId, taskId, appId}) {
	const s = useTaskStream(sbId, taskId);
	return <ol class="events">{shown(s.rows).filter((r) => r.type !== 'done').map((r) => <MemoRow r={r} key={r.key} appId={appId} />)}</ol>;
}

// Follows the bottom of a scrolled list only while the user is there;
// when they scrolled up, `behind` says new rows came below.
function useFollow(deps) {
	const ref = useRef(null);
	const atBottom = useRef(true);
	const queued = useRef(false);
	const [behind, setBehind] = useState(false);
	const onScroll = () => {
		const el = ref.current;
		if (!el) return;
		atBottom.current = el.scrollHeight - el.scrollTop - el.clientHeight < 40;
		if (atBottom.current) setBehind(false);
	};
	const jump = () => {
		const el = ref.current;
		if (el) el.scrollTop = el.scrollHeight;
		atBottom.current = true;
		setBehind(false);
	};
	// Once a frame however many events came (a scroll per event would lay
	// the whole log out each time).
	useEffect(() => {
		if (!atBottom.current) { setBehind(true); return; }
		if (queued.current) return;
		queued.current = true;
		requestAnimationFrame(() => {
			queued.current = false;
			const el = ref.current;
			if (el && atBottom.current) el.scrollTop = el.scrollHeight;
		});
	}, deps);
	return {ref, onScroll, behind, jump};
}

export function Chat({sandbox, app, onChange}) {
	const sbId = sandbox.id;
	const appId = sandbox.app_id || (app && app.id);
	const tasks = useLoad(() => get(`/v1/sandboxes/${enc(sbId)}/tasks`), [sbId]);
	const [taskId, setTaskId] = useState(sandbox.active_task_id || null);
	const [error, setError] = useState(null);
	const [fill, setFill] = useState(null);
	const list = tasks.data ? tasks.data.tasks : [];
	// Re-attach: a task that runs (after a reload too) is followed live.
	useEffect(() => {
		if (sandbox.active_task_id && sandbox.active_task_id !== taskId) setTaskId(sandbox.active_task_id);
	}, [sandbox.active_task_id]);
	// A task sent from elsewhere (the API, another tab, the problem card)
	// shows up with the sandbox's next poll: its activity time moves, so
	// the list is read again.
	useEffect(() => { if (tasks.data) tasks.reload(); }, [sandbox.last_active_at, sandbox.active_task_id]);
	const stream = useTaskStream(sbId, taskId, () => { tasks.reload(); onChange(); });
	const current = list.find((t) => t.id === taskId);
	const newest = list.length ? list[0].id : null;
	useEffect(() => {
		if (newest && newest !== taskId && (!taskId || stream.done || (current && current.status !== 'running')))
			setTaskId(newest);
	}, [newest]);
	const running = !!taskId && !stream.done && (current ? current.status === 'running' : true);
	const follow = useFollow([stream.rows.length, taskId, !!stream.done, list.length]);
	const retryRef = useRef(null);
	retryRef.current = (text) => setFill((f) => ({text, n: (f ? f.n : 0) + 1}));
	const retry = useRef((text) => retryRef.current(text)).current;
	const currentPrompt = useRef('');
	currentPrompt.current = current ? current.prompt : '';
	const retryCurrent = useRef(() => retryRef.current(currentPrompt.current)).current;
	const cancel = async () => {
		setError(null);
		try { await post(`/v1/sandboxes/${enc(sbId)}/tasks/${enc(taskId)}/cancel`, {}); } catch (e) { setError(e); }
	};
	const past = list.filter((t) => t.id !== taskId).slice().reverse();
	const finished = stream.done || (current && current.status !== 'running' ? current : null);
	const since = current && current.created_at ? Date.parse(current.created_at) : Date.now();
	const rows = shown(stream.rows);
	const reload = () => { tasks.reload(); onChange(); };
	return (
		<section class="chat" aria-label="Chat with the agent">
			<div class="chat-log" ref={follow.ref} onScroll={follow.onScroll} tabIndex={0} aria-label="Conversation">
				{tasks.loading && !tasks.data && <p>Loading the conversation…</p>}
				{list.length === 0 && !taskId && !tasks.loading && (
					<p class="muted">No tasks yet. Tell the agent what to build or change below.</p>
				)}
				<ol class="history" aria-label="Earlier tasks">
					{past.map((t) => <PastTask key={t.id} t={t} sbId={sbId} appId={appId} canRevert={!running}
						onReverted={reload} onRetry={retry} />)}
				</ol>
				{taskId && (
					<div class="current" aria-live="polite">
						{current && <div class="prompt-bubble">{current.prompt}</div>}
						<ol class="events" aria-label="What the agent does">
							{rows.map((r) => <MemoRow r={r} key={r.key} appId={appId} onRetry={retryCurrent} />)}
						</ol>
						{running && <Working since={isNaN(since) ? Date.now() : since} lastAt={stream.lastAt} rows={stream.rows} words={phaseWords} />}
						{stream.conn === 'reconnecting' && <Note kind="warn">Connection lost; reconnecting…</Note>}
						{stream.conn === 'failed' && (
							<p class="error" role="alert">The task's events could not be loaded. <button class="link" onClick={stream.retry}>Try again</button></p>
						)}
						{!stream.done && current && current.status !== 'running' && current.status !== 'succeeded' && (
							<Outcome t={current} appId={appId} onRetry={retryCurrent} />
						)}
						<Reverted t={current} />
						<div class="row">
							{running && <button class="danger" onClick={cancel}>Cancel the task</button>}
							{finished && revertable(current) && <RevertButton sbId={sbId} t={current} onDone={reload} />}
						</div>
						<ErrorText error={error} />
					</div>
				)}
			</div>
			{follow.behind && <button class="new-activity" onClick={follow.jump}>New activity ↓</button>}
			<Composer sandbox={sandbox} running={running} fill={fill} blocked={composerBlock(app, sandbox)}
				onSubmitted={(t) => { setTaskId(t.id); tasks.reload(); onChange(); }} />
		</section>
	);
}
