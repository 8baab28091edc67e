#!/usr/bin/env bash
# Fills the test npm registry: every package of every lockfile under
# tests/fixtures/starters, as the tarballs npm fetched and a packument per
# package name, under DIR (default build/test-registry), for serve.py.
#
# Each lockfile is installed on this host with the machine's configured npm
# into a private cache (npm ci --ignore-scripts: no package's code runs),
# which brings the tarballs of this platform's optional packages too (the
# sandboxes are linux-x64 glibc, as the host); then export.js copies every
# lockfile entry's tarball out of that cache by its integrity and
# packuments.py writes the packuments.  Idempotent: skipped when DIR's stamp
# is the hash of the lockfiles and of these scripts.
#
#   tests/registry/build.sh [DIR]
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
dir=${1:-$repo/build/test-registry}
fixtures=$repo/tests/fixtures/starters

say() { printf 'test-registry: %s\n' "$*"; }
die() { printf 'test-registry: error: %s\n' "$*" >&2; exit 1; }

command -v npm >/dev/null || die "npm is missing (scripts/bootstrap installs it)"
mapfile -t locks < <(cd "$fixtures" && find . -name package-lock.json -not -path '*/node_modules/*' | sort)
((${#locks[@]} > 0)) || die "no lockfile under $fixtures"

stamp=$( (
	cd "$fixtures" && for l in "${locks[@]}"; do
		sha256sum "$l" "$(dirname "$l")/package.json"
	done
	cd "$here" && sha256sum build.sh export.js packuments.py
) | sha256sum | cut -d' ' -f1)
if [[ -f $dir/stamp && $(cat "$dir/stamp") == "$stamp" && -d $dir/packuments ]]; then
	say "up to date ($dir)"
	exit 0
fi

mkdir -p "$dir"
rm -f "$dir/stamp"
cache=$dir/cache
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

npm_dir=$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")
[[ -d $npm_dir/node_modules/cacache ]] || die "npm's cacache module is not in $npm_dir"

for l in "${locks[@]}"; do
	d=$(dirname "$l")
	say "npm ci ${d#./}"
	mkdir -p "$work/$d"
	# The starter without any node_modules: a workspace's members too.
	(cd "$fixtures/$d" && tar --exclude=node_modules -cf - .) | tar -xf - -C "$work/$d"
	(cd "$work/$d" && npm ci --ignore-scripts --no-audit --no-fund --cache "$cache" \
		--loglevel=error >"$work/npm.log" 2>&1) || {
		tail -n 20 "$work/npm.log" >&2
		die "npm ci failed for ${d#./}"
	}
	rm -rf "$work/$d"
done

say "exporting tarballs"
NODE_PATH=$npm_dir/node_modules node "$here/export.js" "$cache" "$dir" \
	"${locks[@]/#/$fixtures/}"
say "writing packuments"
python3 "$here/packuments.py" "$dir"
printf '%s\n' "$stamp" >"$dir/stamp"
say "done: $(find "$dir/tarballs" -name '*.tgz' | wc -l) tarballs in $dir"
