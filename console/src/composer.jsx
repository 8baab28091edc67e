// The prompt box under the chat: the prompt (kept as a draft per sandbox),
// the agent, its model (a list from GET /v1/agents grouped by provider,
// or any id typed under "Other model…"), images attached to the prompt
// (button, paste, drag and drop), Send.  Enter sends, Shift+Enter is a
// new line.  fill = {text, n}: when n changes the prompt becomes text and
// gets focus.  blocked = {message, link: {href, label}} or null: when
// set, Send is off and the message shows above the box.
import {useEffect, useRef, useState} from 'preact/hooks';
import {get, post, enc} from './api.js';
import {useLoad, ErrorText, Note} from './ui.jsx';
import {useDraft} from './drafts.js';
import {enterSends} from './apps.jsx';
import './work.css';

const OTHER = '\u0000other';
export const IMAGE_TYPES = ['image/png', 'image/jpeg', 'image/gif', 'image/webp'];
export const MAX_IMAGES = 4;
export const MAX_IMAGE_BYTES = 5 * 1024 * 1024;

// The agent's models: its list, or (an older daemon) its default and
// free model.
function modelsOf(agent) {
	if (!agent) return [];
	if (Array.isArray(agent.models)) return agent.models;
	const m = [];
	for (const id of [agent.default_model, agent.free_model]) {
		if (id && !m.some((x) => x.id === id)) {
			m.push({id, label: id, provider: id.split('/')[0], usable: true, free: id === agent.free_model,
				default: id === (agent.default_model || agent.free_model)});
		}
	}
	return m;
}

function byProvider(models) {
	const groups = new Map();
	for (const m of models) {
		const p = m.provider || 'other';
		if (!groups.has(p)) groups.set(p, []);
		groups.get(p).push(m);
	}
	return [...groups];
}

function optionText(m) {
	let t = m.label || m.id;
	if (m.default) t += ' (default)';
	if (m.free) t += ' · free';
	if (!m.usable) t += ' — ' + (m.reason || 'not usable');
	return t;
}

function readImage(file) {
	return new Promise((resolve, reject) => {
		const r = new FileReader();
		r.onload = () => resolve({name: file.name || 'image', type: file.type, size: file.size, url: r.result});
		r.onerror = () => reject(new Error(`Cannot read ${file.name}.`));
		r.readAsDataURL(file);
	});
}

