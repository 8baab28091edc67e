import {useEffect, useRef, useState} from 'preact/hooks';
import {useLocation} from 'preact-iso';
import {post, del, enc} from './api.js';
import {useAction, ErrorText, Note, when, bytes} from './ui.jsx';

// An app's snapshots (GET /v1/apps/{id}/snapshots): take one, and on each
// Restore… (a dialog; the current state is snapshotted first, so the
// notice after it offers Undo), Fork… (a dialog; the new app opens) and
// Delete (a confirmation).  Errors stay where the action was, in the
// envelope's words and with what to do next.

const reasonWords = {
	manual: '',
	before_restore: 'kept before a restore',
	fork: 'made for a fork',
};

const methodWords = {
	reflink: 'copy-on-write clone',
	copy: 'copy (dependencies shared)',
};

// What to do next, per error code: never a dead end.
const nextStep = {
	task_in_progress: 'A task is running in this app. Wait for it to finish, or cancel it in Build, then try again.',
	insufficient_storage: 'The host is out of disk space. Delete snapshots you no longer need, or free space on the host, then try again.',
	not_found: 'It is not there any more (deleted meanwhile?). The list was reloaded.',
	snapshot_busy: 'Another snapshot, restore or fork of this snapshot is under way. Wait a moment, then try again.',
	snapshot_limit: 'The app has as many snapshots as this server keeps. Delete one you no longer need below, then try again.',
	too_large: 'The app’s files are too many or nested too deep to snapshot. Remove what it does not need (build output, caches) in Files, then try again.',
	docker_error: 'Docker did not do what sandboxd asked. Try again; the daemon’s log says more if it keeps failing.',
	no_sandbox: 'The app has no sandbox yet. Make one in Build first.',
};

export function nextStepWords(error) {
	if (!error) return '';
	if (nextStep[error.code]) return nextStep[error.code];
	if (/limit|too_many|quota/.test(error.code || '')) return 'Delete snapshots you no longer need, then try again.';
	if (error.status >= 500 || error.code === 'network') return 'Try again in a moment; the daemon’s log says more if it keeps failing.';
	return '';
}

// An error in place: the server's message, the next step, a link to
// Build when a task is in the way, and Try again when there is a retry.
export function StepError({error, appId, retry}) {
	if (!error) return null;
	const next = nextStepWords(error);
	return (
		<div class="step-error">
			<ErrorText error={error} />
			{(next || retry) && (
				<p class="row wrap">
					{next && <span>{next}</span>}
					{error.code === 'task_in_progress' && appId && <a href={'/apps/' + enc(appId)}>Go to Build</a>}
					{retry && <button type="button" onClick={retry}>Try again</button>}
				</p>
			)}
		</div>
	);
}

let dialogSeq = 0;

// A modal dialog (<dialog> shown with showModal(): the focus goes in and
// stays in, Escape closes it); on close the focus goes back to where it
// was.  Unmounting closes it.
export function Dialog({title, onClose, children}) {
	const ref = useRef(null);
	const back = useRef(null);
	const [id] = useState(() => 'dlg-' + ++dialogSeq);
	const refocus = () => {
		const b = back.current;
		back.current = null;
		if (b && b.isConnected) b.focus();
	};
	useEffect(() => {
		const d = ref.current;
		back.current = document.activeElement;
		if (d && !d.open) d.showModal();
		return () => {
			if (d && d.open) d.close();
			refocus();
		};
	}, []);
	// Escape: closed and the focus back at once, then the owner forgets it.
	const cancel = (e) => {
		e.preventDefault();
		if (ref.current && ref.current.open) ref.current.close();
		refocus();
		onClose();
	};
	return (
		<dialog ref={ref} class="dialog" aria-labelledby={id} onCancel={cancel}>
			<h2 id={id}>{title}</h2>
			{children}
		</dialog>
	);
}

function snapName(s) {
	return s.name || 'snapshot ' + s.id.slice(-6);
}

