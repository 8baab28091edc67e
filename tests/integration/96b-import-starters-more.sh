#!/usr/bin/env bash
# Import of real starters, continued (96 says how): vite-vue, sveltekit
# (sv create) and an npm-workspaces monorepo whose app is apps/web (a
# create-vite starter importing packages/shared): each gets a sandbox.yaml
# written by detection and committed alone, installs from the test
# registry and previews its own page; runtime-inspect names the framework
# and, for the monorepo, the sub-directory.
. "$(dirname "$0")/lib.sh"
need_docker

IDS=(vite-vue sveltekit monorepo)
STARTERS_ENV=()
starters_daemon "${IDS[@]}"

t_begin "vite-vue, sveltekit and the monorepo import, install from the registry and preview"
declare -A SBS APPS
pairs=()
for id in "${IDS[@]}"; do
	import_starter "$id" || bail "cannot import $id: ${T_ERRS[*]}"
	SBS[$id]=$SB APPS[$id]=$APP
	pairs+=("$id=$SB")
done
wait_starters 170 "${pairs[@]}"
for id in "${IDS[@]}"; do
	check_detected "$id" "${APPS[$id]}" "${SBS[$id]}"
done
t_end

t_begin "the monorepo's app is apps/web and its workspace package is linked in"
M=$DATA/workspaces/${SBS[monorepo]}/workspace/app
[[ -L $M/node_modules/@starter/shared || -d $M/node_modules/@starter/shared ]] ||
	t_err "node_modules/@starter/shared is missing: $(ls -A "$M/node_modules/@starter" 2>&1 | head -c 200)"
# Vite serves main.js with the workspace package's import resolved to its
# file under packages/shared: that module is the shared greeting.
MHOST=s-${SBS[monorepo]}-3000.preview.localhost:$EDGE_PORT
body=$(ecurl "$MHOST" /main.js)
shared=$(grep -oE "from ['\"][^'\"]*packages/shared/[^'\"]*['\"]" <<<"$body" | head -n 1 | sed -E "s/^from ['\"]//; s/['\"]$//")
if [[ -z $shared ]]; then
	t_err "/main.js does not import packages/shared: $(grep -i shared <<<"$body" | head -n 3)"
else
	[[ $(ecurl "$MHOST" "$shared") == *"Hello from the shared package"* ]] ||
		t_err "$shared is not the shared package's module: $(ecurl "$MHOST" "$shared" | head -c 200)"
fi
api GET "/v1/apps/${APPS[monorepo]}/runtime-inspect"
expect_jq '(.detection.reasons | join(" ")) | test("workspace|apps/web")' 'a reason names the workspace' ||
	note "reasons: $(jq -c .detection.reasons <<<"$BODY")"
t_end

finish
