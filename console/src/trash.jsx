import {useState} from 'preact/hooks';
import {useLocation} from 'preact-iso';
import {get, post, del, enc} from './api.js';
import {useLoad, useAction, ErrorText, Note, when, bytes, setTitle} from './ui.jsx';

// The trash: deleted apps kept until purge_at (GET /v1/trash), each
// restorable (POST /v1/trash/{id}/restore, under a new name when a newer
// app has its name: 409 trash_name_taken) or purged now.
function Entry({t, onChange}) {
	const {route} = useLocation();
	const [run, busy, error, setError] = useAction();
	const [clash, setClash] = useState(false);
	const [name, setName] = useState(t.name + ' (restored)');
	const restore = (body) => run(async () => {
		try {
			const r = await post('/v1/trash/' + enc(t.id) + '/restore', body);
			route('/apps/' + enc(r.app.id));
		} catch (e) {
			if (e.code === 'trash_name_taken') setClash(true);
			throw e;
		}
	});
	const purge = () => {
		if (!confirm(`Remove “${t.name}” for good? Its files and task history cannot be brought back.`)) return;
		run(async () => { await del('/v1/trash/' + enc(t.id)); onChange(); });
	};
	return (
		<tr>
			<td>{t.name}</td>
			<td>{when(t.deleted_at)}</td>
			<td>{when(t.purge_at)}</td>
			<td>{t.bytes == null ? 'measuring…' : bytes(t.bytes)}</td>
			<td>
				<button disabled={busy || t.state !== 'trashed'} onClick={() => restore({})}>Restore</button>{' '}
				<button disabled={busy || t.state !== 'trashed'} class="danger" onClick={purge}>Delete for good</button>
				{clash && (
					<form class="row" onSubmit={(e) => { e.preventDefault(); setError(null); restore({name}); }}>
						<label>New name <input value={name} maxLength={200} required
							onInput={(e) => setName(e.currentTarget.value)} /></label>
						<button type="submit" disabled={busy || !name.trim()}>Restore as this name</button>
					</form>
				)}
				{busy && <Note>Working…</Note>}
				<ErrorText error={error} />
			</td>
		</tr>
	);
}

export function Trash() {
	setTitle('Trash');
	const trash = useLoad(() => get('/v1/trash'), []);
	const d = trash.data;
	return (
		<main class="page">
			<h1>Trash</h1>
			<p>Deleted apps stay here{d ? ` for ${Math.round(d.retention_seconds / 3600)} hours` : ''}, then
				they are removed for good. Restoring one brings back its files, settings, git remote and
				task history, and starts it again.</p>
			<ErrorText error={trash.error} />
			{d && d.trash.length === 0 && <p>The trash is empty.</p>}
			{d && d.trash.length > 0 && (
				<>
					<p class="muted">{d.entries} deleted app{d.entries === 1 ? '' : 's'}, {d.trash.some((t) => t.bytes == null) ? 'size: measuring…' : bytes(d.bytes)}.</p>
					<table class="list">
						<caption class="sr-only">Deleted apps</caption>
						<thead><tr><th scope="col">App</th><th scope="col">Deleted</th>
							<th scope="col">Removed for good</th><th scope="col">Size</th>
							<th scope="col">Actions</th></tr></thead>
						<tbody>{d.trash.map((t) => <Entry key={t.id} t={t} onChange={trash.reload} />)}</tbody>
					</table>
				</>
			)}
		</main>
	);
}
