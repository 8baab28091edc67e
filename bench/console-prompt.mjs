// The browser half of bench/console-prompt (see there).  Prints the figures.
import http from 'node:http';

const {chromium} = await import(new URL('../console/node_modules/playwright-core/index.mjs', import.meta.url));
const env = process.env;
const origin = new URL(env.CONSOLE_URL);
const now = () => performance.timeOrigin + performance.now();
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function req(base, method, path, {headers = {}, body, host} = {}) {
	const u = new URL(base);
	return new Promise((resolve, reject) => {
		const q = http.request({host: '127.0.0.1', port: u.port, path, method,
			headers: {host: host || u.host, ...headers, ...(body ? {'content-length': Buffer.byteLength(body)} : {})}}, (r) => {
			let t = '';
			r.on('data', (c) => { t += c; });
			r.on('end', () => resolve({status: r.statusCode, headers: r.headers, text: t}));
		});
		q.on('error', reject);
		q.end(body);
	});
}
const api = (method, path, json) => req(env.API_URL, method, path, {
	headers: {authorization: 'Bearer ' + env.TOKEN, 'content-type': 'application/json'},
	body: json === undefined ? undefined : JSON.stringify(json),
}).then((r) => ({...r, json: r.text ? JSON.parse(r.text) : null}));

// The prompt: the fake provider has OpenCode write App.jsx with a mark of
// the round, so both readers wait for the same change.
const prompt = (mark) => 'A shopping list where I can add items. ' +
	'[[provider:write=src/App.jsx]] [[provider:content=export default function App() {\n' +
	`  return <main><h1>List ${mark}</h1><p>Add items here.</p></main>;\n}\n]]`;

const stats = (a) => {
	const s = [...a].sort((x, y) => x - y);
	const med = s[Math.floor((s.length - 1) / 2)];
	return `median ${(med / 1000).toFixed(2)} s  (min ${(s[0] / 1000).toFixed(2)}, max ${(s[s.length - 1] / 1000).toFixed(2)}, n=${s.length})`;
};

// --- the reference: the API alone ------------------------------------------
// The preview's text, through the edge (the Host names the preview).
async function previewHas(url, mark) {
	const u = new URL(url);
	// Vite serves index.html and compiles App.jsx on request: ask for the module.
	const r = await req(`http://127.0.0.1:${env.EDGE_PORT}`, 'GET', '/src/App.jsx', {host: u.host}).catch(() => null);
	return !!r && r.status === 200 && r.text.includes(mark);
}

async function viaApi(mark) {
	const t = {};
	const t0 = now();
	const app = await api('POST', '/v1/apps', {name: 'bench api ' + mark, runtime_preset: 'react-vite'});
	if (app.status !== 201) throw new Error('create app: ' + app.status + ' ' + app.text);
	const sb = await api('POST', `/v1/apps/${app.json.id}/sandbox`, {});
	if (sb.status !== 201) throw new Error('create sandbox: ' + sb.status + ' ' + sb.text);
	const task = await api('POST', `/v1/sandboxes/${sb.json.id}/tasks`, {prompt: prompt(mark)});
	if (task.status !== 202) throw new Error('task: ' + task.status + ' ' + task.text);
	t.page = now() - t0;
	// The task's events, as a raw SSE reader sees them.
	const events = new Promise((resolve, reject) => {
		const q = http.request({host: '127.0.0.1', port: new URL(env.API_URL).port, method: 'GET',
			path: `/v1/sandboxes/${sb.json.id}/tasks/${task.json.id}/events`,
			headers: {authorization: 'Bearer ' + env.TOKEN, accept: 'text/event-stream'}}, (r) => {
			let buf = '';
			r.on('data', (c) => {
				buf += c;
				if (t.first == null && /\nevent: /.test('\n' + buf)) t.first = now() - t0;
				if (t.agent == null && /event: (tool|message)\n/.test(buf)) t.agent = now() - t0;
				if (/event: done\n/.test(buf)) { t.done = now() - t0; r.destroy(); resolve(); }
			});
			r.on('error', () => resolve());
			r.on('end', resolve);
		});
		q.on('error', reject);
		q.end();
	});
	let url = null;
	while (!t.preview && now() - t0 < 180000) {
		if (!url) {
			const s = await api('GET', `/v1/sandboxes/${sb.json.id}`);
			url = s.json && s.json.preview && s.json.preview.url;
		}
		if (url && await previewHas(url, mark)) t.preview = now() - t0;
		else await sleep(100);
	}
	await events;
	await api('DELETE', `/v1/apps/${app.json.id}`);
	return t;
}

