// The console's fix-it loop in a real browser (Debian's Chromium driven by
// playwright-core), against the daemon 85-console-fixit.sh started, with
// the real OpenCode of the image and the fake provider.  Prints one
// "ok CASE" / "not ok CASE" line per case ("# " lines say why) and
// "# measured …" lines.
//
// Environment (set by 85-console-fixit.sh): CONSOLE_URL, API_URL, TOKEN,
// SETUP_CODE, SHOTS (optional), CHROMIUM, DIRECTIVES (the provider's
// --directives-file), CTL (write "down"/"up" there: the script stops or
// starts the provider and acks in CTL.ack), GIT_GOOD, GIT_BAD.
import {existsSync, readFileSync, unlinkSync, writeFileSync} from 'node:fs';
import {join} from 'node:path';
import {anyFailed, assert, step} from './steps.mjs';
import {axeCheck} from './axe.mjs';
import {openBrowser, until} from './browser.mjs';


const env = process.env;
const CONSOLE = env.CONSOLE_URL;
const PASSWORD = 'fix it horse battery ' + Math.random().toString(36).slice(2);
const T = 240000;

async function api(method, path, body, type = 'application/json') {
	const r = await fetch(env.API_URL + path, {
		method,
		headers: {authorization: 'Bearer ' + env.TOKEN, ...(body === undefined ? {} : {'content-type': type})},
		body: body === undefined ? undefined : (typeof body === 'string' ? body : JSON.stringify(body)),
	});
	const text = await r.text();
	let json = null;
	try { json = JSON.parse(text); } catch (_) { /* not JSON */ }
	return {status: r.status, text, json};
}

// The provider down or up again (the shell script does it), waited for.
async function provider(want) {
	const ack = env.CTL + '.ack';
	if (existsSync(ack)) unlinkSync(ack);
	writeFileSync(env.CTL, want);
	const ok = await until(() => existsSync(ack) && readFileSync(ack, 'utf8').trim() === want + '-done', 30000);
	assert(ok, 'the provider did not go ' + want);
}

const measured = (what, ms) => console.log(`# measured ${what}: ${ms} ms`);

const {page, problems, shot, close} = await openBrowser('fixit');
const axe = async (what) => {
	// Let the page settle (a poll may be on its way) before axe looks.
	await page.waitForTimeout(300);
	await axeCheck(page, what);
};
const current = () => page.locator('.current');
const outcome = () => page.locator('.current .outcome');
const promptBox = () => page.getByLabel('What should the agent do?');

let appId, sbId, appPath;
const broken = 'export default function App() {\n  return <h1>Broken</h1 ;\n}\n';
const fixedTitle = 'Fixed by the agent';
const fixed = `export default function App() {\\n  return <h1>${fixedTitle}</h1>;\\n}\\n`;

await step('sign in; an app from the React template with its preview', async () => {
	await page.goto(CONSOLE + '/apps');
	await page.waitForURL(/\/signin\?next=/);
	await page.getByLabel('Setup code').fill(env.SETUP_CODE);
	await page.getByLabel(/New password/).fill(PASSWORD);
	await page.getByLabel('Repeat the password').fill(PASSWORD);
	await page.getByRole('button', {name: /Set password/}).click();
	await page.getByRole('heading', {name: 'Apps'}).waitFor();
	const a = await api('POST', '/v1/apps', {name: 'fixit', runtime_preset: 'react-vite'});
	assert(a.status === 201, 'create app: ' + a.text);
	appId = a.json.id;
	const s = await api('POST', `/v1/apps/${appId}/sandbox`, {});
	assert(s.status === 201, 'create sandbox: ' + s.text);
	sbId = s.json.id;
	appPath = '/apps/' + appId;
	await page.goto(CONSOLE + appPath);
	const t0 = Date.now();
	await page.frameLocator('iframe[title^="Preview"]').getByRole('heading', {name: 'Your React app is running'}).waitFor({timeout: T});
	measured('app page → template in the preview', Date.now() - t0);
	await axe('app Build (idle)');
});

const taskPrompt = 'Write a note. [[provider:write=note.txt]] [[provider:content=a note\\n]]';

