// The console's Terminal tab in a real browser (Debian's Chromium driven by
// playwright-core), against the daemon 92-console-terminal.sh started and a
// real sandbox.  Prints "ok CASE" / "not ok CASE" lines (steps.mjs).
//
// Environment: CONSOLE_URL, API_URL, TOKEN (the first-start token, the
// console's tenant), SETUP_CODE, SHOTS (screenshots, optional), CHROMIUM.
import {anyFailed, assert, step} from './steps.mjs';
import {axeCheck} from './axe.mjs';
import {openBrowser, until} from './browser.mjs';

const env = process.env;
const CONSOLE = env.CONSOLE_URL;
const PASSWORD = 'a shell in the box ' + Math.random().toString(36).slice(2);
const T = 60000;

async function api(method, path, body) {
	const r = await fetch(env.API_URL + path, {
		method,
		headers: {authorization: 'Bearer ' + env.TOKEN, ...(body === undefined ? {} : {'content-type': 'application/json'})},
		body: body === undefined ? undefined : JSON.stringify(body),
	});
	const text = await r.text();
	if (!r.ok) throw new Error(`${method} ${path}: ${r.status} ${text.slice(0, 300)}`);
	return text ? JSON.parse(text) : null;
}

const {page, problems, shot, close} = await openBrowser('terminal');
// Before any page script: every WebSocket the page opens (to drop one as
// a lost network would), every clipboard write (OSC 52 must make none)
// and every CSP violation (xterm must draw under the console's policy),
// the last two kept here over reloads.
const clip = [], csp = [];
await page.exposeFunction('__clipSeen', (t) => { clip.push(t); });
await page.exposeFunction('__cspSeen', (t) => { csp.push(t); });
await page.addInitScript(() => {
	window.__sockets = [];
	const WS = window.WebSocket;
	window.WebSocket = class extends WS {
		constructor(...a) { super(...a); window.__sockets.push(this); }
	};
	// Every text the state line shows, in order (a waking state is brief).
	window.__states = [];
	new MutationObserver(() => {
		const el = document.getElementById('term-state');
		const t = el && el.textContent;
		if (t && window.__states[window.__states.length - 1] !== t) window.__states.push(t);
	}).observe(document, {subtree: true, childList: true, characterData: true});
	if (navigator.clipboard) {
		navigator.clipboard.writeText = async (t) => { window.__clipSeen(t); };
		navigator.clipboard.write = async (t) => { window.__clipSeen(String(t)); };
	}
	document.addEventListener('securitypolicyviolation', (e) => window.__cspSeen(e.violatedDirective + ' ' + e.blockedURI + ' ' + (e.sample || '')));
});

// The screen's text, a line per row (the DOM renderer's rows).
const screen = async () => (await page.locator('.term-screen .xterm-rows').innerText()).replace(/\u00a0/g, ' ');
const state = () => page.locator('#term-state');
const connected = () => state().getByText('Connected').waitFor({timeout: T});
const focusTerm = () => page.locator('.term-screen .xterm-helper-textarea').focus();
async function run(cmd) {
	await focusTerm();
	await page.keyboard.type(cmd);
	await page.keyboard.press('Enter');
}
// The last line of the screen that matches re, after it appears.
async function seen(re, what, ms = T, every = 200) {
	let m = null;
	const ok = await until(async () => {
		const lines = (await screen()).split('\n').map((l) => l.trimEnd());
		for (const l of lines) { const x = l.match(re); if (x) m = x; }
		return !!m;
	}, ms, every);
	assert(ok, `not on the screen: ${what}\n${(await screen()).trimEnd().split('\n').slice(-12).join('\n')}`);
	return m;
}
const noSideways = async (what) => {
	const w = await page.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth]);
	assert(w[0] <= w[1], `${what}: the page is ${w[0]} px wide in a ${w[1]} px window`);
};

let appId, sbId, termPath;

await step('setup: signed in, an app with a running sandbox', async () => {
	await page.goto(CONSOLE + '/apps');
	await page.waitForURL(/\/signin\?next=/);
	await page.getByLabel('Setup code').fill(env.SETUP_CODE);
	await page.getByLabel(/New password/).fill(PASSWORD);
	await page.getByLabel('Repeat the password').fill(PASSWORD);
	await page.getByRole('button', {name: /Set password/}).click();
	await page.getByRole('heading', {name: 'Apps'}).waitFor();
	const app = await api('POST', '/v1/apps', {name: 'Terminal app'});
	appId = app.id;
	const sb = await api('POST', '/v1/apps/' + appId + '/sandbox', {});
	sbId = sb.id;
	termPath = '/apps/' + appId + '/terminal';
});

await step('the Terminal tab opens a connected shell, the focus in it, axe clean', async () => {
	await page.goto(CONSOLE + '/apps/' + appId);
	await page.getByRole('navigation', {name: 'App sections'}).getByRole('link', {name: 'Terminal'}).click();
	await page.waitForURL(/\/terminal$/);
	await connected();
	await page.locator('.term-screen .xterm-rows').waitFor();
	assert(await until(() => page.evaluate(() => document.activeElement && document.activeElement.classList.contains('xterm-helper-textarea')), 5000),
		'the focus is not in the terminal');
	await axeCheck(page, 'the Terminal tab, connected');
	await shot('terminal-connected');
});