// --- the console ------------------------------------------------------------
const setup = await req(env.CONSOLE_URL, 'POST', '/v1/auth/setup', {
	headers: {'content-type': 'application/json', origin: origin.origin},
	body: JSON.stringify({setup_code: env.SETUP_CODE, password: 'bench password ' + Math.random()}),
});
if (setup.status !== 200) throw new Error('setup: ' + setup.status + ' ' + setup.text);
const m = /sbx_session=([^;]+)/.exec([].concat(setup.headers['set-cookie']).join('\n'));
const cookie = {name: 'sbx_session', value: m[1], domain: origin.hostname, path: '/', httpOnly: true, sameSite: 'Strict'};

const browser = await chromium.launch({
	executablePath: env.CHROMIUM, headless: true,
	args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
		'--disable-background-networking', '--disable-component-update', '--disable-sync'],
});

async function viaConsole(mark) {
	const ctx = await browser.newContext({viewport: {width: 1440, height: 900}});
	await ctx.addCookies([cookie]);
	const page = await ctx.newPage();
	const t = {};
	await page.goto(env.CONSOLE_URL + '/apps', {waitUntil: 'commit'});
	const box = page.locator('form', {has: page.getByRole('button', {name: /build it/i})}).locator('textarea').first();
	await box.waitFor();
	t.fcp = await page.evaluate(() => {
		const e = performance.getEntriesByName('first-contentful-paint')[0];
		return e ? e.startTime : NaN;
	});
	await box.fill(prompt(mark));
	const t0 = now();
	await page.getByRole('button', {name: /build it/i}).click();
	await page.waitForURL(/\/apps\/[^/]+$/, {timeout: 60000});
	t.page = now() - t0;
	// Polled every 50 ms in the page: the first row of the chat, the first
	// agent row, the outcome; the preview frame's heading.
	const seen = {};
	while (now() - t0 < 180000 && !(seen.done && seen.preview)) {
		const s = await page.evaluate(() => ({
			first: !!document.querySelector('.chat .events li, .chat .current .working'),
			agent: !!document.querySelector('.chat .events li.tool, .chat .events li.msg.agent'),
			done: !!document.querySelector('.chat .outcome'),
		}));
		for (const k of ['first', 'agent', 'done']) if (s[k] && seen[k] == null) seen[k] = now() - t0;
		if (seen.preview == null) {
			for (const f of page.frames()) {
				if (f === page.mainFrame()) continue;
				const h = await f.evaluate(() => document.body ? document.body.innerText : '').catch(() => '');
				if (h.includes('List ' + mark)) { seen.preview = now() - t0; break; }
			}
		}
		await sleep(50);
	}
	Object.assign(t, seen);
	const id = new URL(page.url()).pathname.split('/')[2];
	await ctx.close();
	await api('DELETE', `/v1/apps/${id}`);
	return t;
}

const rows = {console: [], api: []};
for (let i = 0; i < Number(env.N); i++) {
	rows.console.push(await viaConsole('c' + i + Math.random().toString(36).slice(2, 7)));
	rows.api.push(await viaApi('a' + i + Math.random().toString(36).slice(2, 7)));
}
await browser.close();

const col = (who, k) => rows[who].map((r) => r[k]).filter((x) => x != null && !Number.isNaN(x));
console.log('\n  console prompt → preview (real OpenCode, fake provider), reference: the API alone');
console.log(`  ${'first contentful paint of Apps'.padEnd(44)} console ${col('console', 'fcp').map((x) => x.toFixed(0) + ' ms').join(', ')}`);
for (const [k, label] of [['page', 'Build it → app page (API: 3 calls)'], ['first', '→ first visible progress'],
	['agent', '→ first agent event'], ['preview', '→ the change in the preview'], ['done', '→ Done']]) {
	const c = col('console', k), a = col('api', k);
	console.log(`  ${label.padEnd(44)} console ${c.length ? stats(c) : 'never'}`);
	console.log(`  ${''.padEnd(44)} API     ${a.length ? stats(a) : 'never'}`);
}
