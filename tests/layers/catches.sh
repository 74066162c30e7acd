#!/usr/bin/env bash
# The layer check (scripts/check-layers.sh) catches what it is for: each case plants one offending line
# in a copy of the tree's sources and expects the check to fail with that case's message; "clean" is the
# unplanted copy, which must pass.
#   upward:       the loader includes a rule's header
#   sideways:     one command family (report) includes another (export)
#   cross-stack:  a rule includes the injected library's header (rules/ sits above inject/ in number,
#                 but in the other stack)
#   into-analyzer: the collector includes the loader
#   bottom:       common/ includes the schema's header (both are the shared bottom: neither is below)
#   no-layer:     an include from a folder that is no layer
#   circle:       analyzer/loader/trace.c calls events.c, which calls trace.c
# usage: tests/layers/catches.sh SRC CASE
set -uo pipefail
src=$1 case=$2
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
for d in common schema collector inject analyzer rules cli; do
	cp -r "$src/$d" "$t/$d"
done
plant() {	# plant FILE LINE: LINE as the file's first line
	sed -i "1i $2" "$t/$1"
}
case $case in
clean) want='^layers: ok$' ;;
upward) plant analyzer/loader/trace.c '#include "rules/rule.h"'
	want="analyzer/loader/trace.c:1: includes \"rules/rule.h\": 'rules' is not below 'analyzer/loader'" ;;
sideways) plant analyzer/report/report.c '#include "analyzer/export/export.h"'
	want="'analyzer/export' is not below 'analyzer/report'" ;;
cross-stack) plant rules/registry.c '#include "inject/inject.h"'
	want="'inject' is in the collector stack, 'rules' in the analyzer one" ;;
into-analyzer) plant collector/writer.c '#include "analyzer/loader/trace.h"'
	want="'analyzer/loader' is in the analyzer stack, 'collector' in the collector one" ;;
bottom) plant common/util.c '#include "schema/schema-version.h"'
	want="'schema' is not below 'common'" ;;
no-layer) plant rules/registry.c '#include "samples/common.h"'
	want="from 'samples', which is no layer" ;;
circle) printf 'void planted(void);\nvoid planted(void)\n{\n\tevent_stream_total(0);\n}\n' >> "$t/analyzer/loader/trace.c"
	want='^circle: .*analyzer/loader/events.c analyzer/loader/trace.c' ;;
*) echo "unknown case $case" >&2; exit 2 ;;
esac
out=$(bash "$src/scripts/check-layers.sh" "$t")
rc=$?
echo "$out"
if [ "$case" = clean ]; then
	[ "$rc" = 0 ] || { echo "FAIL: the unplanted copy fails the check"; exit 1; }
else
	[ "$rc" = 1 ] || { echo "FAIL: the check passed with the planted line (exit $rc)"; exit 1; }
fi
grep -q -- "$want" <<< "$out" || { echo "FAIL: no line matching: $want"; exit 1; }
echo "ok: $case"
