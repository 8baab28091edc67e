import {useEffect, useState} from 'preact/hooks';
import {get, post, patch, del, enc, authState, signOut, request} from './api.js';
import {useLoad, ErrorText, Note, when, setTitle} from './ui.jsx';

const sections = [
	['agents', 'AI agents'],
	['git', 'Git credentials'],
	['lifecycle', 'Sleep and wake'],
	['tokens', 'API tokens'],
	['instance', 'This instance'],
	['account', 'Password and sign-in'],
];

export function Settings({params}) {
	const sec = params.section;
	const found = sections.find(([s]) => s === sec);
	setTitle(found ? found[1] : 'Settings');
	return (
		<main class="page settings">
			<h1>Settings</h1>
			<nav aria-label="Settings sections" class="tabs">
				{sections.map(([s, l]) => <a key={s} href={'/settings/' + s} aria-current={s === sec ? 'page' : undefined}>{l}</a>)}
			</nav>
			{!found && <p>No such settings page. <a href="/settings/agents">Go to AI agents</a>.</p>}
			{sec === 'agents' && <Agents />}
			{sec === 'git' && <GitCreds />}
			{sec === 'lifecycle' && <Lifecycle />}
			{sec === 'tokens' && <Tokens />}
			{sec === 'instance' && <Instance />}
			{sec === 'account' && <Account />}
		</main>
	);
}

const agentStatus = {connected: 'Connected', needs_login: 'Needs a new sign-in', not_connected: 'Not connected'};

function Agent({a, onChange}) {
	const [key, setKey] = useState('');
	const [model, setModel] = useState(a.default_model || '');
	useEffect(() => { setModel(a.default_model || ''); }, [a.default_model]);
	const [oauth, setOauth] = useState(null);
	const [code, setCode] = useState('');
	const [error, setError] = useState(null);
	const [ok, setOk] = useState('');
	const base = '/v1/agents/' + enc(a.id);
	const act = async (fn, msg) => {
		setError(null); setOk('');
		try { await fn(); setOk(msg); onChange(); } catch (e) { setError(e); }
	};
	return (
		<section class="card" aria-labelledby={'agent-' + a.id}>
			<h2 id={'agent-' + a.id}>{a.label}</h2>
			<p>
				<span class={'badge a-' + a.status}>{agentStatus[a.status] || a.status}</span>
				{a.method === 'api_key' && <> with an API key {a.key_hint && <code aria-label="key ending">{a.key_hint}</code>}</>}
				{a.method === 'oauth' && <> with a Claude subscription{a.expires_at ? `, renewed before ${when(a.expires_at)}` : ''}</>}
				{a.source === 'instance' && <span class="muted"> (the instance’s default credential)</span>}
				{a.status === 'not_connected' && a.free_model && <span class="muted"> · without a key it uses the free model <code>{a.free_model}</code></span>}
			</p>
			<form class="row wrap" onSubmit={(e) => { e.preventDefault(); act(() => post(base + '/api-key', {api_key: key.trim()}).then(() => setKey('')), 'The key was saved. It is never shown again.'); }}>
				<label class="grow">{a.method === 'api_key' ? 'Replace the API key' : 'API key'}
					<input type="password" autocomplete="off" value={key} required onInput={(e) => setKey(e.currentTarget.value)} />
				</label>
				<button type="submit" class="primary">Save key</button>
			</form>
			{a.supports_oauth && oauth && (
				<form class="oauth" onSubmit={(e) => { e.preventDefault(); act(() => post(base + '/oauth/finish', {code: code.trim()}).then(() => { setOauth(null); setCode(''); }), 'Signed in with the subscription.'); }}>
					<p>1. <a href={oauth.authorize_url} target="_blank" rel="noopener noreferrer">Open Claude’s sign-in page</a> and approve.<br />
						2. Paste the code the page shows here.</p>
					<label>Code from the sign-in page
						<input value={code} required autocomplete="off" onInput={(e) => setCode(e.currentTarget.value)} />
					</label>
					<div class="row">
						<button type="submit" class="primary">Finish sign-in</button>
						<button type="button" onClick={() => setOauth(null)}>Cancel</button>
					</div>
				</form>
			)}
			<div class="row wrap">
				{a.supports_oauth && !oauth && (
					<button onClick={() => act(async () => setOauth(await post(base + '/oauth/start', {})), '')}>Sign in with a Claude subscription</button>
				)}
				{a.status !== 'not_connected' && a.source !== 'instance' && (
					<button class="danger" onClick={() => { if (confirm(`Disconnect ${a.label}? Its key or sign-in is removed.`)) act(() => post(base + '/disconnect', {}), 'Disconnected.'); }}>Disconnect</button>
				)}
			</div>
			<form class="row wrap" onSubmit={(e) => { e.preventDefault(); act(() => patch('/v1/settings', {agents: {default_models: {[a.id]: model.trim() || null}}}), 'The default model was saved.'); }}>
				<label class="grow">Default model{a.default_model_source === 'instance' ? ' (now the instance’s)' : ''}
					<input value={model} onInput={(e) => setModel(e.currentTarget.value)} placeholder={a.free_model || 'the agent’s own default'} />
				</label>
				<button type="submit">Save model</button>
			</form>
			{ok && <Note>{ok}</Note>}
			<ErrorText error={error} />
		</section>
	);
}

