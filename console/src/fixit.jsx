// The fix-it loop: every failure in words with the one thing that fixes
// it (a failed task's Retry, the app's error sent to the agent, a failed
// sandbox tried again), and the progress of a running task.
import {useEffect, useState} from 'preact/hooks';
import {get, post, patch, enc} from './api.js';
import {ErrorText, Rich} from './ui.jsx';
import './fixit.css';

const agentsLink = {href: '/settings/agents', label: 'Settings → AI agents'};
const spendLink = (appId) => ({href: '/apps/' + enc(appId) + '/spend', label: 'the Spend tab'});

// A task's failure_reason in words: what happened, what to do, where.
// An unknown reason gets a sentence of its own, never the code.
export function failureInfo(reason, appId) {
	switch (reason) {
	case 'provider_unreachable':
		return {words: 'The model provider could not be reached.',
			fix: 'It may be down, or the address or key may be wrong: check the agent in', link: agentsLink};
	case 'provider_refused':
		return {words: 'The model provider refused the agent’s key.',
			fix: 'Set a working key in', link: agentsLink};
	case 'budget_reached':
		return {words: 'This app’s spend budget is used up.',
			fix: 'Raise the budget in', link: appId ? spendLink(appId) : null};
	case 'agent_error':
		return {words: 'The agent stopped with an error.', fix: 'Retry; if it happens again, check the agent in', link: agentsLink};
	case 'agent_timeout':
		return {words: 'The agent ran out of time before it finished.', fix: 'Retry, or ask for a smaller step.'};
	case 'oom_killed':
		return {words: 'The sandbox ran out of memory while the agent worked.', fix: 'Retry; a smaller step needs less memory.'};
	case 'sandbox_stopped':
		return {words: 'The sandbox was stopped while the task ran.', fix: 'Retry once the app runs again.'};
	case 'sandbox_unavailable':
		return {words: 'The sandbox did not take the task.', fix: 'Retry in a moment.'};
	case 'proxy_unavailable':
		return {words: 'sandboxd’s credential proxy was not running, so the agent could not reach its model.',
			fix: 'Retry; if it happens again, run sandboxd doctor on the host.'};
	case 'internal':
		return {words: 'sandboxd hit an internal error.', fix: 'Retry; if it happens again, the daemon’s log says more.'};
	case 'cancelled':
		return {words: 'You cancelled the task.', fix: null};
	default:
		return {words: 'The task did not finish.', fix: 'Retry, or look at the details.'};
	}
}

export function FixLink({link}) {
	if (!link) return null;
	return <a href={link.href}>{link.label}</a>;
}

// A failed (or cancelled) task: the cause, the fix, Retry, and the raw
// error under Details.
export function FailedTask({t, appId, onRetry}) {
	const info = failureInfo(t.failure_reason, appId);
	const raw = t.status !== 'cancelled' && t.error_message;
	return (
		<div class="fail-card" role="group" aria-label="Why the task failed">
			<p class="fail-words"><strong>{info.words}</strong>{info.fix && <> {info.fix}{info.link ? <> <FixLink link={info.link} />.</> : ''}</>}</p>
			<div class="row">
				{onRetry && <button class="primary" onClick={onRetry}>Retry<span class="sr-only"> the task</span></button>}
			</div>
			{raw && <details class="fail-details"><summary>Details</summary><pre>{raw}</pre></details>}
		</div>
	);
}

// The app's spend budget, reached? (GET /v1/apps/{id} .spend)
export function budgetReached(app) {
	const s = app && app.spend;
	if (!s || !s.budget || !s.spent) return false;
	return (s.budget.usd != null && s.spent.usd >= s.budget.usd) ||
		(s.budget.tokens != null && s.spent.tokens >= s.budget.tokens);
}

// Why the composer cannot send now, or null (Composer's `blocked`).
export function composerBlock(app, sandbox) {
	if (!sandbox)
		return {message: 'This app has no sandbox yet, so no task can run.', link: null};
	if (sandbox.status === 'error')
		return {message: 'The app’s sandbox failed, so no task can run. Try again in the card above.', link: null};
	if (budgetReached(app))
		return {message: 'This app’s spend budget is used up.', link: {href: '/apps/' + enc(app.id) + '/spend', label: 'Raise it in the Spend tab'}};
	return null;
}

// A provider_error event in words: a retry is a warning, a permanent
// failure says what failed.
export function providerWords(d, n) {
	const kind = d.kind;
	if (kind === 'http' && (d.status === 401 || d.status === 403))
		return 'The model provider refused the key.';
	if (kind === 'http' && d.status === 429)
		return d.permanent ? 'The model provider refuses more requests (rate limit or quota).' : `The model provider asks to slow down (retry ${n})…`;
	if (d.permanent)
		return kind === 'http' ? 'The model provider answered with an error.' : 'The model provider cannot be reached.';
	return `The model provider is not answering (retry ${n})…`;
}

// What the agent did last, for the progress line.
function lastStep(rows, words) {
	for (let i = rows.length - 1; i >= 0; i--) {
		const r = rows[i];
		const d = r.data || {};
		if (r.type === 'tool') return `${d.name || 'tool'}${d.path ? ' ' + relPath(d.path) : ''}`;
		if (r.type === 'message') return d.role === 'agent_error' ? 'The agent reported an error' : 'The agent wrote a message';
		if (r.type === 'status') return words[d.phase] || d.phase;
		if (r.type === 'provider_error') return 'The model provider had a problem';
	}
	return 'Starting the task';
}

