import {useEffect, useLayoutEffect, useRef, useState} from 'preact/hooks';
import {enc} from './api.js';

// A release's build log, live: GET …/releases/{rid}/log as an event
// stream (EventSource asks for text/event-stream itself, with the session
// cookie): `event: log` carries lines as the build writes them, `event:
// end` the release JSON once it is over (then the stream is closed here,
// or EventSource would reconnect).  A stream that sends no event ids
// starts over on a reconnect, so the lines are dropped then and read
// again.  At most MAX lines are kept, the newest.  The box follows the
// end while the reader is at the end, and stays put when they scrolled
// up (with a "Jump to the end" button).

const MAX = 5000;

export function useBuildLog(appId, releaseId, onEnd) {
	const [lines, setLines] = useState([]);
	const [conn, setConn] = useState('connecting');
	const ended = useRef(onEnd);
	ended.current = onEnd;
	useEffect(() => {
		if (!releaseId) return undefined;
		setLines([]);
		setConn('connecting');
		const es = new EventSource(`/v1/apps/${enc(appId)}/releases/${enc(releaseId)}/log`);
		let opened = false, ids = false, done = false;
		es.onopen = () => {
			if (opened && !ids) setLines([]);
			opened = true;
			setConn('open');
		};
		es.addEventListener('log', (m) => {
			if (m.lastEventId) ids = true;
			const add = String(m.data).split('\n');
			setLines((l) => {
				const n = l.concat(add);
				return n.length > MAX ? n.slice(n.length - MAX) : n;
			});
		});
		es.addEventListener('end', (m) => {
			done = true;
			es.close();
			setConn('ended');
			let rel = null;
			try { rel = JSON.parse(m.data); } catch (_) { /* the caller reloads */ }
			if (ended.current) ended.current(rel && rel.release ? rel.release : rel);
		});
		es.onerror = () => {
			if (done) return;
			setConn(es.readyState === EventSource.CLOSED ? 'failed' : 'reconnecting');
			// Refused for good (the release is gone, or the session ended):
			// the caller reloads and says why.
			if (es.readyState === EventSource.CLOSED && ended.current) ended.current(null);
		};
		return () => { done = true; es.close(); };
	}, [appId, releaseId]);
	return {lines, conn};
}

const connWords = {
	connecting: 'Connecting to the build log…',
	reconnecting: 'Connection to the build log lost; reconnecting…',
	failed: 'The build log stream ended without the build’s result.',
};

// The log box: lines, the connection state as a warning when it is not
// fine, and a jump to the end when the reader scrolled away from it.
export function LogBox({lines, conn, label, tail}) {
	const box = useRef(null);
	const atEnd = useRef(true);
	const [away, setAway] = useState(false);
	const shown = tail ? lines.slice(-tail) : lines;
	useLayoutEffect(() => {
		const b = box.current;
		if (b && atEnd.current) b.scrollTop = b.scrollHeight;
	}, [shown.length, lines]);
	const scrolled = () => {
		const b = box.current;
		if (!b) return;
		atEnd.current = b.scrollHeight - b.scrollTop - b.clientHeight < 24;
		setAway(!atEnd.current);
	};
	const jump = () => {
		const b = box.current;
		atEnd.current = true;
		setAway(false);
		if (b) b.scrollTop = b.scrollHeight;
	};
	return (
		<div class="build-log">
			{conn && connWords[conn] && <p class={'note' + (conn === 'connecting' ? ' info' : ' warn')} role="status">{connWords[conn]}</p>}
			<pre ref={box} tabIndex={0} role="region" aria-label={label} onScroll={scrolled}>
				{shown.length ? shown.join('\n') : <span class="muted">No output yet.</span>}
			</pre>
			{away && <button type="button" class="link" onClick={jump}>Jump to the end of the log</button>}
		</div>
	);
}
