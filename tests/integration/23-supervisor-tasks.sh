#!/usr/bin/env bash
# Agent tasks in the supervisor, sandboxd-init (docs/supervisor.md, "Tasks"),
# driven as the real static binary on the host (a child subreaper, not
# PID 1) with HOME in a temp dir, real git and a fake agent (a sh script):
# the steps records in order, the agent's output files, the checkpoint (a
# ref of its own; HEAD, branch and index untouched), the files list, the
# build (passed, failed, timeout), restart_after_task and the health
# record, the app's environment (env: web and workers only, not the agent,
# the build or git), cancel (the agent's whole group, build and health
# skipped),
# timeouts, an agent ignoring SIGTERM, OOM kills, the request errors,
# revert, and tasks interrupted by kill -9 or SIGTERM of the supervisor.
# No Docker.
#
# A `git` wrapper first in the supervisor's PATH makes git slow
# ($IT_TMP/git.slow holds seconds per call) or fail ($IT_TMP/git.fail), to
# catch a step in the act.  Test knob of the supervisor used here
# (documented in docs/supervisor.md):
#   SANDBOXD_INIT_CGROUP=DIR   where memory.events is read (default /sys/fs/cgroup)
#
#   bash tests/integration/23-supervisor-tasks.sh
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/supervisor-lib.sh"

GIT=$(command -v git) || bail "git is needed"
TAB=$'\t'

# --- helpers ------------------------------------------------------------------

# expect_answer REQUEST JSON: the answer is exactly JSON.
expect_answer() {
	ctl "$SOCK" "$1"
	[[ $ANS == "$2" ]] || t_err "$1: answered $ANS, want $2"
}

# The supervisors' environment: the git wrapper first in PATH, and a few
# credentials the agent must not see.
SUP_ENV=(PATH="$IT_TMP/bin:$PATH" SANDBOXD_INIT_CGROUP="$IT_TMP/cgroup"
	MY_API_KEY=supervisor-secret DB_PASSWORD=pw github_token=gh
	VISIBLE_VAR=from-supervisor)

dead() { ! alive "$1"; }
pid_of() { jq -r --arg n "$1" '.processes[] | select(.name == $n) | .pid' <<<"$ANS"; }
ms_now() { echo $(($(date +%s%N) / 1000000)); }

# Task ids: ULIDs in the order they are made.
ID_N=0
new_id() {
	ID_N=$((ID_N + 1))
	ID=$(printf '01HZZZZZZZZZZZZZZZZZZZ%04d' "$ID_N")
}

# mk_task HOME ARG…: a new id and its directory, with ARG… as argv and
# TASK_ENV as env; sets ID and TD.
TASK_ENV=()
mk_task() {
	local home=$1
	shift
	new_id
	TD=$home/.sandboxd/tasks/$ID
	mkdir -p "$TD"
	printf '%s\0' "$@" >"$TD/argv"
	if ((${#TASK_ENV[@]})); then printf '%s\0' "${TASK_ENV[@]}" >"$TD/env"; fi
}

# The records of a task, one word each ("phase:<name>" for phases).
records() { awk -F'\t' '{ print ($1 == "phase") ? "phase:" $2 : $1 }' "$1/steps" 2>/dev/null | tr '\n' ' '; }
has_record() { grep -q "^$2$TAB" "$1/steps" 2>/dev/null; }
# rec TD WORD: that record's line.
rec() { grep -m1 "^$2$TAB" "$1/steps" 2>/dev/null; }
ended() { has_record "$1" end; }
# run_task REQUEST-TIMEOUT: starts the task made by mk_task in the current
# supervisor and waits up to 30 s for its end record.
run_task() {
	ctl "$SOCK" "task start $ID ${1:-60}"
	[[ $ANS == '{"ok":true}' ]] || t_err "task start $ID: $ANS"
	wait_until 30 ended "$TD" || t_err "task $ID did not end: $(records "$TD")"
}
# step_is STEP: status shows the current task in STEP.
step_is() { status_is "$SOCK" "(.task.id == \"$ID\" and .task.step == \"$1\")"; }

ALL_RECORDS="start phase:checkpoint checkpoint phase:agent_running agent files phase:build_check build phase:health_check health end "
CANCELLED_RECORDS="start phase:checkpoint checkpoint phase:agent_running agent files end "

# The fake agent: argv[1] is what to do, argv[2] a tag for the files it
# leaves in $AGENT_OUT (its environment, its background child's pid).
AGENT=$IT_TMP/agent.sh
cat >"$AGENT" <<'EOF'
#!/bin/sh
mode=$1 tag=$2
echo "{\"type\":\"start\",\"mode\":\"$mode\"}"
echo "agent stderr: $mode" >&2
env >"$AGENT_OUT/$tag.env"
fds="$(readlink /proc/$$/fd/1) $(awk '/^flags/ { print $2 }' /proc/$$/fdinfo/1)
$(readlink /proc/$$/fd/2) $(awk '/^flags/ { print $2 }' /proc/$$/fdinfo/2)"
echo "$fds" >"$AGENT_OUT/$tag.fds"
sleep 300 &
echo $! >"$AGENT_OUT/$tag.bg"
case $mode in
edit)
	echo changed >>a.txt
	rm b.txt
	mkdir -p new
	echo c >new/c.txt
	echo x >"$(printf 'we\nird')"
	echo ignored >node_modules/x.js
	;;
sleep) sleep 300 ;;
stubborn)
	trap '' TERM
	while :; do sleep 0.1; done
	;;
