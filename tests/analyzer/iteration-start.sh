#!/bin/bash
# Where kernel-sequence iterations start (issue 31), on synthetic traces without NVTX. Each has a
# kernel launched once before the loop ('bwd': the first kernel name seen, so the recurring kernel
# the period is measured by), then 10 steps of a host-to-device copy and six kernels: embed, fwd,
# loss, bwd and two optimizer kernels. The recurring kernel sits mid-step, so every check of a start
# below fails if iterations still start at it.
#
#   gap        host-bound: 200 us of host work before each step's copy (the data loader), 30 us
#              before the optimizer, and once 5 ms before fwd (a checkpoint: the largest gap of one
#              period, not one that recurs). Iterations start at each step's copy, after the
#              recurring 200 us gap: 10 iterations, the steps.
#   optimizer  GPU-bound: 1 us between operations, 3 us before each copy (recurring, but launch
#              latency): iterations start at the optimizer's first kernel. The first step's
#              optimizer has no full period before it, and the last step's is tear-down: 9.
#   kernel     the same without optimizer kernels: at the recurring kernel, as before: 10.
. "$SRC/tests/analyzer/lib.sh"

# rows.py GAP_BEFORE_COPY GAP_BEFORE_OPTIMIZER SEP ONE_OFF OPT_A OPT_B: the trace's rows as SQL
cat > "$TMP/rows.py" <<'PY'
import sys
copy_gap, opt_gap, sep, one_off = (int(a) for a in sys.argv[1:5])
opt_a, opt_b = sys.argv[5:7]
ops = [("embed", 79000, sep), ("fwd", 199000, sep), ("loss", 49000, sep), ("bwd", 249000, sep),
       (opt_a, 20000, opt_gap), (opt_b, 149000, sep)]
print("INSERT INTO kernel (start, end, corr, name) VALUES (100000, 200000, 1, 'bwd');")
t, corr = 1000000, 10
for s in range(10):
    print(f"INSERT INTO copy (start, end, corr, bytes, kind, src, dst) VALUES ({t}, {t + 20000}, {corr}, 1048576, 1, 1, 2);")
    print(f"-- step {s} copy at {t}")
    t += 20000
    for name, length, gap in ops:
        t += gap + (one_off if s == 5 and name == "fwd" else 0)
        corr += 1
        print(f"INSERT INTO kernel (start, end, corr, name) VALUES ({t}, {t + length}, {corr}, '{name}');")
        t += length
    corr += 1
    t += copy_gap
PY
python3 "$TMP/rows.py" 200000 30000 1000 5000000 'multi_tensor_apply_kernel<AdamStepA>' \
	'multi_tensor_apply_kernel<AdamStepB>' > "$TMP/gap.sql"
python3 "$TMP/rows.py" 3000 1000 1000 0 'multi_tensor_apply_kernel<AdamStepA>' \
	'multi_tensor_apply_kernel<AdamStepB>' > "$TMP/optimizer.sql"
python3 "$TMP/rows.py" 3000 1000 1000 0 'update_a' 'update_b' > "$TMP/kernel.sql"
for t in gap optimizer kernel; do
	make_trace "$TMP/$t.sqlite" "$SRC/tests/rules/cases/prelude.sql" "$TMP/$t.sql"
	"$GPT" report -q --format json -o "$TMP/$t.json" "$TMP/$t.sqlite" || { echo "report failed on $t"; exit 1; }
done

q() { python3 -c "import json, sys; d = json.load(open('$TMP/$1.json')); i = d['phases'][0]['iterations']; $2"; }
# The steps' copies, in order: where an iteration starting after the gap before them begins.
copies() { sed -n 's/^-- step [0-9]* copy at //p' "$TMP/$1.sql" | tr '\n' ' ' | sed 's/ $//'; }

expect "gap: how the start was chosen" "kernel-sequence recurring-gap 200000 embed 10" \
	"$(q gap "print(i['source'], i['start']['by'], i['start']['gap_ns'], i['name'], i['count'])")"
# Each iteration's first operation is its step's copy. Its time on the GPU timeline begins with the
# idle gap before that copy: 200 us, and 800 us after the kernel before the loop.
expect "gap: iterations begin at the copies" "$(copies gap)" \
	"$(q gap "print(' '.join(str(x['start_ns'] + (200000 if x['index'] else 800000)) for x in i['items']))")"
expect "gap: each iteration is one step" "7 7 7 7 7 7 7 7 7 7" \
	"$(q gap "print(' '.join(str(x['operations']) for x in i['items']))")"
expect "gap: the report says why" "1" "$("$GPT" report "$TMP/gap.sqlite" | grep -c \
	'iterations kernel sequence, period 6 kernels, starting after the recurring 200.000 us idle gap, first kernel embed$')"

expect "optimizer: how the start was chosen" "kernel-sequence optimizer None multi_tensor_apply_kernel<AdamStepA> 9" \
	"$(q optimizer "print(i['source'], i['start']['by'], i['start']['gap_ns'], i['name'], i['count'])")"
