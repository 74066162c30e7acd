#!/usr/bin/env bash
# Function and file sizes of the C sources (universal ctags: each function's first and last line):
# the count of functions, their median and the ones over LIMIT lines (default 100), and the source files
# over 1,000 lines. For the structure's before/after (docs/layout.md).
# usage: scripts/sizes.sh [TREE] [LIMIT]
set -euo pipefail
cd "${1:-$(dirname "$0")/..}"
limit=${2:-100}
dirs=()
for d in common schema collector inject analyzer rules cli; do
	[ -d "$d" ] && dirs+=("$d")
done
mapfile -t files < <(find "${dirs[@]}" -name '*.[ch]' -not -path '*/perfetto/*' | sort)
tags=$(ctags -x --sort=no --c-kinds=f --fields=+ne --_xformat='%N %F %n %e' "${files[@]}")
lens=$(awk '{ print $4 - $3 + 1 }' <<< "$tags" | sort -n)
n=$(wc -l <<< "$lens")
median=$(sed -n "$(((n + 1) / 2))p" <<< "$lens")
over=$(awk -v limit="$limit" '$4 - $3 + 1 > limit { printf "%5d  %s (%s)\n", $4 - $3 + 1, $1, $2 }' <<< "$tags" | sort -rn)
echo "functions: $n, median $median lines, $(grep -c . <<< "$over" || true) over $limit lines"
[ -z "$over" ] || echo "$over"
echo "files over 1000 lines:"
wc -l "${files[@]}" | grep -v ' total$' | awk '$1 > 1000 { printf "%5d  %s\n", $1, $2 }' | sort -rn
