// What the console's browser tests share: Debian's Chromium started by
// playwright-core (console/'s devDependency) in a new profile that allows
// third-party storage (the preview frame's cookie), a page that collects
// its errors and accepts dialogs, screenshots, and waiting on a condition.
import {mkdirSync, mkdtempSync, rmSync, writeFileSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';

const {chromium} = await import(new URL('../../console/node_modules/playwright-core/index.mjs', import.meta.url));

// until(fn, ms, every): polls fn until it is truthy; false after ms.
export async function until(fn, ms = 30000, every = 200) {
	const end = Date.now() + ms;
	for (;;) {
		if (await fn()) return true;
		if (Date.now() > end) return false;
		await new Promise((r) => setTimeout(r, every));
	}
}

// openBrowser(name, {launch, onDialog}) -> {ctx, page, problems,
// shot(file), close()}.  launch: more options of launchPersistentContext
// (acceptDownloads, …); onDialog(dialog): answers dialogs (default: accept).
export async function openBrowser(name, {launch = {}, onDialog} = {}) {
	const env = process.env;
	const profile = mkdtempSync(join(tmpdir(), `sbx-${name}-chromium-`));
	mkdirSync(join(profile, 'Default'));
	writeFileSync(join(profile, 'Default', 'Preferences'),
		JSON.stringify({profile: {cookie_controls_mode: 0, block_third_party_cookies: false}}));
	const ctx = await chromium.launchPersistentContext(profile, {
		executablePath: env.CHROMIUM || '/usr/bin/chromium',
		headless: true,
		viewport: {width: 1440, height: 900},
		serviceWorkers: 'block',
		args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
			'--disable-background-networking', '--disable-component-update', '--disable-sync'],
		...launch,
	});
	const page = ctx.pages()[0] || await ctx.newPage();
	page.setDefaultTimeout(30000);
	const problems = [];
	page.on('pageerror', (e) => problems.push('page error: ' + e.message));
	page.on('dialog', onDialog || ((d) => d.accept()));
	const shot = async (file) => {
		if (!env.SHOTS) return;
		mkdirSync(env.SHOTS, {recursive: true});
		await page.screenshot({path: join(env.SHOTS, file + '.png')});
	};
	const close = async () => {
		await ctx.close();
		rmSync(profile, {recursive: true, force: true});
	};
	return {ctx, page, problems, shot, close};
}
