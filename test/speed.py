"""Helper of test/speed.sh: loads the tables, times the queries, writes the report.

Usage: python3 test/speed.py OUT.md PLANS.txt   (PGHOST etc. set by test/cluster.sh)
"""
import json
import math
import os
import platform
import re
import shutil
import signal
import statistics
import subprocess
import sys
import time

DATA = os.environ["SIMHASH_DATA"]
REPS = int(os.environ.get("SPEED_REPS", "5"))
MIN_BYTES = float(os.environ.get("SPEED_MIN_MB", "100")) * 1e6
TARGET_MBS = 150.0
TARGET_RATIO = 10.0

# (label, select list or WHERE expression, kind)
QUERIES = [
    ("(a) sum(length(body)) [baseline]", "sum(length(body))", "select"),
    ("(b) hashtextextended(body, 0)", "hashtextextended(body, 0)", "where"),
    ("(c) to_tsvector('simple', body)", "to_tsvector('simple', body)", "where"),
    ("(d) simhash(body)", "simhash(body)", "where"),
    ("(e) simhash(body, shingle => 2)", "simhash(body, shingle => 2)", "where"),
    ("(e) simhash(body, shingle => 3)", "simhash(body, shingle => 3)", "where"),
    ("(e) simhash_ngram(body, n => 3)", "simhash_ngram(body, n => 3)", "where"),
]
TABLES = ["en", "zh"]


def sql_of(expr, kind, table):
    if kind == "select":
        return f"SELECT {expr} FROM {table}"
    return f"SELECT count(*) FROM {table} WHERE ({expr}) IS NOT NULL"


def psql(sql, *extra):
    r = subprocess.run(["psql", "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", *extra, "-c", sql],
                       capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"psql failed: {sql}\n{r.stderr}")
    return r.stdout.strip()


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def load(table):
    psql(f"CREATE TABLE {table} (id text NOT NULL, body text NOT NULL)")
    psql(f"ALTER TABLE {table} ALTER body SET STORAGE EXTERNAL")
    for part in ("natural", "edited"):
        path = os.path.join(DATA, part, f"docs.{table}.tsv.xz")
        psql(f"\\copy {table}(id, body) FROM PROGRAM 'xzcat {path}'")
    base_rows, base_bytes = map(int, psql(
        f"SELECT count(*), sum(octet_length(body)) FROM {table}").split("|"))
    copies = max(1, math.ceil(MIN_BYTES / base_bytes))
    if copies > 1:
        psql(f"INSERT INTO {table} SELECT id || '#' || k, body FROM {table}, "
             f"generate_series(2, {copies}) k")
    psql(f"VACUUM ANALYZE {table}")
    rows, nbytes, compressed, inline = map(int, psql(
        f"SELECT count(*), sum(octet_length(body)), "
        f"count(*) FILTER (WHERE pg_column_compression(body) IS NOT NULL), "
        f"count(*) FILTER (WHERE pg_column_size(body) < 2000) FROM {table}").split("|"))
    if nbytes < MIN_BYTES:
        sys.exit(f"{table}: only {nbytes} bytes of body text")
    heap, toast = map(int, psql(
        f"SELECT pg_relation_size(oid), pg_relation_size(reltoastrelid) "
        f"FROM pg_class WHERE relname = '{table}'").split("|"))
    # prewarm heap and TOAST, then read every body once
    psql(f"SELECT pg_prewarm('{table}'), pg_prewarm(reltoastrelid) "
         f"FROM pg_class WHERE relname = '{table}'")
    psql(f"SELECT count(*), sum(length(body)) FROM {table}")
    info = dict(base_rows=base_rows, base_bytes=base_bytes, copies=copies, rows=rows,
                bytes=nbytes, mb=nbytes / 1e6, compressed=compressed, inline=inline,
                heap_mb=heap / 1e6, toast_mb=toast / 1e6)
    log(f"{table}: {info}")
    return info


def check_plans(plans_path):
    """EXPLAIN VERBOSE each query; the expression must be in the scan's filter
    (or the aggregate's output for the baseline) and nothing may be parallel."""
    out = []
    for table in TABLES:
        for label, expr, kind in QUERIES:
            sql = sql_of(expr, kind, table)
            plan = psql("EXPLAIN (VERBOSE, COSTS OFF) " + sql)
            out.append(f"-- {label} on {table}\n{sql};\n{plan}\n")
            fname = re.match(r"(\w+)\(", expr).group(1)
            if kind == "where":
                ok = re.search(rf"Seq Scan on public\.{table}.*\n(.*\n)*\s*Filter: .*{fname}\(.*IS NOT NULL", plan)
            else:
                ok = re.search(rf"Output: sum\(length\(.*body\)\)", plan) and f"Seq Scan on public.{table}" in plan
            if not ok or "Gather" in plan or "Parallel" in plan:
                sys.exit(f"unexpected plan for {sql}:\n{plan}")
    with open(plans_path, "w") as f:
        f.write("\n".join(out))


def time_query(sql):
    res = json.loads(psql("EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) " + sql))
    return res[0]["Execution Time"] / 1000.0


