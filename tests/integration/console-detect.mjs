// Detection in the console (98-console-detect.sh): the New app form
// imports a repository, the app view shows what was detected, Change…
// applies another recipe, and a repository with nothing to run says what
// was looked for and runs once a recipe is chosen.  Prints "ok CASE" /
// "not ok CASE" lines (steps.mjs).
//
// Environment: CONSOLE_URL, API_URL, TOKEN, SETUP_CODE, SHOTS (optional),
// CHROMIUM, EDGE_PORT, GIT_URL (the test's git server).
import http from 'node:http';
import {anyFailed, assert, step} from './steps.mjs';
import {axeCheck} from './axe.mjs';
import {openBrowser, until} from './browser.mjs';

const env = process.env;
const CONSOLE = env.CONSOLE_URL;
const PASSWORD = 'detect it ' + Math.random().toString(36).slice(2);
const T = 120000;

async function api(method, path, body) {
	const r = await fetch(env.API_URL + path, {
		method,
		headers: {authorization: 'Bearer ' + env.TOKEN, ...(body === undefined ? {} : {'content-type': 'application/json'})},
		body: body === undefined ? undefined : JSON.stringify(body),
	});
	const text = await r.text();
	return {status: r.status, text, json: () => JSON.parse(text)};
}

function preview(sb) {
	return new Promise((resolve) => {
		const q = http.request({host: '127.0.0.1', port: env.EDGE_PORT, path: '/', method: 'GET',
			headers: {host: `s-${sb}-3000.preview.localhost:${env.EDGE_PORT}`}}, (r) => {
			let text = '';
			r.setEncoding('utf8');
			r.on('data', (c) => { text += c; });
			r.on('end', () => resolve({status: r.statusCode, text}));
		});
		q.on('error', () => resolve({status: 0, text: ''}));
		q.setTimeout(5000, () => q.destroy());
		q.end();
	});
}

const appId = () => new URL(page.url()).pathname.split('/')[2];
const sandboxOf = async (app) => (await api('GET', '/v1/apps/' + app)).json().current_sandbox_id;
const detectedEvents = async (app) =>
	(await api('GET', `/v1/apps/${app}/events?type=runtime.`)).json().events;

const {page, problems, shot, close} = await openBrowser('detect');
const card = page.locator('section.detect');

async function importApp(name, repo) {
	await page.goto(CONSOLE + '/apps');
	await page.getByRole('button', {name: /New app from a template or git/}).click();
	await page.getByLabel('A git repository').check();
	await page.getByLabel('Name').fill(name);
	await page.getByLabel(/Repository URL/).fill(env.GIT_URL + '/' + repo + '.git');
	await page.getByRole('button', {name: 'Create app'}).click();
	await page.waitForURL(/\/apps\/[0-9A-Z]{26}$/, {timeout: T});
	return appId();
}

let SITE, NOTES;

await step('sign in; import a static site through the New app form; the card says what was detected; axe clean', async () => {
	await page.goto(CONSOLE + '/apps');
	await page.waitForURL(/\/signin\?next=/);
	await page.getByLabel('Setup code').fill(env.SETUP_CODE);
	await page.getByLabel(/New password/).fill(PASSWORD);
	await page.getByLabel('Repeat the password').fill(PASSWORD);
	await page.getByRole('button', {name: /Set password/}).click();
	await page.getByRole('heading', {name: 'Apps'}).waitFor();
	SITE = await importApp('site', 'site');
	const head = card.getByRole('heading', {level: 2});
	await head.waitFor({timeout: T});
	const text = await head.innerText();
	assert(/^Detected: .+ · (high|medium|low)$/.test(text.trim()), 'the card says: ' + text);
	assert(await card.locator('.detect-reasons li').count() >= 1, 'no reasons on the card');
	const sb = await sandboxOf(SITE);
	assert(await until(async () => (await preview(sb)).text.includes('detected in the console'), 60000),
		'the preview does not answer: ' + JSON.stringify(await preview(sb)));
	await axeCheck(page, 'the app view with what was detected');
	await shot('98-detected');
});

await step('Change… applies another recipe: written, committed, named on the card and the timeline', async () => {
	await card.getByRole('button', {name: 'Change…'}).click();
	const select = card.getByLabel('Run it as');
	await until(async () => (await select.locator('option').count()) > 1);
	await select.selectOption('fastapi');
	await axeCheck(page, 'the recipe choice');
	await card.getByRole('button', {name: 'Apply'}).click();
	await card.getByText(/Applied: sandbox.yaml was written and committed/).waitFor({timeout: T});
	await card.getByRole('heading', {name: /^Runs as: .+ · chosen$/}).waitFor();
	const ev = await detectedEvents(SITE);
	assert(ev.some((e) => e.type === 'runtime.detected' && e.payload && e.payload.recipe === 'fastapi'),
		'no runtime.detected {recipe: fastapi}: ' + JSON.stringify(ev));
	const ins = (await api('GET', `/v1/apps/${SITE}/runtime-inspect`)).json();
	assert(ins.existing_manifest.recipe === 'fastapi', 'the manifest is not fastapi\'s: ' + JSON.stringify(ins.existing_manifest));
	await shot('98-changed');
});

await step('nothing to run: the card says what was looked for and why nothing runs; a chosen recipe makes it run', async () => {
	NOTES = await importApp('notes', 'notes');
	await card.getByRole('heading', {name: 'No framework detected'}).waitFor({timeout: T});
	await card.getByText(/Nothing runs yet: No sandbox\.yaml, and no framework detected/).waitFor({timeout: 60000});
	const text = await card.innerText();
	assert(/package\.json/.test(text), 'the card does not say what was looked for: ' + text);
	await axeCheck(page, 'nothing detected');
	await shot('98-nothing');
	await card.getByRole('button', {name: 'Change…'}).click();
	const select = card.getByLabel('Run it as');
	await until(async () => (await select.locator('option').count()) > 1);
	await select.selectOption('static');
	await card.getByRole('button', {name: 'Apply'}).click();
	await card.getByRole('heading', {name: /^Runs as: .+ · chosen$/}).waitFor({timeout: T});
	const sb = await sandboxOf(NOTES);
	assert(await until(async () => (await preview(sb)).status === 200, 60000),
		'the preview does not answer after the recipe was chosen: ' + JSON.stringify(await preview(sb)));
	await until(async () => !(await card.getByText(/Nothing runs yet/).count()), 15000);
	assert(!(await card.getByText(/Nothing runs yet/).count()), 'the manifest error stays on the card');
	await axeCheck(page, 'a recipe chosen');
	await shot('98-chosen');
});

await step('a phone (390 px): the card fits, axe clean', async () => {
	await page.setViewportSize({width: 390, height: 844});
	await page.goto(CONSOLE + '/apps/' + SITE);
	await card.waitFor({timeout: T});
	const w = await page.evaluate(() => [document.documentElement.scrollWidth, innerWidth]);
	assert(w[0] <= w[1], 'the page is ' + w[0] + ' px wide in a ' + w[1] + ' px window');
	await axeCheck(page, 'the card on a phone');
	await page.setViewportSize({width: 1440, height: 900});
});

await step('no page errors', async () => {
	assert(problems.length === 0, problems.join('\n'));
});

await close();
process.exit(anyFailed() ? 1 : 0);
