// The Terminal tab: a shell in the app's sandbox (docs/console/terminal.md)
// drawn by xterm.js, which loads with this tab only (its own chunk).  The
// states are said in words above the screen: opening, waking the sandbox,
// connected, or "Session ended: why" with a Reconnect button, which
// reattaches to the same session while the daemon still keeps it (the
// screen comes back) and else, or after the shell exited, opens a new one.  Clipboard writes from the
// sandbox (OSC 52) are refused: a program in the sandbox must not be able
// to put text on the user's clipboard.
import {useEffect, useRef, useState} from 'preact/hooks';
import {ErrorText} from './ui.jsx';
import {connect, nextStep, reasonWords, saveSession, savedSession, socketUrl, ticket} from './termlink.js';

const loadXterm = () => Promise.all([
	import('./termstyle.js'),
	import('@xterm/xterm'),
	import('@xterm/addon-fit'),
	import('@xterm/xterm/css/xterm.css'),
]);

const HIGH = 1 << 19, LOW = 1 << 17, HARD = 1 << 21;

const phone = () => matchMedia('(max-width: 800px)').matches;

// Screen reader mode (xterm's: the rows also as text a screen reader
// follows, new output announced), remembered in this browser.
const SR_KEY = 'sbx-term-sr';
const srSaved = () => { try { return localStorage.getItem(SR_KEY) === '1'; } catch (_) { return false; } };
const srSave = (on) => { try { localStorage.setItem(SR_KEY, on ? '1' : '0'); } catch (_) { /* storage off */ } };

// The phone's keys that a soft keyboard lacks.
const extraKeys = [
	['Esc', '\x1b', '(Escape)'],
	['Tab', '\t', ''],
	['Ctrl+C', '\x03', '(Control C, interrupt)'],
	['Ctrl+D', '\x04', '(Control D, end of input)'],
	['↑', '\x1b[A', 'Up arrow'],
	['↓', '\x1b[B', 'Down arrow'],
	['←', '\x1b[D', 'Left arrow'],
	['→', '\x1b[C', 'Right arrow'],
];

