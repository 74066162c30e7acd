#!/usr/bin/env bash
# The layers of gpt-trace, lowest first, and a check that every #include "folder/header.h" in a
# library folder points to the same folder or to a lower layer of its own stack (or of the shared
# bottom), never upward, sideways or into the other stack:
#
#   shared bottom:   common, schema (the trace format: schema.sql and its versions)
#   collector stack: collector < inject (the library inside the traced program)
#   analyzer stack:  analyzer/import < analyzer/loader < analyzer/analysis < rules < analyzer/ranks
#                    < analyzer/output < analyzer/stats, analyzer/report, analyzer/export, analyzer/diff
#                    import:   other profilers' traces (PyTorch's Kineto JSON) into our schema
#                    loader:   the trace loader (ours and nsys exports as canonical SQL views;
#                              events.c reads them in time order at scan speed)
#                    analysis: what every output family reads: the time-ordered walk, phases and
#                              iterations, memory, collectives, kernel owners and efficiency
#                    rules:    one file per rule and the registry
#                    ranks:    per-rank summaries and their merge into one job (multi-rank reports)
#                    output:   helpers every family shares (format names, JSON/Markdown escaping)
#                    stats, report (and report/html), export, diff: one folder per command
#                              family, side by side: none includes another
#   top:             cli, one file per command, over both stacks
#
# A folder's layer is its path up to the first folder below analyzer/ (analyzer/report/html is
# analyzer/report). Then a check that no two files of one folder (its subfolders included) call each
# other, directly or around a circle: each .c file's functions (the non-static definitions) and which
# other .c files call them; a circle means a piece belongs one layer down, or a callback one layer up.
#
# Prints each offending line or circle and exits 1; prints "layers: ok" and exits 0 when there is none.
# perfetto/ is the exporter's generated protobuf code (it includes nothing of ours): a library.
# usage: scripts/check-layers.sh [TREE]   (default: this checkout)
set -euo pipefail
cd "${1:-$(dirname "$0")/..}"
# stack:level of each layer
declare -A layer=([common]=shared:0 [schema]=shared:0 [perfetto]=shared:0
	[collector]=collector:1 [inject]=collector:2
	[analyzer/import]=analyzer:1 [analyzer/loader]=analyzer:2 [analyzer/analysis]=analyzer:3
	[rules]=analyzer:4 [analyzer/ranks]=analyzer:5 [analyzer/output]=analyzer:6
	[analyzer/stats]=analyzer:7 [analyzer/report]=analyzer:7 [analyzer/export]=analyzer:7
	[analyzer/diff]=analyzer:7 [cli]=top:9)
dirs=(common schema collector inject analyzer/import analyzer/loader analyzer/analysis rules analyzer/ranks
	analyzer/output analyzer/stats analyzer/report analyzer/export analyzer/diff cli)
bad=0
# the layer of a path: its first component, or its first two under analyzer/
layer_of() {
	case $1 in
	analyzer/*/*) local rest=${1#analyzer/}; echo "analyzer/${rest%%/*}" ;;
	*/*) echo "${1%%/*}" ;;
	*) echo "$1" ;;
	esac
}
for dir in "${dirs[@]}"; do
	[ -d "$dir" ] || continue
	while IFS= read -r file; do
		while IFS=: read -r line inc; do
			target=$(layer_of "$inc")
			[ "$target" = "$dir" ] && continue
			if [ -z "${layer[$target]+set}" ]; then
				echo "$file:$line: includes \"$inc\" from '$target', which is no layer"
				bad=1
				continue
			fi
			from=${layer[$dir]} to=${layer[$target]}
			if [ "${to%%:*}" != shared ] && [ "${from%%:*}" != top ] && [ "${to%%:*}" != "${from%%:*}" ]; then
				echo "$file:$line: includes \"$inc\": '$target' is in the ${to%%:*} stack, '$dir' in the ${from%%:*} one"
				bad=1
			elif [ "${to##*:}" -ge "${from##*:}" ]; then
				echo "$file:$line: includes \"$inc\": '$target' is not below '$dir'"
				bad=1
			fi
		done < <(grep -n '^#include "[a-z_-]*/' "$file" | sed 's/^\([0-9]*\):#include "\([^"]*\)".*/\1:\2/' || true)
	done < <(find "$dir" -name '*.[ch]' | sort)
done
# circles between the files of one folder
python3 - "${dirs[@]}" <<'PY' || bad=1
import glob, re, sys

bad = False
for top in sys.argv[1:]:
    files = sorted(f for f in glob.glob(top + "/**/*.c", recursive=True))
    text = {}
    defs = {}
    for f in files:
        s = re.sub(r"/\*.*?\*/", " ", open(f, encoding="utf-8", errors="replace").read(), flags=re.S)
        text[f] = s
        lines = s.split("\n")
        for i, line in enumerate(lines):
            if not re.match(r"[A-Za-z_]", line) or line.startswith(("static", "typedef", "#")):
                continue
            if "(" not in line or line.rstrip().endswith(";"):
                continue
            j = i
            while j < len(lines) and not lines[j].startswith("{") and not lines[j].rstrip().endswith(";"):
                j += 1
            m = re.search(r"(\w+)\s*\(", line)
            if j < len(lines) and lines[j].startswith("{") and m and not m.group(1).startswith("__"):
                defs.setdefault(m.group(1), f)
    calls = {f: set() for f in files}
    if defs:
        pattern = re.compile(r"\b(" + "|".join(map(re.escape, defs)) + r")\s*\(")
        for f in files:
            for m in pattern.finditer(text[f]):
                if defs[m.group(1)] != f:
                    calls[f].add(defs[m.group(1)])
    # strongly connected components (Tarjan, iterative)
    index, low, stack, on, comps, counter = {}, {}, [], set(), [], 0
    for root in files:
        if root in index:
            continue
        work = [(root, iter(sorted(calls[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(calls[w]))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    comps.append(sorted(comp))
    for comp in comps:
        bad = True
        print("circle: " + " ".join(comp))
        for a in comp:
            for b in sorted(calls[a] & set(comp)):
                used = sorted(n for n, f in defs.items() if f == b and re.search(r"\b" + n + r"\s*\(", text[a]))
                print("    %s calls %s: %s" % (a, b, " ".join(used)))
sys.exit(1 if bad else 0)
PY
[ "$bad" = 0 ] && echo "layers: ok"
exit "$bad"
