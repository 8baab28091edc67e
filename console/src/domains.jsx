import {useState} from 'preact/hooks';
import {get, post, del, enc} from './api.js';
import {useLoad, usePoll, useAction, ErrorText, Rich, when, liveUrl} from './ui.jsx';

// A published app's custom domains (GET/POST …/domains): add a host, and
// for each its state: pending with what is missing, or verified; the DNS
// record to create (an A record to this server, or a CNAME to the app's
// own address: the domain JSON's `records`); Check now; Remove.  The
// host is checked here only for what is surely wrong (empty, a scheme or
// a path, spaces); sandboxd decides the rest and its answer shows under
// the field.

export function hostProblem(h) {
	if (!h) return 'Type a host name, like www.example.com.';
	if (/^[a-z][a-z0-9+.-]*:\/\//i.test(h)) return 'Only the host name: leave out http:// or https://.';
	if (/[/\s?#@]/.test(h)) return 'Only the host name, like www.example.com: no spaces, paths or ports.';
	if (h.length > 253) return 'A host name has at most 253 characters.';
	return '';
}

const tlsWords = {
	traefik: 'HTTPS: Traefik gets a certificate once the domain is verified.',
	none: 'HTTP only: sandboxd serves plain HTTP; put TLS in front of it (docs/publish.md says how).',
};

export function Domains({app}) {
	const base = '/v1/apps/' + enc(app.id) + '/domains';
	const st = useLoad(() => get(base), [app.id]);
	const domains = (st.data && st.data.domains) || [];
	const pending = domains.some((d) => d.status !== 'verified');
	usePoll(st.reload, pending ? 10000 : 60000, !!st.data);
	const onChange = st.reload;
	const [host, setHost] = useState('');
	const [local, setLocal] = useState('');
	const [run, busy, error, setError] = useAction();
	const add = (e) => {
		e.preventDefault();
		const h = host.trim().toLowerCase().replace(/\.$/, '');
		const p = hostProblem(h);
		setLocal(p);
		setError(null);
		if (p) return;
		run(async () => {
			await post(base, {host: h});
			setHost('');
			onChange();
		});
	};
	const problem = local || (error && errorFor(error));
	return (
		<section class="card domains" aria-labelledby="dom-h">
			<h2 id="dom-h">Custom domains</h2>
			<p class="muted">Serve the app at your own name too. Add it here, then create the DNS
				record shown for it at your DNS provider; sandboxd checks it and starts serving it.</p>
			<form class="row wrap" onSubmit={add} noValidate>
				<label class="grow">Host name
					<input value={host} placeholder="www.example.com" autocomplete="off" spellcheck={false}
						aria-invalid={problem ? 'true' : undefined} aria-describedby={problem ? 'dom-problem' : undefined}
						onInput={(e) => { setHost(e.currentTarget.value); setLocal(''); }} />
				</label>
				<button type="submit" disabled={busy}>Add domain</button>
			</form>
			{problem && <p id="dom-problem" class="error" role="alert"><Rich text={problem} keepCase /></p>}
			{busy && <span class="muted" role="status">Adding…</span>}
			{st.error && <p class="row wrap"><ErrorText error={st.error} /><button type="button" onClick={st.reload}>Reload</button></p>}
			{!st.data ? null : domains.length === 0 ? <p class="muted">No custom domains yet.</p> : (
				<ul class="plain dom-list">
					{domains.map((d) => <Domain key={d.host} app={app} d={d} onChange={onChange} />)}
				</ul>
			)}
		</section>
	);
}

// The add form's error in the field's words.
function errorFor(e) {
	if (e.code === 'host_taken') return 'Another app already uses that host name. Remove it there first, or choose another.';
	if (e.code === 'invalid_request') return e.message || 'That is not a host name sandboxd can serve.';
	return e.message || String(e);
}

function Domain({app, d, onChange}) {
	const [run, busy, error] = useAction();
	const [checked, setChecked] = useState(false);
	const url = '/v1/apps/' + enc(app.id) + '/domains/' + enc(d.host);
	const ok = d.status === 'verified';
	const check = () => run(async () => { await post(url + '/verify', {}); setChecked(true); onChange(); });
	const remove = () => {
		if (!confirm(`Remove ${d.host}? The app stops answering at that name; the DNS record stays at your provider.`)) return;
		run(async () => { await del(url); onChange(); });
	};
	const records = d.records || [];
	return (
		<li class={'dom dom-' + d.status}>
			<div class="row wrap dom-head">
				<strong class="dom-host">{d.host}</strong>
				<span class={'badge ' + (ok ? 'pub-ready' : 'pub-pending')}>{ok ? 'verified' : 'pending'}</span>
				<span class="grow" />
				<button type="button" disabled={busy} onClick={check}>Check now<span class="sr-only"> for {d.host}</span></button>
				<button type="button" class="danger" disabled={busy} onClick={remove}>Remove<span class="sr-only"> {d.host}</span></button>
			</div>
			{ok ? (
				<p>Serving at <a href={liveUrl('http://' + d.host)} target="_blank" rel="noopener noreferrer">{d.host}<span class="sr-only"> (opens in a new tab)</span></a>
					{d.verified_at && <span class="muted"> · verified {when(d.verified_at)}</span>}</p>
			) : (
				<p class="note warn">Not serving yet{d.reason ? ': ' : '.'}{d.reason && <Rich text={d.reason} keepCase />}
					{d.checked_at && <span> (checked {when(d.checked_at)})</span>}</p>
			)}
			{busy && <span class="muted" role="status">Checking…</span>}
			{checked && !busy && !ok && <span class="sr-only" role="status">Checked: still pending.</span>}
			{!ok && records.length > 0 && (
				<table class="records">
					<caption>Create one of these records at your DNS provider</caption>
					<thead><tr><th scope="col">Type</th><th scope="col">Name</th><th scope="col">Value</th></tr></thead>
					<tbody>{records.map((r, i) => (
						<tr key={i}><th scope="row">{r.type}</th><td><code>{r.name}</code></td><td><code>{r.value}</code></td></tr>
					))}</tbody>
				</table>
			)}
			{d.tls && tlsWords[d.tls] && <p class="muted">{tlsWords[d.tls]}</p>}
			<ErrorText error={error} />
		</li>
	);
}
