#!/usr/bin/env bash
# The cross-rank report over ranks recorded in capture windows that opened at different steps: the
# real two-GPU DDP traces (tests/fixtures/gpu/ddp, rank 1 sleeps 50 ms on every 5th step) cut as a
# window would have recorded them, rank 0's opening at its 3rd step and rank 1's at its 2nd. The
# windowed job must name the same straggler on the same steps, with the same waits, as the whole
# traces: by step number (ProfilerStep#N), by time, and by step number without a common clock.
# Before the ranks were lined up, the collectives' sequence numbers (counted from each trace's
# first) paired each of rank 0's with rank 1's of the step before, and the job had 4 stragglers
# on the wrong steps. Then a synthetic job whose step numbers come from gpt-trace run --steps.
. "$SRC/tests/ranks/lib.sh"

DDP=$SRC/tests/fixtures/gpu/ddp/ddp-slow-exposed-rank

# steps TRACE: the DDP sample's step ranges ("train_step") named ProfilerStep#0, #1, ...
steps() {
	sqlite3 "$1" "CREATE TEMP TABLE n AS SELECT rowid AS id, ROW_NUMBER() OVER (ORDER BY start) - 1 AS k
		FROM NVTX_EVENTS WHERE text = '$2';
		UPDATE NVTX_EVENTS SET text = 'ProfilerStep#' || (SELECT k FROM n WHERE id = NVTX_EVENTS.rowid)
		WHERE text = '$2'"
}

# window TRACE RANGE N: TRACE as if recorded in a window that opened at the start of its N-th RANGE
# range (from 0) and stayed open: what started before is gone (a kernel launched before and run
# after stays, as the collector keeps it), and GPT_CAPTURE_WINDOWS says so
window() {
	local at
	at=$(sqlite3 "$1" "SELECT start FROM NVTX_EVENTS WHERE text LIKE '$2' ORDER BY start LIMIT 1 OFFSET $3")
	{
		for t in KERNEL MEMCPY MEMSET SYNCHRONIZATION RUNTIME; do
			echo "DELETE FROM CUPTI_ACTIVITY_KIND_$t WHERE start < $at;"
		done
		echo "DELETE FROM NVTX_EVENTS WHERE start < $at AND eventType <> 75;"
		sed -n '/^CREATE TABLE GPT_CAPTURE_WINDOWS/,/^);/p' "$SRC/schema/schema.sql" |
			sed 's/CREATE TABLE/CREATE TABLE IF NOT EXISTS/'
		echo "INSERT INTO GPT_CAPTURE_WINDOWS VALUES (1, $at, (SELECT MAX(end) FROM CUPTI_ACTIVITY_KIND_RUNTIME),"
		echo "	'nvtx range start', 'exit');"
	} | sqlite3 "$1"
}

noclock() {
	sqlite3 "$1" "DELETE FROM GPT_META WHERE name IN ('time_origin_ns', 'time_origin_utc_ns')"
}

# job NAME RANGE [noclock]: the DDP pair in $TMP/NAME, windows at rank 0's 3rd and rank 1's 2nd RANGE
job() {
	mkdir -p "$TMP/$1"
	for r in 0 1; do
		cp "$DDP$r.sqlite" "$TMP/$1/rank$r.sqlite"
		[ "$2" = steps ] && steps "$TMP/$1/rank$r.sqlite" train_step
	done
	window "$TMP/$1/rank0.sqlite" "${2/steps/ProfilerStep#%}" 2
	window "$TMP/$1/rank1.sqlite" "${2/steps/ProfilerStep#%}" 1
	if [ "${3:-}" = noclock ]; then
		noclock "$TMP/$1/rank0.sqlite"
		noclock "$TMP/$1/rank1.sqlite"
	fi
	"$GPT" report -q -f json -o "$TMP/$1.json" "$TMP/$1"/rank*.sqlite
	"$GPT" report -q --color never "$TMP/$1"/rank*.sqlite > "$TMP/$1.txt"
}

# late JSON OFFSET: (step, straggler rank, wait in us) of each iteration with a straggler; the step
# is its "step", else its index plus OFFSET
late() {
	json "$1" "[(i['index'] + $2 if i.get('step') is None else i['step'], i['straggler_rank'], i['delay_ns'] // 1000)
		for i in d['iterations'] if i['straggler_rank'] >= 0]"
}

