// Never losing work, and what users expect, in a real browser (Debian's
// Chromium driven by playwright-core), against the daemon 86-console-work.sh
// started.  Prints "ok CASE" / "not ok CASE" lines (steps.mjs).
//
// Environment: CONSOLE_URL, API_URL, TOKEN (the first-start token, the
// console's tenant), SETUP_CODE, SHOTS (screenshots, optional), CHROMIUM,
// DL_DIR (where the zip download goes).
import http from 'node:http';
import {mkdirSync, writeFileSync} from 'node:fs';
import {join} from 'node:path';
import {anyFailed, assert, step} from './steps.mjs';
import {axeCheck} from './axe.mjs';
import {openBrowser, until} from './browser.mjs';


const env = process.env;
const CONSOLE = env.CONSOLE_URL;
const origin = new URL(CONSOLE);
const PASSWORD = 'work kept safe ' + Math.random().toString(36).slice(2);
const T = 120000;
// A 1×1 PNG.
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');

async function api(method, path, body) {
	const r = await fetch(env.API_URL + path, {
		method,
		headers: {authorization: 'Bearer ' + env.TOKEN, ...(body === undefined ? {} : {'content-type': 'application/json'})},
		body: body === undefined ? undefined : JSON.stringify(body),
	});
	const text = await r.text();
	return {status: r.status, text, json: () => JSON.parse(text)};
}

// The console's /v1 through the edge, as another browser would (to
// 127.0.0.1 with the console's Host).
function viaConsole(method, path, {cookie, csrf, body} = {}) {
	const h = {'content-type': 'application/json', host: origin.host};
	if (cookie) h.cookie = cookie;
	if (csrf) h['x-csrf-token'] = csrf;
	if (body) h['content-length'] = Buffer.byteLength(body);
	return new Promise((resolve, reject) => {
		const q = http.request({host: '127.0.0.1', port: origin.port || 80, path, method, headers: h}, (r) => {
			let text = '';
			r.setEncoding('utf8');
			r.on('data', (c) => { text += c; });
			r.on('end', () => resolve({status: r.statusCode, text, headers: r.headers}));
		});
		q.on('error', reject);
		q.end(body);
	});
}

// Dialogs (the guard's confirm, beforeunload): answered as the case says.
let answer = 'accept';
const dialogs = [];
const {ctx, page, problems, shot, close} = await openBrowser('work', {
	launch: {acceptDownloads: true},
	onDialog: (d) => {
		dialogs.push({type: d.type(), message: d.message()});
		if (answer === 'accept') d.accept(); else d.dismiss();
	},
});
const posted = [];
page.on('request', (r) => {
	if (r.method() === 'POST' && /\/v1\/sandboxes\/[^/]+\/tasks$/.test(new URL(r.url()).pathname)) posted.push(r.postData());
});
// The editor's whole text (CodeMirror draws only the lines in view):
// through its view, found from its content element; else what is drawn.
const editorText = () => page.locator('.cm-content').evaluate((el) => {
	const v = el.cmTile && el.cmTile.root && el.cmTile.root.view;
	return v && v.state ? v.state.doc.toString() : el.innerText;
});
const draftKeys = () => page.evaluate(() => Object.keys(localStorage).filter((k) => k.startsWith('sbx-draft:')));

let appId, sbId;

await step('setup; the Apps prompt has focus on load (empty state), axe clean', async () => {
	await page.goto(CONSOLE + '/apps');
	await page.waitForURL(/\/signin\?next=/);
	await page.getByLabel('Setup code').fill(env.SETUP_CODE);
	await page.getByLabel(/New password/).fill(PASSWORD);
	await page.getByLabel('Repeat the password').fill(PASSWORD);
	await page.getByRole('button', {name: /Set password/}).click();
	await page.getByRole('heading', {name: 'Apps'}).waitFor();
	await page.getByText('No apps yet').waitFor();
	assert(await until(() => page.evaluate(() => document.activeElement && document.activeElement.id === 'pc-text'), 5000),
		'focus is on ' + await page.evaluate(() => document.activeElement && (document.activeElement.id || document.activeElement.tagName)));
	const ph = await page.locator('#pc-text').getAttribute('placeholder');
	assert(/Enter/.test(ph) && /Shift\+Enter/.test(ph), 'the placeholder does not say the keys: ' + ph);
	await axeCheck(page, 'Apps, empty');
});

