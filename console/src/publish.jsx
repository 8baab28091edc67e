import {useState} from 'preact/hooks';
import {get, post, patch, del, request, enc} from './api.js';
import {useLoad, useAction, usePoll, ErrorText, Note, Rich, when, bytes, liveUrl} from './ui.jsx';
import {useBuildLog, LogBox} from './buildlog.jsx';
import {Domains} from './domains.jsx';
import {actorWords} from './snapshots.jsx';
import './publish.css';

// The Publish tab: build the app for production as a release and serve it
// at its own address (docs/publish.md).  Publish starts a build and shows
// its log live, then the address or the failure with the log's tail and
// Try again; below, the releases with Roll back, who may see the
// published app, Unpublish, and the custom domains.  Each failure says
// its cause in plain words with one button.

// What to do next, per error code of the publish routes.
const nextStep = {
	publish_in_progress: 'A build of this app is already running. Its log is shown below once the page reloads.',
	release_not_ready: 'That release did not build, or is still building: only a ready release can serve.',
	not_published: 'The app is not published (any more). Publish it first.',
	host_taken: 'Another app already uses that address. Choose another name.',
	insufficient_storage: 'The host is out of disk space. Free space (delete old snapshots or apps in the Trash), then try again; the serving release is untouched.',
	not_found: 'It is not there any more (removed meanwhile?). The page was reloaded.',
	no_sandbox: 'The app has no sandbox and no files yet. Make one in Build first.',
	conflict: 'The app has no files to build yet: make its sandbox (above, or in Build) first.',
};

export function publishNext(error) {
	if (!error) return '';
	if (nextStep[error.code]) return nextStep[error.code];
	if (error.status >= 500 || error.code === 'network') return 'Try again in a moment; the daemon’s log says more if it keeps failing.';
	return '';
}

// An error in place: the server's words, the next step, and one button
// (for a manifest that does not say how to build: open it in Files).
export function Failure({error, retry, label, appId}) {
	if (!error) return null;
	const manifest = appId && error.code === 'invalid_request' && /publish:|sandbox\.yaml/.test(error.message || '');
	const next = manifest ? 'Say how the app is built in the publish: section of its sandbox.yaml (docs/publish.md), then publish again.'
		: publishNext(error);
	return (
		<div class="step-error">
			<ErrorText error={error} />
			{(next || retry) && (
				<p class="row wrap">
					{next && <span>{next}</span>}
					{manifest ? <a class="button" href={'/apps/' + enc(appId) + '/files?path=sandbox.yaml'}>Open sandbox.yaml</a>
						: retry && <button type="button" onClick={retry}>{label || 'Try again'}</button>}
				</p>
			)}
		</div>
	);
}

// The release's error is its cause on the first line, then the log's end
// (shown in the log box already).
export function cause(err) {
	return String(err || '').split('\n')[0].trim();
}

async function loadAll(id) {
	const base = '/v1/apps/' + enc(id);
	const [pub, rel] = await Promise.all([get(base + '/publish'), get(base + '/releases')]);
	return {pub, releases: (rel && rel.releases) || []};
}