# the whole traces, steps named: the reference answer
mkdir -p "$TMP/whole"
for r in 0 1; do
	cp "$DDP$r.sqlite" "$TMP/whole/rank$r.sqlite"
	steps "$TMP/whole/rank$r.sqlite" train_step
done
"$GPT" report -q -f json -o "$TMP/whole.json" "$TMP"/whole/rank*.sqlite
whole=$(late "$TMP/whole.json" 0)
expect "whole: rank 1 on steps 4, 9, ..., 39; rank 0 on the warm-up step 0 and step 20" \
	"[(0, 1), (4, 1), (9, 1), (14, 1), (19, 1), (20, 0), (24, 1), (29, 1), (34, 1), (39, 1)]" \
	"$(python3 -c "print([x[:2] for x in $whole])")"
expect "whole: not lined up (recorded whole)" "False" "$(json "$TMP/whole.json" "'lined_up' in d")"

# windows, steps named: lined up by step number
job steps steps
expect "steps: lined up by step number" "{'by': 'step', 'steps': 'ProfilerStep#N', 'common_iteration': 2, 'common_step': 3}" \
	"$(json "$TMP/steps.json" 'd["lined_up"]')"
# the warm-up step 0 is not in either window; every other straggler is, with the same wait
expect "steps: the same stragglers on the same steps, the same waits" "$(python3 -c "print([x for x in $whole if x[0] != 0])")" \
	"$(late "$TMP/steps.json" 0)"
expect "steps: the straggler finding names rank 1, on steps" "rank 1 held up the job in 8 of 38 iterations, 409.54 ms in all|step 4: the others waited 51.68 ms" \
	"$(json "$TMP/steps.json" "d['findings'][0]['message'] + '|' + d['findings'][0]['evidence'][0].split(' (')[0]")"
# rank 0's window (from step 2) holds 915 collectives, rank 1's (from step 1) 938: all of rank 0's match
expect "steps: the collectives both windows hold are matched, the rest not" "915 23 0 23" \
	"$(json "$TMP/steps.json" "d['matched_collectives'], d['unmatched_collectives'], *[r['unmatched_first'] for r in d['ranks']]" | tr -d '(),')"
expect "steps: the note on rank 1's earlier window" \
	"rank 1's window opened at step 1, 1 iteration before the others' (step 2): its first 23 collectives are not matched" \
	"$(json "$TMP/steps.json" '"\n".join(d["notes"])')"
expect "steps: text says how" "1" \
	"$(grep -c '^  lined up by step number (ProfilerStep#N); collectives counted from step 3, the first iteration every rank has whole$' "$TMP/steps.txt")"
expect "steps: text names the steps" "8" "$(grep -c '^  step [0-9]* .*straggler rank 1: the others waited 5[01]\.' "$TMP/steps.txt")"
"$GPT" report -q -f html -o "$TMP/steps.html" "$TMP"/steps/rank*.sqlite
expect "steps: the page says how" "1" "$(grep -c '<dd id="lined-up">by step number (ProfilerStep#N); collectives counted from step 3' "$TMP/steps.html")"
expect "steps: the page's table names the steps" "1" "$(grep -c '<td class="num">step 4</td>' "$TMP/steps.html")"

# windows, no step numbers (train_step): lined up by time; the job's iterations are rank 1's (from step 1)
job time train_step
expect "time: lined up by time" "time" "$(json "$TMP/time.json" 'd["lined_up"]["by"]')"
expect "time: the same stragglers on the same steps, the same waits" "$(python3 -c "print([x for x in $whole if x[0] != 0])")" \
	"$(late "$TMP/time.json" 1)"
expect "time: the same collectives matched" "915 23" "$(json "$TMP/time.json" "d['matched_collectives'], d['unmatched_collectives']" | tr -d '(),')"

# windows, steps named, no clock anchors: by step number all the same
job noclock steps noclock
expect "no clock: lined up by step number" "step" "$(json "$TMP/noclock.json" 'd["lined_up"]["by"]')"
expect "no clock: the same stragglers on the same steps, the same waits" "$(python3 -c "print([x for x in $whole if x[0] != 0])")" \
	"$(late "$TMP/noclock.json" 0)"