def perf_check(table, sql):
    """perf stat on the backend while it runs sql once; returns text or None."""
    if not shutil.which("perf"):
        return "perf not installed"
    t = subprocess.run(["perf", "stat", "-x,", "-e", "instructions", "true"],
                       capture_output=True, text=True)
    if t.returncode != 0 or "not supported" in t.stderr or "<not" in t.stderr:
        return "perf stat -e instructions does not work here (no hardware counters); skipped"
    p = subprocess.Popen(["psql", "-X", "-q", "-At"], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True)
    p.stdin.write("SELECT pg_backend_pid();\n")
    p.stdin.flush()
    pid = p.stdout.readline().strip()
    perf = subprocess.Popen(["perf", "stat", "-e", "task-clock,cycles,instructions", "-p", pid],
                            stderr=subprocess.PIPE, text=True)
    time.sleep(0.5)
    p.stdin.write(sql + ";\nSELECT 'done';\n")
    p.stdin.flush()
    while p.stdout.readline().strip() != "done":
        pass
    perf.send_signal(signal.SIGINT)
    _, err = perf.communicate()
    p.stdin.close()
    p.wait()
    return "\n".join(l for l in err.splitlines() if l.strip())


def main():
    md_path, plans_path = sys.argv[1], sys.argv[2]
    psql("CREATE EXTENSION simhash")
    psql("CREATE EXTENSION pg_prewarm")
    version = psql("SHOW server_version")
    info = {t: load(t) for t in TABLES}
    check_plans(plans_path)

    times = {(t, q[0]): [] for t in TABLES for q in QUERIES}
    for rep in range(REPS):
        for table in TABLES:
            for label, expr, kind in QUERIES:
                s = time_query(sql_of(expr, kind, table))
                times[(table, label)].append(s)
                log(f"rep {rep + 1}/{REPS} {table} {label}: {s:.3f} s")

    med = {k: statistics.median(v) for k, v in times.items()}
    cpu = "?"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    nproc = os.cpu_count()

    L = []
    L.append("# simhash fingerprint speed")
    L.append("")
    L.append(f"Machine: nproc {nproc}, CPU {cpu}, PostgreSQL {version}, {platform.machine()}; "
             f"one backend, max_parallel_workers_per_gather = 0, jit = off, shared_buffers = 1GB.")
    L.append("")
    for t in TABLES:
        i = info[t]
        L.append(f"- `{t}`: {i['rows']} rows ({i['base_rows']} distinct x {i['copies']} copies), "
                 f"{i['mb']:.1f} MB of body text (sum(octet_length(body))); heap {i['heap_mb']:.1f} MB, "
                 f"TOAST {i['toast_mb']:.1f} MB; body STORAGE EXTERNAL: {i['compressed']} rows compressed, "
                 f"{i['inline']} rows inline (< 2 kB), the rest out of line uncompressed.")
    L.append("")
    L.append(f"Median of {REPS} runs (round-robin), EXPLAIN (ANALYZE, TIMING OFF) execution time. "
             "MB/s = table MB / median s; net = MB / (t - t(a)); "
             "x tsv = speed relative to to_tsvector('simple', body).")
    L.append("")
    hdr = "| expression |"
    sep = "|---|"
    for t in TABLES:
        hdr += f" {t} s | {t} MB/s | {t} net MB/s | {t} x tsv |"
        sep += "---:|---:|---:|---:|"
    L.append(hdr)
    L.append(sep)
    tsv_label = QUERIES[2][0]
    base_label = QUERIES[0][0]
    for label, expr, kind in QUERIES:
        row = f"| `{expr}` |" if kind == "where" else f"| `{expr}` (baseline) |"
        for t in TABLES:
            mb = info[t]["mb"]
            s = med[(t, label)]
            net = "" if label == base_label else (
                f"{mb / (s - med[(t, base_label)]):.1f}" if s > med[(t, base_label)] else "n/a")
            ratio = med[(t, tsv_label)] / s
            row += f" {s:.3f} | {mb / s:.1f} | {net} | {ratio:.2f} |"
        L.append(row)
    L.append("")
    d_label = QUERIES[3][0]
    slow = []
    for t in TABLES:
        mb = info[t]["mb"]
        sd = mb / med[(t, d_label)]
        net = mb / (med[(t, d_label)] - med[(t, base_label)])
        r = med[(t, tsv_label)] / med[(t, d_label)]
        ok = sd >= TARGET_MBS and r >= TARGET_RATIO
        L.append(f"- `{t}`: simhash(body) {sd:.1f} MB/s ({net:.1f} MB/s net of baseline), "
                 f"{r:.2f}x to_tsvector('simple'); targets >= {TARGET_MBS:.0f} MB/s and >= "
                 f"{TARGET_RATIO:.0f}x: {'met' if ok else 'NOT met'}.")
        if not ok:
            slow.append(t)
    if slow:
        L.append("")
        L.append("perf stat of simhash(body) (targets not met):")
        for t in slow:
            res = perf_check(t, sql_of("simhash(body)", "where", t))
            L.append("")
            L.append(f"```\n{t}: {res}\n```")
    L.append("")
    L.append("All runs (s): " + "; ".join(
        f"{t} {lab.split(' ')[0]} {expr}: " + " ".join(f"{x:.3f}" for x in times[(t, lab)])
        for t in TABLES for lab, expr, _ in QUERIES))
    L.append("")
    text = "\n".join(L)
    print(text)
    with open(md_path, "w") as f:
        f.write(text + "\n")


if __name__ == "__main__":
    main()
