// The Publish tab in a real browser (107-console-publish.sh): publish a
// static preset app from the button and watch its log, fetch it through
// the edge at its own host, publish again, roll back, a failing build,
// custom domains, visibility, unpublish; axe and a phone's width.  Prints
// "ok CASE" / "not ok CASE" lines (steps.mjs).
//
// Environment: CONSOLE_URL, API_URL, TOKEN (the first-start token, the
// console's tenant), SETUP_CODE, SHOTS (optional), CHROMIUM, EDGE_PORT.
import http from 'node:http';
import {anyFailed, assert, step} from './steps.mjs';
import {axeCheck} from './axe.mjs';
import {openBrowser, until} from './browser.mjs';

const env = process.env;
const CONSOLE = env.CONSOLE_URL;
const PASSWORD = 'publish it ' + Math.random().toString(36).slice(2);
const T = 120000;

async function api(method, path, body) {
	const r = await fetch(env.API_URL + path, {
		method,
		headers: {authorization: 'Bearer ' + env.TOKEN, ...(body === undefined ? {} : {'content-type': 'application/json'})},
		body: body === undefined ? undefined : (typeof body === 'string' ? body : JSON.stringify(body)),
	});
	const text = await r.text();
	return {status: r.status, text, json: () => JSON.parse(text)};
}

// GET path of a host through the edge (its Host header), no cookie.
function edge(host, path = '/') {
	return new Promise((resolve) => {
		const q = http.request({host: '127.0.0.1', port: env.EDGE_PORT, path, method: 'GET',
			headers: {host: `${host}:${env.EDGE_PORT}`}}, (r) => {
			let text = '';
			r.setEncoding('utf8');
			r.on('data', (c) => { text += c; });
			r.on('end', () => resolve({status: r.statusCode, headers: r.headers, text}));
		});
		q.on('error', () => resolve({status: 0, headers: {}, text: ''}));
		q.setTimeout(5000, () => q.destroy());
		q.end();
	});
}

const V1 = '<!doctype html><html lang="en"><title>pub v1</title><h1>first release</h1></html>\n';
const V2 = '<!doctype html><html lang="en"><title>pub v2</title><h1>second release</h1></html>\n';

async function writeFile(sb, path, text) {
	const r = await api('PUT', `/v1/sandboxes/${sb}/files?path=${encodeURIComponent(path)}`, text);
	assert(r.status === 200, `PUT ${path}: ${r.status} ${r.text}`);
}

const {ctx, page, problems, shot, close} = await openBrowser('publish');
const dialogs = [];
page.on('dialog', (d) => dialogs.push(d.message()));
const head = page.locator('section.pub-head');
const releaseRow = (n) => page.locator('table.releases tbody tr').filter({has: page.locator('th', {hasText: new RegExp('^#' + n + '\\b')})});
let APP, SB, HOST;

const publication = async () => (await api('GET', `/v1/apps/${APP}/publish`)).json();
const serves = async (text) => (await edge(HOST)).text.includes(text);

// Click Publish; the log shows lines while it builds and the address once
// it is live.  Returns the release number the outcome names.
async function publishFromButton(label, byKeyboard) {
	const button = head.getByRole('button', {name: label, exact: true});
	// The box of the build before this one may still be on the page: its
	// outcome must not be read as this build's.
	const h3 = head.locator('.pub-build h3');
	const before = (await h3.count()) ? await h3.first().innerText() : '';
	if (byKeyboard) {
		await button.focus();
		await page.keyboard.press('Enter');
	} else {
		await button.click();
	}
	await h3.first().waitFor();
	if (before)
		await page.waitForFunction((b) => {
			const e = document.querySelector('section.pub-head .pub-build h3');
			return e && e.innerText !== b;
		}, before, {timeout: T});
	const out = head.locator('.pub-build .note:not(.warn):not(.info)');
	await out.or(head.locator('.pub-build .error')).first().waitFor({timeout: T});
	const text = await head.locator('.pub-build').innerText();
	assert(await out.count(), 'the build did not succeed: ' + text);
	const log = await head.locator('.build-log pre').innerText();
	assert(log.trim() && !/^No output yet\.$/.test(log.trim()), 'the build log shows nothing: ' + text);
	const m = /release #(\d+) is live at/.exec(text);
	assert(m, 'the outcome does not name the release and address: ' + text);
	return Number(m[1]);
}

