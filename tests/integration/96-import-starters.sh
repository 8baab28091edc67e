#!/usr/bin/env bash
# Import of real starters (tests/fixtures/starters, made by each framework's
# own generator, without sandbox.yaml or node_modules) from a git server the
# test runs, their npm dependencies from the test registry (tests/registry,
# in a network namespace of its own: no internet): vite-react, nextjs and
# express each get a sandbox.yaml written by detection and committed alone,
# install their dependencies in the sandbox and preview their own page;
# runtime-inspect names the framework.  A second import of the vite starter
# (same lockfile) installs nothing: no request reaches the registry, its
# dependencies come from the store, the install step is not run.
# 96b does vite-vue, sveltekit and the monorepo; 96c the Python starters
# and the repositories that cannot run as they are; 96d the registry alone.
. "$(dirname "$0")/lib.sh"
need_docker

STARTERS_ENV=()
starters_daemon vite-react nextjs express

t_begin "vite-react, nextjs and express import, install from the registry and preview"
declare -A SBS APPS
pairs=()
for id in vite-react nextjs express; do
	import_starter "$id" || bail "cannot import $id: ${T_ERRS[*]}"
	SBS[$id]=$SB APPS[$id]=$APP
	pairs+=("$id=$SB")
done
wait_starters 170 "${pairs[@]}"
for id in vite-react nextjs express; do
	check_detected "$id" "${APPS[$id]}" "${SBS[$id]}"
done
grep -q ' 200$' "$NPM_REG_LOG" || t_err "the registry served nothing"
t_end

t_begin "the install step ran and is done, with its log"
for id in vite-react nextjs express; do
	api GET "/v1/sandboxes/${SBS[$id]}"
	[[ $(j .install.state) == done ]] || t_err "$id: install $(jq -c .install <<<"$BODY")"
	[[ -s $DATA/workspaces/${SBS[$id]}/.sandboxd/logs/install.log ]] ||
		t_err "$id: no install.log"
	[[ -d $DATA/workspaces/${SBS[$id]}/workspace/app/node_modules ]] || t_err "$id: no node_modules"
done
t_end

t_begin "a second import of the vite starter installs nothing"
SB1=${SBS[vite-react]}
# The first app's dependencies are in the cache once its save is logged.
saved() { grep -qh "depcache: sandbox $SB1: saved" "$DAEMON_ERR" "$DAEMON_OUT" 2>/dev/null; }
wait_until 60 saved || t_err "the first vite app's dependencies were not saved: $(grep -h depcache "$DAEMON_ERR" | tail -n 3)"
before=$(npm_reg_requests)
import_starter vite-react vite-react-again || bail "cannot import vite-react again: ${T_ERRS[*]}"
wait_starters 60 "vite-react=$SB"
after=$(npm_reg_requests)
((after == before)) || t_err "the second import made $((after - before)) registry requests: $(tail -n +"$((before + 1))" "$NPM_REG_LOG" | head -n 3)"
[[ ! -e $DATA/workspaces/$SB/.sandboxd/logs/install.log ]] ||
	t_err "the second import ran its install: $(tail -n 3 "$DATA/workspaces/$SB/.sandboxd/logs/install.log")"
api GET "/v1/sandboxes/$SB"
[[ $(j .install.state) == done && $(j .install.exit_code) == null && $(j .install.started_at_ms) == null ]] ||
	t_err "the second import's install: $(jq -c .install <<<"$BODY") (done and never run expected)"
key2=$(j .install.key)
api GET "/v1/sandboxes/$SB1"
[[ -n $key2 && $key2 == "$(j .install.key)" ]] || t_err "the install keys differ: $key2, $(j .install.key)"
check_detected vite-react "$APP" "$SB"
# The dependencies are the store's: react's package.json is one inode.
r1=$DATA/workspaces/$SB1/workspace/app/node_modules/react/package.json
r2=$DATA/workspaces/$SB/workspace/app/node_modules/react/package.json
[[ -f $r2 && $(stat -c %i "$r2") == $(stat -c %i "$r1") ]] ||
	t_err "react/package.json is not shared with the first app ($(stat -c '%i %h' "$r1" "$r2" 2>&1 | xargs))"
t_end

finish