function Agents() {
	const agents = useLoad(() => get('/v1/agents'), []);
	return (
		<>
			<p class="muted">Connect the coding agents that build your apps. Keys are stored sealed and never shown again.</p>
			<ErrorText error={agents.error} />
			{agents.data && agents.data.agents.map((a) => <Agent key={a.id} a={a} onChange={agents.reload} />)}
		</>
	);
}

function GitCreds() {
	const list = useLoad(() => get('/v1/git-credentials'), []);
	const [f, setF] = useState({name: '', host: '', username: '', token: ''});
	const [error, setError] = useState(null);
	const [ok, setOk] = useState('');
	const set = (k) => (e) => setF({...f, [k]: e.currentTarget.value});
	const add = async (e) => {
		e.preventDefault();
		setError(null); setOk('');
		try {
			const body = {name: f.name.trim(), host: f.host.trim(), token: f.token.trim()};
			if (f.username.trim()) body.username = f.username.trim();
			await post('/v1/git-credentials', body);
			setF({name: '', host: '', username: '', token: ''});
			setOk('The credential was saved. Its token is never shown again.');
			list.reload();
		} catch (err) { setError(err); }
	};
	const remove = async (c) => {
		if (!confirm(`Delete the credential ${c.name}? Apps using it can no longer push.`)) return;
		try { await del('/v1/git-credentials/' + enc(c.id)); list.reload(); } catch (err) { setError(err); }
	};
	const items = list.data ? list.data.credentials : [];
	return (
		<>
			<p class="muted">Tokens for git servers over https, used to import and push. Give an app one in its Git tab.</p>
			<ErrorText error={list.error} />
			{items.length > 0 && (
				<table class="list">
					<caption class="sr-only">Git credentials</caption>
					<thead><tr><th scope="col">Name</th><th scope="col">Host</th><th scope="col">User name</th><th scope="col">Added</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
					<tbody>{items.map((c) => (
						<tr key={c.id}><td>{c.name}</td><td><code>{c.host}</code></td><td>{c.username || <span class="muted">x-access-token</span>}</td><td>{when(c.created_at)}</td>
							<td><button class="link danger" onClick={() => remove(c)}>Delete<span class="sr-only"> {c.name}</span></button></td></tr>
					))}</tbody>
				</table>
			)}
			{list.data && !items.length && <p>No git credentials yet.</p>}
			<form class="card" onSubmit={add}>
				<h2>Add a credential</h2>
				<label>Name <input value={f.name} required maxLength={64} onInput={set('name')} placeholder="GitHub" /></label>
				<label>Host (and port, if not the usual) <input value={f.host} required onInput={set('host')} placeholder="github.com" /></label>
				<label>User name (optional) <input value={f.username} maxLength={128} onInput={set('username')} /></label>
				<label>Token <input type="password" autocomplete="off" value={f.token} required onInput={set('token')} /></label>
				<button type="submit" class="primary">Save credential</button>
			</form>
			{ok && <Note>{ok}</Note>}
			<ErrorText error={error} />
		</>
	);
}

