import {Component} from 'preact';
import {useEffect, useRef, useState} from 'preact/hooks';
import {get, post, enc} from './api.js';
import {useLoad, ErrorText, when} from './ui.jsx';
import {Composer} from './composer.jsx';

const phaseWords = {
	starting: 'Starting the task',
	checkpoint: 'Saving a checkpoint of your files',
	agent_running: 'The agent is working',
	build_check: 'Checking that the app builds',
	health_check: 'Checking that the app answers',
};

export const failureWords = {
	proxy_unavailable: 'the credential proxy was not running',
	agent_error: 'the agent reported an error',
	agent_timeout: 'the agent ran out of time',
	cancelled: 'you cancelled it',
	oom_killed: 'it ran out of memory',
	sandbox_stopped: 'the sandbox was stopped while it ran',
	sandbox_unavailable: 'the sandbox did not take the task',
	internal: 'sandboxd hit an internal error',
	provider_unreachable: 'the model provider could not be reached from this host',
	provider_refused: 'the model provider refused the key',
	budget_reached: 'a spending budget was reached',
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

function Tokens({t}) {
	if (!t || !t.total) return null;
	return <span> · {t.total.toLocaleString()} tokens{t.cost ? ` (about $${Number(t.cost).toFixed(4)})` : ''}</span>;
}

export function Outcome({t}) {
	const st = statusWords[t.status] || t.status;
	return (
		<div class={'outcome o-' + t.status}>
			<strong>{st}</strong>
			{t.status === 'failed' && t.failure_reason && <span>: {failureWords[t.failure_reason] || t.failure_reason}</span>}
			{t.model && <span> · model {t.model}</span>}
			<Tokens t={t.tokens} />
			{t.duration_ms != null && <span> · {(t.duration_ms / 1000).toFixed(1)} s</span>}
			{t.error_message && t.status !== 'cancelled' && <p class="error">{t.error_message}</p>}
			{t.files_changed && t.files_changed.length > 0 && (
				<p>Files changed: {t.files_changed.map((f) => <code key={f}>{f}</code>).reduce((a, b) => [a, ', ', b])}</p>
			)}
			{t.build_status === 'failed' && <p class="error">The build failed after the task.</p>}
			{t.preview_status_after && t.preview_status_after !== 'ready' && t.preview_status_after !== 'none' && (
				<p>The app's web page is {t.preview_status_after === 'error' ? 'in error' : 'still starting'}{t.preview_detail ? ': ' + t.preview_detail : '.'}</p>
			)}
		</div>
	);
}

function Row({r}) {
	const d = r.data || {};
	switch (r.type) {
	case 'status':
		if (d.phase === 'model') return <li class="phase" data-ev={r.id}>Model: <code>{d.model}</code></li>;
		return <li class="phase" data-ev={r.id}>{phaseWords[d.phase] || d.phase}{d.build ? <> (<code>{d.build}</code>)</> : ''}</li>;
	case 'message':
		if (d.role === 'agent_error')
			return <li class="msg agent-error" data-ev={r.id}><span class="who">Agent error</span><div class="text">{d.text}</div></li>;
		return <li class="msg agent" data-ev={r.id}><span class="who">Agent</span><div class="text">{d.text}</div></li>;
	case 'tool':
		return (
			<li class={'tool t-' + d.status} data-ev={r.id}>
				<span class="tool-name">{d.name}</span> {d.path && <code>{d.path}</code>} <span class="muted">{toolWords[d.status] || d.status}</span>
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
		return <li class="msg agent-error" data-ev={r.id}><span class="who">Model provider</span><div class="text">{d.message}</div></li>;
	case 'done':
		return <li class="done" data-ev={r.id}><Outcome t={d} /></li>;
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

	render({r}) {
		return <Row r={r} />;
	}
}

// Follows one task's events.  EventSource resends Last-Event-ID by itself
// after a drop; we close it at `done` (the server ends the stream there).
function useTaskStream(sbId, taskId, onDone) {
	const [rows, setRows] = useState([]);
	const [conn, setConn] = useState('idle');
	const [done, setDone] = useState(null);
	const [gen, setGen] = useState(0);
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
	return {rows, conn, done, retry: () => setGen((g) => g + 1)};
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

function PastTask({t, sbId, onReverted, canRevert}) {
	const [open, setOpen] = useState(false);
	const {busy, error, revert} = useRevert(sbId, t, onReverted);
	return (
		<li class="past">
			<div class="prompt-bubble">{t.prompt}</div>
			<div class="muted">{when(t.created_at)} · {statusWords[t.status] || t.status}
				{t.status === 'failed' && t.failure_reason ? ': ' + (failureWords[t.failure_reason] || t.failure_reason) : ''}</div>
			{t.agent_message && <div class="msg agent"><span class="who">Agent</span><div class="text">{t.agent_message}</div></div>}
			<div class="row">
				<button class="link" aria-expanded={open} onClick={() => setOpen(!open)}>{open ? 'Hide the steps' : 'Show the steps'}</button>
				{t.can_revert && canRevert && <button disabled={busy} onClick={revert}>Revert this task</button>}
			</div>
			<ErrorText error={error} />
			{open && <Replay sbId={sbId} taskId={t.id} />}
		</li>
	);
}

function Replay({sbId, taskId}) {
	const s = useTaskStream(sbId, taskId);
	return <ol class="events">{s.rows.map((r) => <MemoRow r={r} key={r.key} />)}</ol>;
}

export function Chat({sandbox, onChange}) {
	const sbId = sandbox.id;
	const tasks = useLoad(() => get(`/v1/sandboxes/${enc(sbId)}/tasks`), [sbId]);
	const [taskId, setTaskId] = useState(sandbox.active_task_id || null);
	const [error, setError] = useState(null);
	const list = tasks.data ? tasks.data.tasks : [];
	// Re-attach: a task that runs (after a reload too) is followed live.
	useEffect(() => {
		if (sandbox.active_task_id && sandbox.active_task_id !== taskId) setTaskId(sandbox.active_task_id);
	}, [sandbox.active_task_id]);
	// A task sent from elsewhere (the API, another tab) shows up with the
	// sandbox's next poll: its activity time moves, so the list is read again.
	useEffect(() => { if (tasks.data) tasks.reload(); }, [sandbox.last_active_at, sandbox.active_task_id]);
	const stream = useTaskStream(sbId, taskId, () => { tasks.reload(); onChange(); });
	const current = list.find((t) => t.id === taskId);
	const newest = list.length ? list[0].id : null;
	useEffect(() => {
		if (newest && newest !== taskId && (!taskId || stream.done || (current && current.status !== 'running')))
			setTaskId(newest);
	}, [newest]);
	const running = !!taskId && !stream.done && (current ? current.status === 'running' : true);
	const listRef = useRef(null);
	const scrollQueued = useRef(false);
	// Down to the newest row, once a frame however many events came (a
	// scroll per event would lay the whole log out each time).
	useEffect(() => {
		if (scrollQueued.current) return;
		scrollQueued.current = true;
		requestAnimationFrame(() => {
			scrollQueued.current = false;
			const el = listRef.current;
			if (el) el.scrollTop = el.scrollHeight;
		});
	}, [stream.rows.length, taskId, !!stream.done, list.length]);
	const cancel = async () => {
		setError(null);
		try { await post(`/v1/sandboxes/${enc(sbId)}/tasks/${enc(taskId)}/cancel`, {}); } catch (e) { setError(e); }
	};
	const past = list.filter((t) => t.id !== taskId).slice().reverse();
	const finished = stream.done || (current && current.status !== 'running' ? current : null);
	return (
		<section class="chat" aria-label="Chat with the agent">
			<div class="chat-log" ref={listRef} tabIndex={0} aria-label="Conversation">
				{tasks.loading && !tasks.data && <p>Loading the conversation…</p>}
				{list.length === 0 && !taskId && !tasks.loading && (
					<p class="muted">No tasks yet. Tell the agent what to build or change below.</p>
				)}
				<ol class="history" aria-label="Earlier tasks">
					{past.map((t) => <PastTask key={t.id} t={t} sbId={sbId} canRevert={!running}
						onReverted={() => { tasks.reload(); onChange(); }} />)}
				</ol>
				{taskId && (
					<div class="current" aria-live="polite">
						{current && <div class="prompt-bubble">{current.prompt}</div>}
						<ol class="events" aria-label="What the agent does">
							{stream.rows.map((r) => <MemoRow r={r} key={r.key} />)}
						</ol>
						{stream.conn === 'reconnecting' && <p class="note" role="status">Connection lost; reconnecting…</p>}
						{stream.conn === 'failed' && (
							<p class="error" role="alert">The task's events could not be loaded. <button class="link" onClick={stream.retry}>Try again</button></p>
						)}
						<div class="row">
							{running && <button class="danger" onClick={cancel}>Cancel the task</button>}
							{finished && current && current.can_revert && (
								<PastRevert sbId={sbId} t={current} onDone={() => { tasks.reload(); onChange(); }} />
							)}
						</div>
						<ErrorText error={error} />
					</div>
				)}
			</div>
			<Composer sandbox={sandbox} running={running}
				onSubmitted={(t) => { setTaskId(t.id); tasks.reload(); onChange(); }} />
		</section>
	);
}

function PastRevert({sbId, t, onDone}) {
	const {busy, error, revert} = useRevert(sbId, t, onDone);
	return <>{<button disabled={busy} onClick={revert}>Revert this task</button>}<ErrorText error={error} /></>;
}