export function Terminal({sandbox}) {
	const sbId = sandbox.id;
	const host = useRef(null);
	const ctl = useRef(null); // {term, open(), send(text)}
	const again = useRef(null);
	// phase: loading | opening | waking | connected | ended | failed
	const [st, setSt] = useState({phase: 'loading'});
	const [sr, setSr] = useState(srSaved);
	const asleep = sandbox.status === 'stopped' || sandbox.frozen;

	useEffect(() => {
		let dead = false;
		let term, fit, link = null, sid = savedSession(sbId), ro, escAt = 0;
		const set = (s) => { if (!dead) setSt(s); };
		const open = async (reattach) => {
			if (link) { link.close(); link = null; }
			set({phase: 'opening'});
			let t;
			try {
				t = await ticket(sbId, {cols: term.cols, rows: term.rows, ...(reattach && sid ? {session_id: sid} : {})});
			} catch (e) {
				set({phase: 'failed', error: e});
				return;
			}
			if (dead) return;
			sid = t.session_id;
			saveSession(sbId, sid);
			// The daemon replays the last screenful on a reattach: start
			// from a clean screen so it is not drawn twice.
			term.reset();
			let ended = false, opened = false;
			// Flow: xterm parses more slowly than a flood arrives.  Past
			// HIGH bytes not yet drawn the daemon is asked to pause (a
			// daemon that does not know the message ignores it); under
			// LOW, to resume.  Past HARD (far below where xterm throws
			// data away with an error) output is skipped, and the screen
			// says so when it catches up.
			let pending = 0, paused = false, skipped = 0;
			const drawn = (n) => {
				pending -= n;
				if (pending > LOW) return;
				if (paused) { paused = false; link.flow(false); }
				if (skipped) {
					term.write(`\r\n\x1b[0m[console: ${skipped} bytes of output skipped: they came faster than the screen could draw them]\r\n`);
					skipped = 0;
				}
			};
			link = connect(socketUrl(t), {
				onOpen: () => { opened = true; set({phase: 'connected'}); fit.fit(); link.resize(term.cols, term.rows); },
				onStatus: (s) => set({phase: s === 'waking' ? 'waking' : 'connected'}),
				onOutput: (b) => {
					if (skipped || pending > HARD) { skipped += b.length; return; }
					pending += b.length;
					term.write(b, () => drawn(b.length));
					if (!paused && pending > HIGH) { paused = true; link.flow(true); }
				},
				onExit: (m) => {
					ended = true;
					sid = null;
					saveSession(sbId, null);
					set({phase: 'ended', reason: reasonWords(m)});
				},
				onClose: () => {
					if (ended) return;
					// Refused before it opened: the browser says no more.
					if (!opened) {
						set({phase: 'failed', error: {code: 'ws_refused', status: -1,
							message: 'sandboxd did not open the terminal’s connection (an expired ticket, or a page not served by the console)'}});
						return;
					}
					set({phase: 'ended', reason: reasonWords({reason: 'lost'})});
				},
			});
		};
		loadXterm().then(([, {Terminal: Xterm}, {FitAddon}]) => {
			if (dead || !host.current) return;
			term = new Xterm({
				cursorBlink: true,
				fontSize: phone() ? 13 : 14,
				fontFamily: 'ui-monospace, SFMono-Regular, Menlo, Consolas, "DejaVu Sans Mono", monospace',
				scrollback: 5000,
				screenReaderMode: srSaved(),
				theme: {background: '#1b1f24', foreground: '#e8eaed', cursor: '#e8eaed'},
			});
			fit = new FitAddon();
			term.loadAddon(fit);
			// OSC 52 (set or read the clipboard): swallowed, never acted on.
			term.parser.registerOscHandler(52, () => true);
			// Escape then Tab (or Shift+Tab) leaves the screen; Tab alone
			// goes to the shell (completion).
			term.attachCustomKeyEventHandler((e) => {
				if (e.type !== 'keydown') return true;
				if (e.key === 'Escape') { escAt = Date.now(); return true; }
				// false: xterm leaves the key alone and the browser moves
				// the focus as Tab does everywhere.
				if (e.key === 'Tab' && Date.now() - escAt < 1500) { escAt = 0; return false; }
				return true;
			});
			term.open(host.current);
			term.textarea && term.textarea.setAttribute('aria-label', 'Terminal input');
			fit.fit();
			term.onData((s) => link && link.send(s));
			term.onBinary((s) => link && link.send(Uint8Array.from(s, (c) => c.charCodeAt(0) & 255)));
			term.onResize(({cols, rows}) => link && link.resize(cols, rows));
			ro = new ResizeObserver(() => { try { fit.fit(); } catch (_) { /* hidden */ } });
			ro.observe(host.current);
			ctl.current = {term, open: () => { open(true); term.focus(); }, send: (s) => { if (link) link.send(s); term.focus(); }};
			open(!!sid);
			term.focus();
		}, (e) => set({phase: 'failed', error: {message: 'The terminal could not load: ' + e.message}}));
		return () => {
			dead = true;
			if (ro) ro.disconnect();
			if (link) link.close();
			if (term) term.dispose();
			ctl.current = null;
		};
	}, [sbId]);

	const toggleSr = (on) => {
		setSr(on);
		srSave(on);
		if (ctl.current) ctl.current.term.options.screenReaderMode = on;
	};
	const {phase} = st;
	// A session that ended under the user's fingers: the focus goes to
	// Reconnect (Enter starts again) rather than stay in a dead screen.
	useEffect(() => {
		if ((phase === 'ended' || phase === 'failed') && again.current && host.current &&
			(host.current.contains(document.activeElement) || document.activeElement === document.body))
			again.current.focus();
	}, [phase]);
	return (
		<section class="term" aria-labelledby="term-h">
			<h2 id="term-h" class="sr-only">Terminal</h2>
			<div class="term-bar">
				<p id="term-state" tabindex="-1" class={'term-state ts-' + phase} role="status">
					{phase === 'loading' && 'Loading the terminal…'}
					{phase === 'opening' && (asleep ? 'Waking the sandbox…' : 'Opening a shell…')}
					{phase === 'waking' && 'Waking the sandbox…'}
					{phase === 'connected' && 'Connected: a shell in the sandbox.'}
					{phase === 'ended' && 'Session ended: ' + st.reason + '.'}
					{phase === 'failed' && 'No terminal.'}
				</p>
				{(phase === 'ended' || phase === 'failed') && (
					<button ref={again} type="button" class="primary" onClick={() => ctl.current && ctl.current.open()}>
						{phase === 'ended' ? 'Reconnect' : 'Try again'}
					</button>
				)}
				<span class="term-hint muted">Esc then Tab leaves the terminal.</span>
				<label class="term-sr"><input type="checkbox" checked={sr} onChange={(e) => toggleSr(e.currentTarget.checked)} /> Screen reader mode</label>
			</div>
			{phase === 'failed' && (
				<div class="term-error">
					<ErrorText error={st.error} />
					<p>{nextStep(st.error)}</p>
				</div>
			)}
			<div class="term-screen" ref={host} />
			<div class="term-keys" role="group" aria-label="Keys">
				{extraKeys.map(([label, seq, more]) => (
					<button key={label} type="button" disabled={phase !== 'connected'} onClick={() => ctl.current && ctl.current.send(seq)}>
						{/^\w/.test(label) ? label : <span aria-hidden="true">{label}</span>}
						{more && <span class="sr-only">{(/^\w/.test(label) ? ' ' : '') + more}</span>}
					</button>
				))}
			</div>
		</section>
	);
}
