#!/bin/sh
# speed-vs-base.sh: simulated seconds per wall second of one schedlab run
# command at an old commit and at this work tree's HEAD, side by side.
#
# It builds BASE (default c0fbe61, issue 15's yardstick) from `git archive`
# and HEAD into a temporary directory, then runs the command N times on each
# in turn (old, new, old, new, ...: pairing keeps the ratio fair when the
# machine's speed drifts), reads each run's simulated_ns, wall_ns and events
# from its --json record (the simulation alone: start-up excluded), and
# prints every pair and the median ratio new/old of simulated seconds per
# wall second (issue 15's measure), then the median ratios of events per
# second and of wall time. The first also grows when the model simulates
# more time for the same work; the other two say how much of it is speed.
# Needs git, go, awk and sort.
#
#   scripts/speed-vs-base.sh                        # the milestone command, 5 pairs
#   N=3 BASE=fbce32a scripts/speed-vs-base.sh run --machine hikey hackbench -l 2000
set -eu
BASE=${BASE:-c0fbe61}
N=${N:-5}
if [ $# -eq 0 ]; then
	set -- run --machine zen3-2s-nps1 --variant short-task-v3 hackbench -p -T -l 20000 -g 4
fi
top=$(git rev-parse --show-toplevel)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/old"
git -C "$top" archive "$BASE" | tar -x -C "$tmp/old"
(cd "$tmp/old" && go build -o "$tmp/schedlab-old" ./cmd/schedlab)
(cd "$top" && go build -o "$tmp/schedlab-new" ./cmd/schedlab)
head=$(git -C "$top" rev-parse --short HEAD)

# field NAME FILE: the first integer field NAME of a JSON file.
field() { grep -o "\"$1\": *[0-9]*" "$2" | head -n 1 | grep -o '[0-9]*$'; }
# run BINARY COMMAND...: runs it once and prints simulated s per wall s.
run() {
	bin=$1
	shift
	# The command's first word is the subcommand; --json goes after it.
	sub=$1
	shift
	"$bin" "$sub" --json "$tmp/r.json" "$@" >/dev/null
	sim=$(field simulated_ns "$tmp/r.json")
	wall=$(field wall_ns "$tmp/r.json")
	ev=$(field events "$tmp/r.json")
	awk -v s="$sim" -v w="$wall" -v e="$ev" 'BEGIN { printf "%.5f %.3f %.2f", s / w, w / 1e9, e / w * 1e3 }'
}
# median FILE LABEL: the median of FILE's numbers, with their range.
median() {
	sort -n "$1" | awk -v l="$2" '{ r[NR] = $1 } END { m = (NR % 2) ? r[(NR + 1) / 2] : (r[NR / 2] + r[NR / 2 + 1]) / 2; printf "median ratio HEAD/%s, %s: %.2f (min %.2f, max %.2f)\n", base, l, m, r[1], r[NR] }' base="$BASE"
}

echo "command: schedlab $*"
echo "base $BASE against HEAD $head, $N pairs (simulated s per wall s; wall s; M events/s)"
i=1
: >"$tmp/ratios"
: >"$tmp/evratios"
: >"$tmp/wallratios"
while [ "$i" -le "$N" ]; do
	set -- $(run "$tmp/schedlab-old" "$@") "$@"
	old=$1 oldwall=$2 oldev=$3
	shift 3
	set -- $(run "$tmp/schedlab-new" "$@") "$@"
	new=$1 newwall=$2 newev=$3
	shift 3
	ratio=$(awk -v o="$old" -v n="$new" 'BEGIN { printf "%.2f", n / o }')
	echo "pair $i: $BASE $old ($oldwall s, $oldev M events/s), HEAD $new ($newwall s, $newev M events/s), ratio $ratio"
	echo "$ratio" >>"$tmp/ratios"
	awk -v o="$oldev" -v n="$newev" 'BEGIN { printf "%.4f\n", n / o }' >>"$tmp/evratios"
	awk -v o="$oldwall" -v n="$newwall" 'BEGIN { printf "%.4f\n", n / o }' >>"$tmp/wallratios"
	i=$((i + 1))
done
median "$tmp/ratios" "simulated s per wall s"
median "$tmp/evratios" "events per second"
median "$tmp/wallratios" "wall time"
