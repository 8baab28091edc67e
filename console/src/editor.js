// CodeMirror 6, loaded only when a file is opened (its own chunk).
import {EditorState} from '@codemirror/state';
import {EditorView, keymap, lineNumbers, highlightActiveLine, drawSelection} from '@codemirror/view';
import {defaultKeymap, history, historyKeymap, indentWithTab} from '@codemirror/commands';
import {syntaxHighlighting, defaultHighlightStyle, indentOnInput, bracketMatching} from '@codemirror/language';

async function language(path) {
	const ext = (path.split('.').pop() || '').toLowerCase();
	switch (ext) {
	case 'js': case 'mjs': case 'cjs': case 'jsx':
		return (await import('@codemirror/lang-javascript')).javascript({jsx: true});
	case 'ts': case 'tsx':
		return (await import('@codemirror/lang-javascript')).javascript({jsx: ext === 'tsx', typescript: true});
	case 'html': case 'htm': case 'vue': case 'svelte':
		return (await import('@codemirror/lang-html')).html();
	case 'css':
		return (await import('@codemirror/lang-css')).css();
	case 'py':
		return (await import('@codemirror/lang-python')).python();
	case 'json':
		return (await import('@codemirror/lang-json')).json();
	case 'md': case 'markdown':
		return (await import('@codemirror/lang-markdown')).markdown();
	default:
		return [];
	}
}

// CodeMirror's styles (style-mod) go into a <style> element when the
// editor lives in the document, which the console's CSP (style-src 'self')
// refuses; in a shadow root they go into a constructed style sheet, which
// the CSP allows.  So the editor lives in a shadow root of its host.
const hostSheet = () => {
	const s = new CSSStyleSheet();
	s.replaceSync(`:host { display: block; height: 100%; }
.wrap, .cm-editor { height: 100%; }
.cm-scroller { overflow: auto; font-family: ui-monospace, Menlo, Consolas, "DejaVu Sans Mono", "Liberation Mono", monospace; font-size: 14px; }
.cm-editor.cm-focused { outline: 3px solid #1b6ef3; }`);
	return s;
};

// createEditor(host, text, path, {onChange, onSave}) -> {view, get(), set(text)}
export async function createEditor(host, text, path, {onChange, onSave}) {
	const lang = await language(path);
	const shadow = host.shadowRoot || host.attachShadow({mode: 'open'});
	shadow.adoptedStyleSheets = [hostSheet()];
	const parent = document.createElement('div');
	parent.className = 'wrap';
	shadow.replaceChildren(parent);
	const view = new EditorView({
		parent,
		root: shadow,
		state: EditorState.create({
			doc: text,
			extensions: [
				lineNumbers(), history(), drawSelection(), highlightActiveLine(), indentOnInput(),
				bracketMatching(), syntaxHighlighting(defaultHighlightStyle, {fallback: true}),
				keymap.of([{key: 'Mod-s', preventDefault: true, run: () => { onSave(); return true; }},
					indentWithTab, ...defaultKeymap, ...historyKeymap]),
				EditorView.updateListener.of((u) => { if (u.docChanged) onChange(); }),
				// The editable content is the keyboard's way into the editor's
				// scroller (the arrows and Page Up/Down move and scroll it): an
				// explicit tab stop, so it is one for assistive checks too.
				EditorView.contentAttributes.of({'aria-label': 'Contents of ' + path, tabindex: '0'}),
				lang,
			],
		}),
	});
	return {
		view,
		get: () => view.state.doc.toString(),
		set: (t) => view.dispatch({changes: {from: 0, to: view.state.doc.length, insert: t}}),
		destroy: () => view.destroy(),
	};
}