await step('sign in; a static app; the Publish tab says it is not published; axe clean', async () => {
	await page.goto(CONSOLE + '/apps');
	await page.waitForURL(/\/signin\?next=/);
	await page.getByLabel('Setup code').fill(env.SETUP_CODE);
	await page.getByLabel(/New password/).fill(PASSWORD);
	await page.getByLabel('Repeat the password').fill(PASSWORD);
	await page.getByRole('button', {name: /Set password/}).click();
	await page.getByRole('heading', {name: 'Apps'}).waitFor();
	const a = await api('POST', '/v1/apps', {name: 'pub site', runtime_preset: 'static'});
	assert(a.status === 201, 'POST /v1/apps: ' + a.text);
	APP = a.json().id;
	const s = await api('POST', `/v1/apps/${APP}/sandbox`, {});
	assert(s.status === 201, 'POST sandbox: ' + s.text);
	SB = s.json().id;
	await writeFile(SB, 'index.html', V1);
	await page.goto(CONSOLE + `/apps/${APP}`);
	await page.getByRole('link', {name: 'Publish'}).click();
	await page.waitForURL(/\/publish$/);
	await head.getByText('Not published yet.').waitFor();
	assert(!(await page.locator('table.releases').count()), 'a release list before any release');
	await axeCheck(page, 'Publish, not published');
	await shot('107-not-published');
});

await step('Publish: the log shows lines as the build runs, then the live address, which serves the app through the edge', async () => {
	const n = await publishFromButton('Publish');
	assert(n === 1, 'the first release is #' + n);
	const pub = await publication();
	assert(pub.published && pub.host && pub.release && pub.release.number === 1, 'GET publish: ' + JSON.stringify(pub));
	HOST = pub.host;
	// The daemon's url names no port; the console adds its own (the
	// published host is on the edge that serves the console).
	const url = new URL(pub.url);
	if (!url.port) url.port = env.EDGE_PORT;
	const link = head.locator('.pub-build a[target=_blank]');
	assert((await link.getAttribute('href')).replace(/\/$/, '') === url.href.replace(/\/$/, ''),
		'the link is not the publication url: ' + await link.getAttribute('href') + ' vs ' + pub.url);
	assert((await link.getAttribute('rel')).includes('noopener'), 'the new tab link has no rel=noopener');
	assert(await until(() => serves('first release'), 30000), 'the published host does not serve v1: ' + JSON.stringify(await edge(HOST)));
	const r = await edge(HOST);
	assert(/^text\/html/.test(r.headers['content-type'] || ''), 'content type: ' + r.headers['content-type']);
	// The header line and the releases list say the same.
	await head.locator('.pub-live .badge', {hasText: 'Live'}).waitFor();
	await releaseRow(1).locator('.badge', {hasText: 'Live'}).waitFor();
	// The link opens the app in a new tab (Chromium resolves *.localhost
	// to this machine).
	const [tab] = await Promise.all([ctx.waitForEvent('page'), link.click()]);
	await tab.getByRole('heading', {name: 'first release'}).waitFor();
	assert(new URL(tab.url()).host === url.host, 'the new tab is at ' + tab.url());
	await tab.close();
	await axeCheck(page, 'Publish, release #1 live');
	await shot('107-published');
});

await step('Publish again (by keyboard): release #2 serves the changed page; #1 offers Roll back', async () => {
	await writeFile(SB, 'index.html', V2);
	const n = await publishFromButton('Publish again', true);
	assert(n === 2, 'the second release is #' + n);
	assert(await until(() => serves('second release'), 30000), 'the host does not serve v2: ' + JSON.stringify(await edge(HOST)));
	await releaseRow(2).locator('.badge', {hasText: 'Live'}).waitFor();
	assert(!(await releaseRow(2).getByRole('button', {name: /Roll back/}).count()), 'the live release offers Roll back');
	await releaseRow(1).getByRole('button', {name: 'Roll back to release #1'}).waitFor();
});

