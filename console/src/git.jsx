import {useState} from 'preact/hooks';
import {get, post, patch, enc} from './api.js';
import {useLoad, ErrorText, Note} from './ui.jsx';

const reasonWords = {
	no_repo_url: 'this app has no remote repository yet: set one below',
	no_sandbox: 'the app has no sandbox, so there is no repository',
	not_a_git_repo: 'the app’s folder is not a git repository yet (it becomes one with the first task or commit)',
	empty_repo: 'there is nothing to push yet: make a commit first',
	credential_not_found: 'the git credential of this app was deleted: choose another below',
	auth_failed: 'the server refused the credential (or wants one): check the token in Settings → Git credentials and that it is for this host',
	unreachable: 'the server could not be reached',
	non_fast_forward: 'that branch exists on the server with commits this app does not have: push to another branch',
	branch_exists: 'that branch exists on the server already: choose another name',
	tls_failed: 'the server’s certificate is not trusted',
	blocked_host: 'the server’s address is on a private network, which sandboxd does not reach by default',
	timeout: 'the server took too long to answer',
	push_failed: 'the push failed',
	no_changes: 'nothing changed since the last commit',
};

const fileWords = {modified: 'changed', added: 'new', deleted: 'deleted', renamed: 'renamed', untracked: 'new', typechange: 'type changed'};

function slug(name) {
	const s = name.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 32).replace(/-+$/, '');
	return s || 'app';
}

export function Git({app, sandbox, onChange}) {
	const base = '/v1/apps/' + enc(app.id) + '/git';
	const status = useLoad(() => get(base + '/status'), [app.id, sandbox && sandbox.id]);
	const diff = useLoad(() => get(base + '/diff'), [app.id, sandbox && sandbox.id]);
	const [picked, setPicked] = useState(null); // null: every file
	const [msg, setMsg] = useState('');
	const [branch, setBranch] = useState('');
	const [result, setResult] = useState(null);
	const [error, setError] = useState(null);
	const [busy, setBusy] = useState(false);
	const s = status.data;
	const paths = s && s.available ? [...new Set(s.files.map((f) => f.path))] : [];
	const chosen = picked === null ? paths : paths.filter((p) => picked.has(p));
	const reload = () => { status.reload(); diff.reload(); };

	const commit = async (e) => {
		e.preventDefault();
		setBusy(true); setError(null); setResult(null);
		try {
			const body = {message: msg};
			if (chosen.length !== paths.length) body.paths = chosen;
			const r = await post(base + '/commit', body);
			setResult(r.committed ? {ok: `Committed ${r.files_committed.length} file(s) as ${r.sha.slice(0, 7)} on ${r.branch || 'a detached HEAD'}.`}
				: {bad: 'Nothing was committed: ' + (reasonWords[r.reason] || r.reason) + '.'});
			if (r.committed) { setMsg(''); setPicked(null); }
			reload();
		} catch (err) { setError(err); } finally { setBusy(false); }
	};
	const push = async (e) => {
		e.preventDefault();
		setBusy(true); setError(null); setResult(null);
		try {
			const r = await post(base + '/push', branch.trim() ? {branch: branch.trim()} : {});
			setResult(r.pushed ? {ok: `Pushed to the branch ${r.branch} of ${r.remote_url}.`}
				: {bad: 'Not pushed: ' + (reasonWords[r.reason] || r.reason) + (r.message ? ` (${r.message})` : '') + '.'});
		} catch (err) {
			if (err.code === 'refuses_default_branch') err.message = 'sandboxd only pushes to new branches, never to main, master or the branch the app was imported from. Choose another branch name.';
			setError(err);
		} finally { setBusy(false); }
	};
	const sha = s && s.head_sha ? s.head_sha.slice(0, 7) : 'xxxxxxx';
	const toggle = (p) => {
		const n = new Set(picked === null ? paths : picked);
		if (n.has(p)) n.delete(p); else n.add(p);
		setPicked(n);
	};

	return (
		<div class="page git">
			<section aria-labelledby="git-status">
				<div class="row spread"><h2 id="git-status">Changes</h2><button class="link" onClick={reload}>Refresh</button></div>
				<ErrorText error={status.error} />
				{s && !s.available && <p>{reasonWords[s.reason] || s.reason}.</p>}
				{s && s.available && (
					<>
						<p class="muted">Branch {s.branch ? <code>{s.branch}</code> : '(detached)'}{s.head_sha ? <>, last commit <code>{sha}</code></> : ', no commit yet'}.</p>
						{s.clean && <p>No changes since the last commit.</p>}
						{!s.clean && (
							<form onSubmit={commit}>
								<fieldset>
									<legend>Files to commit</legend>
									<ul class="plain">
										{paths.map((p) => {
											const f = s.files.find((x) => x.path === p);
											return (
												<li key={p}><label><input type="checkbox" checked={chosen.includes(p)} onChange={() => toggle(p)} />{' '}
													<code>{p}</code> <span class="muted">{fileWords[f.status] || f.status}</span></label></li>
											);
										})}
									</ul>
								</fieldset>
								<label>Commit message
									<input value={msg} required maxLength={4096} onInput={(e) => setMsg(e.currentTarget.value)} />
								</label>
								<button type="submit" class="primary" disabled={busy || !chosen.length}>Commit {chosen.length} file(s)</button>
							</form>
						)}
					</>
				)}
			</section>
			<section aria-labelledby="git-push">
				<h2 id="git-push">Push</h2>
				{app.git && app.git.repo_url ? (
					<form onSubmit={push} class="row wrap">
						<label class="grow">Branch to create on {app.git.repo_url}
							<input value={branch} onInput={(e) => setBranch(e.currentTarget.value)}
								placeholder={`sandboxd/${slug(app.name)}-${sha}`} />
						</label>
						<button type="submit" class="primary" disabled={busy}>Push</button>
						<p class="muted full">Left empty, the branch is <code>{`sandboxd/${slug(app.name)}-${sha}`}</code>. Pushes always make a new branch, never overwrite one.</p>
					</form>
				) : <p>This app has no remote repository: set one below to push.</p>}
			</section>
			{result && result.ok && <Note>{result.ok}</Note>}
			{result && result.bad && <p class="error" role="alert">{result.bad}</p>}
			<ErrorText error={error} />
			<Remote app={app} onChange={onChange} />
			<section aria-labelledby="git-diff">
				<h2 id="git-diff">Diff against the last commit</h2>
				<ErrorText error={diff.error} />
				{diff.data && diff.data.diff !== undefined && (diff.data.diff ? <DiffView text={diff.data.diff} /> : <p class="muted">No differences.</p>)}
				{diff.data && diff.data.truncated && <p class="note">The diff is too long and was cut.</p>}
			</section>
		</div>
	);
}

