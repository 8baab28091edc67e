import {useEffect, useState, useCallback, useRef} from 'preact/hooks';

// useLoad(fn, deps) -> {data, error, loading, reload}
export function useLoad(fn, deps) {
	const [st, setSt] = useState({data: null, error: null, loading: true});
	const seq = useRef(0);
	const reload = useCallback(() => {
		const n = ++seq.current;
		setSt((s) => ({...s, loading: true}));
		return Promise.resolve()
			.then(fn)
			.then((data) => { if (n === seq.current) setSt({data, error: null, loading: false}); },
				(error) => { if (n === seq.current) setSt((s) => ({data: s.data, error, loading: false})); });
	}, deps);
	useEffect(() => { reload(); }, [reload]);
	return {...st, reload, set: (data) => setSt((s) => ({...s, data}))};
}

// useAction() -> [run(fn), busy, error, setError]: runs one write at a time
// and keeps its error to show.
export function useAction() {
	const [busy, setBusy] = useState(false);
	const [error, setError] = useState(null);
	const run = async (fn) => {
		setBusy(true);
		setError(null);
		try {
			return await fn();
		} catch (e) {
			setError(e);
			return undefined;
		} finally {
			setBusy(false);
		}
	};
	return [run, busy, error, setError];
}

// Error codes in words, for an error whose server sent no message of its own.
const codeWords = {
	network: 'Cannot reach sandboxd. Check that it runs and the connection is up.',
	not_found: 'It is not there any more: someone may have deleted it.',
	conflict: 'Something changed at the same time. Load the page again and retry.',
	invalid_request: 'sandboxd did not accept the request.',
	unauthorized: 'You are signed out. Sign in again.',
	csrf_failed: 'The page is out of date. Load it again and retry.',
	rate_limited: 'Too many tries. Wait a moment and try again.',
	payload_too_large: 'That is too large for sandboxd.',
	insufficient_storage: 'The host is out of disk space.',
	operator_only: 'Only an operator of this sandboxd may do that.',
	internal: 'sandboxd hit an internal error. Its log says more.',
};

// Server text as a sentence: a capital first letter (unless keepCase: a
// text that may start with a file name), a full stop, and `backtick
// spans` as <code>.
export function Rich({text, keepCase}) {
	let s = String(text || '').trim();
	if (!s) return null;
	if (!keepCase) s = s[0].toUpperCase() + s.slice(1);
	if (!/[.!?…:)]$/.test(s) && !s.endsWith('`')) s += '.';
	else if (s.endsWith('`')) s += '.';
	const parts = s.split('`');
	// An odd count of backticks leaves the last one as it is.
	if (parts.length % 2 === 0) return s;
	return parts.map((p, i) => (i % 2 ? <code key={i}>{p}</code> : p));
}

export function errorWords(error) {
	if (!error) return '';
	const generic = !error.message || /^The server answered \d+\.$/.test(error.message);
	if (generic && error.code && codeWords[error.code]) return codeWords[error.code];
	return error.message || String(error);
}

export function ErrorText({error}) {
	if (!error) return null;
	return <p class="error" role="alert"><Rich text={errorWords(error)} /></p>;
}

// A line that tells: kind 'ok' (green, the default: something worked),
// 'warn' (amber: something is off, nothing failed yet) or 'info' (neutral).
export function Note({children, kind}) {
	return <p class={'note' + (kind === 'warn' || kind === 'info' ? ' ' + kind : '')} role="status">{children}</p>;
}

export function usePoll(fn, ms, on) {
	const ref = useRef(fn);
	ref.current = fn;
	useEffect(() => {
		if (!on) return undefined;
		const t = setInterval(() => ref.current(), ms);
		return () => clearInterval(t);
	}, [ms, on]);
}

export function when(ts) {
	if (!ts) return '';
	const d = new Date(ts);
	return isNaN(d) ? ts : d.toLocaleString();
}

export function bytes(n) {
	if (n == null) return '';
	if (n < 1024) return n + ' B';
	if (n < 1048576) return (n / 1024).toFixed(1) + ' KB';
	return (n / 1048576).toFixed(1) + ' MB';
}

export const statusWords = {
	creating: 'Creating',
	running: 'Running',
	frozen: 'Frozen',
	stopped: 'Stopped',
	error: 'Failed',
	none: 'No sandbox',
};

export function StatusBadge({status}) {
	return <span class={'badge s-' + status}>{statusWords[status] || status}</span>;
}

export function setTitle(t) {
	document.title = t ? t + ' · sandboxd' : 'sandboxd';
}

// The published host is served by the edge that serves this console: an
// address without a port gets the console's, when the console has one
// (the daemon alone on a port of its own; behind a proxy on 80 or 443 it
// has none).
export function liveUrl(url) {
	if (!url) return url;
	try {
		const u = new URL(url);
		if (!u.port && location.port && u.protocol === location.protocol) u.port = location.port;
		return u.href.replace(/\/$/, '') + (url.endsWith('/') ? '/' : '');
	} catch (_) {
		return url;
	}
}