# windows, no step numbers, no clock: by index, which the report says is right only for equal windows
job index train_step noclock
expect "no clock, no steps: lined up by index, and it says so" "index True" \
	"$(json "$TMP/index.json" "d['lined_up']['by'], any('matched by their index, right only if every rank' in n for n in d['notes'])" | tr -d "(),'")"

# a synthetic job recorded with --steps: rank 1 late on steps 4, 8, 12 (counted from 1), rank 0's
# window from step 3 (--steps 3-12), rank 1's from step 2 (--steps 2-12); the ranges carry no number
$GEN --world 2 --slow 1:5:4 "$TMP/gen" > /dev/null
for r in 0 1; do
	sqlite3 "$TMP/gen/rank-$r.sqlite" "UPDATE NVTX_EVENTS SET text = 'step' WHERE text LIKE 'ProfilerStep#%'"
	window "$TMP/gen/rank-$r.sqlite" step $((2 - r))
	sqlite3 "$TMP/gen/rank-$r.sqlite" "INSERT INTO GPT_META (name, value) VALUES ('capture_steps', '$((3 - r))-12')"
done
"$GPT" report -q -f json -o "$TMP/gen.json" "$TMP"/gen/rank-*.sqlite
expect "--steps: lined up by their count" "step counted by gpt-trace run --steps 4" \
	"$(json "$TMP/gen.json" "d['lined_up']['by'], d['lined_up']['steps'], d['lined_up']['common_step']" | tr -d "(),'")"
expect "--steps: rank 1 on steps 4, 8, 12" "[(4, 1), (8, 1), (12, 1)]" \
	"$(json "$TMP/gen.json" "[(i['step'], i['straggler_rank']) for i in d['iterations'] if i['straggler_rank'] >= 0]")"
# real windows (tests/fixtures/gpu/capture, 2 H200s, rank 1 sleeps 20 ms in every third step):
# --steps 40-55 on both ranks, lined up by step number from step 41 (step 40 is each window's first)
CAP=$SRC/tests/fixtures/gpu/capture
mkdir -p "$TMP/cap"
cp "$CAP"/steps-2rank-rank*.sqlite "$CAP"/ondemand-2rank-rank*.sqlite "$TMP/cap/"
"$GPT" report -q -f json -o "$TMP/cap-steps.json" "$TMP"/cap/steps-2rank-rank*.sqlite
expect "--steps 40-55: lined up from step 41" "step 41" \
	"$(json "$TMP/cap-steps.json" "d['lined_up']['by'], d['lined_up']['common_step']" | tr -d "(),'")"
expect "--steps 40-55: rank 1 on the slept steps" "[(40, 1), (43, 1), (46, 1), (49, 1), (52, 1), (55, 1)]" \
	"$(json "$TMP/cap-steps.json" "[(i['step'], i['straggler_rank']) for i in d['iterations'] if i['straggler_rank'] >= 0]")"
# on demand before every rank opened at one instant: rank 0 holds steps 97-118, rank 1 76-96 (its step 97
# holds no GPU work: the window closed as it began, and a step without GPU work is no iteration); step
# 97 is rank 0's window's first, so no step is whole on both: nothing can be matched (matched as
# recorded, 126 collectives of different steps were paired)
"$GPT" report -q -f json -o "$TMP/cap-ondemand.json" "$TMP"/cap/ondemand-2rank-rank*.sqlite
expect "on demand, no common step: nothing matched, no straggler" "0 256 0" \
	"$(json "$TMP/cap-ondemand.json" "d['matched_collectives'], d['unmatched_collectives'], \
		sum(i['straggler_rank'] >= 0 for i in d['iterations'])" | tr -d '(),')"
expect "on demand, no common step: the note says why" \
	"the ranks' windows share no iteration whole (rank 0: step 97 to step 118; rank 1: step 76 to step 96): no collective can be matched, nor a straggler named" \
	"$(json "$TMP/cap-ondemand.json" '"\n".join(d["notes"])')"
finish