await step('provider down: the task fails in words, a link to Settings → AI agents, a warning row, no build passed', async () => {
	await provider('down');
	await promptBox().fill(taskPrompt);
	const t0 = Date.now();
	await page.getByRole('button', {name: 'Send'}).click();
	// While it runs: the elapsed time ticks and the last step shows.
	await page.locator('.working .working-time').waitFor({timeout: T});
	const t1 = await page.locator('.working .working-time').innerText();
	await page.waitForTimeout(2200);
	const w = page.locator('.working');
	if (await w.count()) {
		const t2 = await page.locator('.working .working-time').innerText();
		assert(t1 !== t2, `the elapsed time did not tick: ${t1} then ${t2}`);
		await axe('app Build (running task)');
		await shot('fixit-running');
	}
	await outcome().waitFor({timeout: T});
	measured('send → failed outcome with the provider down', Date.now() - t0);
	const text = await current().innerText();
	assert(/The model provider could not be reached/.test(text), 'no plain cause: ' + text);
	const link = current().getByRole('link', {name: 'Settings → AI agents'});
	assert(await link.count() >= 1, 'no link to Settings → AI agents');
	assert((await link.first().getAttribute('href')) === '/settings/agents', 'the link goes elsewhere');
	assert(await page.locator('.current .provider-warn').count() >= 1, 'no warning row for the provider');
	assert(!/The build passed/.test(text), '"The build passed" after a failed agent: ' + text);
	assert(!/provider_unreachable/.test(text), 'the raw reason code is shown');
	assert(!(await current().getByRole('button', {name: 'Revert this task'}).count()), 'Revert offered for a task that changed nothing');
	assert(await current().locator('details summary', {hasText: 'Details'}).count() >= 1, 'no Details disclosure for the raw error');
	await current().getByRole('button', {name: /^Retry/}).waitFor();
	await shot('fixit-provider-down');
	await axe('app Build (failed task)');
});

await step('provider back: Retry refills the composer, the task succeeds', async () => {
	await provider('up');
	await promptBox().fill('');
	await current().getByRole('button', {name: /^Retry/}).click();
	// the refill is a render after the click: wait for it, not for a time
	const box = await promptBox().elementHandle();
	await page.waitForFunction(([el, want]) => el.value === want, [box, taskPrompt], {timeout: 5000}).catch(() => {});
	assert((await promptBox().inputValue()) === taskPrompt, 'Retry did not refill the prompt: ' + await promptBox().inputValue());
	assert(await promptBox().evaluate((el) => el === document.activeElement), 'the prompt box has no focus after Retry');
	await page.getByRole('button', {name: 'Send'}).click();
	await outcome().getByText('Done').waitFor({timeout: T});
	const r = await api('GET', `/v1/sandboxes/${sbId}/files/content?path=note.txt`);
	assert(r.status === 200 && r.text.startsWith('a note'), 'note.txt: ' + r.status + ' ' + r.text.slice(0, 80));
	await shot('fixit-retried');
	await axe('app Build (finished task)');
});

await step('a planted syntax error: the problem card; Ask the agent to fix; the card goes, the preview shows the app', async () => {
	const w = await api('PUT', `/v1/sandboxes/${sbId}/files?path=src/App.jsx`, broken, 'application/octet-stream');
	assert(w.status === 200 || w.status === 201 || w.status === 204, 'planting the error: ' + w.status + ' ' + w.text);
	const t0 = Date.now();
	const card = page.locator('.problem-card');
	await card.waitFor({timeout: 60000});
	measured('syntax error saved → problem card', Date.now() - t0);
	const lines = await card.locator('.problem-lines').innerText();
	assert(/App\.jsx/.test(lines), 'the card does not show the error lines: ' + lines);
	await shot('fixit-problem');
	await axe('app Build (problem card)');
	writeFileSync(env.DIRECTIVES, `[[provider:write=src/App.jsx]] [[provider:content=${fixed}]]\n`);
	await card.getByRole('button', {name: 'Ask the agent to fix'}).click();
	const t1 = Date.now();
	await page.locator('.current .prompt-bubble', {hasText: 'Fix it.'}).waitFor({timeout: T});
	await outcome().getByText('Done').waitFor({timeout: T});
	await card.waitFor({state: 'detached', timeout: 60000});
	const frame = page.frameLocator('iframe[title^="Preview"]');
	try {
		await frame.getByRole('heading', {name: fixedTitle}).waitFor({timeout: 20000});
	} catch (_) {
		await page.getByRole('button', {name: 'Reload the preview'}).click();
		await frame.getByRole('heading', {name: fixedTitle}).waitFor({timeout: T});
	}
	measured('Ask the agent to fix → the app shows again', Date.now() - t1);
	unlinkSync(env.DIRECTIVES);
	const bubble = await page.locator('.current .prompt-bubble').innerText();
	assert(/The app shows this error/.test(bubble) && /App\.jsx/.test(bubble), 'the fix prompt lacks the error lines: ' + bubble);
	await shot('fixit-fixed');
});

