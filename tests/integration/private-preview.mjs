// A private preview in a real browser (Debian's Chromium driven by
// playwright-core), against the daemon 71-private-preview.sh started: the
// console, signed in, frames the private app (through a one-time link it
// mints) and the app answers in the frame, its WebSocket too; the cookie
// is invisible to the app's scripts; the same preview opened directly in
// a tab (no link) is the sign-in page; the console's Open button opens
// the app in a tab.  Prints "ok CASE" / "not ok CASE" lines with "# "
// lines saying why; later cases are not run after a failure.
//
// Environment: CONSOLE_URL, APP_ID (a private app whose sandbox serves
// edge-app.js), PREVIEW_URL (its preview's address), PASSWORD, and
// SETUP_CODE (first run: set the password) or none (log in);
// BLOCK_3PC=1: the browser blocks third-party cookies (Playwright's
// default), else it allows them as a user's browser does; CHROMIUM.
import {mkdirSync, mkdtempSync, rmSync, writeFileSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {anyFailed, assert, step, stepTag} from './steps.mjs';

const {chromium} = await import(new URL('../../console/node_modules/playwright-core/index.mjs', import.meta.url));

const env = process.env;
const CONSOLE = env.CONSOLE_URL;
const block = env.BLOCK_3PC === '1';
const tag = block ? ' (third-party cookies blocked)' : ' (third-party cookies allowed)';

stepTag(tag);

const profile = mkdtempSync(join(tmpdir(), 'sbx-private-chromium-'));
mkdirSync(join(profile, 'Default'));
writeFileSync(join(profile, 'Default', 'Preferences'),
	JSON.stringify({profile: {cookie_controls_mode: block ? 1 : 0, block_third_party_cookies: block}}));
const ctx = await chromium.launchPersistentContext(profile, {
	executablePath: env.CHROMIUM || '/usr/bin/chromium',
	headless: true,
	viewport: {width: 1400, height: 860},
	serviceWorkers: 'block',
	args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
		'--disable-background-networking', '--disable-component-update', '--disable-sync',
		...(block ? ['--test-third-party-cookie-phaseout'] : [])],
});
const page = ctx.pages()[0] || await ctx.newPage();
page.setDefaultTimeout(30000);
const problems = [];
page.on('pageerror', (e) => problems.push('page error: ' + e.message));

const frameSel = 'iframe[title^="Preview of the app"]';

try {
	await step('sign in to the console', async () => {
		await page.goto(CONSOLE + '/apps/' + env.APP_ID);
		await page.waitForURL(/\/signin/);
		if (env.SETUP_CODE) {
			await page.getByLabel('Setup code').fill(env.SETUP_CODE);
			await page.getByLabel(/New password/).fill(env.PASSWORD);
			await page.getByLabel('Repeat the password').fill(env.PASSWORD);
			await page.getByRole('button', {name: /Set password/}).click();
		} else {
			await page.getByLabel('Password').fill(env.PASSWORD);
			await page.getByRole('button', {name: 'Sign in'}).click();
		}
		await page.waitForURL(new RegExp('/apps/' + env.APP_ID + '$'));
	});

	await step("the console's preview frame shows the private app", async () => {
		await page.getByText(/Private preview: the address above works only for you/).waitFor();
		const frame = page.frameLocator(frameSel);
		await frame.locator('body').getByText('hello from the app').waitFor({timeout: 60000});
		const src = await page.locator(frameSel).getAttribute('src');
		assert(src.includes('/__sandboxd/auth?code='), 'the frame was not opened through a link: ' + src);
	});

	await step('in the frame: the cookie is HttpOnly, a WebSocket to the app works, the session cookie stays on the console', async () => {
		const f = page.frames().find((x) => x.url().startsWith(env.PREVIEW_URL));
		assert(f, 'no frame at ' + env.PREVIEW_URL + ': ' + page.frames().map((x) => x.url()).join(' '));
		assert(new URL(f.url()).pathname === '/', 'the frame landed on ' + f.url());
		const seen = await f.evaluate(() => document.cookie);
		assert(!seen.includes('sbx_preview'), 'the app can read the preview cookie: ' + seen);
		const echo = await f.evaluate(() => new Promise((res, rej) => {
			const ws = new WebSocket(location.origin.replace(/^http/, 'ws') + '/ws');
			ws.onopen = () => ws.send('hmr ping');
			ws.onmessage = (m) => { res(String(m.data)); ws.close(); };
			ws.onerror = () => rej(new Error('websocket error'));
			setTimeout(() => rej(new Error('websocket timeout')), 10000);
		}));
		assert(echo === 'hmr ping', 'echo: ' + echo);
		const headers = await f.evaluate(() => fetch('/headers').then((r) => r.json()));
		assert(!(headers.cookie || '').includes('sbx_preview'), 'the app received the cookie: ' + headers.cookie);
		// The console's session is host-only: the browser would not send it here.
		const sent = await ctx.cookies(env.PREVIEW_URL + '/');
		assert(!sent.some((k) => k.name === 'sbx_session'), 'the session cookie would go to the preview host');
		const mine = await ctx.cookies(CONSOLE + '/');
		assert(mine.some((k) => k.name === 'sbx_session'), 'no session cookie on the console (the check above proves nothing)');
	});

	await step('opened directly in a tab without a link: the sign-in page', async () => {
		const p2 = await ctx.newPage();
		const r = await p2.goto(env.PREVIEW_URL + '/');
		if (block) {
			// Partitioned: the frame's cookie belongs to the console's site.
			assert(r.status() === 404, 'status ' + r.status());
			await p2.getByRole('link', {name: 'Sign in to the console'}).waitFor();
			const body = await p2.content();
			assert(!body.includes('hello from the app'), 'app bytes in the refusal');
		} else {
			// Whatever the browser keeps, it is either the app or the sign-in page.
			assert(r.status() === 404 || r.status() === 200, 'status ' + r.status());
		}
		await p2.close();
	});

	await step("the console's Open button opens the private app in a tab", async () => {
		const [tab] = await Promise.all([
			ctx.waitForEvent('page'),
			page.getByRole('button', {name: 'Open the preview in a new tab'}).click(),
		]);
		await tab.waitForURL(new RegExp('^' + env.PREVIEW_URL.replace(/[.*+?^${}()|[\]\\]/g, '\\$&') + '/$'), {timeout: 30000});
		await tab.getByText('hello from the app').waitFor();
		await tab.close();
	});

	await step('no page errors in the console', async () => {
		assert(problems.length === 0, problems.join('\n'));
	});
} finally {
	await ctx.close();
	rmSync(profile, {recursive: true, force: true});
}
process.exit(anyFailed() ? 1 : 0);
