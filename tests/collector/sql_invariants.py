#!/usr/bin/env python3
"""Check a trace for the invariants that SQL written for Nsight Systems exports relies on.

People join the nsys tables without guarding against holes: a thread's API calls to ThreadNames,
every name id to StringIds, a kernel to its launch call, an enum column to its ENUM_* table, a
stream to TARGET_INFO_CUDA_STREAM. A missing row on the other side does not raise an error; the
join just drops the row. So each invariant below says that such a join loses nothing:

  thread-names    every globalTid / endGlobalTid in any table has a ThreadNames row
  string-ids      every column the DDL marks "REFERENCES StringIds(id)" resolves
  correlation     every kernel, copy, memset and synchronization row has its API call (same
                  correlationId) in CUPTI_ACTIVITY_KIND_RUNTIME, when API records were on
  enum-tables     every ENUM_* table a column references exists (when the column holds values)
  enum-values     every value of such a column is an id of its ENUM_* table (tables present)
  processes       every globalPid, and the process of every globalTid, has a PROCESSES row
  cuda-targets    every device, context and stream a GPU row ran on has its TARGET_INFO_GPU,
                  TARGET_INFO_CUDA_CONTEXT_INFO and TARGET_INFO_CUDA_STREAM row
  export-version  META_DATA_EXPORT names the export schema (EXPORT_SCHEMA_VERSION and its
                  _MAJOR, _MINOR, _MICRO parts, consistent), as tools that branch on it read it

Which columns are references comes from the DDL comments the nsys export carries (and
schema/schema.sql copies), so new tables are covered without changing this script.

    sql_invariants.py [--only NAMES] [--skip NAMES] TRACE|DIR...
        check each trace (a DIR: every *.sqlite below it); NAMES is a comma-separated list
        of invariants. Prints PASS/FAIL per trace and invariant and "N passed, M failed";
        exits 1 when one failed.
    sql_invariants.py --self-test TRACE
        TRACE (written by the collector, tests/collector/test_metadata.c) must pass every
        invariant; then copies of it are broken one way at a time and the matching invariant,
        and only it, must fail.
"""
import os
import re
import shutil
import sqlite3
import sys
import tempfile
import urllib.parse

INVARIANTS = ["thread-names", "string-ids", "correlation", "enum-tables", "enum-values",
              "processes", "cuda-targets", "export-version"]
GPU_TABLES = ["CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY",
              "CUPTI_ACTIVITY_KIND_MEMSET", "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION"]
API_TABLE = "CUPTI_ACTIVITY_KIND_RUNTIME"
REFERENCE = re.compile(r"^\s*(\w+)\s+\w+.*--\s*REFERENCES\s+(\w+)\((\w+)\)")
EXAMPLES = 3    # offending values shown per failure


def q(name):
    return '"%s"' % name.replace('"', '""')


class Trace:
    def __init__(self, path):
        self.path = path
        uri = "file:%s?mode=ro" % urllib.parse.quote(os.path.abspath(path))
        self.db = sqlite3.connect(uri, uri=True)
        self.ddl = {name: sql or "" for name, sql in self.db.execute(
            "SELECT name, sql FROM sqlite_master WHERE type = 'table'")}

    def close(self):
        self.db.close()

    def has(self, table):
        return table in self.ddl

    def columns(self, table):
        return [r[1] for r in self.db.execute("PRAGMA table_info(%s)" % q(table))]

    def scalar(self, sql, args=()):
        row = self.db.execute(sql, args).fetchone()
        return row[0] if row else None

    def references(self):
        """(table, column, target table, target column) for every column with a REFERENCES comment."""
        refs = []
        for table, sql in sorted(self.ddl.items()):
            for line in sql.splitlines():
                m = REFERENCE.match(line)
                if m:
                    refs.append((table, m.group(1), m.group(2), m.group(3)))
        return refs

    def missing(self, table, column, target, target_column, where="1"):
        """How many non-NULL values of table.column have no target row, and a few of them."""
        sql = ("SELECT %s FROM %s WHERE %s IS NOT NULL AND (%s) AND %s NOT IN "
               "(SELECT %s FROM %s WHERE %s IS NOT NULL)") % (
                   q(column), q(table), q(column), where, q(column), q(target_column), q(target),
                   q(target_column))
        count = self.scalar("SELECT count(*) FROM (%s)" % sql)
        examples = [r[0] for r in self.db.execute(
            "SELECT DISTINCT * FROM (%s) LIMIT %d" % (sql, EXAMPLES))]
        return count, examples

    def meta(self, name):
        if not self.has("GPT_META"):
            return None
        return self.scalar("SELECT value FROM GPT_META WHERE name = ?", (name,))