function Lifecycle() {
	const settings = useLoad(() => get('/v1/settings'), []);
	const apps = useLoad(async () => {
		const {apps} = await get('/v1/apps');
		const sbs = await Promise.all(apps.map((a) => (a.current_sandbox_id ? get('/v1/sandboxes/' + enc(a.current_sandbox_id)).catch(() => null) : null)));
		return apps.map((a, i) => ({...a, sandbox: sbs[i]})).filter((a) => a.sandbox);
	}, []);
	const [mins, setMins] = useState(null);
	const [error, setError] = useState(null);
	const [ok, setOk] = useState('');
	const s = settings.data;
	const lc = s && s.lifecycle;
	const editable = s && (s.editable || []).includes('lifecycle.idle_threshold_seconds');
	const cur = mins !== null ? mins : lc ? String(Math.round(lc.idle_threshold_seconds / 60)) : '';
	const save = async (e) => {
		e.preventDefault();
		setError(null); setOk('');
		try {
			await patch('/v1/settings', {lifecycle: {idle_threshold_seconds: Math.round(Number(cur) * 60)}});
			setOk('Saved.');
			settings.reload();
		} catch (err) { setError(err); }
	};
	const policy = async (a, v) => {
		setError(null); setOk('');
		try { await patch('/v1/sandboxes/' + enc(a.sandbox.id), {idle_policy: v}); apps.reload(); } catch (err) { setError(err); }
	};
	return (
		<>
			<p class="muted">An app nobody uses goes to sleep to free memory, and wakes when its preview is opened or a task is sent.</p>
			<ErrorText error={settings.error || apps.error} />
			{lc && (
				<form class="card row wrap" onSubmit={save}>
					<label>Sleep after this many minutes without use
						<input type="number" min={1} max={10080} value={cur} disabled={!editable} onInput={(e) => setMins(e.currentTarget.value)} />
					</label>
					{editable ? <button type="submit" class="primary">Save</button> : <p class="muted full">Only the operator can change this.</p>}
				</form>
			)}
			{s && !lc && <p class="muted">This sandboxd does not report its sleep settings.</p>}
			{apps.data && apps.data.length > 0 && (
				<table class="list">
					<caption>Per app</caption>
					<thead><tr><th scope="col">App</th><th scope="col">When unused</th></tr></thead>
					<tbody>{apps.data.map((a) => (
						<tr key={a.id}><td><a href={'/apps/' + enc(a.id)}>{a.name}</a></td>
							<td><select aria-label={'When ' + a.name + ' is unused'} value={a.sandbox.idle_policy} onChange={(e) => policy(a, e.currentTarget.value)}>
								<option value="sleep">Sleep</option><option value="always_on">Stay on</option>
							</select></td></tr>
					))}</tbody>
				</table>
			)}
			{ok && <Note>{ok}</Note>}
			<ErrorText error={error} />
		</>
	);
}

function Tokens() {
	const list = useLoad(() => get('/v1/tokens'), []);
	const [name, setName] = useState('');
	const [made, setMade] = useState(null);
	const [error, setError] = useState(null);
	const add = async (e) => {
		e.preventDefault();
		setError(null);
		try { setMade(await post('/v1/tokens', {name: name.trim()})); setName(''); list.reload(); } catch (err) { setError(err); }
	};
	const remove = async (t) => {
		if (!confirm(`Delete the token ${t.name}? Programs using it lose access.`)) return;
		setError(null);
		try { await del('/v1/tokens/' + enc(t.name)); list.reload(); } catch (err) { setError(err); }
	};
	return (
		<>
			<p class="muted">Tokens let programs (curl, scripts, the CLI) use the API. A token’s name is its tenant: apps made with one token are not seen by another.</p>
			<ErrorText error={list.error} />
			{list.data && (
				<table class="list">
					<caption class="sr-only">API tokens</caption>
					<thead><tr><th scope="col">Name</th><th scope="col">Made</th><th scope="col">Operator</th><th scope="col">From</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
					<tbody>{list.data.tokens.map((t) => (
						<tr key={t.name}><td><code>{t.name}</code></td><td>{when(t.created_at)}</td><td>{t.operator ? 'Yes' : 'No'}</td>
							<td>{t.source === 'env' ? 'SANDBOXD_API_TOKENS' : 'Made here'}</td>
							<td>{t.source !== 'env' && <button class="link danger" onClick={() => remove(t)}>Delete<span class="sr-only"> {t.name}</span></button>}</td></tr>
					))}</tbody>
				</table>
			)}
			<form class="card row wrap" onSubmit={add}>
				<label class="grow">New token name (letters, digits, . _ -)
					<input value={name} required pattern="[A-Za-z0-9._\-]+" onInput={(e) => setName(e.currentTarget.value)} />
				</label>
				<button type="submit" class="primary">Make token</button>
			</form>
			{made && (
				<div class="card" role="status">
					<p><strong>Copy the token {made.name} now:</strong> it is not shown again.</p>
					<input aria-label={'Token ' + made.name} readOnly value={made.token} onFocus={(e) => e.currentTarget.select()} class="mono wide" />
					<button onClick={() => setMade(null)}>I copied it</button>
				</div>
			)}
			<ErrorText error={error} />
		</>
	);
}

