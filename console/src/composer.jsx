import {useEffect, useRef, useState} from 'preact/hooks';
import {get, post, enc} from './api.js';
import {useLoad, ErrorText} from './ui.jsx';

export function Composer({sandbox, running, onSubmitted, fill, blocked}) {
	const agents = useLoad(() => get('/v1/agents'), []);
	const [prompt, setPrompt] = useState('');
	const [agent, setAgent] = useState('');
	const [model, setModel] = useState('');
	const [busy, setBusy] = useState(false);
	const [error, setError] = useState(null);
	const box = useRef(null);
	// fill {text, n}: a new n puts text in the box and focuses it.
	useEffect(() => {
		if (!fill) return;
		setPrompt(fill.text || '');
		if (box.current) box.current.focus();
	}, [fill && fill.n]);
	const list = agents.data ? agents.data.agents : [];
	const cur = list.find((a) => a.id === agent) || list.find((a) => a.status === 'connected') || list[0];
	const submit = async (e) => {
		e.preventDefault();
		if (!prompt.trim() || blocked) return;
		setBusy(true);
		setError(null);
		try {
			const body = {prompt};
			if (cur) body.agent = cur.id;
			if (model.trim()) body.model = model.trim();
			const t = await post(`/v1/sandboxes/${enc(sandbox.id)}/tasks`, body);
			setPrompt('');
			onSubmitted(t);
		} catch (err) {
			setError(err);
		} finally {
			setBusy(false);
		}
	};
	const keydown = (e) => {
		if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) submit(e);
	};
	return (
		<form class="composer" onSubmit={submit}>
			{blocked && (
				<p class="blocked" role="status">{blocked.message}{blocked.link && <> <a href={blocked.link.href}>{blocked.link.label}</a></>}</p>
			)}
			<label for="prompt" class="sr-only">What should the agent do?</label>
			<textarea id="prompt" ref={box} rows={3} value={prompt} onInput={(e) => setPrompt(e.currentTarget.value)}
				onKeyDown={keydown} placeholder="Ask for a change, e.g. “make the title blue” (Ctrl+Enter sends)"
				disabled={running} />
			<div class="row">
				<label>Agent
					<select value={cur ? cur.id : ''} onChange={(e) => { setAgent(e.currentTarget.value); setModel(''); }}>
						{list.map((a) => (
							<option value={a.id} key={a.id}>{a.label}{a.status === 'connected' ? '' : a.status === 'needs_login' ? ' (sign in again)' : a.free_model ? ' (free model)' : ' (not connected)'}</option>
						))}
					</select>
				</label>
				<label>Model
					<input list="models" value={model} onInput={(e) => setModel(e.currentTarget.value)}
						placeholder={cur ? (cur.default_model || cur.free_model || 'the agent’s default') : ''} size={22} />
					<datalist id="models">
						{cur && cur.default_model && <option value={cur.default_model} />}
						{cur && cur.free_model && <option value={cur.free_model} />}
					</datalist>
				</label>
				<button type="submit" class="primary" disabled={busy || running || !!blocked || !prompt.trim()}>Send</button>
			</div>
			{cur && cur.status !== 'connected' && !cur.free_model && (
				<p class="note">{cur.label} is not connected: connect it in <a href="/settings/agents">Settings → AI agents</a>.</p>
			)}
			<ErrorText error={error || agents.error} />
		</form>
	);
}
