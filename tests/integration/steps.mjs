// The cases of the browser tests (*.mjs): step() runs one and prints
// "ok NAME" or "not ok NAME" with the error's first lines; after a failed
// case the later ones, which build on it, are not run.  stepTag() sets a
// suffix for every name (a variant's); anyFailed() for the exit status.
let failed = false;
let tag = '';

export function stepTag(t) {
	tag = t;
}

export function anyFailed() {
	return failed;
}

export async function step(name, fn) {
	if (failed) {
		console.log(`not ok ${name}${tag}\n# not run: an earlier case failed`);
		return;
	}
	try {
		await fn();
		console.log(`ok ${name}${tag}`);
	} catch (e) {
		failed = true;
		console.log(`not ok ${name}${tag}`);
		for (const l of String(e && e.stack ? e.stack : e).split('\n').slice(0, 12)) console.log('# ' + l);
	}
}

export function assert(cond, msg) {
	if (!cond) throw new Error(msg);
}
