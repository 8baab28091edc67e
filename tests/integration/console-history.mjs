// The History tab in a real browser (Debian's Chromium driven by
// playwright-core), against the daemon and the app 90-console-history.sh
// started.  Prints "ok CASE" / "not ok CASE" lines (steps.mjs).
//
// Environment: CONSOLE_URL, API_URL, TOKEN (the first-start token, the
// console's tenant), SETUP_CODE, SHOTS (screenshots, optional), CHROMIUM,
// APP_ID (an app whose sandbox serves edge-app.js), EDGE_PORT.
import http from 'node:http';
import {anyFailed, assert, step} from './steps.mjs';
import {axeCheck} from './axe.mjs';
import {openBrowser, until} from './browser.mjs';

const env = process.env;
const CONSOLE = env.CONSOLE_URL;
const APP = env.APP_ID;
const PASSWORD = 'history kept ' + Math.random().toString(36).slice(2);
const SNAP = 'first good';
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

// GET / of a sandbox's preview through the edge (its Host header).
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

const answers = async (sb) => (await preview(sb)).text.trim() === 'hello from the app';
const sandboxOf = async (app) => (await api('GET', '/v1/apps/' + app)).json().current_sandbox_id;
async function fileOf(app, path) {
	const r = await api('GET', `/v1/sandboxes/${await sandboxOf(app)}/files/content?path=${encodeURIComponent(path)}`);
	return r.status === 200 ? r.text : 'HTTP ' + r.status;
}
const snapshots = async (app) => (await api('GET', `/v1/apps/${app}/snapshots`)).json().snapshots;

const {page, problems, shot, close} = await openBrowser('history');
const dialogs = [];
page.on('dialog', (d) => dialogs.push(d.message()));
const timeline = page.locator('ol.timeline');
const exactly = (t) => new RegExp('^' + t.replace(/[.*+?^${}()|[\]\\]/g, '\\$&') + '$');
const row = (name) => page.locator('table.snaps tbody tr').filter({has: page.locator('.snap-name', {hasText: exactly(name)})});

await step('sign in; History opens on the empty state that says what a snapshot is; axe clean', async () => {
	await page.goto(CONSOLE + '/apps');
	await page.waitForURL(/\/signin\?next=/);
	await page.getByLabel('Setup code').fill(env.SETUP_CODE);
	await page.getByLabel(/New password/).fill(PASSWORD);
	await page.getByLabel('Repeat the password').fill(PASSWORD);
	await page.getByRole('button', {name: /Set password/}).click();
	await page.getByRole('heading', {name: 'Apps'}).waitFor();
	await page.goto(CONSOLE + `/apps/${APP}/history`);
	await page.getByRole('link', {name: 'History'}).and(page.locator('[aria-current=page]')).waitFor();
	await page.getByText('No snapshots yet.').waitFor();
	const empty = await page.locator('.history .empty').innerText();
	assert(/files and its git\s+repository/.test(empty) && /Restore/.test(empty) && /Fork/.test(empty) && /node_modules/.test(empty),
		'the empty state does not explain a snapshot: ' + empty);
	// The app's own creation is on the line already.
	await timeline.locator('li[data-type="app.created"]').waitFor();
	await page.getByText('Live', {exact: true}).waitFor();
	await axeCheck(page, 'History, no snapshots');
	await shot('90-history-empty');
});

await step('Take snapshot: it shows in the list and on the timeline, as the API has it', async () => {
	await page.getByLabel('Snapshot name (optional)').fill(SNAP);
	await page.getByRole('button', {name: 'Take snapshot'}).click();
	await page.getByText(`Snapshot “${SNAP}” taken`).waitFor({timeout: T});
	await row(SNAP).waitFor();
	const list = await snapshots(APP);
	const s = list.find((x) => x.name === SNAP);
	assert(s && s.status === 'ready', 'the API list: ' + JSON.stringify(list).slice(0, 300));
	// On the timeline: the named marker (on its snapshot.taken event).
	await timeline.locator('li.marker-snap', {hasText: SNAP}).waitFor();
	assert(await row(SNAP).getByText(/files/).count() > 0, 'the row does not say how many files');
	await axeCheck(page, 'History, one snapshot');
	await shot('90-history-snapshot');
});

