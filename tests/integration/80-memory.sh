#!/usr/bin/env bash
# The daemon's memory (docs/design.md, "Memory"): what bench/rss measures,
# as bounds; the second failed before the fixes of issue 25.
#
# - Idle, with the network and its egress table ready: under 4.5 MiB of
#   anonymous memory (3.2 to 4 MiB now; 4.5 to 5.6 MiB before, with a
#   64 KiB __thread buffer zeroed into each of 22 threads' stacks): a
#   guard against the next such buffer, not a sharp line.
# - After a burst (4 sandboxes made and stopped, each create an nft
#   command): the anonymous memory back within 3 MiB of idle, waited for
#   (the heap trim runs every second).  Before, each API worker kept an
#   arena of its own grown to ~4 MiB by libnftables: +7.9 MiB here.
. "$(dirname "$0")/lib.sh"
need_test_image

kb() { awk -v k="$1:" '$1 == k { print $2 }' "/proc/$DAEMON_PID/status"; }

new_data_dir
start_daemon SANDBOXD_IMAGE="$TEST_IMAGE" || bail "the daemon did not come up"
wait_network_ready

t_begin "idle: anonymous memory under 4.5 MiB"
idle_small() { (($(kb RssAnon) < 4608)); }
wait_until 5 idle_small || t_err "RssAnon $(kb RssAnon) kB idle"
IDLE_ANON=$(kb RssAnon)
note "idle: VmRSS $(kb VmRSS) kB (anon $IDLE_ANON, file $(kb RssFile)), VmHWM $(kb VmHWM) kB, $(kb Threads) threads"
t_end

t_begin "a burst of creates and stops: anonymous memory back near idle"
for i in 1 2 3 4; do
	create_app "mem-$i" && create_sandbox "$APP_ID" '{}' || break
	SBS+=("$SB_ID")
done
((${#SBS[@]} == 4)) || t_err "made ${#SBS[@]} of 4 sandboxes"
for sb in "${SBS[@]}"; do
	api POST "/v1/sandboxes/$sb/stop"
	expect_status 200
done
near_idle() { (($(kb RssAnon) < IDLE_ANON + 3072)); }
wait_until 10 near_idle || t_err "RssAnon $(kb RssAnon) kB after the burst (idle $IDLE_ANON kB)"
note "after: VmRSS $(kb VmRSS) kB (anon $(kb RssAnon)), VmHWM $(kb VmHWM) kB"
t_end

finish