oom)
	echo "oom_kill 1" >"$CGROUP/memory.events"
	kill -KILL $$
	;;
kill9) kill -KILL $$ ;;
esac
echo '{"type":"result","ok":true}'
EOF
chmod 755 "$AGENT"
mkdir -p "$IT_TMP/agent" "$IT_TMP/cgroup" "$IT_TMP/bin"
TASK_ENV=("AGENT_OUT=$IT_TMP/agent" "CGROUP=$IT_TMP/cgroup" "OPENAI_API_KEY=sk-task"
	"VISIBLE_VAR=from-env-file")

cat >"$IT_TMP/bin/git" <<EOF
#!/bin/sh
env >"$IT_TMP/git.env"
[ -e "$IT_TMP/git.slow" ] && sleep "\$(cat "$IT_TMP/git.slow")"
if [ -e "$IT_TMP/git.fail" ]; then
	echo "fatal: simulated git failure" >&2
	exit 128
fi
exec "$GIT" "\$@"
EOF
chmod 755 "$IT_TMP/bin/git"

cat >"$IT_TMP/build.sh" <<EOF
mode=\$(cat "$IT_TMP/build.mode" 2>/dev/null)
env >"$IT_TMP/build.env"
echo "build: \$mode"
echo "build stderr" >&2
case \$mode in
fail) exit 3 ;;
slow) exec sleep 30 ;;
esac
EOF

g() { "$GIT" -C "$APP" -c user.name=test -c user.email=test@localhost "$@"; }

# ==============================================================================

