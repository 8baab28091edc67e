import {useEffect, useRef, useState} from 'preact/hooks';
import {get, post, enc} from './api.js';
import {useLoad, useAction, when} from './ui.jsx';
import {TakeSnapshot, SnapshotList, ForkDialog, StepError, actorWords} from './snapshots.jsx';
import './history.css';

// The History tab: what happened to the app, newest first, on one line of
// time: its events (GET /v1/apps/{id}/events, older pages by next_before),
// its snapshots as named markers, and the task checkpoints that the
// task.succeeded events stand for (with Revert while the task can be
// reverted).  New events arrive live from the app's event stream (SSE,
// the session cookie as every console request; EventSource resends
// Last-Event-ID itself after a drop).  Above the line: take a snapshot,
// fork the app as it is, and the snapshots' list with their actions.

const PAGE = 50;

const kinds = [
	['', 'Everything'],
	['app.', 'The app'],
	['sandbox.', 'Sandbox'],
	['task.', 'Tasks'],
	['git.', 'Git'],
	['snapshot.', 'Snapshots'],
	// Publishing (docs/publish.md): builds, rollbacks and custom domains;
	// app.unpublished is among "The app".
	['publish.', 'Publishing'],
	['release.', 'Rollbacks'],
	['domain.', 'Domains'],
];

// Newest first: ULIDs sort as their time does.
function merge(a, b) {
	const byId = new Map();
	for (const e of a) byId.set(e.id, e);
	for (const e of b) if (e && e.id) byId.set(e.id, e);
	return [...byId.values()].sort((x, y) => (x.id < y.id ? 1 : x.id > y.id ? -1 : 0));
}

// The app's events: the first page, older pages on request, and the live
// stream prepending new ones.  The first page is (re)read each time the
// stream opens, so nothing made between the page and the stream is lost.
function useTimeline(appId, kind, onLive) {
	const base = '/v1/apps/' + enc(appId) + '/events';
	const [st, setSt] = useState({events: [], next: null, loaded: false});
	const [error, setError] = useState(null);
	const [conn, setConn] = useState('connecting');
	const [gen, setGen] = useState(0);
	const [older, setOlder] = useState(false);
	const live = useRef(onLive);
	live.current = onLive;
	const query = (before) => base + '?limit=' + PAGE + (kind ? '&type=' + enc(kind) : '') +
		(before ? '&before=' + enc(before) : '');
	useEffect(() => {
		let gone = false;
		setSt({events: [], next: null, loaded: false});
		setError(null);
		const first = () => get(query(null)).then((r) => {
			if (gone) return;
			setError(null);
			setSt((s) => ({events: merge(s.events, r.events || []), next: s.loaded ? s.next : r.next_before, loaded: true}));
		}, (e) => { if (!gone) setError(e); });
		const es = new EventSource(base + '/stream');
		setConn('connecting');
		es.addEventListener('app_event', (m) => {
			let ev = null;
			try { ev = JSON.parse(m.data); } catch (_) { return; }
			if (!ev || !ev.id || typeof ev.type !== 'string') return;
			if (live.current) live.current(ev);
			if (kind && !ev.type.startsWith(kind)) return;
			setSt((s) => ({...s, events: merge(s.events, [ev])}));
		});
		es.onopen = () => { setConn('open'); first(); };
		es.onerror = () => {
			setConn(es.readyState === EventSource.CLOSED ? 'failed' : 'reconnecting');
			if (es.readyState === EventSource.CLOSED) first();
		};
		// The list does not wait for the stream (which may be refused).
		first();
		return () => { gone = true; es.close(); };
	}, [appId, kind, gen]);
	const loadOlder = async () => {
		setOlder(true);
		try {
			const r = await get(query(st.next));
			setSt((s) => ({events: merge(s.events, r.events || []), next: r.next_before, loaded: true}));
			setError(null);
		} catch (e) {
			setError(e);
		} finally {
			setOlder(false);
		}
	};
	return {...st, error, conn, older, loadOlder, retry: () => setGen((g) => g + 1)};
}

