// Cookie tossing in a real browser (Debian's Chromium driven by
// playwright-core), against the daemon 75-auth-walls.sh started on a
// real-looking domain (PREVIEW_DOMAIN, every name of it mapped to the
// edge by --host-resolver-rules): the console signed in, a preview app of
// the same parent domain sets forged session cookies for the parent
// domain (one with a longer path, so that the browser sends it first),
// and the console stays signed in.  Prints "ok CASE" / "not ok CASE"
// lines with "# " lines saying why; later cases are not run after a
// failure.
//
// Environment: CONSOLE_URL, PREVIEW_URL (the tossing app's page),
// DOMAIN (the parent domain), PASSWORD (set already), CHROMIUM.
import {mkdirSync, mkdtempSync, rmSync, writeFileSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {anyFailed, assert, step} from './steps.mjs';

const {chromium} = await import(new URL('../../console/node_modules/playwright-core/index.mjs', import.meta.url));

const env = process.env;
const CONSOLE = env.CONSOLE_URL;


const profile = mkdtempSync(join(tmpdir(), 'sbx-walls-chromium-'));
mkdirSync(join(profile, 'Default'));
writeFileSync(join(profile, 'Default', 'Preferences'),
	JSON.stringify({profile: {cookie_controls_mode: 0, block_third_party_cookies: false}}));
const ctx = await chromium.launchPersistentContext(profile, {
	executablePath: env.CHROMIUM || '/usr/bin/chromium',
	headless: true,
	serviceWorkers: 'block',
	args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
		'--disable-background-networking', '--disable-component-update', '--disable-sync',
		`--host-resolver-rules=MAP *.${env.DOMAIN} 127.0.0.1`],
});
const page = ctx.pages()[0] || await ctx.newPage();
page.setDefaultTimeout(30000);

// The Cookie header the console's requests to /v1 carried, last first.
const sent = [];
ctx.on('request', async (r) => {
	if (r.url().startsWith(CONSOLE + '/v1/')) {
		try { sent.unshift((await r.allHeaders()).cookie || ''); } catch (_) { /* gone */ }
	}
});
const status = () => page.evaluate(async () => (await (await fetch('/v1/auth/status')).json()));

await step('the console signs in on its own host', async () => {
	await page.goto(CONSOLE + '/signin');
	const code = await page.evaluate(async (pw) => (await fetch('/v1/auth/login', {
		method: 'POST', headers: {'content-type': 'application/json'}, body: JSON.stringify({password: pw}),
	})).status, env.PASSWORD);
	assert(code === 200, 'login answered ' + code);
	await page.goto(CONSOLE + '/apps');
	await page.getByRole('heading', {name: 'Apps'}).waitFor();
	assert((await status()).signed_in === true, 'not signed in after login');
});

await step('a preview app of the same parent domain sets forged session cookies for it', async () => {
	const app = await ctx.newPage();
	await app.goto(env.PREVIEW_URL);
	await app.getByText('tossed').waitFor();
	await app.close();
	const jar = await ctx.cookies(CONSOLE + '/v1/auth/status');
	const forged = jar.filter((c) => c.name === 'sbx_session' && c.domain === '.' + env.DOMAIN);
	assert(forged.length >= 2, 'the forged cookies did not land: ' + JSON.stringify(jar.map((c) => [c.name, c.domain, c.path])));
});

await step('the console stays signed in, the forged cookie sent first', async () => {
	sent.length = 0;
	await page.goto(CONSOLE + '/apps');
	await page.getByRole('heading', {name: 'Apps'}).waitFor();
	const st = await status();
	assert(st.signed_in === true && st.via === 'session', 'signed out by a forged cookie: ' + JSON.stringify(st));
	assert(!page.url().includes('/signin'), 'sent to sign-in: ' + page.url());
	const hdr = sent.find((h) => h.includes('sbx_session')) || '';
	const n = (hdr.match(/sbx_session=/g) || []).length;
	assert(n >= 2, 'the request did not carry the forged cookie beside the real one: ' + hdr.replace(/=[^;]{8}[^;]*/g, '=…'));
	assert(/^sbx_session=forged/.test(hdr), 'the forged cookie was not sent first (the test proves less): ' + hdr.replace(/=[^;]{8}[^;]*/g, '=…'));
	// A write works too (CSRF token of the real session).
	const w = await page.evaluate(async () => {
		const s = await (await fetch('/v1/auth/status')).json();
		const r = await fetch('/v1/apps', {method: 'POST', headers: {'content-type': 'application/json', 'x-csrf-token': s.csrf_token},
			body: JSON.stringify({name: 'after-toss'})});
		return r.status;
	});
	assert(w === 201, 'a write after the toss answered ' + w);
});

await ctx.close();
rmSync(profile, {recursive: true, force: true});
process.exit(anyFailed() ? 1 : 0);
