import {useState, useRef, useEffect} from 'preact/hooks';
import {post, enc} from './api.js';
import {ErrorText, Rich} from './ui.jsx';
import {ProblemCard} from './fixit.jsx';

// The device sizes the preview can show the app at: Desktop fills the
// pane; Tablet and Phone are that many CSS pixels wide, centred and scaled
// down to fit a narrower pane.  The choice is kept in this browser.
const devices = [['desktop', 'Desktop', 0], ['tablet', 'Tablet', 768], ['phone', 'Phone', 390]];
const DEVICE_KEY = 'sandboxd.preview-device';

function useDevice() {
	const [d, setD] = useState(() => {
		try { return localStorage.getItem(DEVICE_KEY) || 'desktop'; } catch (_) { return 'desktop'; }
	});
	const set = (v) => {
		setD(v);
		try { localStorage.setItem(DEVICE_KEY, v); } catch (_) { /* storage refused: for this page only */ }
	};
	return [devices.find((x) => x[0] === d) || devices[0], set];
}

function DeviceSwitch({device, setDevice}) {
	return (
		<div class="seg" role="group" aria-label="Preview size">
			{devices.map(([id, label, w]) => (
				<button key={id} type="button" aria-pressed={device[0] === id} onClick={() => setDevice(id)}
					title={w ? label + ': ' + w + ' px wide' : label + ': the whole pane'}>{label}</button>
			))}
		</div>
	);
}

// The frame's box: at a device width the frame is that wide and scaled
// (CSS transform) to the box's width when the box is narrower; its height
// fills the box either way.
function DeviceFrame({device, children}) {
	const box = useRef(null);
	const [w, setW] = useState(0);
	useEffect(() => {
		const el = box.current;
		if (!el || typeof ResizeObserver === 'undefined') return undefined;
		const ro = new ResizeObserver(() => setW(el.clientWidth));
		ro.observe(el);
		return () => ro.disconnect();
	}, []);
	const width = device[2];
	const scale = width && w ? Math.min(1, w / width) : 1;
	return (
		<div ref={box} class={'frame-box' + (width ? ' sized' : '')}
			style={width ? {'--dev-w': width + 'px', '--dev-s': String(scale)} : undefined}>
			{children}
		</div>
	);
}

const previewState = {
	down: 'The app is stopped. Start it to see the preview.',
	starting: 'Starting the app…',
	none: 'This app has no web page: it declares no web process, only background workers (see Processes below for them and their logs).',
};

// What shows instead of the frame while there is no page to show.
function PreviewState({sandbox, p, onChange}) {
	if (sandbox.status === 'error')
		return <p>The app does not run: its sandbox failed (the card above says why).</p>;
	if (sandbox.status === 'creating')
		return <p class="starting"><span class="spinner" aria-hidden="true" /> Making the app’s sandbox…</p>;
	if (p.status === 'starting') {
		// The daemon's plain words (detail) and, apart, the raw probe error.
		return (
			<>
				<p class="starting"><span class="spinner" aria-hidden="true" /> Starting the app…</p>
				{p.probe_error && p.detail && <p class="muted"><Rich text={p.detail} /></p>}
			</>
		);
	}
	if (p.status === 'error') {
		return (
			<>
				<strong>The app’s web page is not working.</strong>
				<p>{p.detail ? <Rich text={p.detail.replace(/\bbackoff\b/g, 'restarting after a crash')} /> : 'Its web process crashed or stopped answering.'} The web process’s log is below.</p>
			</>
		);
	}
	return (
		<>
			<p>{previewState[p.status] || 'The preview is not available.'}</p>
			{p.status === 'down' && sandbox.status === 'stopped' && <StartButton sandbox={sandbox} onChange={onChange} />}
		</>
	);
}

// A one-time link to a private preview (POST /v1/apps/{id}/preview-link):
// opened once, it gives the browser the preview's cookie on that host.
const mintLink = (sandbox, ttl) =>
	post('/v1/apps/' + enc(sandbox.app_id) + '/preview-link', {ttl_seconds: ttl}).then((l) => l.url);