function Instance() {
	const st = useLoad(() => get('/v1/status'), []);
	const s = st.data;
	const egress = {public: 'apps may reach the public internet only', none: 'apps cannot reach the network', open: 'apps may reach anything (no filter)'};
	return (
		<>
			<ErrorText error={st.error} />
			{s && (
				<dl class="facts">
					<dt>Version</dt><dd>{s.version}</dd>
					<dt>Data directory</dt><dd>{s.data_dir ? <code>{s.data_dir}</code> : <span class="muted">shown to the operator only</span>}</dd>
					<dt>Docker</dt><dd>{s.docker && s.docker.up ? 'Running' : 'Not answering'}</dd>
					{s.network && <><dt>Sandbox network</dt><dd>{s.network.ready ? `Ready (${s.network.name}, ${s.network.subnet})` : 'Not ready' + (s.network.error ? ': ' + s.network.error : '')}</dd></>}
					{s.egress && <><dt>Network access of apps</dt><dd>{egress[s.egress.mode] || s.egress.mode}{s.egress.error ? ' — ' + s.egress.error : ''}</dd></>}
					{s.proxy && <><dt>Credential proxy</dt><dd>{s.proxy.listening ? 'Listening' : 'Not listening' + (s.proxy.error ? ': ' + s.proxy.error : '')}</dd></>}
					{s.idle_threshold_seconds != null && <><dt>Apps sleep after</dt><dd>{Math.round(s.idle_threshold_seconds / 60)} minutes unused</dd></>}
				</dl>
			)}
		</>
	);
}

function Account() {
	const auth = authState();
	const [cur, setCur] = useState('');
	const [nw, setNw] = useState('');
	const [nw2, setNw2] = useState('');
	const [error, setError] = useState(null);
	const [ok, setOk] = useState('');
	if (auth.via !== 'session') return <p>You are signed in with an API token, not a password.</p>;
	const change = async (e) => {
		e.preventDefault();
		setError(null); setOk('');
		if (nw !== nw2) { setError(new Error('The two new passwords are not the same.')); return; }
		try {
			await request('POST', '/v1/auth/password', {json: {current_password: cur, new_password: nw}});
			setCur(''); setNw(''); setNw2('');
			setOk('The password was changed. Every other sign-in was ended.');
		} catch (err) { setError(err); }
	};
	return (
		<>
			<form class="card" onSubmit={change}>
				<h2>Change the password</h2>
				<label>Current password <input type="password" autocomplete="current-password" value={cur} required onInput={(e) => setCur(e.currentTarget.value)} /></label>
				<label>New password (at least 8 characters) <input type="password" autocomplete="new-password" minLength={8} value={nw} required onInput={(e) => setNw(e.currentTarget.value)} /></label>
				<label>Repeat the new password <input type="password" autocomplete="new-password" value={nw2} required onInput={(e) => setNw2(e.currentTarget.value)} /></label>
				<button type="submit" class="primary">Change password</button>
			</form>
			{ok && <Note>{ok}</Note>}
			<ErrorText error={error} />
			<section class="card">
				<h2>Sign-ins</h2>
				<p>This sign-in lasts 30 days from its last use. {auth.expires_at ? `Now until ${when(auth.expires_at)}.` : ''}</p>
				<div class="row">
					<button onClick={() => signOut(false)}>Log out</button>
					<button class="danger" onClick={() => signOut(true)}>Log out everywhere</button>
				</div>
			</section>
		</>
	);
}
