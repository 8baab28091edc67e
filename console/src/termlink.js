// The terminal's connection (docs/api.md, "Terminal"): a ticket from
// POST /v1/sandboxes/{id}/terminal, then a WebSocket to the url it names.
// Binary frames carry a channel byte (0 stdin, 1 output, 2 stderr); text
// frames are JSON control messages.  No xterm here: terminal.jsx draws.
import {post, enc} from './api.js';

const encoder = new TextEncoder();

// The session a tab had, per sandbox: a reload or a return to the tab
// reattaches to it (the daemon keeps a detached session for a while and
// replays its last screenful).
const keyOf = (sbId) => 'sbx-term:' + sbId;
export const savedSession = (sbId) => { try { return sessionStorage.getItem(keyOf(sbId)); } catch (_) { return null; } };
export function saveSession(sbId, sid) {
	try {
		if (sid) sessionStorage.setItem(keyOf(sbId), sid);
		else sessionStorage.removeItem(keyOf(sbId));
	} catch (_) { /* storage off: no reattach after a reload */ }
}

// ticket(sbId, {cols, rows, session_id}) -> {ticket, session_id, url,
// expires_at}.  A session_id the daemon no longer has is retried once as a
// new session; err.reattachFailed tells the caller the screen is new.
export async function ticket(sbId, body) {
	const path = '/v1/sandboxes/' + enc(sbId) + '/terminal';
	if (!body.session_id) return post(path, body);
	try {
		return await post(path, body);
	} catch (e) {
		// Gone (ended, or past the reattach window): a new session.  Not
		// for a cap, a lost network or a lost sign-in: those stay errors.
		if (e.status === 404 || e.status === 410 || (e.status === 409 && e.code !== 'terminal_limit') || e.status === 400) {
			const {session_id: _, ...rest} = body;
			const t = await post(path, rest);
			t.fresh = true;
			return t;
		}
		throw e;
	}
}

// The WebSocket address from the ticket's url: absolute ws(s)://, or a
// path on this origin.
export function socketUrl(t) {
	const u = new URL(t.url || ('/v1/terminal?ticket=' + enc(t.ticket)), location.href);
	if (u.protocol === 'http:') u.protocol = 'ws:';
	else if (u.protocol === 'https:') u.protocol = 'wss:';
	if (!u.searchParams.has('ticket')) u.searchParams.set('ticket', t.ticket);
	return u.toString();
}

// connect(url, {onOutput(bytes), onStatus(state), onExit({code, reason}),
// onOpen(), onClose(ev)}) -> {send(text), resize(cols, rows), flow(pause),
// close()}.
export function connect(url, h) {
	const ws = new WebSocket(url);
	ws.binaryType = 'arraybuffer';
	let closing = false;
	ws.onopen = () => h.onOpen();
	ws.onmessage = (ev) => {
		if (typeof ev.data === 'string') {
			let m;
			try { m = JSON.parse(ev.data); } catch (_) { return; }
			if (m.type === 'status') h.onStatus(m.state);
			else if (m.type === 'exit') h.onExit(m);
			return;
		}
		const b = new Uint8Array(ev.data);
		if (b.length > 1 && (b[0] === 1 || b[0] === 2)) h.onOutput(b.subarray(1));
	};
	ws.onclose = (ev) => { if (!closing) h.onClose(ev); };
	const frame = (bytes) => {
		if (ws.readyState !== WebSocket.OPEN) return;
		const f = new Uint8Array(bytes.length + 1);
		f[0] = 0;
		f.set(bytes, 1);
		ws.send(f);
	};
	return {
		send: (s) => frame(typeof s === 'string' ? encoder.encode(s) : s),
		flow: (pause) => { if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify({type: pause ? 'pause' : 'resume'})); },
		resize: (cols, rows) => { if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify({type: 'resize', cols, rows})); },
		close: () => { closing = true; ws.close(1000); },
	};
}

// An exit reason in words, after "Session ended: ".
export function reasonWords(m) {
	switch (m.reason) {
	case 'exited': return m.code > 0 ? `the shell exited with status ${m.code}` : 'the shell exited';
	case 'idle': return 'nobody typed for a while (the idle timeout)';
	case 'lifetime': return 'it reached the longest a session may last';
	case 'sandbox_stopped': return 'the sandbox stopped';
	case 'closed': return 'sandboxd closed it';
	case 'lost': return 'the connection was lost';
	default: return m.reason || 'unknown';
	}
}

// What to do after a ticket error, in words.
export function nextStep(e) {
	if (!e) return '';
	if (e.code === 'terminal_limit') return 'Close a terminal open in another tab or window (or wait for an idle one to time out), then try again.';
	if (e.code === 'ws_refused') return 'Try again; if it keeps failing, a proxy in front of sandboxd may not pass WebSockets through.';
	if (e.status === 0) return 'Check that sandboxd runs and the connection is up, then try again.';
	if (e.status === 404) return 'The sandbox is gone: load the app again; it may need a new sandbox.';
	if (e.status === 401) return 'Sign in again, then come back to this tab.';
	if (e.status >= 500) return 'Try again in a moment; the daemon’s log says more.';
	return 'Try again; if it keeps failing, the daemon’s log says more.';
}