await step('budget reached: the composer is blocked with a link to Spend; raised there, Send works', async () => {
	const b = await api('PATCH', '/v1/apps/' + appId, {budget: {tokens: 1}});
	assert(b.status === 200, 'set budget: ' + b.text);
	const blocked = page.locator('.composer .blocked');
	await blocked.waitFor({timeout: 30000});
	assert(/spend budget is used up/.test(await blocked.innerText()), 'blocked says: ' + await blocked.innerText());
	await promptBox().fill('Another note. [[provider:write=note2.txt]]');
	assert(await page.getByRole('button', {name: 'Send'}).isDisabled(), 'Send is enabled with the budget used up');
	await shot('fixit-budget');
	await axe('app Build (budget reached)');
	await blocked.getByRole('link').click();
	await page.waitForURL(/\/spend$/);
	await page.getByLabel('Budget in tokens').fill('100000000');
	await page.getByRole('button', {name: 'Save budget'}).click();
	await page.getByText('Budget saved.').waitFor();
	await axe('Spend');
	await page.getByRole('link', {name: 'Build'}).click();
	await promptBox().fill('Another note. [[provider:write=note2.txt]]');
	await until(async () => !(await page.locator('.composer .blocked').count()), 15000);
	assert(!(await page.locator('.composer .blocked').count()), 'still blocked after the budget was raised');
	await page.getByRole('button', {name: 'Send'}).click();
	await outcome().getByText('Done').waitFor({timeout: T});
});

await step('an import from an unreachable URL: the card; the URL fixed; Try again; running', async () => {
	const a = await api('POST', '/v1/apps', {name: 'imported', runtime_preset: 'static', git: {repo_url: env.GIT_BAD}});
	assert(a.status === 201, 'create app: ' + a.text);
	const id = a.json.id;
	const s = await api('POST', `/v1/apps/${id}/sandbox`, {});
	assert(s.status >= 400 || s.json.status === 'error' || s.json.status === 'creating', 'the import did not fail: ' + s.text);
	await page.goto(CONSOLE + '/apps/' + id);
	const card = page.locator('.sandbox-failed');
	await card.waitFor({timeout: 60000});
	assert(!(await page.getByText(/Start it to see the preview/).count()), '"Start it" without a Start button');
	assert(await page.locator('.composer .blocked').count() === 1, 'the composer is not blocked');
	await shot('fixit-import-failed');
	await axe('app Build (failed import)');
	await card.getByLabel('Repository URL').fill(env.GIT_GOOD);
	await card.getByRole('button', {name: 'Try again'}).click();
	await card.waitFor({state: 'detached', timeout: T}).catch(async (e) => {
		const text = await card.innerText().catch(() => '');
		throw new Error('the failed card stayed after Try again: ' + text.replace(/\s+/g, ' ').slice(0, 400));
	});
	await page.locator('.badge', {hasText: 'Running'}).waitFor({timeout: T});
	const app = (await api('GET', '/v1/apps/' + id)).json;
	assert(app.git && app.git.repo_url === env.GIT_GOOD, 'the URL was not saved: ' + JSON.stringify(app.git));
	const f = await api('GET', `/v1/sandboxes/${app.current_sandbox_id}/files/content?path=index.html`);
	assert(f.status === 200 && /Imported app/.test(f.text), 'the repository was not cloned: ' + f.status);
	await shot('fixit-import-retried');
});

await step('no page error on the way', async () => {
	assert(problems.length === 0, problems.join('\n'));
});

await close();
process.exit(anyFailed() ? 1 : 0);