// One line of time: events, and snapshots as markers.  A snapshot whose
// snapshot.taken event is on the line is drawn on that event; one without
// (its event pruned, or taken before the timeline) stands alone at its
// time, once the loaded events reach back that far.
function lineOf(events, snaps, next, kind) {
	const snapById = new Map(snaps.map((s) => [s.id, s]));
	const onEvent = new Set();
	const items = events.map((ev) => {
		const snap = ev.type === 'snapshot.taken' && ev.snapshot_id ? snapById.get(ev.snapshot_id) : null;
		if (snap) onEvent.add(snap.id);
		return {key: ev.id, at: ev.created_at, id: ev.id, ev, snap};
	});
	if (kind === '' || kind === 'snapshot.') {
		const oldest = events.length ? events[events.length - 1].created_at : null;
		for (const s of snaps) {
			if (onEvent.has(s.id)) continue;
			if (next && oldest && s.created_at < oldest) continue;
			items.push({key: 'snap-' + s.id, at: s.created_at, id: s.id, snap: s});
		}
	}
	return items.sort((a, b) => (a.at < b.at ? 1 : a.at > b.at ? -1 : a.id < b.id ? 1 : -1));
}

const sevWords = {warning: 'Warning: ', error: 'Error: '};

// What an event's payload adds to its sentence (docs/api.md, Activity
// timeline): a rename's names, the config's key names (never values), a
// reason, a commit, a branch; a fork and its source link to each other.
function Details({ev}) {
	const p = ev.payload;
	if (!p || typeof p !== 'object') return null;
	const out = [];
	if (typeof p.from === 'string' && typeof p.to === 'string') out.push(`“${p.from}” → “${p.to}”`);
	if (Array.isArray(p.names) && p.names.length) out.push(p.names.join(', ') + (p.change ? ' ' + p.change : ''));
	if (typeof p.reason === 'string') out.push(p.reason.replace(/_/g, ' '));
	if (typeof p.exit_code === 'number') out.push('exit code ' + p.exit_code);
	if (typeof p.sha === 'string') out.push('commit ' + p.sha.slice(0, 7));
	if (typeof p.branch === 'string') out.push('branch ' + p.branch);
	if (typeof p.agent === 'string') out.push('agent ' + p.agent);
	// Publishing's events: the release (and its kind), a custom domain's
	// host and how it was verified.
	if (typeof p.number === 'number') out.push('release #' + p.number);
	if (typeof p.kind === 'string' && p.kind) out.push(p.kind);
	if (typeof p.host === 'string') out.push(p.host);
	if (typeof p.method === 'string') out.push('verified by ' + p.method);
	const ulid = (v) => (typeof v === 'string' && /^[0-9A-Za-z]{26}$/.test(v) ? v : null);
	const link = ev.type === 'app.forked' && ulid(p.app_id) ? [p.app_id, 'open the new app']
		: ulid(p.forked_from) ? [p.forked_from, 'open the source app'] : null;
	if (!out.length && !link) return null;
	return (
		<span class="ev-details">{' '}({out.join('; ')}{link && <>{out.length ? '; ' : ''}<a href={'/apps/' + link[0] + '/history'}>{link[1]}</a></>})</span>
	);
}

function Checkpoint({task, sandbox, onChange}) {
	const [run, busy, error] = useAction();
	if (!task || !task.checkpoint_id) return null;
	const revert = () => {
		if (!confirm('Put the files back as they were before this task? Changes made since are lost (take a snapshot first to keep them).')) return;
		run(async () => {
			await post(`/v1/sandboxes/${enc(sandbox.id)}/tasks/${enc(task.id)}/revert`, {});
			onChange();
		});
	};
	return (
		<span class="checkpoint">
			<span class="marker-label">Checkpoint</span>
			{task.reverted_at && <span class="muted"> reverted {when(task.reverted_at)}</span>}
			{task.can_revert && <> <button type="button" class="link" disabled={busy} onClick={revert}
				aria-label={'Revert the task of ' + when(task.finished_at || task.created_at) + '…'}>Revert…</button></>}
			<StepError error={error} />
		</span>
	);
}

function Item({it, tasks, sandbox, onChange}) {
	const {ev, snap} = it;
	if (!ev) {
		return (
			<li class="ev marker-snap">
				<time datetime={it.at}>{when(it.at)}</time>
				<span class="ev-body"><span class="marker-label">Snapshot</span> <strong>{snap.name || snap.id}</strong>
					{snap.created_by && <span class="muted"> · by {actorWords(snap.created_by)}</span>}</span>
			</li>
		);
	}
	const task = ev.type === 'task.succeeded' && ev.task_id ? tasks.get(ev.task_id) : null;
	return (
		<li class={'ev sev-' + (ev.severity || 'info') + (snap ? ' marker-snap' : '') + (task && task.checkpoint_id ? ' marker-cp' : '')}
			data-type={ev.type}>
			<time datetime={ev.created_at}>{when(ev.created_at)}</time>
			<span class="ev-body">
				{snap && <><span class="marker-label">Snapshot</span> <strong>{snap.name || snap.id}</strong> · </>}
				<span class="ev-msg">{sevWords[ev.severity] || ''}{ev.message || ev.type}</span>
				<Details ev={ev} />
				{ev.actor && <span class="muted"> · by {actorWords(ev.actor)}</span>}
				{' '}<code class="ev-type muted">{ev.type}</code>
				{task && <> <Checkpoint task={task} sandbox={sandbox} onChange={onChange} /></>}
			</span>
		</li>
	);
}

