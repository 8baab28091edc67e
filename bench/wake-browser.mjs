// bench/wake-browser.mjs: bench/wake's rounds in real Chromium (Debian's,
// driven by playwright-core).  From the navigation's start to the app's
// content visible (the react-vite preset's <main class="card"> heading),
// each navigation in a new browser context (empty cache, no kept
// connections), for an app that is (a) running: the reference, what
// the page costs awake; (b) frozen; (c) stopped (the edge's warming page
// turns into the app by itself).  Prints "browser KIND MS" per round,
// after one warm-up round of each, and "stall KIND …" for a round whose
// heading did not show within 20 s (not timed; what was still waiting).  Run by bench/wake, which sets:
// API_URL, TOKEN, SB (sandbox id), PREVIEW_URL, EDGE_PORT, HOST, N,
// CHROMIUM, APP_IP (the container's address, for a stall's diagnosis).
import http from 'node:http';

const {chromium} = await import(new URL('../console/node_modules/playwright-core/index.mjs', import.meta.url));

const env = process.env;
const N = Number(env.N);
const SELECTOR = 'main.card h1';
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const now = () => performance.now();

async function api(method, path, tries = 1) {
	let r, text;
	for (let t = 0; t < tries; t++) {
		r = await fetch(env.API_URL + path, {method, headers: {authorization: 'Bearer ' + env.TOKEN}});
		text = await r.text();
		if (r.status === 200) return JSON.parse(text);
		await sleep(200); // the freezer may refuse for a moment (a task mid-fork)
	}
	throw new Error(`${method} ${path}: HTTP ${r.status} ${text.slice(0, 200)}`);
}

// One GET / through the edge with the preview Host: is it the app?
function appAnswers() {
	return new Promise((resolve) => {
		const req = http.get({host: '127.0.0.1', port: Number(env.EDGE_PORT), path: '/',
			headers: {host: env.HOST, connection: 'close'}, timeout: 5000}, (res) => {
			let body = '';
			res.on('data', (d) => (body += d));
			res.on('end', () => resolve(res.statusCode === 200 && !res.headers['x-sandboxd-preview'] &&
				body.includes('id="root"')));
		});
		req.on('error', () => resolve(false));
		req.on('timeout', () => req.destroy());
	});
}

async function settleRunning() {
	await api('POST', `/v1/sandboxes/${env.SB}/start`);
	const end = Date.now() + 120000;
	while (!(await appAnswers())) {
		if (Date.now() > end) throw new Error('the app does not answer after a start');
		await sleep(50);
	}
}

const browser = await chromium.launch({
	executablePath: env.CHROMIUM, headless: true,
	args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
		'--disable-background-networking', '--disable-component-update', '--disable-sync'],
});

// One GET of path on a new connection, to host:port with a Host header:
// "status in ms" or what went wrong, within 5 s.
function probe(host, port, hosthdr, path) {
	const t0 = now();
	return new Promise((resolve) => {
		const req = http.get({host, port, path, headers: {host: hosthdr, connection: 'close'}, timeout: 5000}, (res) => {
			res.resume();
			res.on('end', () => resolve(`${res.statusCode} in ${(now() - t0).toFixed(0)} ms`));
		});
		req.on('error', (e) => resolve(e.code || e.message));
		req.on('timeout', () => {
			resolve('no answer in 5 s');
			req.destroy();
		});
	});
}

// Navigation start -> SELECTOR visible, in ms, or null for a stall: the
// heading not visible within STALL_MS.  A stall is printed ("stall KIND
// …": the requests still without an answer, and each asked again through
// the edge and straight from the container) and the round is not timed.
const STALL_MS = 20000;
async function visit(kind) {
	const ctx = await browser.newContext({viewport: {width: 1280, height: 800}});
	const page = await ctx.newPage();
	const pending = new Map();
	page.on('request', (r) => pending.set(r, r.url()));
	page.on('requestfinished', (r) => pending.delete(r));
	page.on('requestfailed', (r) => pending.delete(r));
	const t0 = now();
	try {
		await page.goto(env.PREVIEW_URL, {waitUntil: 'commit', timeout: STALL_MS});
		// Survives the warming page's reload into the app.
		await page.locator(SELECTOR).waitFor({state: 'visible', timeout: STALL_MS});
		return now() - t0;
	} catch (e) {
		const waiting = [...pending.values()].map((u) => new URL(u).pathname);
		const again = [];
		for (const p of waiting.slice(0, 4)) {
			const viaEdge = await probe('127.0.0.1', Number(env.EDGE_PORT), env.HOST, p);
			const direct = env.APP_IP ? await probe(env.APP_IP, 3000, 'localhost:3000', p) : '-';
			again.push(`${p}: edge ${viaEdge}, direct ${direct}`);
		}
		console.log(`stall ${kind} ${(now() - t0).toFixed(0)} ms: ${e.message.split('\n')[0]}; ` +
			`no answer yet to: ${waiting.join(' ') || '-'}; asked again: ${again.join('; ') || '-'}`);
		return null;
	} finally {
		await ctx.close();
	}
}

const rounds = {
	async running() {
		await settleRunning();
		await sleep(2000); // idle, as before a freeze
		return visit('running');
	},
	async frozen() {
		await settleRunning();
		await sleep(2000); // a just-started Vite is still busy for a moment
		const sb = await api('POST', `/v1/sandboxes/${env.SB}/freeze`, 10);
		if (!sb.frozen) throw new Error('freeze did not freeze: ' + JSON.stringify(sb));
		await sleep(300);
		return visit('frozen');
	},
	async stopped() {
		await api('POST', `/v1/sandboxes/${env.SB}/stop`);
		const end = Date.now() + 60000;
		while ((await api('GET', `/v1/sandboxes/${env.SB}`)).status !== 'stopped') {
			if (Date.now() > end) throw new Error('the sandbox does not stop');
			await sleep(50);
		}
		await sleep(300);
		return visit('stopped');
	},
};

try {
	const kinds = ['running', 'frozen', 'stopped'];
	for (let i = 0; i <= N; i++) { // round 0 is a warm-up
		const order = i % 2 ? kinds : [...kinds].reverse();
		for (const k of order) {
			const ms = await rounds[k]();
			if (i && ms !== null) console.log(`browser ${k} ${ms.toFixed(1)}`);
		}
	}
	await settleRunning();
} finally {
	await browser.close();
}
