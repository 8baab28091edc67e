// The console's one door to /v1: same origin, the session cookie, the CSRF
// token on every write, the error envelope's message on failure.  A 401
// while signed in ends the session in place: auth.session_ended is set,
// the page and its drafts stay, and the user signs in again through
// signInAgain(), which comes back to the same place.
import {flushDrafts} from './drafts.js';
import {leaveWithoutAsking} from './guard.js';

let auth = null; // the last GET /v1/auth/status answer
const listeners = new Set();

export class ApiError extends Error {
	constructor(status, code, message, headers) {
		super(message);
		this.status = status;
		this.code = code;
		this.headers = headers;
	}
}

export function onAuthChange(fn) {
	listeners.add(fn);
	return () => listeners.delete(fn);
}

function setAuth(a) {
	auth = a;
	for (const fn of listeners) fn(a);
}

export function authState() {
	return auth;
}

export async function loadAuth() {
	const r = await fetch('/v1/auth/status', {credentials: 'same-origin'});
	if (!r.ok) throw await toError(r);
	setAuth(await r.json());
	return auth;
}

async function toError(r) {
	let code = 'http_' + r.status, message = `The server answered ${r.status}.`;
	try {
		const j = await r.json();
		if (j && j.error) {
			code = j.error.code || code;
			message = j.error.message || message;
		}
	} catch (_) { /* not JSON */ }
	return new ApiError(r.status, code, message, r.headers);
}

function signedOut() {
	flushDrafts();
	if (auth && auth.signed_in && !location.pathname.startsWith('/signin')) {
		if (!auth.session_ended) setAuth({...auth, session_ended: true});
		return;
	}
	toSignIn();
}

function toSignIn() {
	if (auth) setAuth({...auth, signed_in: false, session_ended: false, csrf_token: null});
	if (!location.pathname.startsWith('/signin')) {
		const back = location.pathname + location.search;
		leaveWithoutAsking(() => {
			history.pushState(null, '', '/signin?next=' + encodeURIComponent(back));
			dispatchEvent(new PopStateEvent('popstate'));
		});
	}
}

// After the session ended: to sign-in, then back here (the drafts are in
// localStorage already).
export function signInAgain() {
	flushDrafts();
	toSignIn();
}

// request(method, path, {json, body, headers, raw}) -> parsed JSON, or the
// Response itself with raw.
export async function request(method, path, opts = {}) {
	const headers = {...(opts.headers || {})};
	let body = opts.body;
	if (opts.json !== undefined) {
		body = JSON.stringify(opts.json);
		headers['content-type'] = 'application/json';
	}
	if (method !== 'GET' && method !== 'HEAD') {
		if (!headers['content-type']) headers['content-type'] = 'application/json';
		if (auth && auth.csrf_token) headers['x-csrf-token'] = auth.csrf_token;
	}
	let r;
	try {
		r = await fetch(path, {method, headers, body, credentials: 'same-origin'});
	} catch (e) {
		throw new ApiError(0, 'network', 'Cannot reach sandboxd. Check that it runs and the connection is up.');
	}
	if (r.status === 401 && !path.startsWith('/v1/auth/')) {
		signedOut();
		const e = await toError(r);
		e.message = 'Your session ended. Sign in to continue.';
		throw e;
	}
	if (!r.ok) throw await toError(r);
	if (opts.raw) return r;
	if (r.status === 204) return null;
	const text = await r.text();
	return text ? JSON.parse(text) : null;
}

export const get = (p, o) => request('GET', p, o);
export const post = (p, json, o = {}) => request('POST', p, {...o, json: json === undefined ? {} : json});
export const patch = (p, json) => request('PATCH', p, {json});
export const put = (p, json) => request('PUT', p, {json});
export const del = (p) => request('DELETE', p);

export async function signIn(kind, body) {
	const a = await request('POST', '/v1/auth/' + kind, {json: body});
	setAuth(a);
	return a;
}

export async function signOut(all) {
	try {
		await request('POST', '/v1/auth/logout' + (all ? '?all=true' : ''), {json: {}});
	} finally {
		await loadAuth().catch(() => setAuth({...auth, signed_in: false}));
	}
}

export const enc = encodeURIComponent;
