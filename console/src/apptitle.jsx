// The app's name at the head of its page, with Rename: an inline field
// (Enter saves through PATCH /v1/apps/{id} {name}, Escape cancels).
import {useEffect, useRef, useState} from 'preact/hooks';
import {patch, enc} from './api.js';
import {ErrorText} from './ui.jsx';

export function AppTitle({app, onChange}) {
	const [editing, setEditing] = useState(false);
	const [name, setName] = useState(app.name);
	const [busy, setBusy] = useState(false);
	const [error, setError] = useState(null);
	const input = useRef(null);
	const button = useRef(null);
	const back = useRef(false);
	useEffect(() => {
		if (editing && input.current) { input.current.focus(); input.current.select(); }
		if (!editing && back.current && button.current) { back.current = false; button.current.focus(); }
	}, [editing]);
	const start = () => { setName(app.name); setError(null); setEditing(true); };
	const stop = () => { back.current = true; setError(null); setEditing(false); };
	const save = async (e) => {
		e.preventDefault();
		const n = name.trim();
		if (!n) { setError(new Error('The name cannot be empty.')); return; }
		if (n === app.name) { stop(); return; }
		setBusy(true);
		setError(null);
		try {
			await patch('/v1/apps/' + enc(app.id), {name: n});
			if (onChange) await onChange();
			stop();
		} catch (err) {
			setError(err);
		} finally {
			setBusy(false);
		}
	};
	if (!editing) {
		return (
			<div class="title-line">
				<h1>{app.name}</h1>
				<button class="link" ref={button} onClick={start}>Rename<span class="sr-only"> the app</span></button>
			</div>
		);
	}
	return (
		<form class="title-line renaming" onSubmit={save}>
			<h1 class="sr-only">{app.name}</h1>
			<label for="app-name" class="sr-only">New name for the app</label>
			<input id="app-name" ref={input} value={name} maxLength={200} disabled={busy}
				aria-describedby="app-name-help" aria-invalid={error ? 'true' : undefined}
				onInput={(e) => setName(e.currentTarget.value)}
				onKeyDown={(e) => { if (e.key === 'Escape') { e.preventDefault(); stop(); } }} />
			<span id="app-name-help" class="sr-only">Enter saves, Escape cancels.</span>
			<button type="submit" class="primary" disabled={busy}>Save</button>
			<button type="button" disabled={busy} onClick={stop}>Cancel</button>
			<ErrorText error={error} />
		</form>
	);
}