await step('Apps prompt: Shift+Enter is a new line, the draft survives a reload, Enter builds the app', async () => {
	const box = page.locator('#pc-text');
	await page.keyboard.type('A shopping list where I can add items.');
	await page.keyboard.press('Shift+Enter');
	await page.keyboard.type('Keep it simple.');
	const v = await box.inputValue();
	assert(v === 'A shopping list where I can add items.\nKeep it simple.', 'Shift+Enter: ' + JSON.stringify(v));
	assert(page.url().endsWith('/apps'), 'Shift+Enter submitted: ' + page.url());
	assert(await until(async () => (await draftKeys()).includes('sbx-draft:apps-prompt')), 'no draft of the Apps prompt was kept');
	await page.reload();
	await page.getByText('Restored your unsaved draft').waitFor();
	assert(await box.inputValue() === v, 'the restored Apps prompt: ' + JSON.stringify(await box.inputValue()));
	await box.focus();
	await page.keyboard.press('End');
	await page.keyboard.press('Enter');
	await page.waitForURL(/\/apps\/[0-9A-Z]{26}$/, {timeout: T});
	appId = new URL(page.url()).pathname.split('/')[2];
	const app = (await api('GET', '/v1/apps/' + appId)).json();
	sbId = app.current_sandbox_id;
	assert(sbId, 'the app has no sandbox');
	assert(app.name === 'Shopping List', 'the generated name: ' + JSON.stringify(app.name));
	assert(!(await draftKeys()).includes('sbx-draft:apps-prompt'), 'the Apps draft stayed after the app was made');
	const tasks = (await api('GET', `/v1/sandboxes/${sbId}/tasks`)).json();
	const list = tasks.tasks || tasks;
	assert(list.length === 1 && list[0].prompt === v, 'the task: ' + JSON.stringify(list).slice(0, 300));
	await page.locator('.current .outcome').getByText('Done').waitFor({timeout: T});
});

await step('rename through the title: Escape cancels, Enter saves, axe clean', async () => {
	await page.getByRole('button', {name: 'Rename the app'}).click();
	const input = page.getByLabel('New name for the app');
	await input.waitFor();
	assert(await page.evaluate(() => document.activeElement && document.activeElement.id === 'app-name'), 'the name field has no focus');
	await axeCheck(page, 'the rename field');
	await shot('86-rename');
	await input.fill('Not this one');
	await page.keyboard.press('Escape');
	await page.getByRole('heading', {level: 1, name: 'Shopping List'}).waitFor();
	assert((await api('GET', '/v1/apps/' + appId)).json().name === 'Shopping List', 'Escape saved the name');
	await page.getByRole('button', {name: 'Rename the app'}).click();
	await input.fill('');
	await page.keyboard.press('Enter');
	await page.getByRole('alert').getByText('The name cannot be empty.').waitFor();
	await input.fill('Grocery Helper');
	await page.keyboard.press('Enter');
	await page.getByRole('heading', {level: 1, name: 'Grocery Helper'}).waitFor();
	const name = (await api('GET', '/v1/apps/' + appId)).json().name;
	assert(name === 'Grocery Helper', 'the API has the name ' + JSON.stringify(name));
});

await step('the composer: focused when Build opens, its draft survives a reload, Enter/Shift+Enter', async () => {
	await page.reload();
	const box = page.locator('#prompt');
	await box.waitFor();
	assert(await until(() => page.evaluate(() => document.activeElement && document.activeElement.id === 'prompt'), 5000),
		'the composer has no focus when Build opens');
	assert(/Shift\+Enter/.test(await box.getAttribute('placeholder')), 'the composer placeholder does not say the keys');
	await page.keyboard.type('make the title blue');
	await page.keyboard.press('Shift+Enter');
	await page.keyboard.type('and bold');
	assert(await box.inputValue() === 'make the title blue\nand bold', 'Shift+Enter in the composer: ' + await box.inputValue());
	assert(await until(async () => (await draftKeys()).includes('sbx-draft:prompt:' + sbId)), 'no composer draft kept');
	await page.reload();
	await page.locator('.composer').getByText('Restored your unsaved draft').waitFor();
	assert(await box.inputValue() === 'make the title blue\nand bold', 'the restored composer: ' + await box.inputValue());
	await page.locator('.composer').getByRole('button', {name: 'Discard'}).click();
	assert(await box.inputValue() === '', 'Discard left ' + await box.inputValue());
	assert(await until(async () => !(await draftKeys()).includes('sbx-draft:prompt:' + sbId)), 'Discard kept the draft');
});