await step('typing `echo hi-$RANDOM` shows its output', async () => {
	await run('echo hi-$RANDOM');
	await seen(/^hi-\d+$/, 'a line hi-<number>');
	await run('echo uid-$(id -u)');
	const uid = (await seen(/^uid-(\d+)$/, 'uid-<n>'))[1];
	assert(uid !== '0', 'the shell runs as root');
});

await step('OSC 52 writes nothing to the clipboard', async () => {
	await run("printf '\\033]52;c;%s\\007' $(printf pwned | base64); echo osc-done");
	await seen(/^osc-done$/, 'osc-done');
	assert(clip.length === 0, 'the clipboard was written: ' + JSON.stringify(clip));
});

let size;
await step('a smaller window fits the terminal and `stty size` follows', async () => {
	await run('clear; echo size-$(stty size | tr " " x)');
	size = (await seen(/^size-(\d+x\d+)$/, 'size-RxC'))[1];
	await page.setViewportSize({width: 900, height: 560});
	let now = size;
	const ok = await until(async () => {
		await run('clear; echo size-$(stty size | tr " " x)');
		now = (await seen(/^size-(\d+x\d+)$/, 'size-RxC'))[1];
		return now !== size;
	}, 20000, 1000);
	assert(ok, `stty size stayed ${size} after the window shrank`);
	const [r0, c0] = size.split('x').map(Number), [r1, c1] = now.split('x').map(Number);
	assert(r1 < r0 && c1 < c0, `smaller window, size ${size} -> ${now}`);
	await page.setViewportSize({width: 1440, height: 900});
});

let pid;
await step('a dropped connection: "Session ended", Reconnect replays the screen in the same shell', async () => {
	await run('clear; echo pid-$$; echo mark-before-drop');
	pid = (await seen(/^pid-(\d+)$/, 'pid-<n>'))[1];
	await seen(/^mark-before-drop$/, 'mark-before-drop');
	await page.evaluate(() => window.__sockets[window.__sockets.length - 1].close());
	await state().getByText(/Session ended: .*connection/).waitFor({timeout: T});
	const again = page.getByRole('button', {name: 'Reconnect'});
	await again.waitFor();
	await axeCheck(page, 'the Terminal tab, session ended');
	await shot('terminal-dropped');
	await again.click();
	await connected();
	// The screen was cleared for the reattach: what is there came back.
	await seen(/^mark-before-drop$/, 'mark-before-drop, replayed');
	await run('echo again-$$');
	const p2 = (await seen(/^again-(\d+)$/, 'again-<n>'))[1];
	assert(p2 === pid, `a new shell after the reattach: ${pid} -> ${p2}`);
});

await step('a reload reattaches to the same shell and replays its screen', async () => {
	await run('clear; echo mark-before-reload');
	await seen(/^mark-before-reload$/, 'mark-before-reload');
	await page.reload();
	await connected();
	await seen(/^mark-before-reload$/, 'mark-before-reload, replayed');
	await run('echo reload-$$');
	const p2 = (await seen(/^reload-(\d+)$/, 'reload-<n>'))[1];
	assert(p2 === pid, `a new shell after the reload: ${pid} -> ${p2}`);
});

await step('Escape then Tab leaves the terminal; Tab alone stays', async () => {
	await focusTerm();
	await page.keyboard.press('Tab');
	assert(await page.evaluate(() => document.activeElement.classList.contains('xterm-helper-textarea')), 'Tab alone left the terminal');
	await page.keyboard.press('Escape');
	await page.keyboard.press('Shift+Tab');
	const at = await page.evaluate(() => document.activeElement.className + ' ' + document.activeElement.tagName);
	assert(!/xterm-helper-textarea/.test(at), 'Escape, Shift+Tab stayed in the terminal: ' + at);
	// The shell got the Escape: a space ends it (M-space, set-mark),
	// Ctrl+U empties the line.
	await focusTerm();
	await page.keyboard.press(' ');
	await page.keyboard.press('Control+U');
	await run('echo back-in');
	await seen(/^back-in$/, 'back-in');
});

await step('screen reader mode puts the output in the accessibility tree, axe clean, and is remembered', async () => {
	await page.getByLabel('Screen reader mode').check();
	await run('echo sr-$((6*7))');
	assert(await until(async () => /sr-42/.test(await page.locator('.xterm-accessibility').innerText().catch(() => ''))),
		'the output is not in the accessibility tree');
	await axeCheck(page, 'the Terminal tab in screen reader mode');
	await page.reload();
	await connected();
	assert(await page.getByLabel('Screen reader mode').isChecked(), 'screen reader mode was not remembered');
	await page.getByLabel('Screen reader mode').uncheck();
});

