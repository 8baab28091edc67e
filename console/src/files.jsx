import {useEffect, useRef, useState} from 'preact/hooks';
import {get, request, post, del, enc} from './api.js';
import {useLoad, ErrorText, Note, bytes} from './ui.jsx';
import {loadDraft, saveDraft, clearDraft, flushDraft} from './drafts.js';
import {useGuard, confirmLeave} from './guard.js';

// A file is text when it decodes as UTF-8 and has no NUL in its start.
export function isBinary(buf) {
	const b = new Uint8Array(buf);
	const n = Math.min(b.length, 8192);
	for (let i = 0; i < n; i++) if (b[i] === 0) return true;
	try {
		new TextDecoder('utf-8', {fatal: true}).decode(b);
		return false;
	} catch (_) {
		return true;
	}
}

// The entries as a tree: {name, path, type, size, children}
function tree(entries) {
	const root = {children: new Map()};
	for (const e of entries) {
		const parts = e.path.split('/');
		let n = root;
		parts.forEach((p, i) => {
			if (!n.children.has(p)) n.children.set(p, {name: p, path: parts.slice(0, i + 1).join('/'), type: 'dir', children: new Map()});
			n = n.children.get(p);
		});
		n.type = e.type;
		n.size = e.size;
	}
	return root;
}

function sorted(node) {
	return [...node.children.values()].sort((a, b) =>
		(a.type === 'dir') === (b.type === 'dir') ? a.name.localeCompare(b.name) : a.type === 'dir' ? -1 : 1);
}

function Tree({node, open, setOpen, selected, onSelect, depth}) {
	return (
		<ul aria-label={depth ? undefined : 'Files'}>
			{sorted(node).map((c) => (
				<li key={c.path}>
					<button class={'tree-item' + (selected === c.path ? ' sel' : '')} style={{paddingLeft: 0.4 + depth * 0.9 + 'em'}}
						aria-expanded={c.type === 'dir' ? !!open[c.path] : undefined}
						aria-current={selected === c.path ? 'true' : undefined}
						onClick={() => (c.type === 'dir' ? setOpen({...open, [c.path]: !open[c.path]}) : onSelect(c.path))}>
						{c.type === 'dir' ? (open[c.path] ? '▾ ' : '▸ ') : '  '}{c.name}{c.type === 'dir' ? '/' : ''}
					</button>
					{c.type === 'dir' && open[c.path] && (
						<Tree node={c} open={open} setOpen={setOpen} selected={selected} onSelect={onSelect} depth={depth + 1} />
					)}
				</li>
			))}
		</ul>
	);
}

