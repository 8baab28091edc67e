// The unsaved-work guard: a part of the page with unsaved changes
// registers them here; leaving them (another file, another tab or page
// of the console, closing or reloading the browser tab) asks first.
// Links are checked before preact-iso's router sees the click; a link
// with data-leave-ok goes without asking.  Closing the tab asks through
// beforeunload; the drafts are flushed to localStorage either way.
import {useEffect, useRef} from 'preact/hooks';
import {flushDrafts} from './drafts.js';

const entries = new Set(); // {dirty() -> message or null, drop(), url}

export function dirtyEntries() {
	return [...entries].filter((e) => e.dirty());
}

// confirmLeave() -> true when nothing is unsaved or the user agrees to
// drop it (then each entry's drop() runs).
export function confirmLeave() {
	const d = dirtyEntries();
	if (!d.length) return true;
	const what = d.map((e) => e.dirty()).join('\n');
	// eslint-disable-next-line no-alert
	if (!confirm(`${what}\n\nLeave and drop the unsaved changes? (Cancel to stay and save them.)`)) return false;
	for (const e of d) e.drop();
	return true;
}

// useGuard(dirty, drop): dirty() -> a sentence naming the unsaved work,
// or null; drop() forgets it (its draft) when the user leaves anyway.
export function useGuard(dirty, drop) {
	const ref = useRef({});
	ref.current.dirty = dirty;
	ref.current.drop = drop;
	// Where the page was when it last drew: Back changes the address
	// before anything draws again.
	ref.current.url = location.pathname + location.search;
	useEffect(() => {
		const e = {
			dirty: () => ref.current.dirty(),
			drop: () => ref.current.drop(),
			url: () => ref.current.url,
		};
		entries.add(e);
		return () => entries.delete(e);
	}, []);
}

// leaveWithoutAsking(fn): runs fn, a navigation the code makes on its
// own (the ended session's sign-in, the drafts being kept), unguarded.
let bypass = false;
export function leaveWithoutAsking(fn) {
	bypass = true;
	try { fn(); } finally { bypass = false; }
}

function onClick(ev) {
	if (bypass || ev.defaultPrevented || ev.button !== 0 || ev.ctrlKey || ev.metaKey || ev.altKey || ev.shiftKey) return;
	const a = ev.composedPath().find((el) => el.nodeName === 'A' && el.href);
	if (!a || a.origin !== location.origin || a.hasAttribute('download') || a.hasAttribute('data-leave-ok')) return;
	if (a.target && !/^_?self$/i.test(a.target)) return;
	if (a.pathname === location.pathname && a.search === location.search) return;
	if (!confirmLeave()) {
		ev.preventDefault();
		ev.stopImmediatePropagation();
	}
}

// The browser's Back or Forward: the URL has changed already, so staying
// puts the page's address back.
function onPopState(ev) {
	const d = bypass ? [] : dirtyEntries();
	if (!d.length) return;
	const back = d[0].url();
	if (back === location.pathname + location.search) return;
	if (!confirmLeave()) {
		ev.stopImmediatePropagation();
		history.pushState(null, '', back);
	}
}

function onBeforeUnload(ev) {
	flushDrafts();
	if (dirtyEntries().length) {
		ev.preventDefault();
		ev.returnValue = '';
	}
}

addEventListener('click', onClick, true);
addEventListener('popstate', onPopState, true);
addEventListener('beforeunload', onBeforeUnload);