export function Publish({app}) {
	const st = useLoad(() => loadAll(app.id), [app.id]);
	const [started, setStarted] = useState(null); // the release this page started
	const [attempt, setAttempt] = useState(0); // the log's stream, opened again
	const [run, busy, error] = useAction();
	const pub = st.data && st.data.pub;
	const building = (pub && pub.building) || (started && started.status === 'building' ? started : null);
	usePoll(st.reload, 15000, !!st.data && !building);
	if (st.error && !st.data) return <div class="publish"><Failure error={st.error} retry={st.reload} /></div>;
	if (!pub) return <div class="publish" aria-busy="true"><p>Loading…</p></div>;
	const publish = () => run(async () => {
		const r = await post('/v1/apps/' + enc(app.id) + '/publish', {});
		setStarted({...r.release, url: r.url});
		st.reload();
	});
	// The stream's end of release `of`: the release as it ended (or null:
	// read it again).  A stream refused while the build still runs is
	// opened again after a pause.
	const ended = async (of, rel) => {
		const r = rel && rel.id === of.id ? rel
			: await get(`/v1/apps/${enc(app.id)}/releases/${enc(of.id)}`).catch(() => null);
		if (r && r.status === 'building') {
			setTimeout(() => setAttempt((a) => a + 1), 3000);
			return;
		}
		setStarted(r ? {...r, url: of.url || pub.url} : {...of, status: 'unknown'});
		st.reload();
	};
	const log = building ? {...building, url: building.url || pub.url} : started;
	return (
		<div class="publish">
			<section class="card pub-head" aria-labelledby="pub-h">
				<h2 id="pub-h">Publish</h2>
				<Live app={app} pub={pub} kept={st.data.releases.some((x) => x.status === 'ready')} />
				<div class="row wrap">
					<button type="button" class="primary" disabled={busy || !!building} onClick={publish}
						aria-describedby="pub-what">{building ? 'Building…' : pub.published ? 'Publish again' : 'Publish'}</button>
					<span id="pub-what" class="muted">Builds the app’s current files for production as a new release.
						The preview keeps running; a failed build leaves the live release serving.</span>
				</div>
				<Failure error={error} appId={app.id} retry={error && error.code === 'publish_in_progress' ? st.reload : publish}
					label={error && error.code === 'publish_in_progress' ? 'Reload' : 'Try again'} />
				{log && <Build key={log.id + ':' + attempt} app={app} release={log} onEnd={(rel) => ended(log, rel)} onRetry={publish} busy={busy || !!building} />}
			</section>
			{pub.published && <Settings app={app} pub={pub} onChange={st.reload} />}
			<Releases app={app} pub={pub} releases={st.data.releases} onChange={st.reload} />
			<Domains app={app} />
		</div>
	);
}

