#!/usr/bin/env bash
# Configuration: a bad value makes the daemon exit non-zero naming the
# variable on stderr; SANDBOXD_ENV_FILE is read, and the environment wins
# over it; SANDBOXD_API_AUTH_DISABLED turns auth off only for exactly
# "true" or "1" (anything else keeps it on).  No Docker needed.
. "$(dirname "$0")/lib.sh"

# refuses NAME VAR [VAR=value…]: with the given environment the daemon must
# exit non-zero within 10 s and its stderr must name VAR.
refuses() {
	local name=$1 var=$2
	shift 2
	new_data_dir
	t_begin "$name"
	if start_daemon "$@"; then
		t_err "the daemon started and answers /healthz with $*"
		stop_daemon
	elif [[ -z $DAEMON_RC ]]; then
		t_err "the daemon neither became ready nor exited within 10 s with $*"
		stop_daemon
	else
		[[ $DAEMON_RC != 0 ]] || t_err "the daemon exited with status 0 for $*"
		grep -q "$var" "$DAEMON_ERR" ||
			t_err "stderr does not name $var: $(head -c 300 "$DAEMON_ERR")"
	fi
	t_end
}

refuses "SANDBOXD_MEMORY_MB=abc is refused" SANDBOXD_MEMORY_MB SANDBOXD_MEMORY_MB=abc
refuses "SANDBOXD_MEMORY_MB=12abc is refused" SANDBOXD_MEMORY_MB SANDBOXD_MEMORY_MB=12abc
refuses "SANDBOXD_MEMORY_MB=-5 is refused" SANDBOXD_MEMORY_MB SANDBOXD_MEMORY_MB=-5
refuses "SANDBOXD_PIDS_LIMIT=lots is refused" SANDBOXD_PIDS_LIMIT SANDBOXD_PIDS_LIMIT=lots
refuses "SANDBOXD_NOFILE_LIMIT=x is refused" SANDBOXD_NOFILE_LIMIT SANDBOXD_NOFILE_LIMIT=x
refuses "SANDBOXD_API_ADDR=nonsense is refused" SANDBOXD_API_ADDR SANDBOXD_API_ADDR=nonsense
refuses "SANDBOXD_API_ADDR=127.0.0.1:99999 is refused" SANDBOXD_API_ADDR SANDBOXD_API_ADDR=127.0.0.1:99999

t_begin "a .env file is honoured"
cat >"$IT_TMP/test.env" <<'ENV'
# written by the config test
SANDBOXD_API_TOKENS=envfile=tok-envfile
ENV
new_data_dir
if start_daemon -SANDBOXD_API_TOKENS SANDBOXD_ENV_FILE="$IT_TMP/test.env"; then
	api_as tok-envfile GET /v1/apps
	expect_status 200
	api_as tok-other GET /v1/apps
	expect_status 401
	[[ -z $FIRST_TOKEN ]] || t_err "a token was generated although the .env file configures one: $FIRST_TOKEN"
	stop_daemon
else
	t_err "the daemon did not start with SANDBOXD_ENV_FILE (exit ${DAEMON_RC:-none}): $(head -c 300 "$DAEMON_ERR")"
fi
t_end

t_begin "the environment wins over the .env file"
cat >"$IT_TMP/both.env" <<'ENV'
SANDBOXD_API_TOKENS=envfile=tok-envfile
SANDBOXD_MEMORY_MB=abc
ENV
new_data_dir
if start_daemon SANDBOXD_API_TOKENS=envvar=tok-envvar SANDBOXD_MEMORY_MB=128 SANDBOXD_ENV_FILE="$IT_TMP/both.env"; then
	api_as tok-envvar GET /v1/apps
	expect_status 200
	api_as tok-envfile GET /v1/apps
	expect_status 401
	stop_daemon
else
	t_err "the daemon did not start although the environment overrides the bad SANDBOXD_MEMORY_MB=abc in the file (exit ${DAEMON_RC:-none}): $(head -c 300 "$DAEMON_ERR")"
fi
t_end

refuses "a bad value in the .env file is refused too" SANDBOXD_MEMORY_MB SANDBOXD_ENV_FILE="$IT_TMP/both.env"

# auth_off VALUE yes|no: with SANDBOXD_API_AUTH_DISABLED=VALUE a request
# without a token is 200 (yes) or 401 (no).
auth_off() {
	new_data_dir
	t_begin "SANDBOXD_API_AUTH_DISABLED=$1: $([[ $2 == yes ]] && echo "auth off" || echo "auth stays on")"
	if start_daemon SANDBOXD_API_AUTH_DISABLED="$1"; then
		api_noauth GET /v1/apps
		if [[ $2 == yes ]]; then
			expect_status 200
			api_noauth POST /v1/apps '{"name":"open"}'
			expect_status 201
		else
			expect_status 401 && expect_envelope unauthorized
			api GET /v1/apps
			expect_status 200
		fi
		stop_daemon
	else
		t_err "the daemon did not start (exit ${DAEMON_RC:-none}): $(head -c 300 "$DAEMON_ERR")"
	fi
	t_end
}
auth_off true yes
auth_off 1 yes
auth_off yes no
auth_off false no
auth_off TRUEISH no

finish