await step('the model select lists the agent\'s models by provider, with Other model…', async () => {
	const sel = page.locator('#composer-model');
	const opts = await sel.locator('option').allInnerTexts();
	const groups = await sel.locator('optgroup').count();
	assert(groups >= 1 && opts.length >= 3, `the model select: ${groups} group(s), options ${JSON.stringify(opts)}`);
	assert(opts.some((o) => /\(default\)/.test(o)), 'no model is marked default: ' + JSON.stringify(opts));
	const agents = (await api('GET', '/v1/agents')).json().agents;
	const oc = agents.find((a) => a.id === 'opencode');
	const ids = (oc.models || []).map((m) => m.id);
	for (const id of ids) {
		assert(await sel.locator(`option[value="${id}"]`).count() === 1, 'model not listed: ' + id);
	}
	for (const m of (oc.models || []).filter((x) => !x.usable)) {
		assert(await sel.locator(`option[value="${m.id}"]`).isDisabled(), 'an unusable model is selectable: ' + m.id);
	}
	await sel.selectOption({label: 'Other model…'});
	await page.getByLabel('Model id').fill('opencode/some-model');
	await sel.selectOption({index: 0});
	assert(!(await page.getByLabel('Model id').count()), 'the free-text field stayed');
	console.log('# models listed: ' + JSON.stringify(opts));
});

await step('attach images: checked in the browser, thumbnails, sent with the prompt, axe clean', async () => {
	const files = page.getByLabel('Images to attach');
	await files.setInputFiles([{name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('hello')}]);
	await page.locator('.composer').getByRole('alert').getByText(/not a PNG, JPEG, GIF or WebP/).waitFor();
	await files.setInputFiles([{name: 'dot.png', mimeType: 'image/png', buffer: PNG}, {name: 'two.png', mimeType: 'image/png', buffer: PNG}]);
	await page.locator('.composer .thumbs img[alt="dot.png"]').waitFor();
	await page.getByRole('button', {name: 'Remove two.png'}).click();
	assert(await page.locator('.composer .thumbs li').count() === 1, 'remove did not remove');
	// Pasted too: a clipboard event carrying an image file.
	await page.locator('#prompt').evaluate((el, b64) => {
		const bin = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
		const dt = new DataTransfer();
		dt.items.add(new File([bin], 'pasted.png', {type: 'image/png'}));
		el.dispatchEvent(new ClipboardEvent('paste', {clipboardData: dt, bubbles: true, cancelable: true}));
	}, PNG.toString('base64'));
	await page.locator('.composer .thumbs img[alt="pasted.png"]').waitFor();
	await page.getByRole('button', {name: 'Remove pasted.png'}).click();
	await axeCheck(page, 'the composer with an image');
	await shot('86-composer-image');
	await page.locator('#prompt').fill('use this image as the logo');
	const [resp] = await Promise.all([
		page.waitForResponse((r) => r.request().method() === 'POST' && /\/tasks$/.test(new URL(r.url()).pathname), {timeout: T}),
		page.locator('#prompt').press('Enter'),
	]);
	assert(resp.status() === 202, 'the task POST answered ' + resp.status() + ': ' + await resp.text());
	const tid = (await resp.json()).id;
	assert(await until(async () => (await api('GET', `/v1/sandboxes/${sbId}/tasks/${tid}`)).json().status !== 'running', T),
		'the task with the image did not end');
	const body = JSON.parse(posted[posted.length - 1]);
	assert(body.images && body.images.length === 1 && body.images[0].name === 'dot.png' &&
		Buffer.from(body.images[0].data, 'base64').equals(PNG), 'the POST body images: ' + JSON.stringify(body.images));
	const full = (await api('GET', `/v1/sandboxes/${sbId}/tasks/${tid}`)).json();
	assert(full.prompt === 'use this image as the logo', 'the task: ' + JSON.stringify(full).slice(0, 300));
	assert(Array.isArray(full.images) && JSON.stringify(full.images).includes('dot.png'),
		'the task JSON does not list the image: ' + JSON.stringify(full.images));
	assert(full.images.length === 1 && full.images[0].bytes === PNG.length, 'the stored image: ' + JSON.stringify(full.images));
	assert(await page.locator('.composer .thumbs').count() === 0, 'the thumbnails stayed after sending');
});