function Editor({sandbox, path, onSaved, onGone}) {
	const base = `/v1/sandboxes/${enc(sandbox.id)}/files`;
	const host = useRef(null);
	const ed = useRef(null);
	const etag = useRef(null);
	const [state, setState] = useState({loading: true});
	const [dirty, setDirty] = useState(false);
	const [msg, setMsg] = useState('');
	const [conflict, setConflict] = useState(false);
	const [error, setError] = useState(null);
	const [restored, setRestored] = useState(false);
	// The draft of this file: the editor's text and the version it was
	// opened at (so a save over a file changed since is a conflict).
	const key = `file:${sandbox.id}:${path}`;
	const dirtyRef = useRef(false);
	dirtyRef.current = dirty;
	const loaded = useRef({text: '', etag: null});
	const quiet = useRef(false); // the editor's text set by the page, not typed
	const setText = (t) => {
		quiet.current = true;
		try { ed.current.set(t); } finally { quiet.current = false; }
	};
	const changed = () => {
		if (quiet.current) return;
		setDirty(true);
		saveDraft(key, () => (ed.current ? {text: ed.current.get(), etag: loaded.current.etag} : null));
	};
	useGuard(() => (dirtyRef.current ? `${path} has changes that are not saved.` : null), () => clearDraft(key));

	const load = async (useDraft) => {
		setError(null);
		setConflict(false);
		setMsg('');
		setRestored(false);
		try {
			const r = await request('GET', base + '/content?path=' + enc(path), {raw: true});
			etag.current = r.headers.get('etag');
			const buf = await r.arrayBuffer();
			if (isBinary(buf)) {
				if (ed.current) { ed.current.destroy(); ed.current = null; }
				setState({binary: true, size: buf.byteLength});
				return;
			}
			const text = new TextDecoder().decode(buf);
			loaded.current = {text, etag: etag.current};
			const draft = useDraft ? loadDraft(key) : null;
			if (!useDraft) clearDraft(key);
			const shown = draft && draft.text !== text ? draft.text : text;
			setState({loading: false});
			if (ed.current) {
				setText(shown);
			} else {
				const {createEditor} = await import('./editor.js');
				if (!host.current) return;
				ed.current = await createEditor(host.current, shown, path, {onChange: changed, onSave: () => save(false)});
			}
			if (shown !== text) {
				// Saved against the version it was made from: if the file
				// changed since, the save is a conflict to settle.
				if (draft.etag) etag.current = draft.etag;
				setRestored(true);
				setDirty(true);
			} else {
				if (draft) clearDraft(key);
				setDirty(false);
			}
		} catch (e) {
			setState({loading: false});
			if (e.status === 404) onGone();
			else if (e.status === 413) setState({tooBig: true});
			else setError(e);
		}
	};
	useEffect(() => {
		load(true);
		return () => {
			flushDraft(key);
			if (ed.current) { ed.current.destroy(); ed.current = null; }
		};
	}, [path]);
	const discard = () => {
		clearDraft(key);
		etag.current = loaded.current.etag;
		if (ed.current) setText(loaded.current.text);
		setRestored(false);
		setDirty(false);
	};

	const save = async (force) => {
		if (!ed.current) return;
		setError(null);
		setMsg('');
		const headers = {'content-type': 'application/octet-stream'};
		if (!force && etag.current) headers['if-match'] = etag.current;
		try {
			const body = ed.current.get();
			const r = await request('PUT', base + '?path=' + enc(path), {body, headers});
			etag.current = r && r.etag ? (r.etag.startsWith('"') ? r.etag : `"${r.etag}"`) : null;
			loaded.current = {text: body, etag: etag.current};
			if (ed.current && ed.current.get() === body) {
				clearDraft(key);
				setDirty(false);
			}
			setRestored(false);
			setConflict(false);
			setMsg('Saved.');
			onSaved();
		} catch (e) {
			if (e.status === 412) setConflict(true);
			else setError(e);
		}
	};

	return (
		<div class="editor-pane">
			<div class="row spread">
				<h2 class="path">{path}{dirty ? ' (not saved)' : ''}</h2>
				{!state.binary && !state.tooBig && <button class="primary" onClick={() => save(false)} disabled={!dirty}>Save</button>}
			</div>
			{conflict && (
				<div class="conflict" role="alert">
					<strong>This file changed since you opened it</strong> (the agent or someone else wrote it).
					Saving now would overwrite their change.
					<div class="row">
						<button onClick={() => load(false)}>Load their version (drop my edits)</button>
						<button class="danger" onClick={() => save(true)}>Overwrite with mine</button>
					</div>
				</div>
			)}
			{restored && (
				<Note kind="info">Restored your unsaved draft of this file.{' '}
					<button class="link" onClick={discard}>Discard the draft</button></Note>
			)}
			{msg && <p class="note" role="status">{msg}</p>}
			<ErrorText error={error} />
			{state.binary && (
				<p>This is a binary file ({bytes(state.size)}), so it cannot be edited here.{' '}
					<a href={base + '/content?path=' + enc(path)} download={path.split('/').pop()}>Download it</a>.</p>
			)}
			{state.tooBig && <p>This file is over 8 MB, too large to open here.</p>}
			{state.loading && <p aria-busy="true">Opening…</p>}
			<div class="cm-host" ref={host} hidden={state.binary || state.tooBig} />
		</div>
	);
}

