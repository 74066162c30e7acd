#!/bin/bash
# GPU memory in use as a counter track: the near_oom pair's bad trace (H100, memory filled to 92%)
# exported in both formats and read back with Perfetto's trace processor: one counter "GPU 0 memory
# in use MB" under the GPU's process, one value per memory record time, and its highest value the
# report's peak (78368.9649 MB); a trace without memory records gets no such track.
. "$(dirname "$0")/lib.sh"
need_checker
P=$SRC/tests/fixtures/gpu/pairs

for fmt in perfetto chrome; do
	expect_ok "$fmt: export" "$GPT" export --no-findings --format $fmt -o "$TMP/oom.$fmt" "$P/near_oom-bad.sqlite"
	got=$(check "$TMP/oom.$fmt" \
		"select t.name, count(*), round(max(c.value), 4) from counter c join counter_track t on t.id = c.track_id
			where t.name like '%memory in use%' group by 1" | tail -n 1)
	expect "$fmt: memory counter" "GPU 0 memory in use MB	785	78368.9649" "$got"
	expect_ok "$fmt: export without memory records" "$GPT" export --no-findings --format $fmt \
		-o "$TMP/malloc.$fmt" "$P/steady_malloc-bad.sqlite"
	expect "$fmt: no memory counter" "0" "$(check "$TMP/malloc.$fmt" \
		"select count(*) from counter_track where name like '%memory in use%'" | tail -n 1)"
done
finish