const APP = 'src/App.jsx';
await step('files: an edit is guarded when another file is picked (stay keeps it, leave drops it)', async () => {
	await page.getByRole('link', {name: 'Files', exact: true}).click();
	await page.waitForURL(/\/files/);
	await page.getByRole('button', {name: /src\/$/}).click();
	await page.getByRole('button', {name: /App\.jsx$/}).click();
	await page.locator('.cm-content').waitFor();
	await page.locator('.cm-content').getByText('Todo list').first().waitFor();
	await page.locator('.cm-content').click();
	await page.keyboard.press('Control+End');
	await page.keyboard.type('// first edit');
	await page.getByRole('heading', {name: APP + ' (not saved)'}).waitFor();
	answer = 'dismiss';
	let n = dialogs.length;
	await page.getByRole('button', {name: /index\.html$/}).click();
	assert(await until(() => dialogs.length > n, 5000), 'no question when another file was picked');
	assert(dialogs[n].type === 'confirm' && dialogs[n].message.includes(APP), 'the question: ' + JSON.stringify(dialogs[n]));
	assert((await editorText()).includes('// first edit'), 'staying lost the edit');
	assert(page.url().includes('path=src%2FApp.jsx') || page.url().includes('path=src/App.jsx'), 'the address moved: ' + page.url());
	await page.getByRole('heading', {name: APP + ' (not saved)'}).waitFor();
	answer = 'accept';
	n = dialogs.length;
	await page.getByRole('button', {name: /index\.html$/}).click();
	await page.getByRole('heading', {name: 'index.html'}).waitFor();
	assert(dialogs.length === n + 1, 'leaving asked ' + (dialogs.length - n) + ' times');
	await page.getByRole('button', {name: /App\.jsx$/}).click();
	await page.locator('.cm-content').getByText('Todo list').first().waitFor();
	assert(!(await editorText()).includes('// first edit'), 'the dropped edit came back');
	assert(!(await draftKeys()).some((k) => k.endsWith(':' + APP)), 'the dropped edit\'s draft stayed');
});

await step('files: switching tab with a dirty editor asks; a reload asks and restores the draft', async () => {
	await page.locator('.cm-content').click();
	await page.keyboard.press('Control+End');
	await page.keyboard.type('// kept by the draft');
	await page.getByRole('heading', {name: APP + ' (not saved)'}).waitFor();
	answer = 'dismiss';
	let n = dialogs.length;
	await page.getByRole('link', {name: 'Build', exact: true}).click();
	assert(await until(() => dialogs.length > n, 5000), 'no question when the tab was switched');
	assert(/\/files/.test(page.url()), 'the tab switched anyway: ' + page.url());
	n = dialogs.length;
	await page.getByRole('link', {name: 'Settings', exact: true}).click();
	assert(await until(() => dialogs.length > n, 5000), 'no question when leaving for Settings');
	assert(/\/files/.test(page.url()), 'left for Settings anyway: ' + page.url());
	assert((await editorText()).includes('// kept by the draft'), 'the edit is gone after staying');
	assert(await until(async () => (await draftKeys()).includes(`sbx-draft:file:${sbId}:${APP}`)), 'no draft of the file');
	answer = 'accept';
	n = dialogs.length;
	await page.reload();
	assert(dialogs.slice(n).some((d) => d.type === 'beforeunload'), 'the reload did not ask: ' + JSON.stringify(dialogs.slice(n)));
	await page.getByText('Restored your unsaved draft of this file.').waitFor({timeout: T});
	assert((await editorText()).includes('// kept by the draft'), 'the reload lost the edit');
	await page.getByRole('heading', {name: APP + ' (not saved)'}).waitFor();
});