const APP_DIR = '/home/sandbox/workspace/app/';
export function relPath(p) {
	return typeof p === 'string' && p.startsWith(APP_DIR) ? p.slice(APP_DIR.length) : p;
}

function clock(ms) {
	const s = Math.max(0, Math.floor(ms / 1000));
	return s < 60 ? s + ' s' : Math.floor(s / 60) + ' min ' + String(s % 60).padStart(2, '0') + ' s';
}

// The running task's line: elapsed time (each second), the last step, and
// "thinking…" with a moving indicator when nothing came for 2 s.
export function Working({since, lastAt, rows, words}) {
	const [now, setNow] = useState(Date.now());
	useEffect(() => {
		const t = setInterval(() => setNow(Date.now()), 1000);
		return () => clearInterval(t);
	}, []);
	const quiet = now - (lastAt || since) >= 2000;
	return (
		<div class="working" data-quiet={quiet ? '1' : '0'}>
			<span class="spinner" aria-hidden="true" />
			<span class="working-time" role="timer" aria-label="Time the task has run">{clock(now - since)}</span>
			<span class="working-step">{quiet ? 'The agent is thinking…' : lastStep(rows, words)}</span>
		</div>
	);
}

// The app's problem (sandbox.problem): its summary, its lines, and the
// task that asks the agent to fix it.
const problemWords = {
	compile_error: 'The app does not compile.',
	runtime_error: 'The app shows an error.',
	crashed: 'The app’s process crashed.',
	crashloop: 'The app keeps crashing.',
};

export function fixPrompt(pr) {
	const what = pr.kind === 'crashloop' || pr.kind === 'crashed' ?
		`The app keeps crashing${pr.process ? ' (process ' + pr.process + ')' : ''}. Its last log lines:` :
		'The app shows this error:';
	return `${what}\n\n${(pr.lines || []).join('\n') || pr.summary || ''}\n\nFix it.`;
}

export function ProblemCard({sandbox, running, onChange}) {
	const pr = sandbox.problem;
	const [busy, setBusy] = useState(false);
	const [error, setError] = useState(null);
	const [sent, setSent] = useState(null);
	if (!pr) return null;
	const ask = async () => {
		setBusy(true);
		setError(null);
		try {
			// The agent and model of the last task, as the composer would.
			const body = {prompt: fixPrompt(pr)};
			const prev = await get(`/v1/sandboxes/${enc(sandbox.id)}/tasks`).catch(() => null);
			const last = prev && prev.tasks && prev.tasks[0];
			if (last && last.agent) body.agent = last.agent;
			if (last && last.model) body.model = last.model;
			const t = await post(`/v1/sandboxes/${enc(sandbox.id)}/tasks`, body);
			setSent(t.id);
			onChange && onChange();
		} catch (e) { setError(e); } finally { setBusy(false); }
	};
	const crash = pr.kind === 'crashloop' || pr.kind === 'crashed';
	return (
		<div class="problem-card" role="alert" aria-label="The app has a problem">
			<strong>{problemWords[pr.kind] || 'The app has a problem.'}</strong>
			{pr.summary && <p>{pr.summary}</p>}
			{crash && <p class="muted">Its log’s last lines{pr.process ? ' (' + pr.process + ')' : ''}:</p>}
			{pr.lines && pr.lines.length > 0 && <pre class="problem-lines" tabIndex={0} aria-label="The error's lines">{pr.lines.join('\n')}</pre>}
			<div class="row">
				<button class="primary" disabled={busy || running || !!sent} onClick={ask}>Ask the agent to fix</button>
				{running && !sent && <span class="muted">(after the running task)</span>}
				{sent && <span class="muted" role="status">Sent to the agent: see the chat.</span>}
			</div>
			<ErrorText error={error} />
		</div>
	);
}

// A failed sandbox (status error): the reason, and Try again; for a git
// import the repository URL can be fixed first (PATCH /v1/apps/{id} git).
export function SandboxFailed({app, sandbox, onChange}) {
	const imp = sandbox.status_reason === 'import_failed' || !!app.git;
	const [url, setUrl] = useState(app.git ? app.git.repo_url || '' : '');
	const [busy, setBusy] = useState(false);
	const [error, setError] = useState(null);
	const retry = async (e) => {
		e.preventDefault();
		setBusy(true);
		setError(null);
		try {
			if (imp && app.git && url.trim() && url.trim() !== app.git.repo_url)
				await patch('/v1/apps/' + enc(app.id), {git: {repo_url: url.trim(), branch: app.git.branch || undefined}});
			await post('/v1/apps/' + enc(app.id) + '/sandbox', {});
			onChange();
		} catch (err) { setError(err); } finally { setBusy(false); }
	};
	return (
		<div class="fail-card sandbox-failed" role="alert" aria-label="The sandbox failed"><form onSubmit={retry}>
			<p><strong>{imp ? 'The repository could not be imported.' : 'The app’s sandbox could not start.'}</strong></p>
			{sandbox.error_message && <p><Rich text={sandbox.error_message} /></p>}
			{imp && app.git && (
				<label class="repo-url">Repository URL{' '}
					<input value={url} onInput={(e) => setUrl(e.currentTarget.value)} size={48} spellcheck={false} />
				</label>
			)}
			<div class="row">
				<button class="primary" type="submit" disabled={busy}>{busy ? 'Trying again…' : 'Try again'}</button>
			</div>
			<ErrorText error={error} />
		</form></div>
	);
}
