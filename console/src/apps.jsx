import {useEffect, useRef, useState} from 'preact/hooks';
import {useLocation} from 'preact-iso';
import {get, post, enc} from './api.js';
import {useLoad, ErrorText, Note, StatusBadge, when, setTitle, usePoll} from './ui.jsx';
import {useDraft} from './drafts.js';

// Enter sends the form, Shift+Enter is a new line (and Enter that ends
// an input method's composition is not a send).
export function enterSends(e) {
	if (e.key === 'Enter' && !e.shiftKey && !e.isComposing && e.keyCode !== 229) {
		e.preventDefault();
		e.currentTarget.form.requestSubmit();
	}
}

async function loadApps() {
	const {apps} = await get('/v1/apps');
	const sbs = await Promise.all(apps.map((a) =>
		a.current_sandbox_id ? get('/v1/sandboxes/' + a.current_sandbox_id).catch(() => null) : null));
	return apps.map((a, i) => ({...a, sandbox: sbs[i]}));
}

// A short name from a description: its first 2–4 meaningful words,
// filler dropped, each capitalised, at most 32 characters ("A shopping
// list where I can add items." -> "Shopping List").
const filler = new Set(('a an the i im me my we our us you your please want wants wanted need needs would like ' +
	'let lets build make create write generate design code develop app apps application website site web page ' +
	'tool simple small little quick basic new nice some just one and to can could').split(' '));
// After the name's first word, these end it: the rest describes.
const breaks = new Set(('where that which who whose when while with without for to so can could should will would ' +
	'using use by from in on at of is are was be has have lets let allows allowing').split(' '));

