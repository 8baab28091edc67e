// The browser half of bench/console (see there).  Prints the figures.
import http from 'node:http';
import {readFileSync, statSync, readdirSync} from 'node:fs';
import {join} from 'node:path';

const {chromium} = await import(new URL('../console/node_modules/playwright-core/index.mjs', import.meta.url));
const env = process.env;
const origin = new URL(env.CONSOLE_URL);
const now = () => performance.timeOrigin + performance.now();

function req(base, method, path, {headers = {}, body} = {}) {
	const u = new URL(base);
	return new Promise((resolve, reject) => {
		const q = http.request({host: '127.0.0.1', port: u.port, path, method,
			headers: {host: u.host, ...headers, ...(body ? {'content-length': Buffer.byteLength(body)} : {})}}, (r) => {
			let t = '';
			r.on('data', (c) => { t += c; });
			r.on('end', () => resolve({status: r.statusCode, headers: r.headers, text: t}));
		});
		q.on('error', reject);
		q.end(body);
	});
}
const pct = (a, p) => a[Math.min(a.length - 1, Math.floor(p * (a.length - 1)))];
const fmt = (a) => {
	const s = [...a].sort((x, y) => x - y);
	return `${s.length} events  p50 ${pct(s, 0.5).toFixed(2)} ms  p99 ${pct(s, 0.99).toFixed(2)} ms  max ${s[s.length - 1].toFixed(2)} ms`;
};

// --- bundle sizes, from the built files the edge serves ------------------
const dir = env.CONSOLE_DIR;
const html = readFileSync(join(dir, 'index.html'), 'utf8');
const entry = [...html.matchAll(/(?:src|href)="(\/assets\/[^"]+)"/g)].map((m) => m[1]);
const gz = (p) => statSync(join(dir, p) + '.gz').size;
const raw = (p) => statSync(join(dir, p)).size;
const assets = readdirSync(join(dir, 'assets')).filter((f) => !f.endsWith('.gz'));
const editor = assets.filter((f) => f.startsWith('editor-')).map((f) => '/assets/' + f);
const kb = (n) => (n / 1024).toFixed(1) + ' KB';
const sum = (l, f) => l.reduce((a, p) => a + f(p), 0);
console.log('\n  bundle (gzip as served; raw in brackets)');
console.log(`  ${'main (index.html + entry script + CSS)'.padEnd(50)} ${kb(gz('/index.html') + sum(entry, gz))} [${kb(raw('/index.html') + sum(entry, raw))}]  budget 150 KB`);
for (const p of entry) console.log(`    ${p.padEnd(48)} ${kb(gz(p))} [${kb(raw(p))}]`);
console.log(`  ${'editor chunk (CodeMirror, loaded on opening a file)'.padEnd(50)} ${kb(sum(editor, gz))} [${kb(sum(editor, raw))}]`);
const all = assets.map((f) => '/assets/' + f);
console.log(`  ${'every asset (language packs included)'.padEnd(50)} ${kb(sum(all, gz))} [${kb(sum(all, raw))}]`);

// --- a session -------------------------------------------------------------
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

// --- cold first load -------------------------------------------------------
// Each load is a new context: empty cache, no connections kept.  Interactive:
// the apps list rendered from the API (heading and the app's link), so the
// scripts ran, /v1/auth/status and /v1/apps answered and the page can be used.
const loads = [], dcl = [], signin = [];
for (let i = 0; i < Number(env.LOADS); i++) {
	const ctx = await browser.newContext({viewport: {width: 1280, height: 800}});
	await ctx.addCookies([cookie]);
	const page = await ctx.newPage();
	const t0 = now();
	await page.goto(env.CONSOLE_URL + '/apps', {waitUntil: 'commit'});
	await page.getByRole('link', {name: 'b-console'}).waitFor();
	loads.push(now() - t0);
	dcl.push(await page.evaluate(() => performance.getEntriesByType('navigation')[0].domContentLoadedEventEnd));
	await ctx.close();
	const c2 = await browser.newContext();
	const p2 = await c2.newPage();
	const t1 = now();
	await p2.goto(env.CONSOLE_URL + '/apps', {waitUntil: 'commit'});
	await p2.getByRole('button', {name: 'Sign in'}).waitFor();
	signin.push(now() - t1);
	await c2.close();
}
const ms = (a) => {
	const s = [...a].sort((x, y) => x - y);
	return `median ${pct(s, 0.5).toFixed(1)} ms  min ${s[0].toFixed(1)} ms  max ${s[s.length - 1].toFixed(1)} ms`;
};
console.log(`\n  cold first load, ${loads.length} runs each (new browser context: empty cache)`);
console.log(`  ${'/apps signed in -> app list shown'.padEnd(50)} ${ms(loads)}`);
console.log(`  ${'  of which DOMContentLoaded'.padEnd(50)} ${ms(dcl)}`);
console.log(`  ${'/apps signed out -> sign-in form shown'.padEnd(50)} ${ms(signin)}`);

