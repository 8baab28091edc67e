#!/usr/bin/env bash
# Import of real starters, continued (96 says how): Django (startproject),
# Flask and FastAPI (their quickstarts) detected, written, committed and
# previewing their own page with the packages of the image (no Python
# index reached); and the repositories that cannot run as they are each
# get a clear status: two apps side by side without a workspace (one is
# chosen, a warning names both), nothing to run (the manifest error names
# what was looked for), a package.json that is not JSON (said so).
. "$(dirname "$0")/lib.sh"
need_docker

IDS=(django flask fastapi)
STARTERS_ENV=()
starters_daemon "${IDS[@]}" bad-two-apps bad-none bad-broken

t_begin "django, flask and fastapi import and preview"
declare -A SBS APPS
pairs=()
for id in "${IDS[@]}"; do
	import_starter "$id" || bail "cannot import $id: ${T_ERRS[*]}"
	SBS[$id]=$SB APPS[$id]=$APP
	pairs+=("$id=$SB")
done
wait_starters 120 "${pairs[@]}"
for id in "${IDS[@]}"; do
	check_detected "$id" "${APPS[$id]}" "${SBS[$id]}"
done
t_end

# manifest_error SB TEXT: the sandbox's manifest is invalid, its error has TEXT.
manifest_error() {
	api GET "/v1/sandboxes/$1"
	[[ $(j .manifest.valid) == false && $(j .manifest.error) == *"$2"* ]]
}

t_begin "two apps without a workspace: one chosen, a warning names both"
import_starter bad-two-apps || bail "cannot import bad-two-apps: ${T_ERRS[*]}"
TWO=$APP TWO_SB=$SB
api GET "/v1/apps/$TWO/runtime-inspect"
expect_status 200 &&
	expect_jq '.detection.recipe | IN("nextjs","node-express")' 'nextjs or express chosen' &&
	expect_jq '.detection.dir | IN("apps/a","apps/b")' 'in apps/a or apps/b' &&
	expect_jq '[.detection.candidates[].dir] | (index("apps/a") != null and index("apps/b") != null)' \
		'both are candidates' &&
	expect_jq '[.warnings[]?, .detection.warnings[]?] | any(contains("apps/a") and contains("apps/b"))' \
		'a warning names both'
a=$DATA/workspaces/$TWO_SB/workspace/app
[[ $(head -n 1 "$a/sandbox.yaml" 2>/dev/null) == "# Written by sandboxd"* ]] || t_err "no sandbox.yaml written"
grep -q 'apps/' "$a/sandbox.yaml" || t_err "sandbox.yaml does not run the chosen sub-directory: $(head -n 20 "$a/sandbox.yaml")"
t_end

t_begin "nothing to run: the status says what was looked for"
import_starter bad-none || bail "cannot import bad-none: ${T_ERRS[*]}"
NONE=$APP NONE_SB=$SB
wait_until 30 manifest_error "$NONE_SB" "no framework detected" ||
	t_err "the status's manifest: $(jq -c .manifest <<<"$BODY")"
err=$(j .manifest.error)
[[ $err == *package.json* && $err == *requirements.txt* ]] ||
	t_err "the error does not name what was looked for: $err"
[[ ! -e $DATA/workspaces/$NONE_SB/workspace/app/sandbox.yaml ]] || t_err "a sandbox.yaml was written"
api GET "/v1/apps/$NONE/runtime-inspect"
expect_jq '.detection.recipe == null and (.detection.looked_for | length) > 10' 'no recipe; looked_for'
t_end

t_begin "a package.json that is not JSON: said so"
import_starter bad-broken || bail "cannot import bad-broken: ${T_ERRS[*]}"
BROKEN=$APP BROKEN_SB=$SB
wait_until 30 manifest_error "$BROKEN_SB" "no sandbox.yaml" ||
	t_err "the status's manifest: $(jq -c .manifest <<<"$BODY")"
api GET "/v1/apps/$BROKEN/runtime-inspect"
expect_jq '[.warnings[]?, .detection.warnings[]?] | any(contains("package.json") and test("not (valid )?JSON|invalid JSON|parse|syntax"; "i"))' \
	'a warning says package.json is not JSON' || note "warnings: $(jq -c .warnings <<<"$BODY")"
t_end

finish