await step('an event made through the API appears on the timeline without a reload', async () => {
	await page.evaluate(() => { window.__sameLoad = 1; });
	const before = await timeline.locator('li[data-type="app.renamed"]').count();
	const r = await api('PATCH', '/v1/apps/' + APP, {name: 'History Renamed'});
	assert(r.status === 200, 'rename: ' + r.status + ' ' + r.text);
	await timeline.locator('li[data-type="app.renamed"]', {hasText: 'History Renamed'}).waitFor({timeout: 15000});
	assert(await timeline.locator('li[data-type="app.renamed"]').count() === before + 1, 'not exactly one new rename row');
	assert(await page.evaluate(() => window.__sameLoad === 1), 'the page was reloaded');
	// Newest first: the rename is the first row.
	assert(await timeline.locator('li').first().getAttribute('data-type') === 'app.renamed', 'the new event is not on top');
});

await step('Load older pages back to the beginning', async () => {
	for (let i = 0; i < 55; i++) {
		const r = await api('PATCH', '/v1/apps/' + APP, {name: 'History ' + i});
		assert(r.status === 200, 'rename ' + i + ': ' + r.status);
	}
	await page.reload();
	await timeline.locator('li').first().waitFor();
	const older = page.getByRole('button', {name: 'Load older'});
	await older.waitFor();
	const first = await timeline.locator('li[data-type]').count();
	assert(first === 50, 'the first page shows ' + first + ' events');
	assert(await timeline.locator('li[data-type="app.created"]').count() === 0, 'the creation is on the first page');
	await older.click();
	await timeline.locator('li[data-type="app.created"]').waitFor();
	assert(await timeline.locator('li[data-type]').count() > 50, 'Load older added nothing');
	await page.getByText('That is the beginning of the kept history.').waitFor();
	// The snapshot's marker stays once: on its event.
	assert(await timeline.locator('li.marker-snap', {hasText: SNAP}).count() === 1, 'the snapshot is not on the line exactly once');
});

await step('a finished task is a checkpoint on the timeline; its Revert puts the files back', async () => {
	const sb = await sandboxOf(APP);
	const t = await api('POST', `/v1/sandboxes/${sb}/tasks`, {prompt: 'Add a note [[fake:write=task-note.txt]] [[fake:content=written by the task]]'});
	assert(t.status === 202, 'the task: ' + t.status + ' ' + t.text);
	const id = t.json().id;
	const done = page.locator(`li[data-type="task.succeeded"]`);
	await done.first().waitFor({timeout: T});
	const task = (await api('GET', `/v1/sandboxes/${sb}/tasks/${id}`)).json();
	assert(task.status === 'succeeded' && task.can_revert, 'the task: ' + JSON.stringify(task).slice(0, 300));
	assert((await fileOf(APP, 'task-note.txt')).trim() === 'written by the task', 'the task did not write its file');
	await done.first().getByText('Checkpoint').waitFor({timeout: 15000});
	const n = dialogs.length;
	await done.first().getByRole('button', {name: /^Revert the task/}).click();
	await page.locator('li[data-type="task.reverted"]').first().waitFor({timeout: T});
	assert(dialogs.length === n + 1 && /Put the files back/.test(dialogs[n]), 'no confirmation before the revert');
	assert(/^HTTP 404/.test(await fileOf(APP, 'task-note.txt')), 'the revert left the task\'s file');
	await done.first().getByText(/reverted/).waitFor({timeout: 15000});
	const at = Date.parse((await api('GET', `/v1/sandboxes/${sb}/tasks/${id}`)).json().reverted_at);
	assert(Math.abs(Date.now() - at) < 600000, 'reverted_at is not now: ' + new Date(at).toISOString());
	assert(await done.first().getByRole('button', {name: /^Revert the task/}).count() === 0, 'Revert is still offered');
	await axeCheck(page, 'History with a checkpoint');
});

