#!/usr/bin/env bash
# Builds the libFuzzer harnesses with clang (Debian 12: apt-get install clang; clang-14 ships
# libFuzzer) into fuzz/build/ (or $1): fuzz-trace and fuzz-sql, with AddressSanitizer and UBSan,
# from the analyzer library's sources directly. Not part of the CMake build: CI replays the corpus
# with the tests/fuzz replay driver instead. See docs/fuzzing.md.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/fuzz/build}
CC=${CC:-clang}
mkdir -p "$out/obj/perfetto"
protoc-c --c_out="$out/obj/perfetto" -I"$root/analyzer/export/proto" "$root/analyzer/export/proto/perfetto_trace.proto"
mkdir -p "$out/obj/schema"
cmake -DIN="$root/schema/schema.sql" -DOUT="$out/obj/schema/schema-sql.h" -DNAME=gpt_schema_sql -P "$root/schema/embed.cmake"

san=(-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
cflags=(-std=gnu11 -g -O1 "${san[@]}" -fsanitize=fuzzer-no-link -I"$root" -I"$out/obj"
	-DGPT_TRACE_VERSION='"fuzz"' -DGPT_FUZZ_SCHEMA="\"$root/schema/schema.sql\"")
objs=()
for src in "$root"/common/*.c "$root"/analyzer/*/*.c "$root"/analyzer/report/html/*.c "$root"/rules/*.c \
	"$out/obj/perfetto/perfetto_trace.pb-c.c" "$root/fuzz/analyze.c"; do
	rel=${src#"$root"/}
	obj=$out/obj/${rel//\//-}
	obj=${obj%.c}.o
	if [ ! -e "$obj" ] || [ "$src" -nt "$obj" ]; then
		echo "cc $src"
		"$CC" "${cflags[@]}" -w -c "$src" -o "$obj" &
	fi
	objs+=("$obj")
done
wait
libs=(-lsqlite3 -lz -lyajl -l:libprotobuf-c.a -lm)
for h in fuzz-trace fuzz-sql; do
	echo "ld $out/$h"
	"$CC" "${cflags[@]}" -fsanitize=fuzzer "$root/fuzz/$h.c" "${objs[@]}" "${libs[@]}" -o "$out/$h"
done