function Live({app, pub, kept}) {
	if (!pub.published && kept) {
		return <p class="note warn">Unpublished: nothing answers at <code>{pub.host}</code>. Publish again, or roll back
			to a release below, to serve it there again.</p>;
	}
	if (!pub.published) {
		return <p>Not published yet. Publishing gives the app its own address
			{pub.host ? <> (<code>{pub.host}</code>)</> : ''}, always on, apart from the preview.</p>;
	}
	const r = pub.release;
	return (
		<div class="pub-live">
			{r ? <span class="badge pub-ready">Live</span> : <span class="badge pub-failed">Nothing serving</span>}{' '}
			<a href={liveUrl(pub.url)} target="_blank" rel="noopener noreferrer">{liveUrl(pub.url)}<span class="sr-only"> (opens in a new tab)</span></a>
			{r && <span class="muted"> · release #{r.number}{r.kind ? ', ' + r.kind : ''}, since {when(r.finished_at || r.created_at)}</span>}
			{pub.visibility === 'private' && <span class="muted"> · private: only through a one-time link</span>}
			{pub.visibility === 'private' && r && <PrivateOpen app={app} url={liveUrl(pub.url)} />}
		</div>
	);
}

// A private published app lets in a browser that holds its cookie, which
// a one-time link (POST …/preview-link, the app's code) gives on the
// host it is opened on: the link is minted for the preview and opened on
// the published host instead.  The tab is opened at the click (a popup
// opened after an await is blocked) and sent to the link once it is made.
function PrivateOpen({app, url}) {
	const [run, busy, error] = useAction();
	const open = () => {
		const w = window.open('', '_blank');
		run(async () => {
			try {
				const l = await post('/v1/apps/' + enc(app.id) + '/preview-link', {path: '/', ttl_seconds: 300});
				const u = new URL(l.url), to = new URL(url);
				u.protocol = to.protocol;
				u.host = to.host;
				if (w) { w.opener = null; w.location = u.href; }
			} catch (e) {
				if (w) w.close();
				throw e;
			}
		});
	};
	return (
		<>
			{' '}<button type="button" class="link" disabled={busy} onClick={open}>Open with a one-time link</button>
			{error && <span class="pub-open-error"><ErrorText error={error} />
				{error.code === 'preview_no_sandbox' && <span>A one-time link needs the app’s sandbox: make one in Build.</span>}</span>}
		</>
	);
}

// The build of one release: its live log, then its outcome.
function Build({app, release, onEnd, onRetry, busy}) {
	const live = release.status === 'building';
	const {lines, conn} = useBuildLog(app.id, release.id, onEnd);
	const over = release.status === 'ready' || release.status === 'failed';
	return (
		<div class={'pub-build pb-' + release.status}>
			<h3>Release #{release.number}{live ? ': building…' : ''}</h3>
			{live && <p class="muted" role="status">Building: {lines.length} {lines.length === 1 ? 'line' : 'lines'} of log so far.</p>}
			{release.status === 'ready' && (
				<Note>Published: release #{release.number} is live at{' '}
					<a href={liveUrl(release.url)} target="_blank" rel="noopener noreferrer">{liveUrl(release.url)}<span class="sr-only"> (opens in a new tab)</span></a>
					{release.build_ms != null && <> after {Math.round(release.build_ms / 100) / 10} s</>}.</Note>
			)}
			{release.status === 'failed' && (
				<div class="step-error">
					<p class="error" role="alert">The build failed{cause(release.error) ? ': ' : '.'}{cause(release.error) && <Rich text={cause(release.error)} keepCase />}
						{' '}The previous release, if any, still serves.</p>
					<p class="row wrap"><span>The end of the log is below. Fix the cause in the app (or ask the agent), then:</span>
						<button type="button" disabled={busy} onClick={onRetry}>Try again</button></p>
				</div>
			)}
			{release.status === 'unknown' && (
				<p class="row wrap"><span class="note warn">The build’s result could not be read.</span>
					<button type="button" onClick={() => onEnd(null)}>Reload</button></p>
			)}
			<LogBox lines={lines} conn={over ? null : conn} label={`Build log of release #${release.number}`}
				tail={release.status === 'failed' ? 40 : 0} />
		</div>
	);
}

// Who may see the published app, and Unpublish.
function Settings({app, pub, onChange}) {
	const [run, busy, error] = useAction();
	const base = '/v1/apps/' + enc(app.id) + '/publish';
	const set = (v) => run(async () => { await patch(base, {visibility: v}); onChange(); });
	const unpublish = () => {
		if (!confirm(`Unpublish “${app.name}”? ${liveUrl(pub.url)} stops answering, and its custom domains with it. The preview is not touched; publish again to come back.`)) return;
		run(async () => { await del(base); onChange(); });
	};
	return (
		<section class="card" aria-labelledby="pub-set-h">
			<h2 id="pub-set-h">Address and visibility</h2>
			<Label app={app} pub={pub} onChange={onChange} />
			<label class="pub-vis">Visibility of the published app
				<select disabled={busy} value={pub.visibility || 'public'} onChange={(e) => set(e.currentTarget.value)}>
					<option value="public">Public: anyone with the address</option>
					<option value="private">Private: only through one-time links from here</option>
				</select>
			</label>
			<p class="row wrap"><button type="button" class="danger" disabled={busy} onClick={unpublish}>Unpublish</button>
				<span class="muted">The address and its domains stop answering; the preview stays.</span></p>
			{busy && <span class="muted" role="status">Saving…</span>}
			<Failure error={error} retry={onChange} label="Reload" />
		</section>
	);
}

// The address's name (PATCH …/publish {"label"}): the host moves at once;
// a name another app has (409 host_taken) or not a name (400) is shown
// under the field.
function Label({app, pub, onChange}) {
	const [label, setLabel] = useState(pub.label || '');
	const [run, busy, error, setError] = useAction();
	const [done, setDone] = useState('');
	const suffix = pub.host && pub.label && pub.host.startsWith(pub.label + '.') ? pub.host.slice(pub.label.length) : '';
	const save = (e) => {
		e.preventDefault();
		setDone('');
		const l = label.trim().toLowerCase();
		if (!/^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/.test(l)) {
			setError({code: 'invalid_request', message: 'Use 1 to 63 lower-case letters, digits and hyphens (not at either end).'});
			return;
		}
		run(async () => {
			const p = await patch('/v1/apps/' + enc(app.id) + '/publish', {label: l});
			setDone(`The app moved to ${liveUrl(p.url)}; the old address no longer answers.`);
			onChange();
		});
	};
	const words = error && (error.code === 'host_taken'
		? 'Another app already has that name. Choose another.' : error.message);
	return (
		<form class="pub-label" onSubmit={save} noValidate>
			<label for="pub-label-in">Address name</label>
			<div class="row wrap">
				<input id="pub-label-in" value={label} maxLength={63} autocomplete="off" spellcheck={false}
					aria-invalid={error ? 'true' : undefined} aria-describedby={error ? 'pub-label-err' : 'pub-label-suffix'}
					onInput={(e) => { setLabel(e.currentTarget.value); setError(null); setDone(''); }} />
				{suffix && <span id="pub-label-suffix" class="muted mono">{suffix}</span>}
				<button type="submit" disabled={busy || label.trim() === pub.label}>Change the address</button>
			</div>
			{error && <p id="pub-label-err" class="error" role="alert"><Rich text={words} keepCase /></p>}
			{done && <Note>{done}</Note>}
		</form>
	);
}

const statusWords = {building: 'building…', ready: 'ready', failed: 'failed'};

function Releases({app, pub, releases, onChange}) {
	const [open, setOpen] = useState(null); // a release whose log is shown
	const [moved, setMoved] = useState(null); // the release rolled back to
	if (!releases.length) return null;
	const rolled = (r) => { setMoved(r); onChange(); };
	return (
		<section class="card" aria-labelledby="rel-h">
			<h2 id="rel-h">Releases</h2>
			{moved && pub.release && pub.release.id === moved.id && <Note>Rolled back: release #{moved.number} serves now at {liveUrl(pub.url)}.</Note>}
			<table class="list releases">
				<caption class="sr-only">Releases of {app.name}, newest first</caption>
				<thead><tr><th scope="col">Release</th><th scope="col">Status</th><th scope="col">Built from</th>
					<th scope="col">Size</th><th scope="col">When</th><th scope="col">Actions</th></tr></thead>
				<tbody>{releases.map((r) => (
					<ReleaseRow key={r.id} app={app} r={r} pub={pub} onChange={onChange} onRolled={rolled} onLog={() => setOpen(open === r.id ? null : r.id)} logOpen={open === r.id} />
				))}</tbody>
			</table>
			{open && <OldLog app={app} r={releases.find((x) => x.id === open)} />}
		</section>
	);
}

function ReleaseRow({app, r, onChange, onRolled, onLog, logOpen}) {
	const [run, busy, error] = useAction();
	const back = () => {
		if (!confirm(`Roll back to release #${r.number}? It serves at once (no rebuild); the current release stays in the list.`)) return;
		run(async () => { await post('/v1/apps/' + enc(app.id) + '/rollback', {release: r.id}); onRolled(r); });
	};
	const from = [r.commit && 'commit ' + r.commit.slice(0, 7), r.source && r.source !== 'files' && r.source_ref && r.source + ' ' + r.source_ref.slice(-8)].filter(Boolean).join(', ');
	return (
		<tr class={r.active ? 'active' : ''}>
			<th scope="row">#{r.number}{r.active && <> <span class="badge pub-ready">Live</span></>}
				{r.kind && <span class="muted"> · {r.kind}</span>}</th>
			<td><span class={'badge pub-' + r.status}>{statusWords[r.status] || r.status}</span>
				{r.status === 'failed' && cause(r.error) && <div class="muted rel-error"><Rich text={cause(r.error)} keepCase /></div>}</td>
			<td>{from || <span class="muted">the current files</span>}{r.created_by && <span class="muted"> by {actorWords(r.created_by)}</span>}</td>
			<td>{r.size_bytes != null && r.status === 'ready' ? bytes(r.size_bytes) : <span class="muted">—</span>}
				{r.files && r.status === 'ready' ? <span class="muted">, {r.files} files</span> : ''}</td>
			<td><time datetime={r.created_at}>{when(r.created_at)}</time>
				{r.build_ms != null && <span class="muted"> · built in {Math.round(r.build_ms / 100) / 10} s</span>}</td>
			<td>
				<div class="row wrap actions">
					{!r.active && r.status === 'ready' && (
						<button type="button" disabled={busy} onClick={back} aria-label={`Roll back to release #${r.number}`}>Roll back</button>
					)}
					<button type="button" class="link" aria-expanded={logOpen} onClick={onLog}>
						{logOpen ? 'Hide' : 'Log'}<span class="sr-only"> of release #{r.number}</span></button>
				</div>
				<Failure error={error} retry={onChange} label="Reload" />
			</td>
		</tr>
	);
}

// A release's log, as text, under the list.
function OldLog({app, r}) {
	const st = useLoad(async () => {
		if (!r) return [];
		const res = await request('GET', `/v1/apps/${enc(app.id)}/releases/${enc(r.id)}/log`, {raw: true});
		return (await res.text()).replace(/\n$/, '').split('\n');
	}, [app.id, r && r.id]);
	if (!r) return null;
	return (
		<div class="old-log">
			<h3>Build log of release #{r.number}</h3>
			{st.error ? <Failure error={st.error} retry={st.reload} />
				: !st.data ? <p class="muted">Loading the log…</p>
				: <LogBox lines={st.data} label={`Saved build log of release #${r.number}`} />}
		</div>
	);
}