await step('Restore by keyboard: the dialog says it can be undone, Escape closes it and gives the focus back; axe clean', async () => {
	const w = await api('PUT', `/v1/sandboxes/${await sandboxOf(APP)}/files?path=marker.txt`, 'after the snapshot\n');
	assert(w.status === 200 || w.status === 201, 'PUT marker.txt: ' + w.status + ' ' + w.text);
	const btn = page.getByRole('button', {name: `Restore “${SNAP}”…`});
	await btn.focus();
	await page.keyboard.press('Enter');
	const dlg = page.getByRole('dialog', {name: `Restore “${SNAP}”?`});
	await dlg.waitFor();
	assert(/undo/i.test(await dlg.innerText()) && /snapshotted first/.test(await dlg.innerText()), 'the dialog does not say it can be undone');
	assert(await page.evaluate(() => !!document.activeElement.closest('dialog')), 'the focus is not in the dialog');
	await axeCheck(page, 'the restore dialog');
	await shot('90-history-restore-dialog');
	await page.keyboard.press('Escape');
	await dlg.waitFor({state: 'detached'});
	assert(await page.evaluate(() => document.activeElement && document.activeElement.getAttribute('aria-label')) === `Restore “${SNAP}”…`,
		'Escape did not give the focus back to the Restore button');
	assert(await fileOf(APP, 'marker.txt') === 'after the snapshot\n', 'Escape restored');
});

await step('a restore while a task runs is refused in place, with the next step and a way to Build', async () => {
	const sb = await sandboxOf(APP);
	const t = await api('POST', `/v1/sandboxes/${sb}/tasks`, {prompt: 'Take a while [[fake:sleep=60]] [[fake:write=slow.txt]]'});
	assert(t.status === 202, 'the task: ' + t.status + ' ' + t.text);
	const id = t.json().id;
	await page.getByRole('button', {name: `Restore “${SNAP}”…`}).click();
	const dlg = page.getByRole('dialog', {name: `Restore “${SNAP}”?`});
	await dlg.getByRole('button', {name: 'Restore', exact: true}).click();
	await dlg.getByRole('alert').waitFor({timeout: T});
	const text = await dlg.innerText();
	assert(/task is running/i.test(text) && /Wait for it to finish, or cancel it in Build, then try again/.test(text),
		'the refusal does not say what to do: ' + text);
	await dlg.getByRole('link', {name: 'Go to Build'}).waitFor();
	assert(await dlg.isVisible(), 'the dialog closed on the error');
	await axeCheck(page, 'the restore refused during a task');
	await shot('90-history-restore-refused');
	await dlg.getByRole('button', {name: 'Cancel'}).click();
	await dlg.waitFor({state: 'detached'});
	const c = await api('POST', `/v1/sandboxes/${sb}/tasks/${id}/cancel`, {});
	assert(c.status === 200, 'cancel: ' + c.status + ' ' + c.text);
	assert(await until(async () => (await api('GET', `/v1/sandboxes/${sb}/tasks/${id}`)).json().status !== 'running', T),
		'the task did not end after its cancel');
	await page.locator('li[data-type="task.cancelled"]').first().waitFor({timeout: 15000});
});

await step('Restore puts the snapshot\'s files back; Undo returns the state before it', async () => {
	await page.getByRole('button', {name: `Restore “${SNAP}”…`}).click();
	const dlg = page.getByRole('dialog', {name: `Restore “${SNAP}”?`});
	await dlg.getByRole('button', {name: 'Restore', exact: true}).click();
	await page.getByText(`Restored to “${SNAP}”.`).waitFor({timeout: T});
	assert(/^HTTP 404/.test(await fileOf(APP, 'marker.txt')), 'marker.txt is still there after the restore');
	await timeline.locator('li[data-type="snapshot.restored"]').first().waitFor({timeout: 15000});
	assert((await snapshots(APP)).some((s) => s.reason === 'before_restore'), 'the API has no snapshot of the state before the restore');
	await page.locator('table.snaps tbody tr', {hasText: 'kept before a restore'}).first().waitFor();
	await axeCheck(page, 'History, restored with Undo');
	await shot('90-history-restored');
	await page.getByRole('button', {name: 'Undo'}).click();
	await page.getByText(/^Undone: the app is back/).waitFor({timeout: T});
	assert(await fileOf(APP, 'marker.txt') === 'after the snapshot\n', 'Undo did not bring marker.txt back: ' + await fileOf(APP, 'marker.txt'));
	const sb = await sandboxOf(APP);
	assert(await until(() => answers(sb), 90000), 'the preview does not answer after the undo: ' + JSON.stringify(await preview(sb)));
});

