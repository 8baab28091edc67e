// axe-core (a devDependency of the console, console/package-lock.json) run
// inside a page of the browser tests: axeCheck(page, what) throws with each
// violation's rule, impact and first targets unless the page has none.
// The rules are axe's defaults (WCAG 2 A/AA and best practices).
import {readFileSync} from 'node:fs';

const source = readFileSync(new URL('../../console/node_modules/axe-core/axe.min.js', import.meta.url), 'utf8');

export async function axeCheck(page, what) {
	// The console's CSP refuses inline scripts from the page, not from the
	// driver: evaluate() runs in the page's world over the protocol.
	await page.evaluate(source);
	const res = await page.evaluate(async () => {
		// eslint-disable-next-line no-undef
		const r = await axe.run(document, {resultTypes: ['violations']});
		return r.violations.map((v) => ({id: v.id, impact: v.impact, help: v.help,
			targets: v.nodes.slice(0, 3).map((n) => n.target.join(' '))}));
	});
	if (res.length) {
		const lines = res.map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.targets.join(' | ')}`);
		throw new Error(`axe on ${what}: ${res.length} violation(s)\n${lines.join('\n')}`);
	}
	return res.length;
}