def described(count, what, examples):
    return "%d %s, e.g. %s" % (count, what, ", ".join(str(e) for e in examples))


# Each check returns a list of problems (empty: the invariant holds) and a note for PASS lines.

def check_thread_names(t):
    if not t.has("ThreadNames"):
        return ["no ThreadNames table"], ""
    problems, rows = [], 0
    for table in sorted(t.ddl):
        if table == "ThreadNames":
            continue
        for column in ("globalTid", "endGlobalTid"):
            if column not in t.columns(table):
                continue
            rows += t.scalar("SELECT count(*) FROM %s WHERE %s IS NOT NULL" % (q(table), q(column)))
            n, ex = t.missing(table, column, "ThreadNames", "globalTid")
            if n:
                tids = ["%d (tid %d)" % (g, g & 0xFFFFFF) for g in ex]
                problems.append("%s.%s: %s" % (table, column, described(
                    n, "rows whose thread has no ThreadNames row", tids)))
    return problems, "%d rows with a thread" % rows


def check_string_ids(t):
    problems, columns = [], 0
    for table, column, target, target_column in t.references():
        if target != "StringIds" or not t.has(table):
            continue
        columns += 1
        if not t.has("StringIds"):
            return ["no StringIds table"], ""
        n, ex = t.missing(table, column, target, target_column)
        if n:
            problems.append("%s.%s: %s" % (table, column, described(n, "ids not in StringIds", ex)))
    return problems, "%d name columns" % columns


def api_records_on(t):
    setting = t.meta("api_tracing")
    if setting is not None:
        return setting != "none"
    return t.has(API_TABLE) and t.scalar("SELECT count(*) FROM %s" % API_TABLE) > 0


def check_correlation(t):
    if not api_records_on(t):
        return [], "API records were off"
    if not t.has(API_TABLE):
        return ["no %s table" % API_TABLE], ""
    problems, rows = [], 0
    for table in GPU_TABLES:
        if not t.has(table):
            continue
        rows += t.scalar("SELECT count(*) FROM %s" % table)
        n, ex = t.missing(table, "correlationId", API_TABLE, "correlationId")
        if n:
            problems.append("%s: %s" % (table, described(n, "rows without their API call", ex)))
    return problems, "%d GPU rows" % rows


def enum_references(t):
    return [r for r in t.references() if r[2].startswith("ENUM_") and t.has(r[0])]


def check_enum_tables(t):
    problems, tables = [], set()
    for table, column, target, _ in enum_references(t):
        tables.add(target)
        if t.has(target):
            continue
        used = t.scalar("SELECT count(*) FROM %s WHERE %s IS NOT NULL" % (q(table), q(column)))
        if used:
            problems.append("%s.%s: %d values, table %s missing" % (table, column, used, target))
    return problems, "%d ENUM tables referenced" % len(tables)


def check_enum_values(t):
    problems, columns = [], 0
    for table, column, target, target_column in enum_references(t):
        if not t.has(target):
            continue
        columns += 1
        n, ex = t.missing(table, column, target, target_column)
        if n:
            problems.append("%s.%s: %s" % (table, column, described(
                n, "values not in %s" % target, ex)))
    return problems, "%d enum columns" % columns


def check_processes(t):
    if not t.has("PROCESSES"):
        return ["no PROCESSES table"], ""
    problems, rows = [], 0
    for table in sorted(t.ddl):
        if table == "PROCESSES":
            continue
        cols = t.columns(table)
        if "globalPid" in cols:
            rows += t.scalar("SELECT count(*) FROM %s WHERE globalPid IS NOT NULL" % q(table))
            n, ex = t.missing(table, "globalPid", "PROCESSES", "globalPid")
            if n:
                problems.append("%s.globalPid: %s" % (table, described(
                    n, "rows whose process has no PROCESSES row", ex)))
        for column in ("globalTid", "endGlobalTid"):
            if column not in cols:
                continue
            sql = ("SELECT DISTINCT (%s >> 24) << 24 FROM %s WHERE %s IS NOT NULL EXCEPT "
                   "SELECT globalPid FROM PROCESSES") % (q(column), q(table), q(column))
            missing = [r[0] for r in t.db.execute(sql)]
            if missing:
                problems.append("%s.%s: threads of processes without a PROCESSES row: %s" % (
                    table, column, ", ".join("pid %d" % ((g >> 24) & 0xFFFFFF)
                                             for g in missing[:EXAMPLES])))
    return problems, "%d rows with a process" % rows