export function Preview({sandbox, onChange, running}) {
	const p = sandbox.preview || {status: 'down'};
	const frame = useRef(null);
	const [n, setN] = useState(0);
	const [copied, setCopied] = useState('');
	const [src, setSrc] = useState(null);
	const [linkError, setLinkError] = useState(null);
	const [device, setDevice] = useDevice();
	const priv = p.visibility === 'private';
	// A frozen app is shown as it is: loading it thaws it in milliseconds.
	const live = p.status === 'ready' || p.status === 'frozen';
	// A private preview is framed through a fresh link (each reload too).
	useEffect(() => {
		setLinkError(null);
		if (!live || !priv) { setSrc(p.url || null); return; }
		let gone = false;
		setSrc(null);
		mintLink(sandbox, 43200).then((u) => { if (!gone) setSrc(u); }, (e) => { if (!gone) setLinkError(e); });
		return () => { gone = true; };
	}, [n, p.url, priv, live, sandbox.app_id]);
	const note = (t) => { setCopied(t); setTimeout(() => setCopied(''), 3000); };
	const copy = async (text, what) => {
		try {
			await navigator.clipboard.writeText(text);
			note('Copied ' + what + '.');
		} catch (_) {
			note('Copy failed: ' + text);
		}
	};
	const share = async () => {
		try { await copy(await mintLink(sandbox, 86400), 'a link for one person (it works once, for 24 hours)'); } catch (e) { setLinkError(e); }
	};
	const open = async () => {
		const w = window.open('about:blank', '_blank');
		try {
			const u = await mintLink(sandbox, 43200);
			if (w) { w.opener = null; w.location = u; }
		} catch (e) { if (w) w.close(); setLinkError(e); }
	};
	return (
		<section class="preview" aria-label="Preview">
			<div class="preview-bar">
				<input aria-label="Preview address" readOnly value={p.url || ''} onFocus={(e) => e.currentTarget.select()} />
				<button onClick={() => setN(n + 1)} disabled={!live} aria-label="Reload the preview">Reload</button>
				{priv ? (
					<button onClick={open} disabled={!p.url} aria-label="Open the preview in a new tab">Open</button>
				) : (
					<a class="button" href={p.url} target="_blank" rel="noopener noreferrer" aria-label="Open the preview in a new tab">Open</a>
				)}
				{priv ? (
					<button onClick={share} disabled={!p.url}>Copy a one-time link</button>
				) : (
					<button onClick={() => copy(p.url, 'the address')} disabled={!p.url}>Copy URL</button>
				)}
				<DeviceSwitch device={device} setDevice={setDevice} />
			</div>
			{priv && <p class="muted preview-note">Private preview: the address above works only for you, signed in here. To show the app to someone, copy a one-time link.</p>}
			{copied && <p class="note" role="status">{copied}</p>}
			<ErrorText error={linkError} />
			<ProblemCard key={sandbox.problem ? sandbox.problem.since : 'none'} sandbox={sandbox} running={running || !!sandbox.active_task_id} onChange={onChange} />
			{live ? (
				src ? (
					<DeviceFrame device={device}>
						<iframe key={n + src} ref={frame} src={src} title={'Preview of the app on port ' + p.port}
							sandbox="allow-scripts allow-same-origin allow-forms allow-popups allow-modals allow-downloads" />
					</DeviceFrame>
				) : <div class="preview-state" role="status"><p>Opening the private preview…</p></div>
			) : (
				<div class={'preview-state ps-' + p.status} role="status">
					<PreviewState sandbox={sandbox} p={p} onChange={onChange} />
				</div>
			)}
		</section>
	);
}

function StartButton({sandbox, onChange}) {
	const [busy, setBusy] = useState(false);
	const [error, setError] = useState(null);
	return (
		<>
			<button class="primary" disabled={busy} onClick={async () => {
				setBusy(true);
				try { await post('/v1/sandboxes/' + enc(sandbox.id) + '/start', {}); onChange(); } catch (e) { setError(e); } finally { setBusy(false); }
			}}>Start the app</button>
			<ErrorText error={error} />
		</>
	);
}

