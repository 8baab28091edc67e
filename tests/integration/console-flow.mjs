// The console's flow in a real browser (Debian's Chromium driven by
// playwright-core), against the daemon 60-console.sh started.  Prints one
// "ok CASE" or "not ok CASE" line per case, with "# " lines saying why;
// after a failed case the later ones, which build on it, are not run.
//
// Environment (set by 60-console.sh): CONSOLE_URL, API_URL, TOKEN (the
// first-start token: tenant default, the console's), SETUP_CODE,
// GIT_REMOTE, GIT_HOST, GIT_TOKEN, SHOTS (where screenshots go, optional),
// CHROMIUM (default /usr/bin/chromium).
import {execFileSync} from 'node:child_process';
import http from 'node:http';
import {mkdirSync, mkdtempSync, rmSync, writeFileSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {anyFailed, assert, step} from './steps.mjs';

// playwright-core is a devDependency of the console (console/package-lock.json).
const {chromium} = await import(new URL('../../console/node_modules/playwright-core/index.mjs', import.meta.url));

const env = process.env;
const CONSOLE = env.CONSOLE_URL;
const origin = new URL(CONSOLE);
const PASSWORD = 'correct horse battery ' + Math.random().toString(36).slice(2);
const AGENT_KEY = 'sk-ant-console-test-' + Math.random().toString(36).slice(2) + 'WXYZ';
const T = 120000;

async function until(fn, ms = 15000) {
	const end = Date.now() + ms;
	for (;;) {
		if (await fn()) return true;
		if (Date.now() > end) return false;
		await new Promise((r) => setTimeout(r, 200));
	}
}

async function api(method, path, body, headers = {}) {
	const r = await fetch(env.API_URL + path, {
		method,
		// A body is a file's content here (fetch would call a string text/plain).
		headers: {authorization: 'Bearer ' + env.TOKEN, ...(body === undefined ? {} : {'content-type': 'application/octet-stream'}), ...headers},
		body,
	});
	const text = await r.text();
	return {status: r.status, text, headers: r.headers, json: () => JSON.parse(text)};
}

// A request through the edge to the console's /v1 with the browser's
// cookie (to 127.0.0.1 with the console's Host: the resolver of node's
// host may not know *.localhost names, which Chromium resolves itself).
function viaConsole(method, path, {cookie, csrf, originHdr, body} = {}) {
	const h = {'content-type': 'application/json', host: origin.host};
	if (cookie) h.cookie = cookie;
	if (csrf) h['x-csrf-token'] = csrf;
	if (originHdr) h.origin = originHdr;
	if (body) h['content-length'] = Buffer.byteLength(body);
	return new Promise((resolve, reject) => {
		const q = http.request({host: '127.0.0.1', port: origin.port || 80, path, method, headers: h}, (r) => {
			let text = '';
			r.setEncoding('utf8');
			r.on('data', (c) => { text += c; });
			r.on('end', () => {
				let code = null;
				try { code = JSON.parse(text).error.code; } catch (_) { /* not an error */ }
				resolve({status: r.statusCode, code, text, headers: r.headers});
			});
		});
		q.on('error', reject);
		q.end(body);
	});
}

// A fresh profile of its own, as a user's browser: third-party cookies
// and storage allowed (a Playwright context otherwise blocks them, and
// with Playwright's storage partitioning off, the preview app, on another
// site than console.localhost, could not use its localStorage).
const profile = mkdtempSync(join(tmpdir(), 'sbx-console-chromium-'));
mkdirSync(join(profile, 'Default'));
writeFileSync(join(profile, 'Default', 'Preferences'),
	JSON.stringify({profile: {cookie_controls_mode: 0, block_third_party_cookies: false}}));
const ctx = await chromium.launchPersistentContext(profile, {
	executablePath: env.CHROMIUM || '/usr/bin/chromium',
	headless: true,
	viewport: {width: 1400, height: 860},
	serviceWorkers: 'block',
	args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
		'--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
const page = ctx.pages()[0] || await ctx.newPage();
page.setDefaultTimeout(30000);

// Every request the page or its frames make, every body the console got.
const requests = [];
const bodies = [];
const problems = [];
ctx.on('request', (r) => requests.push(r.url()));
ctx.on('response', async (r) => {
	const u = new URL(r.url());
	if (u.host === origin.host && u.pathname.startsWith('/v1/') && !u.pathname.endsWith('/events')) {
		try { bodies.push(u.pathname + ' ' + (await r.text())); } catch (_) { /* a stream or gone */ }
	}
});
page.on('console', (m) => {
	if (m.type() === 'error' && /Content Security Policy|Refused to/.test(m.text())) problems.push(m.text());
});
page.on('pageerror', (e) => problems.push('page error: ' + e.message));
page.on('dialog', (d) => d.accept());

const shot = async (name) => {
	if (env.SHOTS) await page.screenshot({path: join(env.SHOTS, name + '.png')});
};
const sessionCookie = async () => (await ctx.cookies(CONSOLE)).find((c) => c.name === 'sbx_session');
const cookieHeader = async () => {
	const c = await sessionCookie();
	return c ? `${c.name}=${c.value}` : '';
};
const csrfToken = async () => JSON.parse((await viaConsole('GET', '/v1/auth/status', {cookie: await cookieHeader()})).text).csrf_token;

let appId, sbId, appPath;

// With the API's authentication off (a second daemon): off is for
// clients on the host calling the API's own address; the console, behind
// the edge, still asks for sign-in and shows no "open" banner.  Only
// this case runs then.
if (env.FLOW === 'open') {
	await step('auth disabled: the console through the edge still asks for sign-in', async () => {
		await page.goto(CONSOLE + '/apps');
		await page.waitForURL(/\/signin\?next=/);
		await page.getByRole('heading', {name: 'Set up sandboxd'}).waitFor();
		assert(!(await page.getByText('The API is open.').count()), 'the open banner through the edge');
		const a = await viaConsole('GET', '/v1/apps');
		assert(a.status === 401, `GET /v1/apps through the console with auth off answered ${a.status}`);
		const direct = await fetch(env.API_URL + '/v1/apps');
		assert(direct.status === 200, `GET /v1/apps on loopback with auth off answered ${direct.status}`);
		await shot('auth-disabled-signin');
	});
	await ctx.close();
	rmSync(profile, {recursive: true, force: true});
	process.exit(anyFailed() ? 1 : 0);
}

await step('first visit: the setup page; a wrong setup code is refused', async () => {
	await page.goto(CONSOLE + '/apps/01ARZ3NDEKTSV4RRFFQ69G5FAV/files');
	await page.waitForURL(/\/signin\?next=/);
	await page.getByRole('heading', {name: 'Set up sandboxd'}).waitFor();
	await shot('signin-setup');
	await page.getByLabel('Setup code').fill('WRNG-CODE-XXXX');
	await page.getByLabel(/New password/).fill(PASSWORD);
	await page.getByLabel('Repeat the password').fill(PASSWORD);
	await page.getByRole('button', {name: /Set password/}).click();
	await page.getByRole('alert').waitFor();
	assert(page.url().includes('/signin'), 'left the sign-in page with a wrong code: ' + page.url());
	assert(!(await sessionCookie()), 'a session cookie was set for a wrong setup code');
	const r = await viaConsole('POST', '/v1/auth/setup', {body: JSON.stringify({password: PASSWORD})});
	assert(r.status === 403 || r.status === 400, `setup without a code answered ${r.status}: ${r.text}`);
	const a = await viaConsole('GET', '/v1/apps');
	assert(a.status === 401, `GET /v1/apps before sign-in answered ${a.status}`);
});

await step('setup with the code sets the password and signs in; deep link kept', async () => {
	await page.getByLabel('Setup code').fill(env.SETUP_CODE);
	await page.getByRole('button', {name: /Set password/}).click();
	// The deep link asked for before sign-in is where it goes (an unknown app: its error).
	await page.waitForURL(/\/apps\/01ARZ3NDEKTSV4RRFFQ69G5FAV\/files$/);
	await page.goto(CONSOLE + '/apps');
	await page.getByRole('heading', {name: 'Apps'}).waitFor();
});

await step('session cookie: HttpOnly, SameSite=Strict, not readable by scripts', async () => {
	const c = await sessionCookie();
	assert(c, 'no sbx_session cookie');
	assert(c.httpOnly, 'not HttpOnly');
	assert(c.sameSite === 'Strict', 'SameSite is ' + c.sameSite);
	assert(c.secure === false, 'Secure on plain http (the browser would drop it)');
	assert(c.path === '/', 'path ' + c.path);
	const seen = await page.evaluate(() => document.cookie);
	assert(!seen.includes('sbx_session'), 'document.cookie shows the session');
});

await step('CSRF: a cookie write needs the token and the console origin', async () => {
	const cookie = await cookieHeader();
	const csrf = await csrfToken();
	assert(csrf, 'no csrf_token in /v1/auth/status');
	const body = JSON.stringify({name: 'csrf-probe'});
	let r = await viaConsole('POST', '/v1/apps', {cookie, body});
	assert(r.status === 403 && r.code === 'csrf_failed', `no token: ${r.status} ${r.text}`);
	r = await viaConsole('POST', '/v1/apps', {cookie, csrf: (csrf[0] === 'x' ? 'y' : 'x') + csrf.slice(1), body});
	assert(r.status === 403 && r.code === 'csrf_failed', `wrong token: ${r.status} ${r.text}`);
	r = await viaConsole('POST', '/v1/apps', {cookie, csrf, originHdr: 'http://evil.example', body});
	assert(r.status === 403 && r.code === 'csrf_failed', `foreign Origin: ${r.status} ${r.text}`);
	// From the page itself, a write without the header is refused too.
	const st = await page.evaluate(async () => (await fetch('/v1/apps', {method: 'POST', headers: {'content-type': 'application/json'}, body: '{"name":"x"}'})).status);
	assert(st === 403, 'in-page write without the token: ' + st);
	const apps = (await api('GET', '/v1/apps')).json().apps;
	assert(!apps.some((a) => a.name === 'csrf-probe' || a.name === 'x'), 'a refused write made an app');
});

await step('log out, a wrong password is refused, log in again', async () => {
	await page.getByRole('button', {name: 'Log out'}).click();
	await page.getByRole('heading', {name: 'Sign in to sandboxd'}).waitFor();
	assert(!(await sessionCookie()), 'the cookie stayed after logout');
	await page.getByLabel('Password').fill('not the password');
	await page.getByRole('button', {name: 'Sign in'}).click();
	await page.getByRole('alert').waitFor();
	await page.getByLabel('Password').fill(PASSWORD);
	await page.getByRole('button', {name: 'Sign in'}).click();
	await page.getByRole('heading', {name: 'Apps'}).waitFor();
});

await step('create an app from a template; the preview shows it', async () => {
	await page.getByRole('button', {name: /New app from a template/}).click();
	await page.getByLabel('Name').fill('console test');
	await page.locator('#na-preset').selectOption('react-vite');
	await page.getByRole('button', {name: 'Create app'}).click();
	await page.waitForURL(/\/apps\/[0-9A-Z]{26}$/, {timeout: T});
	appPath = new URL(page.url()).pathname;
	appId = appPath.split('/')[2];
	sbId = (await api('GET', '/v1/apps/' + appId)).json().current_sandbox_id;
	assert(sbId, 'the app has no sandbox');
	const frame = page.frameLocator('iframe[title^="Preview"]');
	await frame.getByRole('heading', {name: 'Your React app is running'}).waitFor({timeout: T});
	await page.getByText('Running', {exact: true}).first().waitFor();
});

await step('a prompt runs: phases, tool calls and done in the chat; reload mid-task re-attaches', async () => {
	await page.getByLabel('What should the agent do?').fill('add a todo list [[fake:sleep=6]]');
	await page.getByRole('button', {name: 'Send'}).click();
	const log = page.locator('.current');
	await log.locator('.phase').getByText('The agent is working').waitFor({timeout: T});
	await log.getByText('working… 1').waitFor({timeout: T});
	await page.getByRole('button', {name: 'Cancel the task'}).waitFor();
	await shot('app-chat-running');
	// Reload mid-task: the page finds active_task_id and follows the task again.
	await page.reload();
	await page.locator('.current').getByText('working… 1').waitFor({timeout: T});
	await page.locator('.current').getByText(/working… [45]/).waitFor({timeout: T});
	await page.locator('.current .tool').filter({hasText: 'src/App.jsx'}).first().waitFor({timeout: T});
	await page.locator('.current .outcome').getByText('Done').waitFor({timeout: T});
	const n1 = await page.locator('.current').getByText('working… 1', {exact: true}).count();
	assert(n1 === 1, `"working… 1" shown ${n1} times after the re-attach`);
	for (const phase of ['Starting the task', 'Saving a checkpoint of your files', 'Checking that the app builds']) {
		assert(await page.locator('.current .phase').getByText(phase).count() >= 1, 'phase missing: ' + phase);
	}
	assert(await page.locator('.current .build').count() === 1, 'no build result');
	const tools = await page.locator('.current .tool').allInnerTexts();
	assert(tools.some((t) => /read/.test(t)) && tools.some((t) => /write|edit/.test(t)), 'tool calls: ' + JSON.stringify(tools));
	assert(!(await page.getByRole('button', {name: 'Cancel the task'}).count()), 'Cancel still offered after done');
	await page.getByRole('button', {name: 'Revert this task'}).waitFor();
});

await step('the preview shows the change', async () => {
	const frame = page.frameLocator('iframe[title^="Preview"]');
	try {
		await frame.getByRole('heading', {name: 'Todo list'}).waitFor({timeout: 15000});
	} catch (_) {
		await page.getByRole('button', {name: 'Reload the preview'}).click();
		await frame.getByRole('heading', {name: 'Todo list'}).waitFor({timeout: T});
	}
	await shot('app-chat-preview');
});

await step('files: the editor loads lazily; edit and save', async () => {
	const before = requests.filter((u) => /\/assets\/editor-/.test(u)).length;
	assert(before === 0, 'the editor was loaded before a file was opened');
	await page.getByRole('link', {name: 'Files'}).click();
	await page.waitForURL(/\/files/);
	await page.getByRole('button', {name: /src\/$/}).click();
	await page.getByRole('button', {name: /App\.jsx$/}).click();
	const editor = page.locator('.cm-content');
	await editor.waitFor();
	assert(requests.some((u) => /\/assets\/editor-/.test(u)), 'no editor chunk was fetched');
	await page.getByText('Todo list').first().waitFor();
	await editor.click();
	await page.keyboard.press('Control+End');
	await page.keyboard.type('\n// edited in the console\n');
	await page.getByRole('button', {name: 'Save'}).click();
	await page.getByRole('status').getByText('Saved.').waitFor();
	const r = await api('GET', `/v1/sandboxes/${sbId}/files/content?path=src/App.jsx`);
	assert(r.text.includes('// edited in the console'), 'the saved file lacks the edit');
	await shot('files-editor');
});

await step('files: a change made underneath is a conflict, not an overwrite', async () => {
	const theirs = (await api('GET', `/v1/sandboxes/${sbId}/files/content?path=src/App.jsx`)).text + '// written by someone else\n';
	const w = await api('PUT', `/v1/sandboxes/${sbId}/files?path=src/App.jsx`, theirs);
	assert(w.status === 200, 'API write: ' + w.status + ' ' + w.text);
	await page.locator('.cm-content').click();
	await page.keyboard.press('Control+End');
	await page.keyboard.type('// mine\n');
	await page.getByRole('button', {name: 'Save'}).click();
	await page.getByRole('alert').getByText('This file changed since you opened it').waitFor();
	const now = (await api('GET', `/v1/sandboxes/${sbId}/files/content?path=src/App.jsx`)).text;
	assert(now === theirs, 'the console overwrote the change made underneath');
	await shot('files-conflict');
	await page.getByRole('button', {name: /Load their version/}).click();
	await page.locator('.cm-content').getByText('// written by someone else').waitFor();
});

await step('files: new file, rename, delete', async () => {
	await page.getByRole('button', {name: 'New file'}).click();
	await page.getByLabel('New file path').fill('notes/hello.txt');
	await page.getByRole('button', {name: 'Create'}).click();
	await page.getByText('Made notes/hello.txt.').waitFor();
	await page.getByRole('button', {name: 'Rename file'}).click();
	await page.getByLabel(/New path for/).fill('notes/renamed.txt');
	await page.getByRole('button', {name: 'Rename', exact: true}).click();
	await page.getByText('Renamed to notes/renamed.txt.').waitFor();
	let r = await api('GET', `/v1/sandboxes/${sbId}/files/content?path=notes/renamed.txt`);
	assert(r.status === 200, 'renamed file: ' + r.status);
	await page.getByRole('button', {name: 'Delete file'}).click();
	await page.getByText('Deleted notes/renamed.txt.').waitFor();
	r = await api('GET', `/v1/sandboxes/${sbId}/files/content?path=notes/renamed.txt`);
	assert(r.status === 404, 'deleted file: ' + r.status);
});

await step('files: upload a text and a binary file; the binary one is not opened as text', async () => {
	const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d, 0x49, 0x48, 0x44, 0x52, 0, 1, 2, 3]);
	await page.locator('input[type=file]').setInputFiles([
		{name: 'logo.png', mimeType: 'image/png', buffer: png},
		{name: 'notes.md', mimeType: 'text/markdown', buffer: Buffer.from('# Notes\n')},
	]);
	await page.getByText('Uploaded 2 files.').waitFor();
	const r = await api('GET', `/v1/sandboxes/${sbId}/files/content?path=logo.png`);
	assert(r.status === 200, 'uploaded file: ' + r.status);
	await page.getByRole('button', {name: /logo\.png$/}).click();
	await page.getByText(/This is a binary file/).waitFor();
	assert(!(await page.locator('.cm-content').isVisible().catch(() => false)), 'the binary file opened in the editor');
	await page.getByRole('button', {name: /notes\.md$/}).click();
	await page.locator('.cm-content').getByText('# Notes').waitFor();
	await page.getByRole('button', {name: 'Delete file'}).click();
	await page.getByText('Deleted notes.md.').waitFor();
	await page.getByRole('button', {name: /logo\.png$/}).click();
	await page.getByRole('button', {name: 'Delete file'}).click();
	await page.getByText('Deleted logo.png.').waitFor();
});

await step('settings: a git credential with a user name', async () => {
	await page.getByRole('link', {name: 'Settings'}).click();
	await page.getByRole('link', {name: 'Git credentials'}).click();
	await page.waitForURL(/\/settings\/git$/);
	await page.getByLabel('Name', {exact: true}).fill('local');
	await page.getByLabel(/^Host/).fill(env.GIT_HOST);
	await page.getByLabel(/User name/).fill('agent');
	await page.getByLabel('Token').fill(env.GIT_TOKEN);
	await page.getByRole('button', {name: 'Save credential'}).click();
	await page.getByRole('cell', {name: env.GIT_HOST}).waitFor();
	assert(!(await page.content()).includes(env.GIT_TOKEN), 'the git token is on the page');
});

await step('git: set the remote, commit the selected files, push to a named branch', async () => {
	await page.goto(CONSOLE + appPath + '/git');
	await page.getByRole('heading', {name: 'Changes'}).waitFor();
	await page.getByLabel('Repository URL (https)').fill(env.GIT_REMOTE);
	await page.getByLabel('Credential').selectOption({label: `local (${env.GIT_HOST}, agent)`});
	await page.getByRole('button', {name: 'Save remote'}).click();
	await page.getByText('The remote was saved.').waitFor();
	await page.getByRole('checkbox').first().waitFor();
	await page.getByLabel('Diff').getByText('Todo list').first().waitFor();
	await shot('git');
	await page.getByLabel('Commit message').fill('todo list from the console');
	await page.getByRole('button', {name: /^Commit \d+ file/}).click();
	await page.getByText(/^Committed \d+ file/).waitFor({timeout: T});
	await page.getByLabel(/Branch to create on/).fill('console/todo');
	await page.getByRole('button', {name: 'Push'}).click();
	await page.getByText(/Pushed to the branch console\/todo/).waitFor({timeout: T});
	const out = execFileSync('git', ['ls-remote', env.GIT_REMOTE_AUTH, 'refs/heads/console/todo']).toString();
	assert(/refs\/heads\/console\/todo/.test(out), 'the branch is not on the git server: ' + out);
	// A push to main is refused, in words.
	await page.getByLabel(/Branch to create on/).fill('main');
	await page.getByRole('button', {name: 'Push'}).click();
	await page.getByRole('alert').getByText(/only pushes to new branches/).waitFor();
});

await step('settings: add an agent key, see it connected, never see the key again', async () => {
	await page.goto(CONSOLE + '/settings/agents');
	const card = page.locator('section.card').filter({has: page.getByRole('heading', {name: 'Claude Code'})});
	await card.getByLabel(/API key/).fill(AGENT_KEY);
	await card.getByRole('button', {name: 'Save key'}).click();
	await page.locator('section.card').filter({has: page.getByRole('heading', {name: 'Claude Code'})})
		.getByText('Connected', {exact: true}).waitFor();
	await page.reload();
	const c2 = page.locator('section.card').filter({has: page.getByRole('heading', {name: 'Claude Code'})});
	await c2.getByText('Connected', {exact: true}).waitFor();
	await c2.getByText('…' + AGENT_KEY.slice(-4)).waitFor();
	await shot('settings-agents');
	assert(!(await page.content()).includes(AGENT_KEY), 'the key is on the page');
	assert(!bodies.some((b) => b.includes(AGENT_KEY)), 'an API answer held the key');
	// A default model per agent, from its card.
	const oc = page.locator('section.card').filter({has: page.getByRole('heading', {name: 'OpenCode'})});
	await oc.getByLabel(/Default model/).fill('opencode/console-model');
	await oc.getByRole('button', {name: 'Save model'}).click();
	await page.getByText('The default model was saved.').waitFor();
	const st = (await api('GET', '/v1/settings')).json();
	assert(st.agents.default_models.opencode === 'opencode/console-model', 'default models: ' + JSON.stringify(st.agents.default_models));
	// The chat's agent choice comes from /v1/agents: Claude Code is connected there.
	await page.goto(CONSOLE + appPath);
	await page.locator('.composer select option').nth(1).waitFor({state: 'attached'});
	const opts = await page.locator('.composer select').first().locator('option').allInnerTexts();
	assert(opts.some((o) => o === 'Claude Code'), 'agent choices: ' + JSON.stringify(opts));
});

await step('settings: the Claude subscription sign-in, then disconnect', async () => {
	await page.goto(CONSOLE + '/settings/agents');
	const card = () => page.locator('section.card').filter({has: page.getByRole('heading', {name: 'Claude Code'})});
	await card().getByRole('button', {name: 'Sign in with a Claude subscription'}).click();
	const link = card().getByRole('link', {name: /Open Claude.s sign-in page/});
	const href = await link.getAttribute('href');
	assert(href.startsWith('https://claude.example/cai/oauth/authorize?'), 'authorize URL ' + href);
	const state = new URL(href).searchParams.get('state');
	await card().getByLabel('Code from the sign-in page').fill(`${env.OAUTH_CODE}#${state}`);
	await card().getByRole('button', {name: 'Finish sign-in'}).click();
	await page.getByText('Signed in with the subscription.').waitFor();
	await card().locator('p', {hasText: 'with a Claude subscription'}).waitFor();
	const a = (await api('GET', '/v1/agents')).json().agents.find((x) => x.id === 'claude-code');
	assert(a.status === 'connected' && a.method === 'oauth', 'agent ' + JSON.stringify(a));
	await card().getByRole('button', {name: 'Disconnect'}).click();
	await card().getByText('Not connected', {exact: true}).waitFor();
	const b = (await api('GET', '/v1/agents')).json().agents.find((x) => x.id === 'claude-code');
	assert(b.status === 'not_connected', 'after disconnect: ' + b.status);
});

await step('stop and start the sandbox', async () => {
	await page.goto(CONSOLE + appPath);
	await page.getByRole('button', {name: 'App actions'}).click();
	await page.locator('#app-menu').getByRole('button', {name: 'Stop the app'}).click();
	await page.getByText(/The app is stopped/).waitFor({timeout: T});
	await page.locator('.app-head .badge').getByText('Stopped').waitFor();
	await shot('app-stopped');
	await page.getByRole('button', {name: 'App actions'}).click();
	await page.locator('#app-menu').getByRole('button', {name: 'Start the app'}).click();
	await page.locator('.app-head .badge').getByText('Running').waitFor({timeout: T});
	await page.frameLocator('iframe[title^="Preview"]').getByRole('heading', {name: 'Todo list'}).waitFor({timeout: T});
	// The web process's log.
	await page.getByRole('button', {name: 'Show log of web'}).click();
	await page.getByLabel('Log of web').getByText(/vite|VITE|Local/).first().waitFor({timeout: T});
});

await step('cancel a running task; revert an earlier one, which then says so', async () => {
	await page.goto(CONSOLE + appPath);
	await page.getByLabel('What should the agent do?').fill('a long one [[fake:sleep=60]]');
	await page.getByRole('button', {name: 'Send'}).click();
	await page.locator('.current').getByText('working… 1').waitFor({timeout: T});
	await page.getByRole('button', {name: 'Cancel the task'}).click();
	await page.locator('.current .outcome').getByText('Cancelled', {exact: true}).waitFor({timeout: T});
	const tasks = (await api('GET', `/v1/sandboxes/${sbId}/tasks`)).json().tasks;
	assert(tasks[0].status === 'cancelled', 'newest task ' + tasks[0].status);
	// It was cancelled while it slept: it changed nothing, so nothing to revert.
	assert(!(await page.locator('.current').getByRole('button', {name: 'Revert this task'}).count()),
		'Revert is offered for a cancelled task that changed no file');
	// An earlier task that changed files is reverted from the list.
	const past = page.locator('.history .past').filter({has: page.getByRole('button', {name: 'Revert this task'})}).first();
	await past.waitFor();
	const reverted = page.waitForResponse((r) => r.request().method() === 'POST' && /\/revert$/.test(r.url()), {timeout: T});
	reverted.catch(() => {});
	await past.getByRole('button', {name: 'Revert this task'}).click();
	const rv = await reverted;
	assert(rv.status() === 200, 'revert: ' + rv.status() + ' ' + (await rv.text()));
	await page.getByText('Reverted: the files are as before this task.').first().waitFor({timeout: T});
	const after = (await api('GET', `/v1/sandboxes/${sbId}/tasks`)).json().tasks;
	assert(after.some((t) => t.reverted_at && t.can_revert === false), 'no task says it was reverted');
});

await step('prompt-first create: describe an app, land in its chat with the task done', async () => {
	await page.goto(CONSOLE + '/apps');
	await page.getByLabel('What your app should do').fill('A greeting page [[fake:write=hello.txt]] [[fake:content=hi there]]');
	await page.locator('#pc-preset').selectOption('static');
	await page.getByRole('button', {name: 'Build it'}).click();
	await page.waitForURL((u) => /^\/apps\/[0-9A-Z]{26}$/.test(u.pathname) && u.pathname !== appPath, {timeout: T});
	await page.locator('.current .outcome').getByText('Done').waitFor({timeout: T});
	await page.locator('.current .tool').filter({hasText: 'hello.txt'}).first().waitFor();
	const id = new URL(page.url()).pathname.split('/')[2];
	const app = (await api('GET', '/v1/apps/' + id)).json();
	assert(app.name === 'Greeting Page', 'the name made from the prompt: ' + app.name);
	const f = await api('GET', `/v1/sandboxes/${app.current_sandbox_id}/files/content?path=hello.txt`);
	assert(f.text === 'hi there', 'hello.txt: ' + f.text);
	// The delete can be undone: the app lands in the Trash, restorable.
	await page.getByRole('button', {name: 'App actions'}).click();
	await page.locator('#app-menu').getByRole('button', {name: /Delete the app/}).click();
	await page.waitForURL(/\/trash$/);
	const row = page.getByRole('row').filter({hasText: 'Greeting Page'});
	await row.waitFor();
	await row.getByRole('button', {name: 'Restore'}).click();
	await page.waitForURL((u) => u.pathname === '/apps/' + id, {timeout: T});
	const back = await api('GET', `/v1/sandboxes/${app.current_sandbox_id}/files/content?path=hello.txt`);
	assert(back.text === 'hi there', 'hello.txt after the restore: ' + back.text);
	await page.getByRole('button', {name: 'App actions'}).click();
	await page.locator('#app-menu').getByRole('button', {name: /Delete the app/}).click();
	await page.waitForURL(/\/trash$/);
	await page.getByRole('row').filter({hasText: 'Greeting Page'}).getByRole('button', {name: 'Delete for good'}).click();
	await page.getByText('The trash is empty.').waitFor();
	assert((await api('GET', '/v1/apps/' + id)).status === 404, 'the app is gone');
});

await step('apps list and instance screens', async () => {
	await page.goto(CONSOLE + '/apps');
	await page.getByRole('link', {name: 'console test'}).waitFor();
	await shot('apps');
	await page.goto(CONSOLE + '/settings/instance');
	await page.getByText('Version', {exact: true}).waitFor();
	await shot('settings-instance');
	// Back returns to the apps list, inside the console.
	await page.goBack();
	await page.waitForURL(/\/apps$/);
});

await step('config: a secret is write-only and reaches the app', async () => {
	const secret = 'sv-' + Math.random().toString(36).slice(2) + 'Q';
	await page.goto(CONSOLE + appPath + '/config');
	await page.getByLabel(/^Name \(letters/).fill('API_SECRET');
	await page.getByLabel('Value', {exact: true}).fill(secret);
	await page.getByLabel(/Secret \(write-only/).check();
	await page.getByRole('button', {name: 'Save', exact: true}).click();
	await page.getByText('Saved API_SECRET.').waitFor();
	const row = page.getByRole('row').filter({hasText: 'API_SECRET'});
	await row.getByText('secret, set').waitFor();
	await row.getByText('Yes, as an environment variable').waitFor();
	await page.reload();
	await page.getByRole('row').filter({hasText: 'API_SECRET'}).waitFor();
	assert(!(await page.content()).includes(secret), 'the secret is on the page');
	assert(!bodies.some((b) => b.includes(secret)), 'an API answer held the secret');
	await shot('config');
});

await step('spend: the budget of an app is set on its Spend tab', async () => {
	await page.goto(CONSOLE + appPath + '/spend');
	await page.getByRole('heading', {name: 'Model spend'}).waitFor();
	await page.getByLabel('Budget in US dollars').fill('5');
	await page.getByRole('button', {name: 'Save budget'}).click();
	await page.getByText('Budget saved.').waitFor();
	await page.getByText(/Model spend \$[0-9.]+ of \$5\.00/).waitFor();
	const b = (await api('GET', '/v1/apps/' + appId)).json().spend.budget;
	assert(b && b.usd === 5 && b.tokens === null, 'the budget: ' + JSON.stringify(b));
	await page.getByRole('button', {name: 'Remove'}).click();
	await page.getByText('Budget removed.').waitFor();
	assert((await api('GET', '/v1/apps/' + appId)).json().spend.budget === null, 'the budget is still set');
});

await step('tokens: a new token is shown once and works; deleting it ends it', async () => {
	await page.goto(CONSOLE + '/settings/tokens');
	await page.getByLabel(/New token name/).fill('ci-bot');
	await page.getByRole('button', {name: 'Make token'}).click();
	const box = page.getByLabel('Token ci-bot');
	await box.waitFor();
	const tok = await box.inputValue();
	assert(tok.length >= 16, 'token ' + tok);
	const r = await fetch(env.API_URL + '/v1/apps', {headers: {authorization: 'Bearer ' + tok}});
	assert(r.status === 200, 'the new token: ' + r.status);
	await page.getByRole('button', {name: 'I copied it'}).click();
	await page.reload();
	await page.getByRole('cell', {name: 'ci-bot', exact: true}).waitFor();
	assert(!(await page.content()).includes(tok), 'the token is shown again');
	await shot('settings-tokens');
	await page.getByRole('button', {name: 'Delete ci-bot'}).click();
	await page.getByRole('cell', {name: 'ci-bot', exact: true}).waitFor({state: 'detached'});
	const r2 = await fetch(env.API_URL + '/v1/apps', {headers: {authorization: 'Bearer ' + tok}});
	assert(r2.status === 401, 'the deleted token: ' + r2.status);
});

await step('lifecycle: the idle threshold and an app kept always on', async () => {
	await page.goto(CONSOLE + '/settings/lifecycle');
	const box = page.getByLabel(/Sleep after this many minutes/);
	await box.fill('45');
	await page.getByRole('button', {name: 'Save', exact: true}).click();
	await page.getByText('Saved.').waitFor();
	const st = (await api('GET', '/v1/settings')).json();
	assert(st.lifecycle && st.lifecycle.idle_threshold_seconds === 2700, 'settings: ' + JSON.stringify(st.lifecycle));
	await page.getByLabel('When console test is unused').selectOption('always_on');
	assert(await until(async () => (await api('GET', '/v1/sandboxes/' + sbId)).json().idle_policy === 'always_on'),
		'the sandbox did not become always_on');
});

await step('account: change the password, log in with the new one, log out everywhere', async () => {
	const NEW = PASSWORD + '-2';
	await page.goto(CONSOLE + '/settings/account');
	await page.getByLabel('Current password').fill(PASSWORD);
	await page.getByLabel(/^New password/).fill(NEW);
	await page.getByLabel('Repeat the new password').fill(NEW);
	await page.getByRole('button', {name: 'Change password'}).click();
	await page.getByText(/The password was changed/).waitFor();
	const other = await viaConsole('POST', '/v1/auth/login', {body: JSON.stringify({password: PASSWORD}), originHdr: origin.origin});
	assert(other.status === 401, 'the old password still signs in: ' + other.status);
	const fresh = await viaConsole('POST', '/v1/auth/login', {body: JSON.stringify({password: NEW}), originHdr: origin.origin});
	assert(fresh.status === 200, 'the new password: ' + fresh.status + ' ' + fresh.text);
	const freshCookie = /sbx_session=[^;]+/.exec([].concat(fresh.headers['set-cookie']).join('\n'))[0];
	await page.getByRole('button', {name: 'Log out everywhere'}).click();
	await page.getByRole('heading', {name: 'Sign in to sandboxd'}).waitFor();
	const r = await viaConsole('GET', '/v1/apps', {cookie: freshCookie});
	assert(r.status === 401, 'another session survived log out everywhere: ' + r.status);
	await page.getByLabel('Password').fill(NEW);
	await page.getByRole('button', {name: 'Sign in'}).click();
	// Back where the user was.
	await page.waitForURL(/\/settings\/account$/);
	await page.getByRole('heading', {name: 'Change the password'}).waitFor();
	await page.goto(CONSOLE + '/apps');
	await page.getByRole('heading', {name: 'Apps'}).waitFor();
});

await step('log out: the API refuses the old cookie', async () => {
	const cookie = await cookieHeader();
	await page.getByRole('button', {name: 'Log out'}).click();
	await page.getByRole('heading', {name: 'Sign in to sandboxd'}).waitFor();
	const r = await viaConsole('GET', '/v1/apps', {cookie});
	assert(r.status === 401, 'the old cookie still works: ' + r.status);
});

await step('no request left the console’s origin and the previews', async () => {
	const re = new RegExp(`^s-[0-9a-z]{26}-[0-9]+\\.preview\\.${origin.hostname.replace(/^console\./, '').replace(/\./g, '\\.')}(:${origin.port})?$`, 'i');
	const bad = requests.filter((u) => {
		const x = new URL(u);
		if (x.protocol === 'data:' || x.protocol === 'blob:') return false;
		return x.host !== origin.host && !re.test(x.host);
	});
	assert(bad.length === 0, 'requests elsewhere: ' + [...new Set(bad)].slice(0, 10).join(' '));
	assert(problems.length === 0, 'browser problems: ' + problems.slice(0, 5).join(' | '));
});

await ctx.close();
rmSync(profile, {recursive: true, force: true});
process.exit(anyFailed() ? 1 : 0);
