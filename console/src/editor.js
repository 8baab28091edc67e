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

// createEditor(parent, text, path, {onChange, onSave}) -> {view, get(), set(text)}
export async function createEditor(parent, text, path, {onChange, onSave}) {
	const lang = await language(path);
	const view = new EditorView({
		parent,
		state: EditorState.create({
			doc: text,
			extensions: [
				lineNumbers(), history(), drawSelection(), highlightActiveLine(), indentOnInput(),
				bracketMatching(), syntaxHighlighting(defaultHighlightStyle, {fallback: true}),
				keymap.of([{key: 'Mod-s', preventDefault: true, run: () => { onSave(); return true; }},
					indentWithTab, ...defaultKeymap, ...historyKeymap]),
				EditorView.updateListener.of((u) => { if (u.docChanged) onChange(); }),
				EditorView.contentAttributes.of({'aria-label': 'Contents of ' + path}),
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