H=$IT_TMP/host
APP=$H/workspace/app
mkdir -p "$APP/node_modules/pkg" "$H/.sandboxd"
echo one >"$APP/a.txt"
echo two >"$APP/b.txt"
echo keep >"$APP/keep.txt"
echo 'node_modules/' >"$APP/.gitignore"
echo dep >"$APP/node_modules/pkg/index.js"
g init -q && g add -A && g commit -qm initial || bail "git init failed"
echo staged >"$APP/staged.txt"
g add staged.txt
echo untracked >"$APP/untracked.txt"
# 100 old checkpoints: the first task's makes 101, the oldest goes.
for i in $(seq -w 0 99); do
	g update-ref "refs/sandboxd/checkpoints/0000000000000000000000$(printf '%04d' "$((10#$i))")" HEAD
done
echo "oom_kill 0" >"$IT_TMP/cgroup/memory.events"

PORT=$(free_port)
run_conf "$H/.sandboxd/run.conf" \
	"$(rc_line web "$PORT" / 1 "exec $PY -m http.server $PORT --bind 0.0.0.0")" \
	"$(rc_line worker again 1 'exec sleep 1000')" \
	"$(rc_line worker stays 0 'exec sleep 1000')" \
	"$(rc_line build 2 "sh $IT_TMP/build.sh")"

start_sup "$H" || bail "no control socket after 5 s; stderr: $(tail -n 5 "$H.err")"
wait_until 15 status_is "$SOCK" '.health == "ready"' || bail "web not ready: $ANS"
fds0=$(ls "/proc/$SUP/fd" | wc -l)

t_begin "a task: every record in order, agent output, checkpoint ref, HEAD/branch/index untouched"
head0=$(g rev-parse HEAD)
branch0=$(g symbolic-ref HEAD)
staged0=$(g diff --cached --name-status)
status0=$(g status --porcelain)
ctl "$SOCK" status
web0=$(pid_of web) again0=$(pid_of again) stays0=$(pid_of stays)
mk_task "$H" "$AGENT" edit t1
T1=$ID T1D=$TD
run_task 60
[[ $(records "$TD") == "$ALL_RECORDS" ]] || t_err "records: $(records "$TD")"
[[ $(rec "$TD" start) =~ ^start${TAB}[0-9]{13}$ ]] || t_err "start record: $(rec "$TD" start)"
[[ $(rec "$TD" end) =~ ^end${TAB}[0-9]{13}${TAB}ended$ ]] || t_err "end record: $(rec "$TD" end)"
[[ $(rec "$TD" agent) == "agent${TAB}0${TAB}exited" ]] || t_err "agent record: $(rec "$TD" agent)"
printf '%s\n' '{"type":"start","mode":"edit"}' '{"type":"result","ok":true}' >"$IT_TMP/want.out"
cmp -s "$IT_TMP/want.out" "$TD/agent.out" || t_err "agent.out: $(head -c 300 "$TD/agent.out")"
[[ $(cat "$TD/agent.log") == "agent stderr: edit" ]] || t_err "agent.log: $(head -c 300 "$TD/agent.log")"
sha=$(rec "$TD" checkpoint | cut -f2)
[[ $sha =~ ^[0-9a-f]{40}$ && $(rec "$TD" checkpoint) == "checkpoint$TAB$sha" ]] ||
	t_err "checkpoint record: $(rec "$TD" checkpoint)"
[[ $(g rev-parse "refs/sandboxd/checkpoints/$ID" 2>&1) == "$sha" ]] || t_err "no checkpoint ref for $ID"
[[ $(g rev-parse "$sha^") == "$head0" ]] || t_err "the checkpoint's parent is not HEAD"
[[ $(g log -1 --format=%s "$sha") == "sandboxd: checkpoint before task $ID" ]] ||
	t_err "checkpoint message: $(g log -1 --format=%s "$sha")"
tree=$(g ls-tree -r --name-only "$sha" | tr '\n' ' ')
[[ $tree == ".gitignore a.txt b.txt keep.txt staged.txt untracked.txt " ]] ||
	t_err "checkpoint tree (staged and untracked files in, ignored out): $tree"
[[ $(g rev-parse HEAD) == "$head0" && $(g symbolic-ref HEAD) == "$branch0" ]] || t_err "HEAD or branch moved"
[[ $(g diff --cached --name-status) == "$staged0" ]] || t_err "the index changed: $(g diff --cached --name-status)"
[[ -z $(find "$APP/.git" -maxdepth 1 -name 'sandboxd-index*') ]] || t_err "throwaway index left in .git"
refs=$(g for-each-ref refs/sandboxd/checkpoints/ | wc -l)
((refs == 100)) || t_err "$refs checkpoint refs, want the newest 100"
g rev-parse -q --verify refs/sandboxd/checkpoints/00000000000000000000000000 >/dev/null &&
	t_err "the oldest checkpoint ref was not deleted"
t_end

t_begin "a task: files lists exactly the changed, added and deleted paths"
[[ $(rec "$TD" files) == "files${TAB}3" ]] || t_err "files record: $(rec "$TD" files)"
[[ $(sort "$TD/files" | tr '\n' ' ') == "a.txt b.txt new/c.txt " ]] || t_err "files: $(tr '\n' ' ' <"$TD/files")"
t_end

t_begin "a task: build passed with its output in build.log"
[[ $(rec "$TD" build) =~ ^build${TAB}passed${TAB}0${TAB}[0-9]+$ ]] || t_err "build record: $(rec "$TD" build)"
grep -q "^build: $" "$TD/build.log" && grep -q "^build stderr$" "$TD/build.log" ||
	t_err "build.log: $(head -c 300 "$TD/build.log")"
t_end

t_begin "a task: restart_after_task restarts web and workers that ask; health ready"
[[ $(rec "$TD" health) == "health${TAB}ready$TAB"*"HTTP 200" ]] || t_err "health record: $(rec "$TD" health)"
ctl "$SOCK" status
[[ $(pid_of web) != "$web0" && $(pid_of again) != "$again0" ]] || t_err "web or again not restarted: $ANS"
[[ $(pid_of stays) == "$stays0" ]] || t_err "stays (restart_after_task 0) was restarted"
[[ $(jans .task) == null ]] || t_err "status after the task: $ANS"
t_end

t_begin "a task: the agent's environment and stdout/stderr; its background child dies with it"
# fd 1 and 2 are the files themselves: write-only, appending, blocking.
while read -r path flags; do
	(((8#$flags & 3) == 1 && (8#$flags & 8#2000) && !(8#$flags & 8#4000))) ||
		t_err "$path opened with flags $flags"
done <"$IT_TMP/agent/t1.fds"
[[ $(awk '{ print $1 }' "$IT_TMP/agent/t1.fds" | tr '\n' ' ') == "$T1D/agent.out $T1D/agent.log " ]] ||
	t_err "fds 1 and 2: $(cat "$IT_TMP/agent/t1.fds")"
E=$IT_TMP/agent/t1.env
grep -qx "OPENAI_API_KEY=sk-task" "$E" || t_err "the env file's OPENAI_API_KEY is missing"
grep -qx "VISIBLE_VAR=from-env-file" "$E" || t_err "the env file did not override VISIBLE_VAR"
grep -qx "HOME=$H" "$E" || t_err "HOME is not $H"
grep -qE '^(MY_API_KEY|DB_PASSWORD|github_token|SANDBOXD_INIT_[A-Z_]*)=' "$E" &&
	t_err "credentials of the supervisor leaked: $(grep -E '^(MY_API_KEY|DB_PASSWORD|github_token|SANDBOXD_INIT_)' "$E" | cut -d= -f1 | tr '\n' ' ')"
wait_until 2 dead "$(cat "$IT_TMP/agent/t1.bg")" || t_err "the agent's background child survived it"
t_end

t_begin "the app's environment (env): web and workers get it, also after the task; the agent, build and git do not"
ctl_env "$SOCK" "APP_ONLY_VAR=app-value" "VISIBLE_VAR=from-app"
[[ $ANS == '{"ok":true,"changed":true}' ]] || t_err "env: $ANS"
wait_until 15 status_is "$SOCK" '.health == "ready" and .env_count == 2' || t_err "not ready again: $ANS"
# app_env_in NAME…: every named process has APP_ONLY_VAR and the app's VISIBLE_VAR.
app_env_in() {
	local n
	ctl "$SOCK" status
	for n in "$@"; do
		grep -qzx 'APP_ONLY_VAR=app-value' "/proc/$(pid_of "$n")/environ" &&
			grep -qzx 'VISIBLE_VAR=from-app' "/proc/$(pid_of "$n")/environ" ||
			t_err "$n (pid $(pid_of "$n")) lacks the app's environment"
	done
}
app_env_in web again stays
rm -f "$IT_TMP/build.env" "$IT_TMP/git.env"
mk_task "$H" "$AGENT" none tenv
run_task 60
[[ $(records "$TD") == "$ALL_RECORDS" ]] || t_err "records: $(records "$TD")"
for f in "$IT_TMP/agent/tenv.env" "$IT_TMP/build.env" "$IT_TMP/git.env"; do
	[[ -s $f ]] || { t_err "no environment in $f"; continue; }
	grep -q '^APP_ONLY_VAR=' "$f" && t_err "$(basename "$f"): APP_ONLY_VAR leaked"
	grep -q '^VISIBLE_VAR=from-app$' "$f" && t_err "$(basename "$f"): the app's VISIBLE_VAR leaked"
done
grep -qx 'VISIBLE_VAR=from-env-file' "$IT_TMP/agent/tenv.env" || t_err "the agent's VISIBLE_VAR is not its env file's"
grep -qx 'VISIBLE_VAR=from-supervisor' "$IT_TMP/build.env" || t_err "the build's VISIBLE_VAR is not the supervisor's"
# restart_after_task: web and again restarted, with the app's environment.
app_env_in web again stays
ctl_env "$SOCK"
[[ $ANS == '{"ok":true,"changed":true}' ]] || t_err "env 0: $ANS"
wait_until 15 status_is "$SOCK" '.health == "ready" and .env_count == 0' || t_err "not ready after env 0: $ANS"
t_end

t_begin "revert: modified, deleted and added files restored; ignored files stay; index untouched"
expect_answer "task revert $T1" '{"ok":true}'
wait_until 10 test -e "$T1D/revert" || t_err "no revert file"
[[ $(cat "$T1D/revert" 2>/dev/null) == ok ]] || t_err "revert: $(cat "$T1D/revert" 2>/dev/null)"
[[ $(cat "$APP/a.txt") == one && $(cat "$APP/b.txt") == two ]] || t_err "a.txt/b.txt not restored"
[[ ! -e $APP/new && ! -e $APP/$(printf 'we\nird') ]] || t_err "added files not removed"
[[ -f $APP/node_modules/x.js && -f $APP/node_modules/pkg/index.js ]] || t_err "ignored files removed"
[[ $(cat "$APP/untracked.txt") == untracked ]] || t_err "untracked.txt lost"
[[ $(g status --porcelain) == "$status0" ]] || t_err "git status differs: $(g status --porcelain | tr '\n' ' ')"
[[ $(g rev-parse HEAD) == "$head0" && $(g diff --cached --name-status) == "$staged0" ]] || t_err "HEAD or index changed"
[[ $(g rev-parse "refs/sandboxd/checkpoints/$T1") == "$sha" ]] || t_err "checkpoint ref changed"
t_end

t_begin "status shows the task and its step; the socket answers during a long task"
mk_task "$H" "$AGENT" sleep t2
T2=$ID T2D=$TD
ctl "$SOCK" status
web0=$(pid_of web)
expect_answer "task start $ID 60" '{"ok":true}'
wait_until 10 step_is agent || t_err "status never showed step agent: $ANS"
slow=0
for ((i = 0; i < 10; i++)); do
	t0=$(ms_now)
	ctl "$SOCK" ping
	(($(ms_now) - t0 < 500)) || slow=$((slow + 1))
	sleep 0.05
done
((slow == 0)) || t_err "$slow pings took 500 ms or more during the task"
rss=$(awk '/^VmRSS/ { print $2 }' "/proc/$SUP/status")
note "supervisor VmRSS during a task: $rss kB"
((rss < 2048)) || t_err "VmRSS $rss kB during a task"
t_end

t_begin "while a task runs: same id again is ok, another is task_in_progress, revert refused"
expect_answer "task start $T2 60" '{"ok":true}'
mk_task "$H" "$AGENT" sleep other
expect_answer "task start $ID 60" "{\"ok\":false,\"error\":\"task_in_progress\",\"task\":\"$T2\"}"
[[ ! -e $TD/steps ]] || t_err "the refused task got a steps file"
expect_answer "task revert $T1" "{\"ok\":false,\"error\":\"task_in_progress\",\"task\":\"$T2\"}"
expect_answer "task cancel $ID" '{"ok":false,"error":"no such task"}'
t_end

t_begin "cancel: the agent's whole group dies, files still listed, build and health skipped"
expect_answer "task cancel $T2" '{"ok":true}'
wait_until 10 ended "$T2D" || t_err "no end after cancel: $(records "$T2D")"
[[ $(records "$T2D") == "$CANCELLED_RECORDS" ]] || t_err "records: $(records "$T2D")"
[[ $(rec "$T2D" agent) == "agent${TAB}143${TAB}cancelled" ]] || t_err "agent record: $(rec "$T2D" agent)"
[[ $(rec "$T2D" files) == "files${TAB}0" ]] || t_err "files record: $(rec "$T2D" files)"
wait_until 2 dead "$(cat "$IT_TMP/agent/t2.bg")" || t_err "the agent's background child survived the cancel"
ctl "$SOCK" status
[[ $(pid_of web) == "$web0" ]] || t_err "web restarted after a cancelled task"
expect_answer "task cancel $T2" '{"ok":true,"state":"ended"}'
expect_answer "task start $T2 60" '{"ok":false,"error":"task already ran"}'
t_end

t_begin "timeout: the agent is stopped after timeout_s; no build or health check follows"
mk_task "$H" "$AGENT" sleep t3
t0=$(ms_now)
ctl "$SOCK" "task start $ID 1"
wait_until 10 has_record "$TD" agent || t_err "no agent record"
ms=$(($(ms_now) - t0))
[[ $(rec "$TD" agent) == "agent${TAB}143${TAB}timeout" ]] || t_err "agent record: $(rec "$TD" agent)"
((ms >= 1000 && ms < 4000)) || t_err "agent record after $ms ms, want ~1 s"
wait_until 30 ended "$TD" || t_err "did not end"
[[ $(records "$TD") == "$CANCELLED_RECORDS" ]] || t_err "records: $(records "$TD")"
wait_until 2 dead "$(cat "$IT_TMP/agent/t3.bg")" || t_err "the agent's background child survived"
t_end

t_begin "an agent ignoring SIGTERM is SIGKILLed 5 s after a cancel"
mk_task "$H" "$AGENT" stubborn t4
ctl "$SOCK" "task start $ID 60"
wait_until 10 step_is agent || t_err "never in step agent"
sleep 0.3
t0=$(ms_now)
expect_answer "task cancel $ID" '{"ok":true}'
wait_until 15 has_record "$TD" agent || t_err "no agent record"
ms=$(($(ms_now) - t0))
[[ $(rec "$TD" agent) == "agent${TAB}137${TAB}cancelled" ]] || t_err "agent record: $(rec "$TD" agent)"
((ms >= 4500 && ms < 8000)) || t_err "agent record $ms ms after the cancel, want ~5000"
wait_until 10 ended "$TD" || t_err "did not end"
t_end

t_begin "build failed and build timeout"
echo fail >"$IT_TMP/build.mode"
mk_task "$H" "$AGENT" quick t5
run_task
[[ $(rec "$TD" build) =~ ^build${TAB}failed${TAB}3${TAB}[0-9]+$ ]] || t_err "build record: $(rec "$TD" build)"
grep -q "^build: fail$" "$TD/build.log" || t_err "build.log: $(cat "$TD/build.log")"
echo slow >"$IT_TMP/build.mode"
mk_task "$H" "$AGENT" quick t6
run_task
[[ $(rec "$TD" build) =~ ^build${TAB}timeout${TAB}143${TAB}([0-9]+)$ ]] || t_err "build record: $(rec "$TD" build)"
ms=${BASH_REMATCH[1]:-0}
((ms >= 2000 && ms < 4000)) || t_err "build took $ms ms, want ~2000 (the run.conf timeout)"
[[ $(records "$TD") == "$ALL_RECORDS" ]] || t_err "records: $(records "$TD")"
rm -f "$IT_TMP/build.mode"
t_end

t_begin "agent killed by the OOM killer (the cgroup count went up) vs. by someone else"
mk_task "$H" "$AGENT" oom t7
run_task
[[ $(rec "$TD" agent) == "agent${TAB}137${TAB}oom" ]] || t_err "agent record: $(rec "$TD" agent)"
[[ $(records "$TD") == "$CANCELLED_RECORDS" ]] || t_err "records after an OOM kill: $(records "$TD")"
mk_task "$H" "$AGENT" kill9 t8
run_task
[[ $(rec "$TD" agent) == "agent${TAB}137${TAB}exited" ]] || t_err "agent record: $(rec "$TD" agent)"
t_end

t_begin "an agent that cannot be started: spawn_failed, the reason in agent.log"
mk_task "$H" no-such-agent-xyz -p hello
run_task
[[ $(rec "$TD" agent) == "agent${TAB}127${TAB}spawn_failed" ]] || t_err "agent record: $(rec "$TD" agent)"
grep -q "no-such-agent-xyz: not found in PATH" "$TD/agent.log" || t_err "agent.log: $(cat "$TD/agent.log")"
[[ $(records "$TD") == "$CANCELLED_RECORDS" ]] || t_err "records: $(records "$TD")"
t_end

t_begin "cancel during the checkpoint: it finishes, the agent never starts"
echo 0.3 >"$IT_TMP/git.slow"
mk_task "$H" "$AGENT" edit t9
ctl "$SOCK" "task start $ID 60"
wait_until 5 step_is checkpoint || t_err "never saw step checkpoint: $ANS"
expect_answer "task cancel $ID" '{"ok":true}'
wait_until 30 ended "$TD" || t_err "did not end"
rm -f "$IT_TMP/git.slow"
[[ $(records "$TD") == "start phase:checkpoint checkpoint agent files end " ]] || t_err "records: $(records "$TD")"
[[ $(rec "$TD" checkpoint) =~ ^checkpoint${TAB}[0-9a-f]{40}$ ]] || t_err "checkpoint: $(rec "$TD" checkpoint)"
[[ $(rec "$TD" agent) == "agent${TAB}0${TAB}cancelled" ]] || t_err "agent record: $(rec "$TD" agent)"
[[ ! -e $IT_TMP/agent/t9.env ]] || t_err "the agent ran"
t_end

t_begin "revert: one at a time, status shows it, task start refused meanwhile"
echo 0.3 >"$IT_TMP/git.slow"
echo scribble >>"$APP/a.txt"
expect_answer "task revert $T1" '{"ok":true}'
ID=$T1
step_is revert || t_err "status during the revert: $ANS"
expect_answer "task revert $T1" '{"ok":false,"error":"revert in progress"}'
mk_task "$H" "$AGENT" quick t10
expect_answer "task start $ID 60" "{\"ok\":false,\"error\":\"task_in_progress\",\"task\":\"$T1\"}"
wait_until 10 test -e "$T1D/revert" || t_err "no revert file"
rm -f "$IT_TMP/git.slow"
[[ $(cat "$T1D/revert") == ok && $(cat "$APP/a.txt") == one ]] || t_err "revert: $(cat "$T1D/revert"), a.txt: $(cat "$APP/a.txt")"
t_end

t_begin "a failed checkpoint: the error recorded, the agent still runs, nothing to revert to"
touch "$IT_TMP/git.fail"
mk_task "$H" "$AGENT" quick t11
run_task
rm -f "$IT_TMP/git.fail"
[[ $(rec "$TD" checkpoint) == "checkpoint${TAB}${TAB}fatal: simulated git failure" ]] ||
	t_err "checkpoint record: $(rec "$TD" checkpoint)"
[[ $(rec "$TD" agent) == "agent${TAB}0${TAB}exited" && $(rec "$TD" files) == "files${TAB}0" ]] ||
	t_err "agent/files: $(rec "$TD" agent) / $(rec "$TD" files)"
[[ -f $TD/files && ! -s $TD/files ]] || t_err "files is not an empty file"
expect_answer "task revert $ID" '{"ok":false,"error":"task has no checkpoint to revert to"}'
t_end

t_begin "refused: bad ids, timeouts, task dirs, argv and env files"
expect_answer "task start 01hzzzzzzzzzzzzzzzzzzz0001 60" '{"ok":false,"error":"invalid task id"}'
expect_answer "task start 81HZZZZZZZZZZZZZZZZZZZ0001 60" '{"ok":false,"error":"invalid task id"}'
expect_answer "task start ../../../../../../etc/passw 60" '{"ok":false,"error":"invalid task id"}'
expect_answer "task cancel 01HZZ" '{"ok":false,"error":"invalid task id"}'
expect_answer "task revert 01HZZZZZZZZZZZZZZZZZZZ00I1" '{"ok":false,"error":"invalid task id"}'
for t in 0 86401 -1 1e3 abc 060; do
	expect_answer "task start 01HZZZZZZZZZZZZZZZZZZZ9999 $t" '{"ok":false,"error":"timeout must be 1-86400 seconds"}'
done
expect_answer "task start 01HZZZZZZZZZZZZZZZZZZZ9999" '{"ok":false,"error":"unknown request"}'
expect_answer "task start 01HZZZZZZZZZZZZZZZZZZZ9999 60" '{"ok":false,"error":"no such task directory"}'
expect_answer "task revert 01HZZZZZZZZZZZZZZZZZZZ9999" '{"ok":false,"error":"no such task"}'
expect_answer "task cancel 01HZZZZZZZZZZZZZZZZZZZ9999" '{"ok":false,"error":"no such task"}'
refuse() { # refuse ERROR: the task made last is refused with ERROR and gets no steps
	expect_answer "task start $ID 60" "{\"ok\":false,\"error\":\"$1\"}"
	[[ ! -e $TD/steps ]] || t_err "$ID got a steps file"
}
mk_task "$H" x
rm "$TD/argv"
refuse "argv: missing"
mk_task "$H" x
printf 'claude\0-p' >"$TD/argv"
refuse "argv: the last argument is not NUL-terminated"
mk_task "$H" x
printf '\0x\0' >"$TD/argv"
refuse "argv: the program (argument 0) is empty"
mk_task "$H" x
: >"$TD/argv"
refuse "argv is empty"
mk_task "$H" $(seq 65)
refuse "argv: more than 64 arguments"
mk_task "$H" x
head -c $((512 * 1024 + 1)) /dev/zero | tr '\0' a >"$TD/argv"
refuse "argv: larger than 524288 bytes"
mk_task "$H" x
mv "$TD/argv" "$TD/real"
ln -s real "$TD/argv"
refuse "argv: a symlink"
mk_task "$H" x
rm "$TD/argv"
mkdir "$TD/argv"
refuse "argv: not a regular file"
mk_task "$H" x
printf 'GOOD=1\0bad-name=2\0' >"$TD/env"
refuse "env: entry 2 is not NAME=value with NAME [A-Za-z_][A-Za-z0-9_]*"
mk_task "$H" x
ln -sf /etc/passwd "$TD/env"
refuse "env: a symlink"
mk_task "$H" x
rm "$TD/env"
mkfifo "$TD/env"
refuse "env: not a regular file"
new_id
ln -s "$T1D" "$H/.sandboxd/tasks/$ID"
expect_answer "task start $ID 60" '{"ok":false,"error":"the task directory is a symlink"}'
ctl "$SOCK" status
[[ $(jans .task) == null ]] || t_err "a refused start left a task: $ANS"
t_end

t_begin "after all these tasks the supervisor holds no more fds than before"
fds=$(ls "/proc/$SUP/fd" | wc -l)
((fds == fds0)) || t_err "$fds fds open, $fds0 before the first task: $(ls -l "/proc/$SUP/fd" | tail -n +2 | awk '{ print $NF }' | tr '\n' ' ')"
t_end

stop_sup

t_begin "no .git yet: git init and a baseline commit before the checkpoint"
H2=$IT_TMP/host2
APP=$H2/workspace/app
mkdir -p "$APP"
echo fresh >"$APP/index.html"
start_sup "$H2" || bail "no socket for $H2"
mk_task "$H2" "$AGENT" sleep t12
T12=$ID T12D=$TD
ctl "$SOCK" "task start $ID 60"
wait_until 10 step_is agent || t_err "never in step agent: $ANS"
sha=$(rec "$TD" checkpoint | cut -f2)
[[ $(g log --format=%s 2>&1) == "sandboxd: baseline" ]] || t_err "log: $(g log --format=%s 2>&1)"
[[ $(g rev-parse "$sha^" 2>&1) == "$(g rev-parse HEAD)" ]] || t_err "the checkpoint's parent is not the baseline"
[[ $(g ls-tree -r --name-only "$sha" 2>&1) == index.html ]] || t_err "checkpoint tree: $(g ls-tree -r --name-only "$sha" 2>&1)"
t_end

t_begin "kill -9 of the supervisor mid-task, then a restart: end … interrupted"
disown "$SUP" # no "Killed" notice from bash
kill -KILL "$SUP"
wait_until 5 sup_gone
pkill -KILL -s "$SUP" 2>/dev/null
ended "$TD" && t_err "an end record without a supervisor"
# A record whose write was cut short, in another task.
mk_task "$H2" x
printf 'start\t1\nphase\tcheckpoint\nchec' >"$TD/steps"
CUT=$TD
start_sup "$H2" || bail "no socket after the restart"
[[ $(tail -n 1 "$T12D/steps") =~ ^end${TAB}[0-9]{13}${TAB}interrupted$ ]] || t_err "last record: $(tail -n 1 "$T12D/steps")"
[[ $(records "$CUT") == "start phase:checkpoint chec end " ]] || t_err "a cut record not completed: $(records "$CUT")"
ctl "$SOCK" status
[[ $(jans .task) == null ]] || t_err "status: $ANS"
expect_answer "task cancel $T12" '{"ok":true,"state":"ended"}'
expect_answer "task start $T12 60" '{"ok":false,"error":"task already ran"}'
t_end

t_begin "SIGTERM of the supervisor mid-task: the agent stopped, no end record until the next boot"
mk_task "$H2" "$AGENT" sleep t13
ctl "$SOCK" "task start $ID 60"
wait_until 10 step_is agent || t_err "never in step agent: $ANS"
agent_bg=$(cat "$IT_TMP/agent/t13.bg")
t0=$(ms_now)
stop_sup
ms=$(($(ms_now) - t0))
((ms < 3000)) || t_err "stopping took $ms ms"
dead "$agent_bg" || t_err "the agent's background child survived the shutdown"
[[ $(records "$TD") == "start phase:checkpoint checkpoint phase:agent_running " ]] || t_err "records: $(records "$TD")"
start_sup "$H2" || bail "no socket after the restart"
[[ $(tail -n 1 "$TD/steps") =~ ^end${TAB}[0-9]{13}${TAB}interrupted$ ]] || t_err "last record: $(tail -n 1 "$TD/steps")"
stop_sup
t_end

finish
