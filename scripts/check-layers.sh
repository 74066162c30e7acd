#!/usr/bin/env bash
# The layers of gpt-trace, lowest first, and a check that every #include "folder/header.h" in a
# library folder points to the same folder or to a lower layer, never upward or sideways:
#
#   analyzer stack:  common < import < loader < rules < ranks < output < stats, report, export, diff < cli
#                    import:   other profilers' traces (PyTorch's Kineto JSON) into our schema
#                    loader:   the trace loader (ours and nsys exports as canonical SQL views;
#                              events.c reads them in time order at scan speed)
#                    rules:    the time-ordered walk (gaps.c), phases and iterations, the rules
#                    ranks:    per-rank summaries and their merge into one job (multi-rank reports)
#                    output:   helpers every family shares (format names, JSON/Markdown escaping,
#                              durations)
#                    stats, report (and report/html), export, diff: one folder per command
#                              family, side by side: none includes another
#                    cli:      one file per command
#   collector stack: common < collector < inject (the library inside the traced program)
#
# Then a check that no two files of one folder (its subfolders included) call each other, directly or
# around a circle: each .c file's functions (the non-static definitions) and which other .c files
# call them; a circle means a piece belongs one layer down, or a callback one layer up.
#
# Prints each offending line or circle and exits 1; prints "layers: ok" and exits 0 when there is none.
# perfetto/ is the exporter's generated protobuf code (it includes nothing of ours): a library.
# usage: scripts/check-layers.sh [TREE]   (default: this checkout)
set -euo pipefail
cd "${1:-$(dirname "$0")/..}"
declare -A level=([common]=0 [perfetto]=0 [import]=1 [loader]=2 [collector]=1 [rules]=3 [inject]=2 [ranks]=4 [output]=5 [stats]=6 [report]=6 [export]=6 [diff]=6 [cli]=7)
bad=0
dirs=(common import loader collector rules inject ranks output stats report export diff cli)
for dir in "${dirs[@]}"; do
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