def check_cuda_targets(t):
    problems, streams = [], set()
    for table in ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY",
                  "CUPTI_ACTIVITY_KIND_MEMSET"):
        if not t.has(table):
            continue
        for row in t.db.execute("SELECT DISTINCT deviceId, contextId, streamId, "
                                "(globalPid >> 24) & 16777215 FROM %s" % table):
            streams.add(row)
    if not streams:
        return [], "no GPU rows"
    need = {"TARGET_INFO_GPU": "id", "TARGET_INFO_CUDA_CONTEXT_INFO": "contextId",
            "TARGET_INFO_CUDA_STREAM": "streamId"}
    for table in need:
        if not t.has(table):
            problems.append("no %s table" % table)
    if problems:
        return problems, ""
    devices = {r[0] for r in t.db.execute("SELECT id FROM TARGET_INFO_GPU")}
    contexts = {r for r in t.db.execute(
        "SELECT processId, contextId FROM TARGET_INFO_CUDA_CONTEXT_INFO")}
    known = {r for r in t.db.execute(
        "SELECT processId, contextId, streamId FROM TARGET_INFO_CUDA_STREAM")}
    for what, missing in (
            ("devices without a TARGET_INFO_GPU row",
             sorted({d for d, _, _, _ in streams if d not in devices})),
            ("contexts without a TARGET_INFO_CUDA_CONTEXT_INFO row",
             sorted({(p, c) for _, c, _, p in streams if (p, c) not in contexts})),
            ("streams without a TARGET_INFO_CUDA_STREAM row",
             sorted({(p, c, s) for _, c, s, p in streams if (p, c, s) not in known}))):
        if missing:
            problems.append(described(len(missing), what, missing[:EXAMPLES]))
    return problems, "%d streams" % len(streams)


def check_export_version(t):
    table = "META_DATA_EXPORT"
    if not t.has(table):
        return ["no %s table" % table], ""
    rows = dict(t.db.execute("SELECT name, value FROM %s WHERE name LIKE 'EXPORT_SCHEMA_VERSION%%'"
                             % table))
    version = rows.get("EXPORT_SCHEMA_VERSION")
    parts = [rows.get("EXPORT_SCHEMA_VERSION_" + p) for p in ("MAJOR", "MINOR", "MICRO")]
    if not version or None in parts:
        return ["EXPORT_SCHEMA_VERSION rows missing: %s" % sorted(rows)], ""
    if ".".join(parts) != version:
        return ["EXPORT_SCHEMA_VERSION %s but parts %s" % (version, ".".join(parts))], ""
    return [], "schema %s" % version


CHECKS = {
    "thread-names": check_thread_names,
    "string-ids": check_string_ids,
    "correlation": check_correlation,
    "enum-tables": check_enum_tables,
    "enum-values": check_enum_values,
    "processes": check_processes,
    "cuda-targets": check_cuda_targets,
    "export-version": check_export_version,
}


def run(path, names, out=sys.stdout):
    """Check one trace; returns {invariant: problems}."""
    results = {}
    trace = Trace(path)
    try:
        for name in names:
            problems, note = CHECKS[name](trace)
            results[name] = problems
            if problems:
                for p in problems:
                    print("FAIL %s: %s: %s" % (path, name, p), file=out)
            else:
                print("PASS %s: %s (%s)" % (path, name, note), file=out)
    finally:
        trace.close()
    return results


def traces_in(args):
    paths = []
    for arg in args:
        if os.path.isdir(arg):
            for root, _, files in sorted(os.walk(arg)):
                paths += [os.path.join(root, f) for f in sorted(files) if f.endswith(".sqlite")]
        else:
            paths.append(arg)
    return paths


