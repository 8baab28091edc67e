// The console's build: Preact, hashed assets, no inline script or style
// (the console's CSP forbids them), and a .gz copy of every text asset for
// the daemon to serve precompressed.
import {defineConfig} from 'vite';
import preact from '@preact/preset-vite';
import {gzipSync, constants} from 'node:zlib';
import {readdirSync, readFileSync, statSync, writeFileSync} from 'node:fs';
import {join} from 'node:path';

const TEXT = /\.(js|mjs|css|html|svg|json|txt|map|webmanifest)$/;

function precompress() {
	let outDir;
	return {
		name: 'sandboxd-precompress',
		apply: 'build',
		configResolved(c) { outDir = c.build.outDir; },
		closeBundle() {
			const walk = (d) => {
				for (const n of readdirSync(d)) {
					const p = join(d, n);
					if (statSync(p).isDirectory()) walk(p);
					else if (TEXT.test(n)) writeFileSync(p + '.gz', gzipSync(readFileSync(p), {level: constants.Z_BEST_COMPRESSION}));
				}
			};
			walk(outDir);
		},
	};
}

// xterm.js makes <style> elements, which the console's CSP refuses: it
// makes <sbx-style> ones instead (src/termstyle.js).  The build fails if
// xterm no longer makes exactly the three this expects (a new version:
// look again).
function xtermStyles() {
	return {
		name: 'sandboxd-xterm-styles',
		transform(code, id) {
			if (!/@xterm[\\/]xterm[\\/]lib[\\/]xterm\.mjs$/.test(id)) return null;
			const n = code.split('createElement("style")').length - 1;
			if (n !== 3) this.error(`xterm.js makes ${n} <style> elements, not 3: see xtermStyles in vite.config.js`);
			return {code: code.replaceAll('createElement("style")', 'createElement("sbx-style")'), map: null};
		},
	};
}

export default defineConfig({
	plugins: [preact({devToolsInProd: false, prefreshEnabled: false}), precompress(), xtermStyles()],
	build: {
		outDir: process.env.CONSOLE_OUT || 'dist',
		emptyOutDir: true,
		assetsInlineLimit: 0,
		modulePreload: {polyfill: false},
		sourcemap: false,
		target: 'es2020',
		reportCompressedSize: true,
	},
});
