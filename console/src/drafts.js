// Drafts: what the user typed and has not saved or sent yet, kept in this
// browser's localStorage as they type (debounced), so a reload, a closed
// tab or an ended session does not lose it.  A draft is {text, ...extra,
// at}; keys name what it belongs to ("file:SANDBOX:PATH",
// "prompt:SANDBOX", "apps-prompt").  Storage errors (full, off) are
// ignored: a draft is a convenience, never a reason to fail.
import {useEffect, useRef, useState} from 'preact/hooks';

const PREFIX = 'sbx-draft:';
const MAX_AGE = 30 * 24 * 3600 * 1000; // a month-old draft is forgotten
const WAIT = 400;
const pending = new Map(); // key -> {timer, get}

function write(key, v) {
	try {
		if (v == null) localStorage.removeItem(PREFIX + key);
		else localStorage.setItem(PREFIX + key, JSON.stringify({...v, at: Date.now()}));
	} catch (_) { /* storage full or refused */ }
}

export function loadDraft(key) {
	try {
		const s = localStorage.getItem(PREFIX + key);
		const d = s ? JSON.parse(s) : null;
		if (!d || typeof d.text !== 'string') return null;
		if (Date.now() - (d.at || 0) > MAX_AGE) {
			localStorage.removeItem(PREFIX + key);
			return null;
		}
		return d;
	} catch (_) {
		return null;
	}
}

// saveDraft(key, get): get() -> the draft (or null to drop it), called
// once the user pauses typing, or at a flush.
export function saveDraft(key, get) {
	const p = pending.get(key);
	if (p) clearTimeout(p.timer);
	pending.set(key, {get, timer: setTimeout(() => flushDraft(key), WAIT)});
}

export function flushDraft(key) {
	const p = pending.get(key);
	if (!p) return;
	clearTimeout(p.timer);
	pending.delete(key);
	let v = null;
	try { v = p.get(); } catch (_) { return; }
	write(key, v);
}

export function flushDrafts() {
	for (const k of [...pending.keys()]) flushDraft(k);
}

export function clearDraft(key) {
	const p = pending.get(key);
	if (p) clearTimeout(p.timer);
	pending.delete(key);
	write(key, null);
}

addEventListener('pagehide', flushDrafts);

// useDraft(key, value, setValue) for a text box: restores the key's draft
// into an empty box when key changes (restored is then true), saves the
// value as it changes.  discard() empties the box and drops the draft;
// clear() drops the draft (after the text was sent).
export function useDraft(key, value, setValue) {
	const [restored, setRestored] = useState(false);
	// {key, waiting}: which key the box holds; waiting is the restored
	// text until the box shows it (the same render still has the old value).
	const at = useRef(null);
	useEffect(() => {
		const d = loadDraft(key);
		if (d && d.text.trim()) {
			at.current = {key, waiting: d.text};
			setValue(d.text);
			setRestored(true);
		} else {
			at.current = {key};
			setRestored(false);
		}
		return () => flushDraft(key);
	}, [key]);
	useEffect(() => {
		const a = at.current;
		if (!a || a.key !== key) return;
		if (a.waiting !== undefined) {
			if (value === a.waiting) a.waiting = undefined;
			return;
		}
		saveDraft(key, () => (value.trim() ? {text: value} : null));
		if (!value.trim()) setRestored(false);
	}, [key, value]);
	return {
		restored,
		discard: () => { clearDraft(key); setValue(''); setRestored(false); },
		clear: () => { clearDraft(key); setRestored(false); },
	};
}
