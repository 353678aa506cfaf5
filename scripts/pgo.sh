#!/bin/sh
# pgo.sh: rebuild cmd/schedlab/default.pgo, the CPU profile that `go build`
# uses for profile-guided optimisation of the schedlab binary (Go's
# -pgo=auto: a default.pgo in the main package's directory).
#
# It builds schedlab without a profile, runs each workload once with
# --cpuprofile (the workloads the posted evaluation spends its time on:
# hackbench with pipes and threads as the milestone runs it, perf bench
# sched messaging at 16 groups, tbench, schbench), and merges the
# profiles, each weighted by its samples, into
# cmd/schedlab/default.pgo. Outputs do not depend on the profile (it only
# steers inlining and code layout); the profile's effect is measured in
# docs/performance.md ("Profile-guided optimisation").
#
#   scripts/pgo.sh          # then review and commit cmd/schedlab/default.pgo
set -eu
top=$(git rev-parse --show-toplevel)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$top" && go build -pgo=off -o "$tmp/schedlab" ./cmd/schedlab)
i=0
prof() {
	i=$((i + 1))
	"$tmp/schedlab" run --cpuprofile "$tmp/$i.pprof" "$@" >/dev/null
}
prof --machine zen3-2s-nps1 --variant short-task-v3 hackbench -p -T -l 2000 -g 4
prof --machine zen3-2s-nps1 tbench -t 1 64
prof --machine zen3-2s-nps1 schbench -m 2 -t 16 -r 3
prof --machine zen3-2s-nps1 perf-bench-messaging -p -t -l 2000 -g 16
go tool pprof -proto "$tmp"/*.pprof >"$top/cmd/schedlab/default.pgo"
echo "wrote cmd/schedlab/default.pgo from $i profiles"
