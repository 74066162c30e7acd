#!/bin/bash
# Every committed GPU fixture was recorded by a collector of schema version 2 or later
# (TARGET_INFO_CUDA_STREAM, a ThreadNames row for every thread that made an API call, nsys's metadata
# tables): traces of version 1 lose rows in third-party SQL and prove less. One exception, listed
# here with its reason: a trace of a program that no longer exists in that form.
. "$SRC/tests/analyzer/lib.sh"
# item_sync-hostbound: an earlier, host-bound design of tests/gpu/pairs/item_sync.py (phases.sh).
allowed="pairs/item_sync-hostbound.sqlite"
old=""
n=0
while read -r f; do
	n=$((n + 1))
	# immutable=1: the hot-journal crash fixture cannot be opened read-only otherwise, and its
	# journal must stay as recorded (crash-fixtures.sh).
	v=$(sqlite3 -readonly "file:$f?immutable=1" "SELECT value FROM GPT_META WHERE name = 'gpt_schema_version'" 2>/dev/null)
	rel=${f#"$SRC/tests/fixtures/gpu/"}
	case " $allowed " in *" $rel "*) continue ;; esac
	[ "${v:-0}" -ge 2 ] 2>/dev/null || old="$old $rel(${v:-none})"
done < <(find "$SRC/tests/fixtures/gpu" -name '*.sqlite' | sort)
expect "fixtures found" "1" "$((n > 40))"
expect "fixtures at schema version 2 or later" "" "${old# }"
finish
