// export.js CACHE DIR LOCKFILE...: copies the tarball of every entry of the
// lockfiles out of npm's cache CACHE (its _cacache, by integrity) to
// DIR/tarballs/<the path of its registry URL>, and writes DIR/index.tsv
// (path, integrity, lockfile name) for packuments.py.  An entry missing
// from the cache is an error unless it is optional (another platform's
// native package, which npm does not fetch here).
'use strict';
const cacache = require('cacache');
const fs = require('fs');
const path = require('path');

async function main() {
	const [cache, dir, ...locks] = process.argv.slice(2);
	const store = path.join(cache, '_cacache');
	const seen = new Map();
	for (const f of locks) {
		const lock = JSON.parse(fs.readFileSync(f, 'utf8'));
		for (const [key, e] of Object.entries(lock.packages || {})) {
			if (!key || e.link || !e.integrity)
				continue;
			// Lockfiles here carry no resolved URL (no registry host in
			// the repository): the path is the registry's usual one.
			const name = e.name || key.slice(key.lastIndexOf('node_modules/') + 13);
			const p = e.resolved ? decodeURIComponent(new URL(e.resolved).pathname)
				: `/${name}/-/${name.replace(/^@[^/]+\//, '')}-${e.version}.tgz`;
			if (!/^\/(@[^/]+\/)?[^/@]+\/-\/[^/]+\.tgz$/.test(p))
				throw new Error(`${f}: ${key}: odd tarball path ${p}`);
			if (!seen.has(p))
				seen.set(p, { integrity: e.integrity, optional: !!e.optional, from: f });
			else if (!e.optional)
				seen.get(p).optional = false;
		}
	}
	let copied = 0, kept = 0, skipped = [];
	const index = [];
	for (const [p, e] of seen) {
		const out = path.join(dir, 'tarballs', p);
		if (fs.existsSync(out)) {
			kept++;
			index.push(`${p}\t${e.integrity}`);
			continue;
		}
		let data;
		try {
			data = await cacache.get.byDigest(store, e.integrity);
		} catch (err) {
			if (e.optional) {
				skipped.push(p);
				continue;
			}
			throw new Error(`${p} (from ${e.from}) is not in the cache: ${err.code || err.message}`);
		}
		fs.mkdirSync(path.dirname(out), { recursive: true });
		fs.writeFileSync(out + '.tmp', data);
		fs.renameSync(out + '.tmp', out);
		copied++;
		index.push(`${p}\t${e.integrity}`);
	}
	fs.writeFileSync(path.join(dir, 'index.tsv'), index.sort().join('\n') + '\n');
	console.log(`test-registry: ${copied} tarballs copied, ${kept} kept, ` +
		`${skipped.length} optional ones of other platforms skipped`);
}

main().catch((err) => {
	console.error(`test-registry: error: ${err.message}`);
	process.exit(1);
});