function Live({t}) {
	if (t.conn === 'open') return <span class="live-on">Live</span>;
	if (t.conn === 'connecting') return <span class="muted">Connecting…</span>;
	if (t.conn === 'reconnecting') return <span class="live-warn">Connection lost; reconnecting…</span>;
	return (
		<span class="live-warn">Live updates stopped.{' '}
			<button type="button" class="link" onClick={t.retry}>Reconnect</button></span>
	);
}

export function History({app, sandbox, onChange}) {
	const [kind, setKind] = useState('');
	const [forking, setForking] = useState(false);
	const [said, setSaid] = useState('');
	const snaps = useLoad(() => get('/v1/apps/' + enc(app.id) + '/snapshots'), [app.id]);
	const sbId = sandbox && sandbox.id;
	const tasks = useLoad(() => (sbId ? get('/v1/sandboxes/' + enc(sbId) + '/tasks') : null), [sbId]);
	const onLive = (ev) => {
		setSaid('New: ' + (ev.message || ev.type));
		if (ev.type.startsWith('snapshot.') || ev.type === 'app.forked') snaps.reload();
		// The task's row may be written just after its event: look again.
		if (ev.type.startsWith('task.')) { tasks.reload(); setTimeout(tasks.reload, 1500); }
		if (ev.type.startsWith('sandbox.') || ev.type === 'snapshot.restored' || ev.type === 'app.renamed') onChange();
		// The app's publication changed: its page (the Publish panel, the
		// disk figures) reads it again.
		if (/^(publish|release|domain)\./.test(ev.type) || ev.type === 'app.unpublished') onChange();
	};
	const t = useTimeline(app.id, kind, onLive);
	const taskMap = new Map(((tasks.data && tasks.data.tasks) || []).map((x) => [x.id, x]));
	const list = (snaps.data && snaps.data.snapshots) || [];
	const items = t.loaded ? lineOf(t.events, list, t.next, kind) : [];
	const changed = () => { snaps.reload(); tasks.reload(); onChange(); };
	return (
		<div class="page history">
			<section aria-labelledby="take-h">
				<h2 id="take-h">Keep this state</h2>
				<TakeSnapshot app={app} onTaken={() => snaps.reload()} />
				<p class="row wrap">
					<button type="button" onClick={() => setForking(true)}>Fork the app as it is now…</button>
					<span class="muted">A new app from the current files, beside this one.</span>
				</p>
				{forking && <ForkDialog app={app} onClose={() => setForking(false)} />}
			</section>
			{snaps.error && !snaps.data ? <StepError error={snaps.error} appId={app.id} retry={snaps.reload} />
				: snaps.data && <SnapshotList app={app} snaps={list} onChange={changed} />}
			<section aria-labelledby="tl-h">
				<div class="row wrap spread">
					<h2 id="tl-h">Timeline</h2>
					<span class="row wrap">
						<Live t={t} />
						<label class="inline">Show{' '}
							<select value={kind} onChange={(e) => setKind(e.currentTarget.value)}>
								{kinds.map(([k, label]) => <option key={k} value={k}>{label}</option>)}
							</select>
						</label>
					</span>
				</div>
				<p class="sr-only" role="status" aria-live="polite">{said}</p>
				<StepError error={t.error} appId={app.id} retry={t.retry} />
				{!t.loaded && !t.error && <p class="muted" aria-busy="true">Loading the history…</p>}
				{t.loaded && items.length === 0 && (
					<p class="muted">{kind ? 'No events of this kind yet.' : 'Nothing has happened to this app yet.'}</p>
				)}
				{items.length > 0 && (
					<ol class="timeline" aria-label="What happened, newest first">
						{items.map((it) => <Item key={it.key} it={it} tasks={taskMap} sandbox={sandbox} onChange={changed} />)}
					</ol>
				)}
				{t.loaded && t.next && (
					<button type="button" disabled={t.older} onClick={t.loadOlder}>{t.older ? 'Loading…' : 'Load older'}</button>
				)}
				{t.loaded && !t.next && items.length > 0 && <p class="muted">That is the beginning of the kept history.</p>}
			</section>
		</div>
	);
}
