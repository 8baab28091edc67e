#!/usr/bin/env bash
# The test npm registry (tests/registry, filled by scripts/bootstrap from
# the starters' lockfiles) is enough for every starter: `npm ci` of each
# lockfile under tests/fixtures/starters, run inside the registry's own
# network namespace (nothing but the registry is reachable there) with a
# fresh cache, installs it, install scripts included; the packuments name
# tarballs on the registry's own URL, scoped names are served both ways,
# an unknown package and a path outside the layout are 404.
. "$(dirname "$0")/lib.sh"
command -v npm >/dev/null || bail "npm is missing (scripts/bootstrap installs it)"

start_npm_registry

t_begin "packuments and tarballs on the registry's own URL; unknown and odd paths are 404"
doc=$(curl -s --max-time 10 "${NPM_REG_URL}@vitejs%2fplugin-react")
jq -e --arg u "$NPM_REG_URL" '.name == "@vitejs/plugin-react" and
	all(.versions[]; .dist.tarball | startswith($u + "@vitejs/plugin-react/-/plugin-react-"))' \
	<<<"$doc" >/dev/null || t_err "the scoped packument: $(head -c 300 <<<"$doc")"
[[ $(curl -s --max-time 10 "${NPM_REG_URL}@vitejs/plugin-react" | jq -r .name) == @vitejs/plugin-react ]] ||
	t_err "the scoped name unencoded is not served"
tgz=$(jq -r '.versions[].dist.tarball' <<<"$doc" | head -n 1)
sum=$(jq -r '.versions[].dist.shasum' <<<"$doc" | head -n 1)
[[ $(curl -s --max-time 10 "$tgz" | sha1sum | cut -d' ' -f1) == "$sum" ]] || t_err "the tarball's sha1 is not its packument's"
for p in no-such-package-here 'vite/-/..%2f..%2fstamp' '..%2f..%2fetc%2fpasswd' '-/v1/search?text=x'; do
	code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 10 "$NPM_REG_URL$p")
	[[ $code == 404 ]] || t_err "GET /$p: $code, not 404"
done
t_end

t_begin "npm ci of every starter's lockfile from the registry alone"
n=0
while IFS= read -r lock; do
	d=$(dirname "$lock")
	id=${d#"$IT_ROOT/tests/fixtures/starters/"}
	w=$IT_TMP/ci/$id
	mkdir -p "$w"
	(cd "$d" && tar --exclude=node_modules -cf - .) | tar -xf - -C "$w"
	if ! (cd "$w" && ip netns exec "$NPM_REG_NS" npm ci --registry "$NPM_REG_URL" \
		--cache "$IT_TMP/cache.$n" --no-audit --no-fund --loglevel=error) >"$IT_TMP/npm.log" 2>&1; then
		t_err "npm ci of $id failed: $(tail -n 5 "$IT_TMP/npm.log")"
	elif [[ ! -f $w/node_modules/.package-lock.json ]]; then
		t_err "npm ci of $id left no node_modules/.package-lock.json"
	fi
	rm -rf "$w" "$IT_TMP/cache.$n"
	n=$((n + 1))
done < <(find "$IT_ROOT/tests/fixtures/starters" -name package-lock.json -not -path '*/node_modules/*' \
	-not -path '*/bad-*' | sort)
((n >= 6)) || t_err "only $n lockfiles"
note "$n starters installed with $(npm_reg_requests) requests to the registry"
t_end

finish