# One way to break a good trace per invariant: (invariant, what, SQL).
MUTATIONS = [
    ("thread-names", "an API call's thread loses its ThreadNames row",
     "DELETE FROM ThreadNames WHERE globalTid = (SELECT globalTid FROM "
     "CUPTI_ACTIVITY_KIND_RUNTIME ORDER BY correlationId LIMIT 1)"),
    ("thread-names", "an NVTX range ends on an unnamed thread",
     "UPDATE NVTX_EVENTS SET endGlobalTid = endGlobalTid + 1000000 WHERE endGlobalTid IS NOT NULL"),
    ("string-ids", "a kernel's short name id points nowhere",
     "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET shortName = 999999 WHERE rowid = 1"),
    ("correlation", "a memset lost its API call",
     "UPDATE CUPTI_ACTIVITY_KIND_MEMSET SET correlationId = 999999"),
    ("correlation", "a synchronization lost its API call",
     "DELETE FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE correlationId IN (SELECT correlationId "
     "FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION)"),
    ("enum-tables", "the stream type table is missing",
     "DROP TABLE ENUM_CUPTI_STREAM_TYPE"),
    ("enum-values", "a copy kind outside ENUM_CUDA_MEMCPY_OPER",
     "UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET copyKind = 99"),
    ("processes", "the traced process has no PROCESSES row",
     "DELETE FROM PROCESSES WHERE globalPid = (SELECT globalPid FROM CUPTI_ACTIVITY_KIND_KERNEL "
     "LIMIT 1)"),
    ("cuda-targets", "a stream lost its TARGET_INFO_CUDA_STREAM row",
     "DELETE FROM TARGET_INFO_CUDA_STREAM WHERE streamId = (SELECT max(streamId) FROM "
     "CUPTI_ACTIVITY_KIND_KERNEL)"),
    ("cuda-targets", "a context lost its TARGET_INFO_CUDA_CONTEXT_INFO row",
     "DELETE FROM TARGET_INFO_CUDA_CONTEXT_INFO"),
    ("export-version", "the minor version row is missing",
     "DELETE FROM META_DATA_EXPORT WHERE name = 'EXPORT_SCHEMA_VERSION_MINOR'"),
]


def self_test(good):
    quiet = open(os.devnull, "w")
    failures = 0
    results = run(good, INVARIANTS)
    if any(results.values()):
        print("self-test: the good trace fails: %s" % [k for k, v in results.items() if v])
        return 1
    work = tempfile.mkdtemp(prefix="gpt-sql-invariants.")
    try:
        for i, (invariant, what, sql) in enumerate(MUTATIONS):
            path = os.path.join(work, "broken-%d.sqlite" % i)
            shutil.copyfile(good, path)
            db = sqlite3.connect(path)
            changed = db.execute(sql).rowcount
            db.commit()
            db.close()
            results = run(path, INVARIANTS, out=quiet)
            failed = sorted(k for k, v in results.items() if v)
            ok = changed != 0 and failed == [invariant]
            failures += not ok
            print("%s mutation: %s: %s fails%s" % (
                "ok" if ok else "WRONG", what, ", ".join(failed) or "nothing",
                "" if changed else " (the mutation changed no row)"))
    finally:
        shutil.rmtree(work)
        quiet.close()
    print("self-test: %s" % ("passed" if not failures else "%d mutation(s) wrong" % failures))
    return 1 if failures else 0


def parse_names(value):
    names = [n for n in value.split(",") if n]
    unknown = [n for n in names if n not in CHECKS]
    if unknown:
        sys.exit("sql_invariants.py: unknown invariant %s (known: %s)" % (
            ", ".join(unknown), ", ".join(INVARIANTS)))
    return names


def main(argv):
    names, skip, args = list(INVARIANTS), [], []
    i = 0
    while i < len(argv):
        if argv[i] == "--self-test" and i + 1 < len(argv):
            return self_test(argv[i + 1])
        if argv[i] in ("--only", "--skip") and i + 1 < len(argv):
            if argv[i] == "--only":
                names = parse_names(argv[i + 1])
            else:
                skip = parse_names(argv[i + 1])
            i += 2
            continue
        if argv[i] in ("-h", "--help"):
            print(__doc__)
            return 0
        args.append(argv[i])
        i += 1
    names = [n for n in names if n not in skip]
    paths = traces_in(args)
    if not paths:
        print(__doc__, file=sys.stderr)
        return 2
    passed = failed = 0
    for path in paths:
        for problems in run(path, names).values():
            passed += not problems
            failed += bool(problems)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
