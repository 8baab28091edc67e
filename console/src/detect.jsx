// What sandboxd detected in an imported app (GET …/runtime-inspect), on
// the app view: the framework, how sure, why, the warnings, and a
// "Change…" control that applies another recipe (POST …/runtime-inspect
// {recipe}), which writes and commits the app's sandbox.yaml and
// restarts its processes.  Nothing detected: what was looked for, and the
// same control.  A sandbox.yaml the user wrote is replaced only after
// asking (force).  Hidden for apps not made from a repository, and once
// the user closes it while the manifest is fine (until the page reloads).
import {useState} from 'preact/hooks';
import {get, post, enc} from './api.js';
import {useLoad, ErrorText, Note, Rich} from './ui.jsx';
import './detect.css';

const closed = new Set();

export function Detected({app, sandbox, onChange}) {
	const [hide, setHide] = useState(closed.has(app.id));
	const st = useLoad(() => get('/v1/apps/' + enc(app.id) + '/runtime-inspect'), [app.id, sandbox.id]);
	const bad = sandbox.manifest && sandbox.manifest.valid === false;
	if (!app.git || sandbox.status === 'creating' || sandbox.status_reason === 'import_failed' || (hide && !bad)) return null;
	if (st.error && !st.data) return <div class="detect card"><ErrorText error={st.error} /></div>;
	if (!st.data) return null;
	const d = st.data.detection;
	const m = st.data.existing_manifest || {};
	const own = m.present && !m.written_by_sandboxd;
	const found = d && d.recipe;
	// The recipe the app runs as: the one its sandbox.yaml was written from.
	const chosen = m.written_by_sandboxd && m.recipe && m.recipe !== (found ? d.recipe : '');
	const close = () => { closed.add(app.id); setHide(true); };
	return (
		<section class={'detect card' + (found || own || chosen ? '' : ' none')} aria-labelledby="detect-title">
			<div class="detect-head">
				<h2 id="detect-title">{own ? 'Runs from the repository’s own sandbox.yaml'
					: chosen ? <>Runs as: {m.display_name || m.recipe} <span class="muted">· chosen</span></>
					: found ? <>Detected: {d.display_name || d.recipe} <span class="muted">· {d.confidence_label}</span></>
					: 'No framework detected'}</h2>
				{!bad && <button type="button" class="link" onClick={close}>Hide<span class="sr-only"> what was detected</span></button>}
			</div>
			{found && !own && !chosen && <Reasons d={d} />}
			{(own || chosen) && found && <p class="muted">Detection would choose {d.display_name || d.recipe} ({d.confidence_label}).</p>}
			{!found && !chosen && !bad && d && d.looked_for && <p><Rich text={d.looked_for} /></p>}
			{bad && <Note kind="warn">Nothing runs yet: <Rich text={sandbox.manifest.error} /></Note>}
			<Warnings list={(st.data.warnings || []).filter((w) => !d || w !== d.looked_for)} />
			<Change app={app} own={own} current={chosen ? m.recipe : found ? d.recipe : ''} onDone={() => { st.reload(); onChange(); }} />
		</section>
	);
}

function Reasons({d}) {
	if (!d.reasons || !d.reasons.length) return null;
	return (
		<ul class="detect-reasons">
			{d.reasons.map((r, i) => <li key={i}><Rich text={r} keepCase /></li>)}
			{d.dir && <li>The app is in <code>{d.dir}</code>.</li>}
		</ul>
	);
}

function Warnings({list}) {
	if (!list || !list.length) return null;
	return (
		<ul class="detect-warnings" aria-label="Warnings">
			{list.map((w, i) => <li key={i}><Rich text={w} keepCase /></li>)}
		</ul>
	);
}

// The select of recipes and Apply.  A 409 manifest_is_users asks whether
// to replace the user's file; other errors stay in place with the next step.
function Change({app, own, current, onDone}) {
	const [open, setOpen] = useState(false);
	const [choice, setChoice] = useState('');
	const [busy, setBusy] = useState(false);
	const [error, setError] = useState(null);
	const [done, setDone] = useState('');
	const recipes = useLoad(() => (open ? get('/v1/runtime/recipes') : null), [open]);
	const apply = async (force) => {
		setBusy(true);
		setError(null);
		setDone('');
		try {
			const body = {recipe: choice || current || undefined};
			if (force) body.force = true;
			const r = await post('/v1/apps/' + enc(app.id) + '/runtime-inspect', body);
			setDone(r.written ? 'Applied: sandbox.yaml was written and committed, and the app restarts with it.'
				: 'Nothing was written: no framework matched.');
			setOpen(false);
			onDone();
		} catch (e) {
			if (e.code === 'manifest_is_users')
				e.message = 'The app’s sandbox.yaml was written by you or the repository, not by sandboxd. Replace it to apply the recipe, or edit it in Files.';
			else if (e.code === 'task_in_progress')
				e.message = 'A task is running on the app. Wait for it to end (or cancel it), then apply again.';
			setError(e);
		} finally {
			setBusy(false);
		}
	};
	const list = recipes.data ? recipes.data.recipes : [];
	return (
		<div class="detect-change">
			{!open && <button type="button" aria-expanded="false" onClick={() => setOpen(true)}>Change…</button>}
			{open && (
				<form class="row" onSubmit={(e) => { e.preventDefault(); apply(own); }}>
					<label for="detect-recipe">Run it as</label>
					<select id="detect-recipe" value={choice || current} disabled={busy || !recipes.data}
						onChange={(e) => setChoice(e.currentTarget.value)}>
						{!current && !choice && <option value="">Choose a framework…</option>}
						{list.map((r) => <option key={r.id} value={r.id}>{r.display_name}</option>)}
					</select>
					<button type="submit" class="primary" disabled={busy || !(choice || current)}>{own ? 'Replace sandbox.yaml' : 'Apply'}</button>
					<button type="button" disabled={busy} onClick={() => { setOpen(false); setError(null); }}>Cancel</button>
				</form>
			)}
			{open && own && <p class="muted">The app’s own sandbox.yaml is replaced (the old one stays in git history).</p>}
			{recipes.error && <ErrorText error={recipes.error} />}
			{busy && <span class="muted" role="status">Applying…</span>}
			{done && <Note>{done}</Note>}
			<ErrorText error={error} />
			{error && error.code === 'manifest_is_users' && (
				<button type="button" class="danger" disabled={busy} onClick={() => apply(true)}>Replace the app’s sandbox.yaml</button>
			)}
		</div>
	);
}