await step('`exit` ends the session with its reason; Reconnect opens a new shell', async () => {
	await run('exit');
	await state().getByText(/Session ended: the shell exited/).waitFor({timeout: T});
	await axeCheck(page, 'the Terminal tab, the shell exited');
	await shot('terminal-exited');
	await page.getByRole('button', {name: 'Reconnect'}).click();
	await connected();
	await run('echo new-$$');
	const p2 = (await seen(/^new-(\d+)$/, 'new-<n>'))[1];
	assert(p2 !== pid, 'the same shell after exit and Reconnect: ' + p2);
});

await step('a refused ticket shows the envelope\'s message and a next step; Try again connects', async () => {
	await page.route('**/v1/sandboxes/*/terminal', (r) => r.fulfill({status: 409, contentType: 'application/json',
		body: JSON.stringify({error: {code: 'terminal_limit', message: 'this sandbox has 4 terminals open, the most it may have'}})}));
	await page.goto(CONSOLE + termPath);
	await page.getByRole('alert').getByText('This sandbox has 4 terminals open').waitFor({timeout: T});
	await page.getByText(/Close a terminal open in another tab/).waitFor();
	await axeCheck(page, 'the Terminal tab, a refused ticket');
	await shot('terminal-refused');
	await page.unroute('**/v1/sandboxes/*/terminal');
	await page.getByRole('button', {name: 'Try again'}).click();
	await connected();
});

await step('a WebSocket the daemon refuses (a forged ticket) says so with a next step; Try again connects', async () => {
	await page.route('**/v1/sandboxes/*/terminal', (r) => r.fulfill({status: 201, contentType: 'application/json',
		body: JSON.stringify({ticket: 'forged', session_id: 'forged', url: '/v1/terminal?ticket=forged', expires_at: ''})}));
	await page.goto(CONSOLE + termPath);
	await page.getByRole('alert').getByText(/did not open the terminal.s connection/).waitFor({timeout: T});
	await page.getByText(/may not pass WebSockets through/).waitFor();
	await page.unroute('**/v1/sandboxes/*/terminal');
	await page.getByRole('button', {name: 'Try again'}).click();
	await connected();
	await run('echo after-forged');
	await seen(/^after-forged$/, 'after-forged');
});

await step('a stopped sandbox: the tab says it is waking it, then connects', async () => {
	await api('POST', `/v1/sandboxes/${sbId}/stop`, {});
	assert(await until(async () => (await api('GET', '/v1/sandboxes/' + sbId)).status === 'stopped', T), 'the sandbox did not stop');
	await page.goto(CONSOLE + termPath);
	await connected();
	const seenStates = await page.evaluate(() => window.__states);
	assert(seenStates.some((t) => /Waking the sandbox/.test(t)), 'never said it was waking the sandbox: ' + JSON.stringify(seenStates));
	await run('echo awake-$((6*7))');
	await seen(/^awake-42$/, 'awake-42');
	assert((await api('GET', '/v1/sandboxes/' + sbId)).status === 'running', 'the sandbox is not running');
});

await step('phone size: no sideways overflow, the keys bar works (Ctrl+C), axe clean', async () => {
	await page.setViewportSize({width: 390, height: 844});
	await page.goto(CONSOLE + termPath);
	await connected();
	await noSideways('the Terminal tab on a phone');
	const box = await page.locator('.term-screen').boundingBox();
	assert(box && box.height >= 200 && box.x >= 0 && box.x + box.width <= 390, 'the screen on a phone: ' + JSON.stringify(box));
	const ctrlc = page.getByRole('button', {name: /Control C/});
	assert(await ctrlc.isVisible(), 'no Ctrl+C key on a phone');
	await run('sleep 120; echo not-interrupted');
	await ctrlc.click();
	await run('echo after-ctrlc');
	await seen(/^after-ctrlc$/, 'after-ctrlc', 15000);
	assert(!/^not-interrupted$/m.test(await screen()), 'sleep was not interrupted');
	await axeCheck(page, 'the Terminal tab on a phone');
	await shot('terminal-phone');
	await page.setViewportSize({width: 1440, height: 900});
});

await step('a flood of output (50 MB) ends with the prompt back, no page error, the page\'s heap bounded', async () => {
	await run('clear; yes | head -c 50000000; echo flood-$((6*7))');
	// Read now and then: reading the screen is work for the page too.
	await seen(/^flood-42$/, 'flood-42', 180000, 3000);
	const heap = await page.evaluate(() => performance.memory ? performance.memory.usedJSHeapSize : 0);
	assert(heap < 200e6, 'the page\'s heap after the flood: ' + heap);
	assert(problems.length === 0, problems.slice(0, 3).join('\n'));
	await run('echo still-$((6*7))');
	await seen(/^still-42$/, 'still-42');
});

await step('no CSP violation, no page error', async () => {
	assert(csp.length === 0, 'CSP violations: ' + csp.slice(0, 5).join('; '));
	assert(problems.length === 0, problems.slice(0, 5).join('\n'));
});

await close();
process.exit(anyFailed() ? 1 : 0);