export function TakeSnapshot({app, onTaken}) {
	const [name, setName] = useState('');
	const [run, busy, error] = useAction();
	const [done, setDone] = useState(null);
	const take = (e) => {
		e.preventDefault();
		setDone(null);
		run(async () => {
			const s = await post('/v1/apps/' + enc(app.id) + '/snapshots', name.trim() ? {name: name.trim()} : {});
			setName('');
			setDone(s);
			onTaken(s);
		});
	};
	return (
		<form class="take" onSubmit={take}>
			<div class="row wrap">
				<label class="grow">Snapshot name (optional)
					<input value={name} maxLength={200} placeholder="e.g. before the redesign"
						onInput={(e) => setName(e.currentTarget.value)} />
				</label>
				<button type="submit" class="primary" disabled={busy}>Take snapshot</button>
			</div>
			{busy && <Note kind="info">Taking the snapshot… a running app pauses for a moment.</Note>}
			{done && (
				<Note>Snapshot “{snapName(done)}” taken: {done.files} files, {bytes(done.size_bytes)}
					{done.pause_ms ? `, the app paused ${done.pause_ms} ms` : ''}.</Note>
			)}
			<StepError error={error} appId={app.id} />
		</form>
	);
}

function RestoreDialog({app, snap, onClose, onRestored}) {
	const [run, busy, error] = useAction();
	const go = () => run(async () => {
		const r = await post('/v1/apps/' + enc(app.id) + '/restore', {snapshot_id: snap.id});
		onRestored(snap, r);
	});
	return (
		<Dialog title={`Restore “${snapName(snap)}”?`} onClose={onClose}>
			<p>The app’s files and git repository go back to how they were in this snapshot
				({when(snap.created_at)}), and its sandbox restarts on them.</p>
			<p>Nothing is lost: the current state is snapshotted first, so you can undo
				the restore right after, or later from the list.</p>
			<StepError error={error} appId={app.id} />
			<div class="row">
				<button type="button" class="primary" disabled={busy} onClick={go}>Restore</button>
				<button type="button" disabled={busy} onClick={onClose}>Cancel</button>
				{busy && <span class="muted" role="status">Restoring…</span>}
			</div>
		</Dialog>
	);
}

// Fork: a new app from a snapshot (snap) or from the current state (no
// snap).  Config secrets and the budget stay behind unless asked.
export function ForkDialog({app, snap, onClose}) {
	const {route} = useLocation();
	const [name, setName] = useState(app.name + ' (fork)');
	const [config, setConfig] = useState(false);
	const [budget, setBudget] = useState(false);
	const [run, busy, error] = useAction();
	const go = (e) => {
		e.preventDefault();
		run(async () => {
			const body = {name: name.trim(), copy_config: config, copy_budget: budget};
			if (snap) body.snapshot_id = snap.id;
			const r = await post('/v1/apps/' + enc(app.id) + '/fork', body);
			onClose();
			route('/apps/' + enc(r.app.id));
		});
	};
	return (
		<Dialog title={snap ? `Fork “${snapName(snap)}” into a new app` : `Fork “${app.name}” as it is now`} onClose={onClose}>
			<form onSubmit={go}>
				<p>The new app gets its own sandbox and preview, with the same preset, manifest and
					git settings. {app.name} keeps running as it is.</p>
				<label>Name of the new app
					<input value={name} required maxLength={200} onInput={(e) => setName(e.currentTarget.value)} />
				</label>
				<label class="check"><input type="checkbox" checked={config} onChange={(e) => setConfig(e.currentTarget.checked)}
					aria-describedby="fork-config-why" /> Copy the config and its secrets</label>
				<p id="fork-config-why" class="muted hint">Off by default: a fork is often a variant to try or share, and the
					source’s API keys and passwords should not travel with it unless you say so.</p>
				<label class="check"><input type="checkbox" checked={budget} onChange={(e) => setBudget(e.currentTarget.checked)}
					aria-describedby="fork-budget-why" /> Copy the spending budget</label>
				<p id="fork-budget-why" class="muted hint">Off by default: the new app’s spend starts at zero and is counted on
					its own, so you choose its limit; copy it to keep the same cap.</p>
				<StepError error={error} appId={app.id} />
				<div class="row">
					<button type="submit" class="primary" disabled={busy || !name.trim()}>Fork</button>
					<button type="button" disabled={busy} onClick={onClose}>Cancel</button>
					{busy && <span class="muted" role="status">Making the new app…</span>}
				</div>
			</form>
		</Dialog>
	);
}