expect "optimizer: the report says why" "1" "$("$GPT" report "$TMP/optimizer.sqlite" | grep -c \
	"iterations kernel sequence, period 6 kernels, starting at the optimizer's first kernel, multi_tensor_apply_kernel<AdamStepA> (no recurring idle gap)$")"

expect "kernel: how the start was chosen" "kernel-sequence recurring-kernel bwd 10" \
	"$(q kernel "print(i['source'], i['start']['by'], i['name'], i['count'])")"
expect "kernel: the report says why" "1" "$("$GPT" report "$TMP/kernel.sqlite" | grep -c \
	'iterations kernel sequence, period 6 kernels, starting at its recurring kernel, bwd (no recurring idle gap, no optimizer kernel)$')"
# Each step's copy marks the period: the host's rhythm, though no gap recurs.
expect "kernel: not said to be a layer" "False" "$(q kernel "print(i['start']['may_be_layer'])")"

# Issue 38 item 6: a step of 4 identical layers (3 kernels each, 2 us apart) and nothing else, 12
# steps. With 300 us of host work before each step, the gap marks every 4th repeat of the
# 3-kernel sequence: the iterations are the steps; so does a copy before each step (a batch), with
# no gap. Without either nothing tells a step from a layer, and the report says an iteration may
# be one layer.
cat > "$TMP/layers.py" <<'PY'
import sys
step_gap, copy = int(sys.argv[1]), sys.argv[2] == "copy"
t, corr = 1000000, 10
for s in range(12):
    t += step_gap
    if copy:
        corr += 1
        print(f"INSERT INTO copy (start, end, corr, bytes, kind, src, dst) VALUES ({t}, {t + 10000}, {corr}, 65536, 1, 1, 2);")
        t += 12000
    for layer in range(4):
        for name, length in (("norm", 30000), ("matmul", 90000), ("act", 20000)):
            corr += 1
            print(f"INSERT INTO kernel (start, end, corr, name) VALUES ({t}, {t + length}, {corr}, '{name}');")
            t += length + 2000
PY
for t in layers:300000:- layers_nogap:2000:- layers_copy:2000:copy; do
	set -- ${t//:/ }
	python3 "$TMP/layers.py" "$2" "$3" > "$TMP/$1.sql"
	t=$1:$2
	make_trace "$TMP/${t%:*}.sqlite" "$SRC/tests/rules/cases/prelude.sql" "$TMP/${t%:*}.sql"
	"$GPT" report -q --format json -o "$TMP/${t%:*}.json" "$TMP/${t%:*}.sqlite" || { echo "report failed on $t"; exit 1; }
done
expect "layers: the step, 4 repeats of the layer" "kernel-sequence recurring-gap 4 False 12 ops 12" \
	"$(q layers "print(i['source'], i['start']['by'], i['start']['repeats'], i['start']['may_be_layer'], i['period_ops'] if 'period_ops' in i else 12, 'ops', i['count'])")"
expect "layers: the report says so" "1" "$("$GPT" report "$TMP/layers.sqlite" | grep -c \
	'iterations kernel sequence, period 12 kernels, 4 repeats of a 3-kernel sequence (a layer?) that the recurring 302.000 us idle gap groups, first kernel norm$')"
expect "layers_copy: the step, marked by its copy" "recurring-kernel 4 False 12" \
	"$(q layers_copy "print(i['start']['by'], i['start']['repeats'], i['start']['may_be_layer'], i['count'])")"
expect "layers_nogap: may be a layer" "recurring-kernel 1 True" \
	"$(q layers_nogap "print(i['start']['by'], i['start']['repeats'], i['start']['may_be_layer'])")"
expect "layers_nogap: per-iteration savings say so" "0" "$("$GPT" report "$TMP/layers_nogap.sqlite" |
	grep 'recoverable: .* per iteration' | grep -vc 'which may be one layer of the step')"

# The same on the H200 (tests/gpu/busy/layers.sh, 2026-12-04): a PyTorch forward of 4 identical
# LayerNorm-Linear-GELU blocks, 5 + 60 steps. With a synchronize and 1 ms of host work between
# steps, the 65 steps of 12 kernels; with nothing between them, the 3-kernel layer, said to be one.
REAL=$SRC/tests/fixtures/gpu/real
for t in sync none; do
	"$GPT" report -q --format json -o "$TMP/real-$t.json" "$REAL/layers-$t.sqlite" || { echo "report failed on $t"; exit 1; }
done
expect "H200 layers, sync: the steps" "recurring-gap 4 False 65" \
	"$(q real-sync "print(i['start']['by'], i['start']['repeats'], i['start']['may_be_layer'], i['count'])")"
expect "H200 layers, none: a layer, said" "recurring-kernel 1 True 260" \
	"$(q real-none "print(i['start']['by'], i['start']['repeats'], i['start']['may_be_layer'], i['count'])")"
finish