export function nameFrom(text) {
	const t = text.replace(/\[\[[^\]]*\]\]/g, ' ');
	const tokens = t.match(/[\p{L}\p{N}][\p{L}\p{N}'’-]*|[.!?;:,()\n]/gu) || [];
	const words = [];
	for (const tok of tokens) {
		const w = tok.toLowerCase().replace(/['’]/g, '');
		if (!/[\p{L}\p{N}]/u.test(tok)) {
			if (words.length) break;
			continue;
		}
		if (breaks.has(w)) {
			if (words.length) break;
			continue;
		}
		if (filler.has(w)) {
			// "a todo app" -> "Todo App", not one word
			if (words.length === 1 && /^(app|website|site|tool|page)$/.test(w)) words.push(tok[0].toUpperCase() + tok.slice(1));
			continue;
		}
		words.push(tok[0].toUpperCase() + tok.slice(1));
		if (words.length === 4) break;
	}
	let name = '';
	for (const w of words) {
		const n = name ? name + ' ' + w : w;
		if (n.length > 32) break;
		name = n;
	}
	if (!name && words.length) name = words[0].slice(0, 32);
	return name || 'New app';
}

function Presets({value, onChange, id}) {
	const presets = useLoad(() => get('/v1/presets'), []);
	return (
		<select id={id} value={value} onChange={(e) => onChange(e.currentTarget.value)}>
			<option value="">No template (empty app)</option>
			{(presets.data ? presets.data.presets : []).map((p) => (
				<option value={p.id} key={p.id}>{p.label} ({p.description})</option>
			))}
		</select>
	);
}

function PromptCreate() {
	const {route} = useLocation();
	const [text, setText] = useState('');
	const [preset, setPreset] = useState('react-vite');
	const [step, setStep] = useState('');
	const [error, setError] = useState(null);
	const box = useRef(null);
	const draft = useDraft('apps-prompt', text, setText);
	useEffect(() => { if (box.current) box.current.focus(); }, []);
	const submit = async (e) => {
		e.preventDefault();
		if (!text.trim() || step) return;
		setError(null);
		let app;
		try {
			setStep('Creating the app…');
			app = await post('/v1/apps', {name: nameFrom(text), description: text.slice(0, 4096),
				...(preset ? {runtime_preset: preset} : {})});
			setStep('Starting its sandbox…');
			const sb = await post('/v1/apps/' + app.id + '/sandbox', {});
			setStep('Giving the agent your description…');
			await post('/v1/sandboxes/' + sb.id + '/tasks', {prompt: text});
			draft.clear();
			route('/apps/' + app.id);
		} catch (err) {
			setError(err);
			setStep('');
			if (app) route('/apps/' + app.id);
		}
	};
	return (
		<form class="card" onSubmit={submit} aria-labelledby="pc-title">
			<h2 id="pc-title">Describe your app</h2>
			<p>Say what you want in plain words. sandboxd makes the app, starts it and asks the agent to build it.</p>
			<label for="pc-text" class="sr-only">What your app should do</label>
			<textarea id="pc-text" rows={4} value={text} required ref={box} autofocus
				placeholder="A to-do list where I can tick items off and filter by done (Enter builds it, Shift+Enter for a new line)"
				onInput={(e) => setText(e.currentTarget.value)} onKeyDown={enterSends} />
			{draft.restored && (
				<Note kind="info">Restored your unsaved draft.{' '}
					<button type="button" class="link" onClick={draft.discard}>Discard</button></Note>
			)}
			<div class="row">
				<label for="pc-preset">Start from</label>
				<Presets id="pc-preset" value={preset} onChange={setPreset} />
				<button type="submit" class="primary" disabled={!!step}>Build it</button>
			</div>
			{step && <Note>{step}</Note>}
			<ErrorText error={error} />
		</form>
	);
}

function NewApp({onCreated}) {
	const {route} = useLocation();
	const [mode, setMode] = useState('preset');
	const [name, setName] = useState('');
	const [preset, setPreset] = useState('');
	const [url, setUrl] = useState('');
	const [branch, setBranch] = useState('');
	const [cred, setCred] = useState('');
	const [step, setStep] = useState('');
	const [error, setError] = useState(null);
	const creds = useLoad(() => (mode === 'git' ? get('/v1/git-credentials') : null), [mode]);
	const submit = async (e) => {
		e.preventDefault();
		setError(null);
		let app;
		try {
			setStep('Creating the app…');
			const body = {name: name.trim()};
			if (preset) body.runtime_preset = preset;
			if (mode === 'git') {
				body.git = {repo_url: url.trim()};
				if (branch.trim()) body.git.branch = branch.trim();
				if (cred) body.git.credential_id = cred;
			}
			app = await post('/v1/apps', body);
			setStep(mode === 'git' ? 'Cloning the repository, detecting its framework and starting the sandbox… (a large repository takes a while)' : 'Starting its sandbox…');
			await post('/v1/apps/' + app.id + '/sandbox', {});
			onCreated();
			route('/apps/' + app.id);
		} catch (err) {
			setError(err);
			setStep('');
			if (app) {
				onCreated();
				err.message = (mode === 'git' ? 'The app was made, but the import failed: ' : 'The app was made, but its sandbox did not start: ') + err.message;
			}
		}
	};
	return (
		<form class="card" onSubmit={submit} aria-labelledby="na-title">
			<h2 id="na-title">New app</h2>
			<fieldset class="row">
				<legend>Start from</legend>
				<label><input type="radio" name="mode" checked={mode === 'preset'} onChange={() => setMode('preset')} /> A template</label>
				<label><input type="radio" name="mode" checked={mode === 'git'} onChange={() => setMode('git')} /> A git repository</label>
			</fieldset>
			<label>Name
				<input name="name" required maxLength={200} value={name} onInput={(e) => setName(e.currentTarget.value)} />
			</label>
			<label for="na-preset">Template</label>
			<Presets id="na-preset" value={preset} onChange={setPreset} />
			{mode === 'git' && (
				<>
					<label>Repository URL (https)
						<input name="repo_url" type="url" required placeholder="https://github.com/you/app.git"
							value={url} onInput={(e) => setUrl(e.currentTarget.value)} />
					</label>
					<label>Branch (leave empty for the repository's default)
						<input name="branch" value={branch} onInput={(e) => setBranch(e.currentTarget.value)} />
					</label>
					<label>Git credential (for a private repository)
						<select value={cred} onChange={(e) => setCred(e.currentTarget.value)}>
							<option value="">None (public repository)</option>
							{(creds.data ? creds.data.credentials : []).map((c) => (
								<option value={c.id} key={c.id}>{c.name} ({c.host})</option>
							))}
						</select>
					</label>
				</>
			)}
			<button type="submit" class="primary" disabled={!!step}>Create app</button>
			{step && <Note>{step}</Note>}
			<ErrorText error={error} />
		</form>
	);
}

export function AppsList() {
	setTitle('Apps');
	const apps = useLoad(loadApps, []);
	const [showNew, setShowNew] = useState(false);
	const busy = apps.data && apps.data.some((a) => a.sandbox && a.sandbox.status === 'creating');
	usePoll(apps.reload, 3000, !!busy);
	return (
		<main class="page">
			<div class="row spread">
				<h1>Apps</h1>
				<button aria-expanded={showNew} onClick={() => setShowNew(!showNew)}>
					{showNew ? 'Close' : 'New app from a template or git'}
				</button>
			</div>
			<PromptCreate />
			{showNew && <NewApp onCreated={apps.reload} />}
			<ErrorText error={apps.error} />
			{apps.data && apps.data.length === 0 && <p>No apps yet. Describe one above to start.</p>}
			{apps.data && apps.data.length > 0 && (
				<table class="list">
					<caption class="sr-only">Your apps</caption>
					<thead><tr><th scope="col">App</th><th scope="col">Status</th><th scope="col">Preview</th><th scope="col">Changed</th></tr></thead>
					<tbody>
						{apps.data.map((a) => (
							<tr key={a.id}>
								<td><a href={'/apps/' + enc(a.id)}>{a.name}</a>
									{a.git && <span class="muted"> · from {a.git.repo_url}</span>}</td>
								<td><StatusBadge status={a.sandbox ? (a.sandbox.frozen ? 'frozen' : a.sandbox.status) : 'none'} /></td>
								<td>{a.sandbox && a.sandbox.preview && !a.sandbox.frozen && a.sandbox.preview.status !== 'frozen' ? previewWords(a.sandbox.preview.status) : ''}</td>
								<td>{when(a.updated_at)}</td>
							</tr>
						))}
					</tbody>
				</table>
			)}
		</main>
	);
}

export function previewWords(s) {
	return {down: 'Stopped', starting: 'Starting', ready: 'Ready', error: 'Not working', none: 'No web page'}[s] || 'Unknown';
}
