import {useState} from 'preact/hooks';
import {useLocation} from 'preact-iso';
import {get, post, enc} from './api.js';
import {useLoad, ErrorText, Note, StatusBadge, when, setTitle, usePoll} from './ui.jsx';

async function loadApps() {
	const {apps} = await get('/v1/apps');
	const sbs = await Promise.all(apps.map((a) =>
		a.current_sandbox_id ? get('/v1/sandboxes/' + a.current_sandbox_id).catch(() => null) : null));
	return apps.map((a, i) => ({...a, sandbox: sbs[i]}));
}

// A name from the first words of a description.
function nameFrom(text) {
	const w = text.replace(/\[\[[^\]]*\]\]/g, ' ').replace(/\s+/g, ' ').trim().split(' ').slice(0, 6).join(' ');
	return (w.length > 60 ? w.slice(0, 60) : w) || 'New app';
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
	const submit = async (e) => {
		e.preventDefault();
		if (!text.trim()) return;
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
			<textarea id="pc-text" rows={4} value={text} required
				placeholder="A to-do list where I can tick items off and filter by done"
				onInput={(e) => setText(e.currentTarget.value)} />
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
			setStep(mode === 'git' ? 'Cloning the repository and starting the sandbox… (a large repository takes a while)' : 'Starting its sandbox…');
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