await step('the session ends elsewhere: a notice, the page and the draft stay; sign in comes back; Ctrl+S saves', async () => {
	// Another browser signs in and logs out everywhere.
	const lr = await viaConsole('POST', '/v1/auth/login', {body: JSON.stringify({password: PASSWORD})});
	assert(lr.status === 200, 'second login: ' + lr.status + ' ' + lr.text);
	const cookie = String(lr.headers['set-cookie']).split(';')[0];
	const csrf = JSON.parse(lr.text).csrf_token;
	const lo = await viaConsole('POST', '/v1/auth/logout?all=true', {cookie, csrf, body: '{}'});
	assert(lo.status === 200 || lo.status === 204, 'logout everywhere: ' + lo.status + ' ' + lo.text);
	const where = page.url();
	const t0 = Date.now();
	await page.getByRole('alert').filter({hasText: 'Your session ended.'}).waitFor({timeout: 20000});
	console.log(`# the console said the session ended ${Date.now() - t0} ms after the logout`);
	assert(page.url() === where, 'the page moved: ' + page.url());
	assert((await editorText()).includes('// kept by the draft'), 'the edit is gone at the session end');
	await page.getByRole('alert').filter({hasText: 'unsaved work is kept in this browser'}).waitFor();
	await axeCheck(page, 'the session-ended notice');
	await shot('86-session-ended');
	await page.getByRole('button', {name: 'Sign in'}).click();
	await page.waitForURL(/\/signin\?next=/);
	const next = new URL(page.url()).searchParams.get('next');
	assert(next === new URL(where).pathname + new URL(where).search, 'next is ' + next);
	await page.getByLabel('Password').fill(PASSWORD);
	await page.getByRole('button', {name: 'Sign in'}).click();
	await page.waitForURL((u) => u.pathname + u.search === next, {timeout: T});
	await page.getByText('Restored your unsaved draft of this file.').waitFor({timeout: T});
	assert((await editorText()).includes('// kept by the draft'), 'the draft was not restored after sign-in');
	await shot('86-draft-restored');
	await page.locator('.cm-content').click();
	await page.keyboard.press('Control+s');
	await page.getByRole('status').getByText('Saved.').waitFor();
	const r = await api('GET', `/v1/sandboxes/${sbId}/files/content?path=${APP}`);
	assert(r.text.includes('// kept by the draft'), 'the saved file lacks the draft');
	assert(!(await draftKeys()).includes(`sbx-draft:file:${sbId}:${APP}`), 'the draft stayed after the save');
	await page.getByRole('heading', {name: APP, exact: true}).waitFor();
	await axeCheck(page, 'Files with the editor after the save');
});

await step('Download as zip in Files gives the app\'s files', async () => {
	const link = page.getByRole('link', {name: 'Download as zip'});
	assert(await link.getAttribute('download') !== null, 'the link has no download attribute');
	// The link's own request, as the browser makes it (same origin, the
	// session cookie), read whole in the page.
	const href = await link.getAttribute('href');
	const got = await page.evaluate(async (h) => {
		const r = await fetch(h, {credentials: 'same-origin'});
		const b = new Uint8Array(await r.arrayBuffer());
		let bin = '';
		for (let i = 0; i < b.length; i++) bin += String.fromCharCode(b[i]);
		return {status: r.status, type: r.headers.get('content-type'), disp: r.headers.get('content-disposition'), b64: btoa(bin)};
	}, href);
	assert(got.status === 200, `GET ${href} answered ${got.status}: ${Buffer.from(got.b64, 'base64').toString().slice(0, 300)}`);
	assert(/zip/.test(got.type) && /attachment/.test(got.disp || ''), `headers: ${got.type} / ${got.disp}`);
	const zip = Buffer.from(got.b64, 'base64');
	mkdirSync(env.DL_DIR, {recursive: true});
	writeFileSync(join(env.DL_DIR, 'app.zip'), zip);
	assert(zip.subarray(0, 4).equals(Buffer.from([0x50, 0x4b, 0x03, 0x04])), 'not a zip: ' + zip.subarray(0, 16).toString('hex'));
	for (const f of [APP, 'package.json', 'index.html']) assert(zip.includes(Buffer.from(f)), 'the zip lacks ' + f);
	const dl = {suggestedFilename: () => got.disp};
	console.log(`# zip ${zip.length} bytes, name ${dl.suggestedFilename()}`);
});

await step('no page errors', async () => {
	assert(!problems.length, problems.join('\n'));
});

await close();
process.exit(anyFailed() ? 1 : 0);
