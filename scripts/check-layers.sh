#!/usr/bin/env bash
# The layers of gpt-trace, lowest first, and a check that every #include "folder/header.h" in a
# library folder points to the same folder or to a lower layer, never upward or sideways:
#
#   analyzer stack:  common < loader < rules < ranks < analyzer < cli
#                    loader:   the trace loader (ours and nsys exports as canonical SQL views;
#                              events.c reads them in time order at scan speed)
#                    rules:    the time-ordered walk (gaps.c), phases and iterations, the rules
#                    ranks:    per-rank summaries and their merge into one job (multi-rank reports)
#                    analyzer: outputs: statistics, report (text/Markdown/JSON/HTML), exports, diff
#                    cli:      one file per command
#   collector stack: common < collector < inject (the library inside the traced program)
#
# Prints each offending line and exits 1; prints "layers: ok" and exits 0 when there is none.
# perfetto/ is the exporter's generated protobuf code (it includes nothing of ours): a library.
# usage: scripts/check-layers.sh [TREE]   (default: this checkout)
set -euo pipefail
cd "${1:-$(dirname "$0")/..}"
declare -A level=([common]=0 [perfetto]=0 [loader]=1 [collector]=1 [rules]=2 [inject]=2 [ranks]=3 [output]=4 [stats]=5 [report]=5 [export]=5 [diff]=5 [cli]=6)
bad=0
for dir in common loader collector rules inject ranks output stats report export diff cli; do
	for file in "$dir"/*.c "$dir"/*.h "$dir"/*/*.c "$dir"/*/*.h; do
		[ -e "$file" ] || continue
		while IFS=: read -r line inc; do
			target=${inc%%/*}
			[ "$target" = "$dir" ] && continue
			if [ -z "${level[$target]+set}" ]; then
				echo "$file:$line: includes \"$inc\" from '$target', which is no layer"
				bad=1
			elif [ "${level[$target]}" -ge "${level[$dir]}" ]; then
				echo "$file:$line: includes \"$inc\": '$target' is not below '$dir'"
				bad=1
			fi
		done < <(grep -n '^#include "[a-z_]*/' "$file" | sed 's/^\([0-9]*\):#include "\([^"]*\)".*/\1:\2/' || true)
	done
done
[ "$bad" = 0 ] && echo "layers: ok"
exit "$bad"