export function Composer({sandbox, running, onSubmitted, fill, blocked}) {
	const agents = useLoad(() => get('/v1/agents'), []);
	const [prompt, setPrompt] = useState('');
	const [agent, setAgent] = useState('');
	const [choice, setChoice] = useState('');
	const [other, setOther] = useState('');
	const [images, setImages] = useState([]);
	const [imgError, setImgError] = useState('');
	const [busy, setBusy] = useState(false);
	const [error, setError] = useState(null);
	const [dragging, setDragging] = useState(false);
	const box = useRef(null);
	const fileInput = useRef(null);
	const draft = useDraft('prompt:' + sandbox.id, prompt, setPrompt);
	const list = agents.data ? agents.data.agents : [];
	const cur = list.find((a) => a.id === agent) || list.find((a) => a.status === 'connected') || list[0];
	const models = modelsOf(cur);
	const def = models.find((m) => m.default);

	// Focus when the Build view opens, and when fill puts a prompt in.
	useEffect(() => { if (box.current && !box.current.disabled) box.current.focus(); }, []);
	useEffect(() => {
		if (!fill || !fill.n) return;
		setPrompt(fill.text || '');
		if (box.current) box.current.focus();
	}, [fill && fill.n]);

	const addFiles = async (files) => {
		setImgError('');
		const problems = [];
		const ok = [];
		for (const f of files) {
			if (!IMAGE_TYPES.includes(f.type)) problems.push(`${f.name || 'That file'} is not a PNG, JPEG, GIF or WebP image.`);
			else if (f.size > MAX_IMAGE_BYTES) problems.push(`${f.name} is over 5 MB.`);
			else ok.push(f);
		}
		const room = MAX_IMAGES - images.length;
		if (ok.length > room) problems.push(`At most ${MAX_IMAGES} images go with a prompt.`);
		try {
			const read = await Promise.all(ok.slice(0, Math.max(room, 0)).map(readImage));
			setImages((cur) => [...cur, ...read].slice(0, MAX_IMAGES));
		} catch (e) {
			problems.push(e.message);
		}
		if (problems.length) setImgError(problems.join(' '));
	};

	const submit = async (e) => {
		e.preventDefault();
		if (!prompt.trim() || busy || running || blocked) return;
		setBusy(true);
		setError(null);
		try {
			const body = {prompt};
			if (cur) body.agent = cur.id;
			const model = choice === OTHER ? other.trim() : choice;
			if (model) body.model = model;
			if (images.length) body.images = images.map((i) => ({name: i.name, data: i.url.slice(i.url.indexOf(',') + 1)}));
			const t = await post(`/v1/sandboxes/${enc(sandbox.id)}/tasks`, body);
			setPrompt('');
			setImages([]);
			draft.clear();
			onSubmitted(t);
		} catch (err) {
			setError(err);
		} finally {
			setBusy(false);
		}
	};
	const onPaste = (e) => {
		const files = [...(e.clipboardData ? e.clipboardData.files : [])];
		if (files.length) {
			if (!e.clipboardData.getData('text')) e.preventDefault();
			addFiles(files);
		}
	};
	const hasFiles = (e) => e.dataTransfer && [...e.dataTransfer.types].includes('Files');
	const drag = {
		onDragOver: (e) => { if (hasFiles(e)) { e.preventDefault(); setDragging(true); } },
		onDragLeave: () => setDragging(false),
		onDrop: (e) => {
			if (!hasFiles(e)) return;
			e.preventDefault();
			setDragging(false);
			addFiles([...e.dataTransfer.files]);
		},
	};
	return (
		<form class={'composer' + (dragging ? ' dropping' : '')} onSubmit={submit} {...drag}>
			{blocked && (
				<p class="blocked" role="alert">{blocked.message}
					{blocked.link && <>{' '}<a href={blocked.link.href}>{blocked.link.label}</a></>}</p>
			)}
			<label for="prompt" class="sr-only">What should the agent do?</label>
			<textarea id="prompt" rows={3} value={prompt} ref={box} autofocus onInput={(e) => setPrompt(e.currentTarget.value)}
				onKeyDown={enterSends} onPaste={onPaste}
				placeholder="Ask for a change, e.g. “make the title blue” (Enter sends, Shift+Enter for a new line)"
				disabled={running} />
			{draft.restored && (
				<Note kind="info">Restored your unsaved draft.{' '}
					<button type="button" class="link" onClick={draft.discard}>Discard</button></Note>
			)}
			{images.length > 0 && (
				<ul class="thumbs" aria-label="Images sent with the prompt">
					{images.map((im, i) => (
						<li key={i + im.name}>
							<img src={im.url} alt={im.name} />
							<button type="button" class="remove" aria-label={'Remove ' + im.name}
								onClick={() => setImages(images.filter((_, j) => j !== i))}>×</button>
						</li>
					))}
				</ul>
			)}
			{imgError && <p class="error" role="alert">{imgError}</p>}
			<div class="row wrap">
				<label>Agent
					<select value={cur ? cur.id : ''} onChange={(e) => { setAgent(e.currentTarget.value); setChoice(''); }}>
						{list.map((a) => (
							<option value={a.id} key={a.id}>{a.label}{a.status === 'connected' ? '' : a.status === 'needs_login' ? ' (sign in again)' : a.free_model ? ' (free model)' : ' (not connected)'}</option>
						))}
					</select>
				</label>
				<label>Model
					<select id="composer-model" value={choice} onChange={(e) => setChoice(e.currentTarget.value)}>
						<option value="">{'The agent’s default' + (def ? ': ' + (def.label || def.id) : '')}</option>
						{byProvider(models).map(([p, ms]) => (
							<optgroup label={p} key={p}>
								{ms.map((m) => <option value={m.id} key={m.id} disabled={!m.usable}>{optionText(m)}</option>)}
							</optgroup>
						))}
						<option value={OTHER}>Other model…</option>
					</select>
				</label>
				{choice === OTHER && (
					<label>Model id
						<input value={other} onInput={(e) => setOther(e.currentTarget.value)} placeholder="provider/model" size={22} autofocus />
					</label>
				)}
				<button type="button" onClick={() => fileInput.current.click()} disabled={running || images.length >= MAX_IMAGES}>
					Attach images
				</button>
				<input type="file" hidden ref={fileInput} multiple accept={IMAGE_TYPES.join(',')} aria-label="Images to attach"
					onChange={(e) => { const f = [...e.currentTarget.files]; e.currentTarget.value = ''; addFiles(f); }} />
				<button type="submit" class="primary" disabled={busy || running || !!blocked || !prompt.trim()}>Send</button>
			</div>
			{cur && cur.status !== 'connected' && !cur.free_model && (
				<p class="note">{cur.label} is not connected: connect it in <a href="/settings/agents">Settings → AI agents</a>.</p>
			)}
			<ErrorText error={error || agents.error} />
		</form>
	);
}
