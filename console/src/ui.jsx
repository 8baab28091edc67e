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

export function ErrorText({error}) {
	if (!error) return null;
	return <p class="error" role="alert">{error.message || String(error)}</p>;
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