function DiffView({text}) {
	return (
		<pre class="diff" tabIndex={0} aria-label="Diff">
			{text.split('\n').map((l, i) => (
				<span key={i} class={l.startsWith('+') && !l.startsWith('+++') ? 'add' : l.startsWith('-') && !l.startsWith('---') ? 'del' : l.startsWith('@@') ? 'hunk' : ''}>{l + '\n'}</span>
			))}
		</pre>
	);
}

function Remote({app, onChange}) {
	const creds = useLoad(() => get('/v1/git-credentials'), []);
	const [url, setUrl] = useState(app.git ? app.git.repo_url : '');
	const [branch, setBranch] = useState(app.git && app.git.branch ? app.git.branch : '');
	const [cred, setCred] = useState(app.git && app.git.credential_id ? app.git.credential_id : '');
	const [busy, setBusy] = useState(false);
	const [error, setError] = useState(null);
	const [ok, setOk] = useState('');
	const save = async (e, clear) => {
		e.preventDefault();
		setBusy(true); setError(null); setOk('');
		try {
			const git = clear ? null : {repo_url: url.trim(), ...(branch.trim() ? {branch: branch.trim()} : {}), ...(cred ? {credential_id: cred} : {})};
			await patch('/v1/apps/' + enc(app.id), {git});
			setOk(clear ? 'The remote was removed.' : 'The remote was saved.');
			if (clear) { setUrl(''); setBranch(''); setCred(''); }
			onChange();
		} catch (err) { setError(err); } finally { setBusy(false); }
	};
	return (
		<section aria-labelledby="git-remote">
			<h2 id="git-remote">Remote repository</h2>
			<form onSubmit={(e) => save(e, false)}>
				<label>Repository URL (https)
					<input type="url" required value={url} onInput={(e) => setUrl(e.currentTarget.value)} placeholder="https://github.com/you/app.git" />
				</label>
				<label>Main branch of the remote (pushes never write to it)
					<input value={branch} onInput={(e) => setBranch(e.currentTarget.value)} placeholder="main" />
				</label>
				<label>Credential
					<select value={cred} onChange={(e) => setCred(e.currentTarget.value)}>
						<option value="">None (public repository)</option>
						{(creds.data ? creds.data.credentials : []).map((c) => <option key={c.id} value={c.id}>{c.name} ({c.host}{c.username ? ', ' + c.username : ''})</option>)}
					</select>
				</label>
				<p class="muted">Add credentials in <a href="/settings/git">Settings → Git credentials</a>.</p>
				<div class="row">
					<button type="submit" class="primary" disabled={busy}>Save remote</button>
					{app.git && <button type="button" class="danger" disabled={busy} onClick={(e) => save(e, true)}>Remove remote</button>}
				</div>
			</form>
			{ok && <Note>{ok}</Note>}
			<ErrorText error={error || creds.error} />
		</section>
	);
}