export function Files({sandbox}) {
	const base = `/v1/sandboxes/${enc(sandbox.id)}/files`;
	const list = useLoad(() => get(base + '?path=&recursive=true'), [sandbox.id]);
	const [open, setOpen] = useState({});
	const [sel, setSel] = useState(() => new URLSearchParams(location.search).get('path'));
	const [form, setForm] = useState(null); // 'new' | 'rename'
	const [name, setName] = useState('');
	const [error, setError] = useState(null);
	const [note, setNote] = useState('');
	const upload = useRef(null);
	const entries = list.data ? list.data.entries : [];
	const selEntry = entries.find((e) => e.path === sel);
	const dir = selEntry ? (selEntry.type === 'dir' ? sel : sel.split('/').slice(0, -1).join('/')) : '';

	const select = (p) => {
		if (p !== sel && !confirmLeave()) return;
		setSel(p);
		const u = new URL(location.href);
		u.searchParams.set('path', p);
		history.replaceState(history.state, '', u.pathname + u.search);
	};
	// Opening a deep link to a file opens its folders.
	useEffect(() => {
		if (sel && sel.includes('/')) {
			const o = {};
			const parts = sel.split('/');
			for (let i = 1; i < parts.length; i++) o[parts.slice(0, i).join('/')] = true;
			setOpen((x) => ({...o, ...x}));
		}
	}, []);
	const act = async (fn, done) => {
		setError(null);
		setNote('');
		try { await fn(); if (done) setNote(done); list.reload(); } catch (e) { setError(e); }
	};
	const submitForm = (e) => {
		e.preventDefault();
		const n = name.trim().replace(/^\/+/, '');
		if (!n) return;
		if (form === 'new') {
			act(() => request('PUT', base + '?path=' + enc(n), {body: '', headers: {'content-type': 'application/octet-stream', 'if-none-match': '*'}})
				.catch((err) => { if (err.status === 412) err.message = `${n} exists already.`; throw err; })
				.then(() => { select(n); setForm(null); }), `Made ${n}.`);
		} else {
			act(() => post(base + '/move', {from: sel, to: n}).then((r) => { select(r && r.path ? r.path : n); setForm(null); }), `Renamed to ${n}.`);
		}
	};
	const remove = () => {
		const isDir = selEntry && selEntry.type === 'dir';
		if (!confirm(`Delete ${sel}${isDir ? ' and everything in it' : ''}?`)) return;
		act(() => del(base + '?path=' + enc(sel) + (isDir ? '&recursive=true' : '')).then(() => setSel(null)), `Deleted ${sel}.`);
	};
	const onUpload = (e) => {
		const files = [...e.currentTarget.files];
		e.currentTarget.value = '';
		act(async () => {
			for (const f of files) {
				const p = (dir ? dir + '/' : '') + f.name;
				if (entries.some((x) => x.path === p) && !confirm(`${p} exists. Replace it?`)) continue;
				await request('PUT', base + '?path=' + enc(p), {body: f, headers: {'content-type': 'application/octet-stream'}});
			}
		}, files.length === 1 ? `Uploaded ${files[0].name}.` : `Uploaded ${files.length} files.`);
	};

	return (
		<div class="files">
			<aside class="file-tree" aria-label="File list">
				<div class="row wrap">
					<button onClick={() => { setForm(form === 'new' ? null : 'new'); setName(dir ? dir + '/' : ''); }}>New file</button>
					<button disabled={!sel} onClick={() => { setForm(form === 'rename' ? null : 'rename'); setName(sel); }}>Rename file</button>
					<button disabled={!sel} class="danger" onClick={remove}>Delete file</button>
					<button onClick={() => upload.current.click()}>Upload</button>
					<input type="file" multiple hidden ref={upload} onChange={onUpload} aria-label="Files to upload" />
					<button class="link" onClick={list.reload}>Refresh</button>
					{sandbox.app_id && (
						<a class="download" href={`/v1/apps/${enc(sandbox.app_id)}/export`} download>Download as zip</a>
					)}
				</div>
				{form && (
					<form onSubmit={submitForm} class="row">
						<label class="grow">{form === 'new' ? 'New file path' : 'New path for ' + sel}
							<input value={name} onInput={(e) => setName(e.currentTarget.value)} required autofocus />
						</label>
						<button type="submit" class="primary">{form === 'new' ? 'Create' : 'Rename'}</button>
					</form>
				)}
				{note && <Note>{note}</Note>}
				<ErrorText error={error || list.error} />
				{list.data && list.data.truncated && <p class="note">Only the first 10,000 files are shown.</p>}
				{list.data && <Tree node={tree(entries)} open={open} setOpen={setOpen} selected={sel} onSelect={select} depth={0} />}
			</aside>
			<section class="file-view" aria-label="File">
				{sel && selEntry && selEntry.type === 'file' ? (
					<Editor key={sel} sandbox={sandbox} path={sel} onSaved={list.reload} onGone={() => { setSel(null); list.reload(); }} />
				) : (
					<p class="muted">Pick a file to see or edit it.</p>
				)}
			</section>
		</div>
	);
}