function SnapshotRow({app, s, onChange, onRestored, onAsk}) {
	const [run, busy, error] = useAction();
	const ready = s.status === 'ready';
	const remove = () => {
		if (!confirm(`Delete the snapshot “${snapName(s)}”? It cannot be brought back. The app itself does not change.`)) return;
		run(async () => {
			try {
				await del('/v1/snapshots/' + enc(s.id));
			} catch (e) {
				if (e.code === 'not_found') onChange();
				throw e;
			}
			onChange();
		});
	};
	const from = [s.task_id && 'task ' + s.task_id.slice(-6), s.commit && 'commit ' + s.commit.slice(0, 7)].filter(Boolean).join(', ');
	return (
		<tr id={'snap-' + s.id}>
			<th scope="row">
				<span class="snap-name">{snapName(s)}</span>
				{reasonWords[s.reason] && <span class="muted"> · {reasonWords[s.reason]}</span>}
				{s.status !== 'ready' && <> <span class={'badge snap-' + s.status}>{s.status === 'taking' ? 'taking…' : s.status}</span></>}
			</th>
			<td><time datetime={s.created_at}>{when(s.created_at)}</time>{s.created_by && <span class="muted"> by {actorWords(s.created_by)}</span>}</td>
			<td>{s.files != null && <>{s.files} files, </>}{bytes(s.size_bytes)}
				{s.own_bytes != null && <span class="muted"> ({bytes(s.own_bytes)} of its own)</span>}
				{s.method && <span class="muted">; {methodWords[s.method] || s.method}</span>}</td>
			<td>{from || <span class="muted">—</span>}</td>
			<td>
				<div class="row wrap actions">
					<button type="button" disabled={busy || !ready} onClick={() => onAsk('restore', s)}
						aria-label={`Restore “${snapName(s)}”…`}>Restore…</button>
					<button type="button" disabled={busy || !ready} onClick={() => onAsk('fork', s)}
						aria-label={`Fork “${snapName(s)}”…`}>Fork…</button>
					<button type="button" class="danger" disabled={busy} onClick={remove}
						aria-label={`Delete “${snapName(s)}”`}>Delete</button>
				</div>
				<StepError error={error} appId={app.id} />
			</td>
		</tr>
	);
}

export function actorWords(a) {
	if (!a) return '';
	if (a === 'system') return 'sandboxd';
	if (a === 'console') return 'the console';
	return a;
}

// The list, with the restore's notice (and its Undo) above it.
export function SnapshotList({app, snaps, onChange}) {
	const [ask, setAsk] = useState(null); // {what: 'restore'|'fork', snap}
	const [notice, setNotice] = useState(null); // {name, undo}
	const [undo, undoBusy, undoError, setUndoError] = useAction();
	const restored = (snap, r) => {
		setAsk(null);
		setUndoError(null);
		setNotice({name: snapName(snap), undo: r.undo_snapshot_id, undone: false});
		onChange();
	};
	const doUndo = () => undo(async () => {
		await post('/v1/apps/' + enc(app.id) + '/restore', {snapshot_id: notice.undo});
		setNotice({...notice, undone: true});
		onChange();
	});
	return (
		<section aria-labelledby="snaps-h">
			<h2 id="snaps-h">Snapshots</h2>
			{notice && !notice.undone && (
				<div class="note restored" role="status">
					<span>Restored to “{notice.name}”. The state before it was kept as a snapshot.</span>{' '}
					{notice.undo && <button type="button" disabled={undoBusy} onClick={doUndo}>Undo</button>}{' '}
					<button type="button" class="link" onClick={() => setNotice(null)}>Dismiss</button>
				</div>
			)}
			{notice && notice.undone && (
				<Note>Undone: the app is back as it was before the restore to “{notice.name}”.</Note>
			)}
			<StepError error={undoError} appId={app.id} retry={doUndo} />
			{snaps.length === 0 ? (
				<div class="empty">
					<p><strong>No snapshots yet.</strong> A snapshot keeps the app’s files and its git
						repository as they are now, under a name. Come back to it later with Restore, or
						start a new app from it with Fork.</p>
					<p class="muted">Taking one pauses a running app only for a moment. Dependencies such
						as <code>node_modules</code> are shared, not copied; running processes and memory
						are not kept.</p>
				</div>
			) : (
				<table class="list snaps">
					<caption class="sr-only">Snapshots of {app.name}, newest first</caption>
					<thead><tr><th scope="col">Name</th><th scope="col">Taken</th><th scope="col">Contents</th>
						<th scope="col">From</th><th scope="col">Actions</th></tr></thead>
					<tbody>{snaps.map((s) => (
						<SnapshotRow key={s.id} app={app} s={s} onChange={onChange} onRestored={restored}
							onAsk={(what, snap) => setAsk({what, snap})} />
					))}</tbody>
				</table>
			)}
			{ask && ask.what === 'restore' && <RestoreDialog app={app} snap={ask.snap} onClose={() => setAsk(null)} onRestored={restored} />}
			{ask && ask.what === 'fork' && <ForkDialog app={app} snap={ask.snap} onClose={() => setAsk(null)} />}
		</section>
	);
}