// --- task event -> chat row, beside the SSE endpoint -------------------------
const ctx = await browser.newContext({viewport: {width: 1400, height: 860}});
await ctx.addCookies([cookie]);
const page = await ctx.newPage();
await page.goto(env.CONSOLE_URL + '/apps/' + env.APP);
await page.getByLabel('What should the agent do?').waitFor();
// In the page: when a chat row showing "line K t=<ns>" enters the DOM, and
// the frame after (when it can be painted).
await page.evaluate(() => {
	window.__dom = [];
	window.__frame = [];
	const seen = new Set();
	const t = () => performance.timeOrigin + performance.now();
	new MutationObserver(() => {
		const at = t();
		const fresh = [];
		for (const el of document.querySelectorAll('.current .msg.agent .text')) {
			const mm = /^line (\d+) t=(\d+)/.exec(el.textContent);
			if (mm && !seen.has(mm[1])) {
				seen.add(mm[1]);
				const w = Number(BigInt(mm[2]) / 1000n) / 1000;
				window.__dom.push(at - w);
				fresh.push(w);
			}
		}
		if (fresh.length) requestAnimationFrame(() => { const f = t(); for (const w of fresh) window.__frame.push(f - w); });
	}).observe(document.body, {childList: true, subtree: true, characterData: true});
});
// The task is sent from the chat's own form, as a user does: the chat
// follows it from the POST's answer, and the reference reader starts as
// soon as that answer names the task, long before the agent's first line
// (the checkpoint and the agent's start come first).
const posted = page.waitForResponse((r) => r.request().method() === 'POST' && /\/tasks$/.test(new URL(r.url()).pathname));
await page.getByLabel('What should the agent do?').fill(`[[fake:lines=${env.LINES}]] [[fake:interval_ms=${env.INTERVAL}]]`);
await page.getByRole('button', {name: 'Send'}).click();
const sub = await posted;
if (sub.status() !== 202) throw new Error('submit: ' + sub.status() + ' ' + (await sub.text()));
const task = (await sub.json()).id;
// The reference: the same events, straight from the API's SSE endpoint.
const sse = [];
await new Promise((resolve, reject) => {
	const q = http.request({host: '127.0.0.1', port: new URL(env.API_URL).port,
		path: `/v1/sandboxes/${env.SB}/tasks/${task}/events`, headers: {authorization: 'Bearer ' + env.TOKEN}}, (r) => {
		let buf = '';
		r.setEncoding('utf8');
		r.on('data', (c) => {
			const at = now();
			buf += c;
			let i;
			while ((i = buf.indexOf('\n\n')) >= 0) {
				const ev = buf.slice(0, i);
				buf = buf.slice(i + 2);
				const d = /^data: (.*)$/m.exec(ev);
				if (!d) continue;
				const mm = /^line (\d+) t=(\d+)/.exec((JSON.parse(d[1]) || {}).text || '');
				if (mm) sse.push(at - Number(BigInt(mm[2]) / 1000n) / 1000);
				if (/^event: done$/m.test(ev)) resolve();
			}
		});
		r.on('end', resolve);
	});
	q.on('error', reject);
	q.end();
});
await page.locator('.current .outcome').waitFor({timeout: 120000});
await page.waitForTimeout(500);
const dom = await page.evaluate(() => window.__dom);
const frame = await page.evaluate(() => window.__frame);
console.log(`\n  task event -> seen (${env.LINES} agent lines, one every ${env.INTERVAL} ms, timed from the agent's write)`);
console.log(`  ${'SSE endpoint, read directly (reference)'.padEnd(50)} ${fmt(sse)}`);
console.log(`  ${'console chat row in the DOM'.padEnd(50)} ${fmt(dom)}`);
console.log(`  ${'console chat row, next frame'.padEnd(50)} ${fmt(frame)}`);
await browser.close();