let forkId;
await step('Fork: the dialog says why secrets and budget stay; the new app opens and its preview answers, the source\'s too', async () => {
	await page.getByRole('button', {name: `Fork “${SNAP}”…`}).click();
	const dlg = page.getByRole('dialog', {name: `Fork “${SNAP}” into a new app`});
	await dlg.waitFor();
	const secrets = dlg.getByLabel('Copy the config and its secrets');
	const budget = dlg.getByLabel('Copy the spending budget');
	assert(!await secrets.isChecked() && !await budget.isChecked(), 'copying secrets or budget is on by default');
	const text = await dlg.innerText();
	assert(/Off by default/.test(text) && /API keys/.test(text) && /limit/.test(text), 'the dialog does not say why: ' + text);
	await axeCheck(page, 'the fork dialog');
	await shot('90-history-fork-dialog');
	await dlg.getByLabel('Name of the new app').fill('History Fork');
	await dlg.getByRole('button', {name: 'Fork', exact: true}).click();
	await page.waitForURL((u) => /^\/apps\/[0-9A-Z]{26}$/.test(u.pathname) && !u.pathname.endsWith(APP), {timeout: T});
	forkId = new URL(page.url()).pathname.split('/')[2];
	const app = (await api('GET', '/v1/apps/' + forkId)).json();
	assert(app.name === 'History Fork', 'the fork\'s name: ' + JSON.stringify(app.name));
	await page.getByRole('heading', {level: 1, name: 'History Fork'}).waitFor();
	const sb = app.current_sandbox_id;
	assert(sb, 'the fork has no sandbox');
	assert(await until(() => answers(sb), T), 'the fork\'s preview does not answer: ' + JSON.stringify(await preview(sb)));
	assert(await answers(await sandboxOf(APP)), 'the source\'s preview stopped answering');
	const ev = (await api('GET', `/v1/apps/${APP}/events?type=app.forked`)).json().events;
	assert(ev.length === 1, 'the source has ' + ev.length + ' app.forked events');
});

await step('Delete a snapshot after a confirmation; the fork\'s History; axe clean', async () => {
	await page.getByRole('link', {name: 'History'}).click();
	await page.getByRole('heading', {name: 'Timeline'}).waitFor();
	const created = timeline.locator('li[data-type="app.created"]');
	await created.waitFor();
	assert(await created.getByRole('link', {name: 'open the source app'}).getAttribute('href') === `/apps/${APP}/history`,
		'the fork\'s creation does not link to its source');
	await axeCheck(page, 'the fork\'s History');
	await created.getByRole('link', {name: 'open the source app'}).click();
	await page.waitForURL((u) => u.pathname === `/apps/${APP}/history`);
	assert(await timeline.locator('li[data-type="app.forked"]').getByRole('link', {name: 'open the new app'}).getAttribute('href') ===
		`/apps/${forkId}/history`, 'the source\'s app.forked does not link to the fork');
	await row(SNAP).waitFor();
	const n = dialogs.length;
	await page.getByRole('button', {name: `Delete “${SNAP}”`}).click();
	await row(SNAP).waitFor({state: 'detached'});
	assert(dialogs.length === n + 1 && /cannot be brought back/.test(dialogs[n]), 'no confirmation: ' + JSON.stringify(dialogs.slice(n)));
	assert(!(await snapshots(APP)).some((s) => s.name === SNAP), 'the API still lists the snapshot');
	await timeline.locator('li[data-type="snapshot.deleted"]').first().waitFor({timeout: 15000});
	await axeCheck(page, 'History after a delete');
	await shot('90-history-after');
});

await step('History fits a phone (390 px, nothing sideways) and passes axe there', async () => {
	await page.setViewportSize({width: 390, height: 844});
	await page.reload();
	await timeline.locator('li').first().waitFor();
	const w = await page.evaluate(() => [document.documentElement.scrollWidth, innerWidth]);
	assert(w[0] <= w[1], 'the page is ' + w[0] + ' px wide in a ' + w[1] + ' px window');
	await axeCheck(page, 'History on a phone');
	await shot('90-history-phone');
	await page.setViewportSize({width: 1440, height: 900});
});

await step('no page errors', async () => {
	assert(problems.length === 0, problems.join('\n'));
});

await close();
process.exit(anyFailed() ? 1 : 0);
