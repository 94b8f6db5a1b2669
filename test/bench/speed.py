"""Helper of test/bench/speed.sh: loads the tables, times the queries, writes the report.

Usage: python3 test/bench/speed.py OUT.md PLANS.txt   (PGHOST etc. set by test/cluster.sh)
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
    ("(e) simhash(body, shingle => 1)", "simhash(body, shingle => 1)", "where"),
    ("(e) simhash(body, shingle => 2)", "simhash(body, shingle => 2)", "where"),
    ("(e) simhash(body, shingle => 3)", "simhash(body, shingle => 3)", "where"),
    ("(e) simhash_ngram(body, n => 3)", "simhash_ngram(body, n => 3)", "where"),
]
TABLES = ["en", "zh"]
RESOLVED = {}  # expression -> call as the planner shows it (defaults filled in)


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
            m = re.search(r"Filter: \((.*) IS NOT NULL\)", plan)
            if m:
                RESOLVED[expr] = m.group(1).replace(f"{table}.body", "body")
    with open(plans_path, "w") as f:
        f.write("\n".join(out))


class Session:
    """One psql session kept open, so the backend's CPU time can be read from
    /proc/<pid>/stat (utime + stime) around each query."""

    def __init__(self):
        self.p = subprocess.Popen(["psql", "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1"],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.pid = int(self.run("SELECT pg_backend_pid()"))
        self.hz = os.sysconf("SC_CLK_TCK")

    def run(self, sql):
        self.p.stdin.write(sql + ";\n\\echo __END__\n")
        self.p.stdin.flush()
        out = []
        while True:
            line = self.p.stdout.readline()
            if not line:
                sys.exit(f"psql session died running: {sql}")
            if line.rstrip("\n") == "__END__":
                return "\n".join(out).strip()
            out.append(line.rstrip("\n"))

    def cpu(self):
        with open(f"/proc/{self.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / self.hz  # utime, stime

    def time_query(self, sql):
        """(execution seconds from EXPLAIN ANALYZE, backend CPU seconds)"""
        c0 = self.cpu()
        res = json.loads(self.run("EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) " + sql))
        c1 = self.cpu()
        return res[0]["Execution Time"] / 1000.0, c1 - c0

    def close(self):
        self.p.stdin.close()
        self.p.wait()


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


def add_revisions():
    """The libraries of SPEED_LIBS ("tag=path ..."): their fingerprint
    functions under the names simhash_<tag>, simhash_ngram_<tag>, timed in the
    same rounds as the installed code."""
    own = [q for q in QUERIES[3:] if "shingle => 3" not in q[1]]
    for item in os.environ.get("SPEED_LIBS", "").split():
        tag, path = item.split("=", 1)
        psql(f"CREATE FUNCTION simhash_{tag}(body text, shingle integer DEFAULT 3, "
             f"weighting text DEFAULT 'sublinear') RETURNS simhash "
             f"AS '{path}', 'simhash_text' LANGUAGE C IMMUTABLE STRICT")
        psql(f"CREATE FUNCTION simhash_ngram_{tag}(body text, n integer DEFAULT 3, "
             f"weighting text DEFAULT 'tf') RETURNS simhash "
             f"AS '{path}', 'simhash_ngram' LANGUAGE C IMMUTABLE STRICT")
        for label, expr, kind in own:
            QUERIES.append((f"{label} [{tag}]", expr.replace("simhash", f"simhash_{tag}", 1) if
                            expr.startswith("simhash(") else expr.replace("simhash_ngram", f"simhash_ngram_{tag}", 1),
                            kind))


def main():
    md_path, plans_path = sys.argv[1], sys.argv[2]
    psql("CREATE EXTENSION simhash")
    psql("CREATE EXTENSION pg_prewarm")
    add_revisions()
    version = psql("SHOW server_version")
    info = {t: load(t) for t in TABLES}
    check_plans(plans_path)

    sess = Session()
    wall = {(t, q[0]): [] for t in TABLES for q in QUERIES}
    cpu = {(t, q[0]): [] for t in TABLES for q in QUERIES}
    loadavg = []
    for rep in range(REPS):
        for table in TABLES:
            for label, expr, kind in QUERIES:
                w, c = sess.time_query(sql_of(expr, kind, table))
                wall[(table, label)].append(w)
                cpu[(table, label)].append(c)
                log(f"rep {rep + 1}/{REPS} {table} {label}: {w:.3f} s, cpu {c:.2f} s")
        loadavg.append(os.getloadavg()[0])
    sess.close()

    mw = {k: statistics.median(v) for k, v in wall.items()}
    mc = {k: statistics.median(v) for k, v in cpu.items()}
    cpu_model = "?"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu_model = line.split(":", 1)[1].strip()
                break

    tsv_label, base_label, d_label = QUERIES[2][0], QUERIES[0][0], QUERIES[3][0]
    L = []
    L.append("# simhash fingerprint speed")
    L.append("")
    L.append(f"Machine: nproc {os.cpu_count()}, CPU {cpu_model}, PostgreSQL {version}, {platform.machine()}; "
             f"one backend, max_parallel_workers_per_gather = 0, jit = off, shared_buffers = 1GB. "
             f"1-min load average after each round: {', '.join(f'{x:.1f}' for x in loadavg)}.")
    L.append("")
    for t in TABLES:
        i = info[t]
        L.append(f"- `{t}`: {i['rows']} rows ({i['base_rows']} distinct x {i['copies']} copies), "
                 f"{i['mb']:.1f} MB of body text (sum(octet_length(body))); heap {i['heap_mb']:.1f} MB, "
                 f"TOAST {i['toast_mb']:.1f} MB; body STORAGE EXTERNAL: {i['compressed']} rows compressed, "
                 f"{i['inline']} rows inline (< 2 kB), the rest out of line uncompressed.")
    L.append("")
    L.append(f"Median of {REPS} runs (round-robin over queries and tables). wall = EXPLAIN (ANALYZE, "
             "TIMING OFF) execution time; cpu = the backend's user+system CPU time for the same runs "
             "(/proc/PID/stat, 10 ms ticks; unaffected by waiting for a core on a busy machine). "
             "MB/s = table MB / median s; net = MB / (t - t(a)); x tsv = speed / speed of "
             "to_tsvector('simple', body).")
    for t in TABLES:
        mb = info[t]["mb"]
        L.append("")
        L.append(f"**{t}** ({mb:.1f} MB)")
        L.append("")
        L.append("| expression | wall s | MB/s | net MB/s | x tsv | cpu s | MB/s (cpu) | net MB/s (cpu) | x tsv (cpu) |")
        L.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
        for label, expr, kind in QUERIES:
            row = f"| `{RESOLVED.get(expr, expr)}` |" if kind == "where" else f"| `{expr}` (baseline a) |"
            for m in (mw, mc):
                s_ = m[(t, label)]
                b = m[(t, base_label)]
                if label == base_label:
                    net = ""
                elif s_ > b:
                    net = f"{mb / (s_ - b):.1f}"
                else:
                    net = "n/a (< a)"
                row += f" {s_:.3f} | {mb / s_:.1f} | {net} | {m[(t, tsv_label)] / s_:.2f} |" if s_ > 0 \
                    else " 0 | inf | | |"
            L.append(row)
    L.append("")
    slow = []
    for t in TABLES:
        mb = info[t]["mb"]
        parts = []
        ok = True
        for name, m in (("wall", mw), ("cpu", mc)):
            sd = mb / m[(t, d_label)]
            net = mb / (m[(t, d_label)] - m[(t, base_label)])
            r = m[(t, tsv_label)] / m[(t, d_label)]
            parts.append(f"{name}: {sd:.1f} MB/s, {net:.1f} MB/s net of (a), {r:.2f}x to_tsvector('simple')")
            ok = ok and sd >= TARGET_MBS and r >= TARGET_RATIO
        L.append(f"- `{t}` simhash(body) = `{RESOLVED.get('simhash(body)')}`: " + "; ".join(parts) +
                 f". Targets >= {TARGET_MBS:.0f} MB/s per core and >= {TARGET_RATIO:.0f}x: "
                 f"{'met' if ok else 'NOT met'}.")
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
    L.append("All runs, wall s / cpu s:")
    L.append("")
    for t in TABLES:
        for lab, expr, _ in QUERIES:
            L.append(f"- {t} `{expr}`: " + " ".join(
                f"{w:.3f}/{c:.2f}" for w, c in zip(wall[(t, lab)], cpu[(t, lab)])))
    L.append("")
    text = "\n".join(L)
    print(text)
    with open(md_path, "w") as f:
        f.write(text + "\n")


if __name__ == "__main__":
    main()
