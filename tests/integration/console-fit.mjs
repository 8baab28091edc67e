// The console's layout and accessibility in a real browser (Debian's
// Chromium driven by playwright-core), against the daemon 84-console-fit.sh
// started.  Prints one "ok CASE" or "not ok CASE" line per case, with "# "
// lines saying why; after a failed case the later ones are not run.
//
// Environment (set by 84-console-fit.sh): CONSOLE_URL, API_URL, TOKEN (the
// first-start token: tenant default, the console's), SETUP_CODE, SHOTS
// (where screenshots go, optional), CHROMIUM (default /usr/bin/chromium).
import {join} from 'node:path';
import {anyFailed, assert, step} from './steps.mjs';
import {axeCheck} from './axe.mjs';
import {openBrowser, until} from './browser.mjs';


const env = process.env;
const CONSOLE = env.CONSOLE_URL;
const PASSWORD = 'fit horse battery ' + Math.random().toString(36).slice(2);
const T = 180000;

const SIZES = [
	{name: '1440x900', width: 1440, height: 900, desk: true},
	{name: '1280x720', width: 1280, height: 720, desk: true},
	{name: '390x844', width: 390, height: 844, desk: false},
];

async function api(method, path, body) {
	const r = await fetch(env.API_URL + path, {
		method,
		headers: {authorization: 'Bearer ' + env.TOKEN, ...(body === undefined ? {} : {'content-type': 'application/json'})},
		body: body === undefined ? undefined : JSON.stringify(body),
	});
	const text = await r.text();
	let json = null;
	try { json = JSON.parse(text); } catch (_) { /* not JSON */ }
	if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${text.slice(0, 300)}`);
	return json;
}

const {ctx, page, problems, shot, close} = await openBrowser('fit');
await ctx.grantPermissions(['clipboard-read', 'clipboard-write'], {origin: CONSOLE});

// The page's size against the window, and what sticks out on the right.
async function layout() {
	return page.evaluate(() => {
		const de = document.documentElement;
		const wide = [];
		if (de.scrollWidth > innerWidth) {
			for (const el of document.querySelectorAll('body *')) {
				const r = el.getBoundingClientRect();
				if (r.right > innerWidth + 1 && r.width > 0) {
					wide.push(`${el.tagName.toLowerCase()}${el.id ? '#' + el.id : ''}${el.className && typeof el.className === 'string' ? '.' + el.className.trim().replace(/\s+/g, '.') : ''} right=${Math.round(r.right)}`);
					if (wide.length >= 6) break;
				}
			}
		}
		return {sw: de.scrollWidth, sh: de.scrollHeight, iw: innerWidth, ih: innerHeight, wide};
	});
}

async function noSideways(what) {
	const l = await layout();
	assert(l.sw <= l.iw, `${what}: the page is ${l.sw} px wide in a ${l.iw} px window: ${l.wide.join(', ')}`);
	return l;
}

async function noPageScroll(what) {
	const l = await layout();
	assert(l.sh <= l.ih, `${what}: the page is ${l.sh} px tall in a ${l.ih} px window (it scrolls)`);
}

// The element's whole box is inside the window (and at least minH tall).
async function inView(loc, what, minH = 1) {
	await loc.waitFor({state: 'visible'});
	const b = await loc.boundingBox();
	const vp = page.viewportSize();
	assert(b, `${what}: no box`);
	assert(b.x >= -1 && b.y >= -1 && b.x + b.width <= vp.width + 1 && b.y + b.height <= vp.height + 1,
		`${what}: its box ${Math.round(b.x)},${Math.round(b.y)} ${Math.round(b.width)}x${Math.round(b.height)} is not inside ${vp.width}x${vp.height}`);
	assert(b.height >= minH, `${what}: ${Math.round(b.height)} px tall, under ${minH}`);
	return b;
}

// Every size: the screen at `path` (ready when `ready` resolves) has no
// sideways overflow, passes axe, and then `more` checks.
async function everySize(name, path, ready, more) {
	for (const s of SIZES) {
		await page.setViewportSize({width: s.width, height: s.height});
		if (path) await page.goto(CONSOLE + path);
		await ready(s);
		await noSideways(`${name} at ${s.name}`);
		if (more) await more(s);
		await axeCheck(page, `${name} at ${s.name}`);
	}
}

let appId, sbId, appPath;
const prompt = () => page.getByLabel('What should the agent do?');
const send = () => page.getByRole('button', {name: 'Send'});
const frame = () => page.locator('iframe[title^="Preview"]');

await step('sign-in (setup) fits and passes axe at every size', async () => {
	await everySize('sign-in', '/apps', async () => {
		await page.getByRole('heading', {name: 'Set up sandboxd'}).waitFor();
	}, async () => {
		await inView(page.getByRole('button', {name: /Set password/}), 'the setup button');
	});
	await page.setViewportSize({width: 1440, height: 900});
	await page.getByLabel('Setup code').fill(env.SETUP_CODE);
	await page.getByLabel(/New password/).fill(PASSWORD);
	await page.getByLabel('Repeat the password').fill(PASSWORD);
	await page.getByRole('button', {name: /Set password/}).click();
	await page.getByRole('heading', {name: 'Apps'}).waitFor();
});

await step('the skip link is first in the tab order and lands on the heading', async () => {
	// Through the redirect from / to /apps: a redirect keeps the focus at the start.
	await page.goto(CONSOLE + '/');
	await page.getByRole('heading', {name: 'Apps'}).waitFor();
	// The Apps prompt takes the focus (autofocus); from the page's start,
	// the first Tab stop is the skip link.
	await page.evaluate(() => {
		const b = document.body;
		b.tabIndex = -1;
		b.focus();
		b.removeAttribute('tabindex');
	});
	await page.keyboard.press('Tab');
	const first = await page.evaluate(() => document.activeElement && document.activeElement.textContent);
	assert(first === 'Skip to content', 'the first Tab stop is ' + JSON.stringify(first));
	await inView(page.getByRole('link', {name: 'Skip to content'}), 'the focused skip link');
	await page.keyboard.press('Enter');
	const at = await page.evaluate(() => document.activeElement && document.activeElement.tagName + ' ' + document.activeElement.textContent);
	assert(at === 'H1 Apps', 'after the skip link the focus is on ' + at);
});

await step('Apps, empty, fits and passes axe at every size', async () => {
	await everySize('apps (empty)', '/apps', async () => {
		await page.getByText('No apps yet.').waitFor();
	}, async () => {
		await inView(page.getByRole('button', {name: 'Build it'}), 'Build it');
		await inView(page.getByLabel('What your app should do'), 'the description box');
	});
	await shot('fit-phone-apps-empty');
});

await step('an app with a finished task (real sandbox, scripted agent)', async () => {
	const app = await api('POST', '/v1/apps', {name: 'A shopping list where I can add items', runtime_preset: 'react-vite'});
	appId = app.id;
	appPath = '/apps/' + appId;
	// A value for the Config tab's table (its buttons carry hidden text).
	await api('PUT', `/v1/apps/${appId}/config/GREETING_TEXT_FOR_THE_PAGE`, {value: 'hello from a rather long configuration value', sensitive: false, expose_env: true});
	const sb = await api('POST', '/v1/apps/' + appId + '/sandbox', {});
	sbId = sb.id;
	const t = await api('POST', `/v1/sandboxes/${sbId}/tasks`, {prompt: 'Add a shopping list [[fake:write=src/List.jsx]] [[fake:content=export const List = () => null;]]'});
	assert(await until(async () => (await api('GET', `/v1/sandboxes/${sbId}/tasks/${t.id}`)).status !== 'running', T), 'the task did not finish');
	const done = await api('GET', `/v1/sandboxes/${sbId}/tasks/${t.id}`);
	assert(done.status === 'succeeded', 'task ' + done.status + ' ' + (done.error_message || ''));
	assert(await until(async () => {
		const s = await api('GET', '/v1/sandboxes/' + sbId);
		return s.preview && s.preview.status === 'ready';
	}, T), 'the preview did not get ready');
	// A deleted app, for a Trash with a row.
	const gone = await api('POST', '/v1/apps', {name: 'An app that was deleted'});
	await api('DELETE', '/v1/apps/' + gone.id);
});

await step('Apps with an app fits and passes axe at every size', async () => {
	await everySize('apps', '/apps', async () => {
		await page.getByRole('link', {name: 'A shopping list where I can add items'}).waitFor();
	}, async (s) => {
		await inView(page.getByRole('button', {name: 'Build it'}), 'Build it');
		if (!s.desk) await shot('fit-phone-apps');
	});
});

const buildReady = async () => {
	await page.locator('.chat .outcome').getByText('Done').first().waitFor({timeout: T});
};

await step('Build view: one header row, no page scroll on desktop, the needed parts in view', async () => {
	for (const s of SIZES.filter((x) => x.desk)) {
		await page.setViewportSize({width: s.width, height: s.height});
		await page.goto(CONSOLE + appPath);
		await buildReady();
		await frame().waitFor({timeout: T});
		await noSideways('build at ' + s.name);
		await noPageScroll('build at ' + s.name);
		await inView(prompt(), 'the prompt box at ' + s.name);
		await inView(send(), 'Send at ' + s.name);
		await inView(page.getByRole('navigation', {name: 'App sections'}), 'the tabs at ' + s.name);
		await inView(frame(), 'the preview frame at ' + s.name, 200);
		await inView(page.getByRole('button', {name: 'App actions'}), 'the App menu at ' + s.name);
		// One row: the name, the tabs and the menu share a line.
		const rows = await page.evaluate(() => {
			const tops = ['.app-title', '.app-head .tabs', '.app-head .menu'].map((q) => {
				const r = document.querySelector(q).getBoundingClientRect();
				return [r.top, r.bottom];
			});
			return tops.every(([t, b]) => t < tops[0][1] && b > tops[0][0]);
		});
		assert(rows, 'the header is not one row at ' + s.name);
		await axeCheck(page, 'build at ' + s.name);
		await shot('fit-' + s.name + '-build');
	}
});

await step('the App menu: keyboard opens it, Escape closes it, focus returns', async () => {
	await page.setViewportSize({width: 1280, height: 720});
	const btn = page.getByRole('button', {name: 'App actions'});
	const panel = page.locator('#app-menu');
	assert(await btn.getAttribute('aria-expanded') === 'false', 'the menu starts open');
	assert(!(await panel.isVisible()), 'the panel shows while closed');
	await btn.focus();
	await page.keyboard.press('Enter');
	await panel.waitFor({state: 'visible'});
	assert(await btn.getAttribute('aria-expanded') === 'true', 'aria-expanded is not true when open');
	await inView(panel, 'the open menu');
	for (const name of [/Stop the app/, /Reset the sandbox/, /Delete the app/])
		await panel.getByRole('button', {name}).waitFor();
	await panel.getByLabel('Who can see the preview').waitFor();
	await axeCheck(page, 'build with the App menu open');
	await shot('fit-1280x720-menu');
	await page.keyboard.press('Tab');
	assert(await page.evaluate(() => !!document.activeElement.closest('#app-menu')), 'Tab from the button does not go into the menu');
	await page.keyboard.press('Escape');
	await panel.waitFor({state: 'hidden'});
	assert(await btn.getAttribute('aria-expanded') === 'false', 'aria-expanded after Escape');
	assert(await btn.evaluate((b) => b === document.activeElement), 'the focus did not return to the menu button');
	// A click elsewhere closes it too.
	await btn.click();
	await panel.waitFor({state: 'visible'});
	await page.locator('.chat-log').click({position: {x: 5, y: 5}});
	await panel.waitFor({state: 'hidden'});
});

await step('the device-size toggle changes the frame width and is remembered', async () => {
	await page.setViewportSize({width: 1440, height: 900});
	const paneW = async () => (await page.locator('.frame-box').boundingBox()).width;
	const frameW = async () => (await frame().boundingBox()).width;
	const box = await paneW();
	assert(Math.abs(await frameW() - box) <= 2, `desktop: frame ${await frameW()} in a ${box} px pane`);
	await page.getByRole('button', {name: 'Phone'}).click();
	assert(await until(async () => Math.abs(await frameW() - 390) <= 2, 5000), 'phone: the frame is ' + await frameW() + ' px wide');
	const css = await frame().evaluate((f) => f.offsetWidth);
	assert(css === 390, 'phone: the frame is laid out ' + css + ' px wide');
	await inView(frame(), 'the phone-sized frame', 200);
	await shot('fit-1440x900-build-phone-frame');
	await page.getByRole('button', {name: 'Tablet'}).click();
	const want = Math.min(768, box);
	assert(await until(async () => Math.abs(await frameW() - want) <= 2, 5000), `tablet: the frame is ${await frameW()} px wide, not ${want}`);
	assert(await frame().evaluate((f) => f.offsetWidth) === 768, 'tablet: not laid out at 768 px');
	// Narrower than the device: scaled down to the pane, centred, still tall.
	await page.setViewportSize({width: 1280, height: 720});
	const box2 = await paneW();
	if (box2 < 768) {
		assert(await until(async () => Math.abs(await frameW() - box2) <= 2, 5000), `tablet in a ${box2} px pane: the frame is ${await frameW()} px on screen`);
	}
	await inView(frame(), 'the tablet frame at 1280x720', 200);
	await page.reload();
	await frame().waitFor({timeout: T});
	assert(await page.getByRole('button', {name: 'Tablet'}).getAttribute('aria-pressed') === 'true', 'the size was not remembered');
	await page.getByRole('button', {name: 'Desktop'}).click();
	assert(await until(async () => Math.abs(await frameW() - await paneW()) <= 2, 5000), 'desktop again: the frame does not fill the pane');
});

await step('focus moves to the heading on a route change', async () => {
	await page.getByRole('navigation', {name: 'App sections'}).getByRole('link', {name: 'Git'}).click();
	await page.waitForURL(/\/git$/);
	assert(await until(() => page.evaluate(() => document.activeElement && document.activeElement.tagName === 'H1'), 5000),
		'the focus is on ' + await page.evaluate(() => document.activeElement.outerHTML.slice(0, 120)));
	await page.getByRole('navigation', {name: 'Main'}).getByRole('link', {name: 'Settings'}).click();
	await page.getByRole('heading', {name: 'Settings'}).waitFor();
	assert(await until(() => page.evaluate(() => document.activeElement && document.activeElement.textContent === 'Settings' && document.activeElement.tagName === 'H1'), 5000),
		'Settings: the focus is on ' + await page.evaluate(() => document.activeElement.outerHTML.slice(0, 120)));
});

await step('phone: the Chat | Preview | Files switch shows the preview in one tap', async () => {
	await page.setViewportSize({width: 390, height: 844});
	await page.goto(CONSOLE + appPath);
	await buildReady();
	await noSideways('build on the phone');
	const sw = page.getByRole('group', {name: 'Show'});
	await inView(sw, 'the switch');
	await page.getByRole('button', {name: 'Chat', exact: true}).click();
	await inView(prompt(), 'the prompt box on the phone');
	await inView(send(), 'Send on the phone');
	await noPageScroll('the chat pane on the phone');
	await axeCheck(page, 'build (chat) on the phone');
	await shot('fit-phone-build-chat');
	await page.getByRole('button', {name: 'Preview', exact: true}).click();
	await inView(frame(), 'the preview frame after one tap', 200);
	assert(await page.getByRole('button', {name: 'Preview', exact: true}).getAttribute('aria-pressed') === 'true', 'Preview not pressed');
	assert(!(await prompt().isVisible()), 'the chat still shows with the preview');
	await noSideways('the preview pane on the phone');
	await noPageScroll('the preview pane on the phone');
	await axeCheck(page, 'build (preview) on the phone');
	await shot('fit-phone-build-preview');
	await page.getByRole('button', {name: 'Files', exact: true}).click();
	await page.waitForURL(/\/files$/);
	await page.getByRole('button', {name: /App\.jsx/}).or(page.getByRole('button', {name: /src\//})).first().waitFor();
	await noSideways('files from the switch on the phone');
	await page.getByRole('button', {name: 'Preview', exact: true}).click();
	await page.waitForURL((u) => u.pathname === appPath);
	await inView(frame(), 'the preview frame back from Files', 200);
	await page.getByRole('button', {name: 'Chat', exact: true}).click();
});

await step('Files with a file open: fits, no page scroll on desktop, the editor passes axe', async () => {
	await everySize('files', appPath + '/files?path=src%2FApp.jsx', async () => {
		await page.locator('.cm-host').waitFor();
		await page.locator('.cm-host').evaluate((h) => new Promise((res, rej) => {
			const end = Date.now() + 30000;
			const t = () => (h.shadowRoot && h.shadowRoot.querySelector('.cm-content') ? res() : Date.now() > end ? rej(new Error('no editor')) : setTimeout(t, 100));
			t();
		}));
	}, async (s) => {
		await inView(page.locator('.cm-host'), 'the editor at ' + s.name, 100);
		await inView(page.getByRole('button', {name: 'Save'}), 'Save at ' + s.name);
		if (s.desk) await noPageScroll('files at ' + s.name);
		// The editor is reached by keyboard: its content is a tab stop.
		const focusable = await page.locator('.cm-host').evaluate((h) => h.shadowRoot.querySelector('.cm-content').tabIndex);
		assert(focusable === 0, 'the editor content tabindex ' + focusable);
		await shot('fit-' + s.name + '-files');
	});
});

for (const [name, path, ready] of [
	['git', '/git', () => page.getByRole('heading', {name: /Diff against/}).waitFor()],
	['config', '/config', () => page.getByRole('heading', {name: 'Add or change a value'}).waitFor()],
	['spend', '/spend', () => page.getByRole('button', {name: 'Save budget'}).waitFor()],
]) {
	await step(`${name} fits and passes axe at every size`, async () => {
		await everySize(name, appPath + path, ready, async (s) => {
			await inView(page.getByRole('navigation', {name: 'App sections'}), 'the tabs at ' + s.name);
			if (!s.desk) await shot('fit-phone-' + name);
		});
	});
}

await step('settings and trash fit and pass axe at every size', async () => {
	for (const sec of ['agents', 'git', 'lifecycle', 'tokens', 'instance', 'account']) {
		await everySize('settings/' + sec, '/settings/' + sec, () => page.getByRole('heading', {name: 'Settings'}).waitFor(), async (s) => {
			if (!s.desk && sec === 'agents') await shot('fit-phone-settings-agents');
		});
	}
	await everySize('trash', '/trash', () => page.getByRole('row').filter({hasText: 'An app that was deleted'}).waitFor(), async (s) => {
		if (!s.desk) await shot('fit-phone-trash');
	});
});

await step('a private preview offers a one-time link, not its plain address', async () => {
	await page.setViewportSize({width: 1440, height: 900});
	await api('PATCH', '/v1/apps/' + appId, {preview_visibility: 'private'});
	await page.goto(CONSOLE + appPath);
	await buildReady();
	await page.getByText(/works only for you/).waitFor({timeout: T});
	assert(!(await page.getByRole('button', {name: 'Copy URL'}).count()), 'Copy URL still offered for a private preview');
	const minted = page.waitForResponse((r) => r.request().method() === 'POST' && /\/preview-link$/.test(r.url()) &&
		JSON.parse(r.request().postData() || '{}').ttl_seconds === 86400);
	await page.getByRole('button', {name: 'Copy a one-time link'}).click();
	const r = await minted;
	assert(r.status() === 201, 'preview-link answered ' + r.status());
	const url = (await r.json()).url;
	await page.getByText(/Copied a link for one person/).waitFor();
	const clip = await page.evaluate(() => navigator.clipboard.readText());
	assert(clip === url && /__sandboxd\/auth\?code=/.test(clip), 'the clipboard holds ' + clip);
	await frame().waitFor({timeout: T});
	await noPageScroll('build with a private preview');
	await inView(frame(), 'the private preview frame', 200);
	await axeCheck(page, 'build with a private preview');
	await api('PATCH', '/v1/apps/' + appId, {preview_visibility: 'public'});
});

await step('no page error', async () => {
	assert(!problems.length, problems.join('\n'));
});

await close();
process.exit(anyFailed() ? 1 : 0);