await step('Roll back to #1 (confirmed): it serves at once and is marked live', async () => {
	const before = dialogs.length;
	await releaseRow(1).getByRole('button', {name: 'Roll back to release #1'}).click();
	await releaseRow(1).locator('.badge', {hasText: 'Live'}).waitFor({timeout: 15000});
	await page.getByText('Rolled back: release #1 serves now').waitFor();
	assert(dialogs.length === before + 1 && /Roll back to release #1/.test(dialogs[before]), 'no confirmation: ' + dialogs.slice(before));
	assert(await serves('first release'), 'the host does not serve v1 after the rollback: ' + JSON.stringify(await edge(HOST)));
	assert((await publication()).release.number === 1, 'the API says another release is active');
	await releaseRow(2).getByRole('button', {name: 'Roll back to release #2'}).waitFor();
	await axeCheck(page, 'Publish, rolled back');
	await shot('107-rolled-back');
});

await step('a failing build: its log live while it runs (the button disabled), then its cause, the log\'s tail and Try again; release #1 keeps serving', async () => {
	const yaml = 'version: 1\nweb:\n  command: python3 -m http.server 3000 --bind 0.0.0.0\n  port: 3000\n' +
		'publish:\n  build: echo live-$((6*7)); sleep 4; echo failing-on-purpose-$((6*7)); exit 3\n  output: .\n';
	await writeFile(SB, 'sandbox.yaml', yaml);
	await head.getByRole('button', {name: 'Publish again', exact: true}).click();
	// The log is live: the first line shows while the build still runs.
	// (The command is in the log too: the lines looked for are what it
	// prints, which its text does not hold.)
	const box = head.locator('.build-log pre');
	await box.filter({hasText: 'live-42'}).waitFor({timeout: T});
	assert(!(await head.locator('.pub-build .error').count()) && /building/.test(await head.locator('.pub-build h3').innerText()),
		'the first line showed only after the build: ' + await head.locator('.pub-build').innerText());
	assert(!/failing-on-purpose-42/.test(await box.innerText()), 'the whole log came at once');
	assert(await head.getByRole('button', {name: 'Building…'}).isDisabled(), 'the button is not disabled while the build runs');
	await head.locator('.pub-build .error').waitFor({timeout: T});
	const text = await head.locator('.pub-build').innerText();
	assert(/The build failed/.test(text), 'no failure words: ' + text);
	assert(/failing-on-purpose-42/.test(await head.locator('.build-log pre').innerText()), 'the log tail lacks the build\'s output: ' + text);
	await head.locator('.pub-build').getByRole('button', {name: 'Try again'}).waitFor();
	assert(await serves('first release'), 'a failed build changed what serves: ' + JSON.stringify(await edge(HOST)));
	assert((await publication()).release.number === 1, 'the failed build changed the active release');
	await axeCheck(page, 'Publish, a failed build');
	await shot('107-failed');
	// Try again starts the next release (which fails the same way).
	await head.locator('.pub-build').getByRole('button', {name: 'Try again'}).click();
	await head.locator('.pub-build h3', {hasText: 'Release #4'}).waitFor();
	await head.locator('.pub-build .error').waitFor({timeout: T});
	assert((await publication()).release.number === 1, 'the second failed build changed the active release');
	await writeFile(SB, 'sandbox.yaml', yaml.replace(/  build: .*\n/, ''));
});

await step('custom domains: not a host name is refused in place; a name is pending with the records to create', async () => {
	const dom = page.locator('section.domains');
	const field = dom.getByLabel('Host name');
	await field.fill('https://www.example.test/');
	await dom.getByRole('button', {name: 'Add domain'}).click();
	await dom.locator('#dom-problem', {hasText: 'leave out http://'}).waitFor();
	assert((await field.getAttribute('aria-invalid')) === 'true', 'the field is not marked invalid');
	await field.fill('192.0.2.7');
	await dom.getByRole('button', {name: 'Add domain'}).click();
	await dom.locator('#dom-problem').waitFor();
	assert(!(await dom.locator('li.dom').count()), 'an IP literal was added');
	await field.fill('www.example.test');
	await dom.getByRole('button', {name: 'Add domain'}).click();
	const li = dom.locator('li.dom', {hasText: 'www.example.test'});
	await li.waitFor();
	assert(!(await dom.locator('#dom-problem').count()), 'the old problem stays');
	await li.locator('.badge', {hasText: 'pending'}).waitFor();
	const text = await li.innerText();
	assert(/Not serving yet/.test(text), 'no pending words: ' + text);
	const recs = li.locator('table.records tbody tr');
	const types = await recs.locator('th').allInnerTexts();
	assert(types.includes('A') && types.includes('CNAME'), 'the records: ' + types);
	assert((await recs.filter({has: page.locator('th', {hasText: /^A$/})}).innerText()).includes('192.0.2.10'),
		'the A record does not name this server\'s address: ' + text);
	assert((await recs.filter({has: page.locator('th', {hasText: 'CNAME'})}).innerText()).includes(HOST),
		'the CNAME does not point at ' + HOST + ': ' + text);
	await li.getByRole('button', {name: 'Check now for www.example.test'}).click();
	await li.locator('.badge', {hasText: 'pending'}).waitFor();
	assert(!(await li.locator('.error').count()), 'Check now failed: ' + await li.innerText());
	await axeCheck(page, 'Publish, a pending domain');
	await shot('107-domain-pending');
	await li.getByRole('button', {name: 'Remove www.example.test'}).click();
	await until(async () => !(await li.count()), 15000);
	assert(!(await li.count()), 'the domain stays after Remove');
});

await step('visibility: private keeps strangers out and opens through a one-time link; public again', async () => {
	const sel = page.getByLabel('Visibility of the published app');
	await sel.selectOption('private');
	assert(await until(async () => (await publication()).visibility === 'private', 10000), 'the API does not say private');
	await head.getByText(/private: only through a one-time link/).waitFor();
	assert(await until(async () => !(await serves('first release')), 10000), 'a private app serves a stranger: ' + JSON.stringify(await edge(HOST)));
	const [tab] = await Promise.all([ctx.waitForEvent('page'), head.getByRole('button', {name: 'Open with a one-time link'}).click()]);
	await tab.getByRole('heading', {name: 'first release'}).waitFor();
	assert(new URL(tab.url()).host === `${HOST}:${env.EDGE_PORT}`, 'the link opened ' + tab.url());
	await tab.close();
	assert(!(await serves('first release')), 'the link let strangers in too');
	await axeCheck(page, 'Publish, private');
	await sel.selectOption('public');
	assert(await until(async () => (await publication()).visibility === 'public', 10000), 'the API does not say public');
	assert(await until(() => serves('first release'), 10000), 'public again, the host does not serve');
});

await step('the address name: not a name is refused in place; a new one moves the app at once', async () => {
	const field = page.getByLabel('Address name');
	assert((await field.inputValue()) === HOST.split('.')[0], 'the field does not hold the label: ' + await field.inputValue());
	await field.fill('-bad-');
	await page.getByRole('button', {name: 'Change the address'}).click();
	await page.locator('#pub-label-err').waitFor();
	assert((await field.getAttribute('aria-invalid')) === 'true', 'the field is not marked invalid');
	await field.fill('pub-renamed');
	await page.getByRole('button', {name: 'Change the address'}).click();
	await page.getByText(/The app moved to http:\/\/pub-renamed\./).waitFor();
	const old = HOST;
	HOST = (await publication()).host;
	assert(HOST.startsWith('pub-renamed.'), 'the host is ' + HOST);
	assert(await until(() => serves('first release'), 10000), 'the new host does not serve: ' + JSON.stringify(await edge(HOST)));
	assert(!(await edge(old)).text.includes('first release'), 'the old host still serves');
	await head.locator('.pub-live a', {hasText: 'pub-renamed.'}).waitFor();
	await axeCheck(page, 'Publish, the address renamed');
});

await step('a laptop (1280 px): the app header with its Publish tab stays one row', async () => {
	await page.setViewportSize({width: 1280, height: 720});
	const rows = await page.evaluate(() => {
		const h = document.querySelector('.app-head');
		const tops = [...h.children].map((c) => c.getBoundingClientRect().top);
		return [Math.max(...tops) - Math.min(...tops), h.scrollWidth, h.clientWidth];
	});
	assert(rows[0] < 20 && rows[1] <= rows[2], 'the header wraps or overflows at 1280 px: ' + rows);
	await page.setViewportSize({width: 1440, height: 900});
});

await step('a phone (390 px): the Publish tab fits, axe clean', async () => {
	await page.setViewportSize({width: 390, height: 844});
	await page.goto(CONSOLE + `/apps/${APP}/publish`);
	await page.locator('table.releases').waitFor();
	const w = await page.evaluate(() => [document.documentElement.scrollWidth, innerWidth]);
	assert(w[0] <= w[1], 'the page is ' + w[0] + ' px wide in a ' + w[1] + ' px window');
	await axeCheck(page, 'Publish on a phone');
	await shot('107-phone');
	await page.setViewportSize({width: 1440, height: 900});
});

await step('Unpublish (confirmed): the host stops serving, the tab says so and how to serve again', async () => {
	await page.getByRole('button', {name: 'Unpublish'}).click();
	await head.getByText(/^Unpublished: nothing answers at/).waitFor({timeout: 15000});
	await axeCheck(page, 'Publish, unpublished');
	assert(await until(async () => !(await serves('first release')), 10000), 'the host still serves after Unpublish');
	assert(!(await publication()).published, 'the API says published');
});

await step('no page errors', async () => {
	assert(problems.length === 0, problems.join('\n'));
});

await close();
process.exit(anyFailed() ? 1 : 0);
