import {useState} from 'preact/hooks';
import {get, put, del, enc} from './api.js';
import {useLoad, ErrorText, Note} from './ui.jsx';

export function Config({app}) {
	const base = '/v1/apps/' + enc(app.id) + '/config';
	const list = useLoad(() => get(base), [app.id]);
	const [key, setKey] = useState('');
	const [value, setValue] = useState('');
	const [sensitive, setSensitive] = useState(false);
	const [expose, setExpose] = useState(true);
	const [error, setError] = useState(null);
	const [ok, setOk] = useState('');
	const save = async (e) => {
		e.preventDefault();
		setError(null); setOk('');
		try {
			await put(base + '/' + enc(key.trim()), {value, sensitive, expose_env: expose});
			setOk(`Saved ${key.trim()}.`);
			setKey(''); setValue(''); setSensitive(false);
			list.reload();
		} catch (err) { setError(err); }
	};
	const remove = async (k) => {
		if (!confirm(`Delete ${k}?`)) return;
		setError(null); setOk('');
		try { await del(base + '/' + enc(k)); setOk(`Deleted ${k}.`); list.reload(); } catch (err) { setError(err); }
	};
	const items = list.data ? list.data.config : [];
	return (
		<div class="page">
			<h2>Configuration and secrets</h2>
			<p class="muted">Values marked “reaches the app” are environment variables of the app’s processes
				(they restart when one changes). Secret values are never shown again once saved.</p>
			<ErrorText error={list.error} />
			{items.length === 0 && list.data && <p>No configuration yet.</p>}
			{items.length > 0 && (
				<table class="list">
					<caption class="sr-only">Configuration of {app.name}</caption>
					<thead><tr><th scope="col">Name</th><th scope="col">Value</th><th scope="col">Reaches the app</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
					<tbody>
						{items.map((c) => (
							<tr key={c.key}>
								<td><code>{c.key}</code></td>
								<td>{c.sensitive ? <span class="muted">secret{c.value_set ? ', set' : ', empty'}</span> : <code>{c.value}</code>}</td>
								<td>{c.expose_env ? 'Yes, as an environment variable' : 'No'}</td>
								<td>
									<button class="link" onClick={() => { setKey(c.key); setValue(c.sensitive ? '' : c.value || ''); setSensitive(c.sensitive); setExpose(c.expose_env); }}>Change<span class="sr-only"> {c.key}</span></button>{' '}
									<button class="link danger" onClick={() => remove(c.key)}>Delete<span class="sr-only"> {c.key}</span></button>
								</td>
							</tr>
						))}
					</tbody>
				</table>
			)}
			<form class="card" onSubmit={save}>
				<h3>Add or change a value</h3>
				<label>Name (letters, digits and _)
					<input value={key} required pattern="[A-Za-z_][A-Za-z0-9_]{0,127}" onInput={(e) => setKey(e.currentTarget.value)} />
				</label>
				<label>Value
					<input type={sensitive ? 'password' : 'text'} autocomplete="off" value={value} onInput={(e) => setValue(e.currentTarget.value)} />
				</label>
				<label><input type="checkbox" checked={sensitive} onChange={(e) => setSensitive(e.currentTarget.checked)} /> Secret (write-only: never shown again)</label>
				<label><input type="checkbox" checked={expose} onChange={(e) => setExpose(e.currentTarget.checked)} /> Reaches the app as an environment variable</label>
				<button type="submit" class="primary">Save</button>
			</form>
			{ok && <Note>{ok}</Note>}
			<ErrorText error={error} />
		</div>
	);
}
