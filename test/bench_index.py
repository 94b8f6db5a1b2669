"""Helper of test/bench_index.sh: loads the tables, times the queries, writes the report.

Usage: python3 test/bench_index.py OUTDIR [--quick]   (PGHOST etc. set by test/cluster.sh)
Writes OUTDIR/bench_index.md, OUTDIR/bench_index.plans.txt and OUTDIR/index_latency.png.
"""
import os
import re
import subprocess
import sys
import time

OUT = sys.argv[1]
QUICK = "--quick" in sys.argv[2:]
SIZES = [1_000_000] if QUICK else [1_000_000, 10_000_000]
NQ = 1000          # query fingerprints
NPLANT = 10        # planted neighbours per query, at distance 1..3
NQ_SEQ = 50        # queries for the sequential scan (a)
NQ_KNN = 20        # queries for the KNN reference (1M rows only)
NQ_WIDE = 100      # queries for (c) at k > 3 (tens to hundreds of ms each at 10M)
KS = [3, 6, 10]
BLOCKS = [4, 5, 6]
SEED = 0.4242

# every session: no synchronous commit (loading), single-process index builds
SESSION = "SET synchronous_commit = off;\nSET max_parallel_maintenance_workers = 0;\n"

RAND64 = "((random() * 4294967296)::bigint << 32 | (random() * 4294967296)::bigint)"

SQL_A = "SELECT id FROM docs_plain WHERE bit_count((fp::bigint # $1::bigint)::bit(64)) <= {k}"
SQL_B = ("SELECT id FROM docs_pig WHERE (((f >> 48) & 65535) = (($1::bigint >> 48) & 65535)"
         " OR ((f >> 32) & 65535) = (($1::bigint >> 32) & 65535)"
         " OR ((f >> 16) & 65535) = (($1::bigint >> 16) & 65535)"
         " OR (f & 65535) = ($1::bigint & 65535))"
         " AND bit_count((f # $1::bigint)::bit(64)) <= {k}")
SQL_C = "SELECT id FROM docs WHERE fp <~> $1 <= {k}"
SQL_KNN = "SELECT id FROM docs ORDER BY fp <~> $1 LIMIT 10"

LABEL = {
    "a": "(a) seq scan, bit_count",
    "b": "(b) 4 btrees on 16-bit chunks",
    "c4": "(c) GIN simhash_ops blocks=4",
    "c5": "(c) GIN simhash_ops blocks=5 (default)",
    "c6": "(c) GIN simhash_ops blocks=6",
    "knn": "KNN ORDER BY fp <~> q LIMIT 10, no index",
}

T0 = time.time()
LOAD0 = os.getloadavg()
surprises = []
plans_txt = []
build = {}      # (n, method) -> (seconds, index bytes)
tables = {}     # (n, table) -> bytes
shapes = []     # (n, method, k, custom shape, generic shape)


def log(msg):
    print(f"[{time.time() - T0:7.1f} s] {msg}", file=sys.stderr, flush=True)


def psql(sql):
    r = subprocess.run(["psql", "-X", "-q", "-At", "-F", "\t", "-v", "ON_ERROR_STOP=1", "-f", "-"],
                       input=SESSION + sql, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"psql failed:\n{sql}\n{r.stderr}")
    return r.stdout.strip()


def rows(sql):
    out = psql(sql)
    return [line.split("\t") for line in out.splitlines()] if out else []


def setup_once():
    psql(r"""
CREATE EXTENSION simhash;
CREATE EXTENSION pg_prewarm;
CREATE TABLE timings (n bigint, method text, k int, mode text, j int, ms float8, ids bigint[]);
CREATE FUNCTION timed(sql text) RETURNS float8 LANGUAGE plpgsql AS $f$
DECLARE t0 timestamptz := clock_timestamp();
BEGIN
  EXECUTE sql;
  RETURN extract(epoch FROM clock_timestamp() - t0);
END $f$;
-- per-query wall time, the query re-parsed and re-planned each time (EXECUTE ... USING)
CREATE FUNCTION bench_dyn(p_n bigint, p_method text, p_k int, p_mode text, p_nq int, p_sql text)
RETURNS void LANGUAGE plpgsql AS $f$
DECLARE v_j int; v_q simhash; t0 timestamptz; t1 timestamptz; res bigint[];
BEGIN
  FOR v_j, v_q IN SELECT j, fp FROM queries WHERE j <= p_nq ORDER BY j LOOP
    t0 := clock_timestamp();
    EXECUTE p_sql INTO res USING v_q;
    t1 := clock_timestamp();
    INSERT INTO timings VALUES (p_n, p_method, p_k, p_mode, v_j, extract(epoch FROM t1 - t0) * 1000, res);
  END LOOP;
END $f$;
""")


def bench_dyn(n, method, k, mode, nq, query):
    sql = f"SELECT array_agg(id) FROM ({query}) s"
    psql(f"SELECT bench_dyn({n}, '{method}', {k}, '{mode}', {nq}, $q${sql}$q$);")


def bench_cached(n, method, k, nq, query):
    """Static SQL in PL/pgSQL: a cached plan, as a prepared statement would have."""
    body = query.replace("$1", "v_q")
    psql(f"""
CREATE OR REPLACE FUNCTION bench_cached() RETURNS void LANGUAGE plpgsql AS $f$
DECLARE v_j int; v_q simhash; t0 timestamptz; t1 timestamptz; res bigint[];
BEGIN
  FOR v_j, v_q IN SELECT j, fp FROM queries WHERE j <= {nq} ORDER BY j LOOP
    t0 := clock_timestamp();
    SELECT array_agg(id) INTO res FROM ({body}) s;
    t1 := clock_timestamp();
    INSERT INTO timings VALUES ({n}, '{method}', {k}, 'cached', v_j, extract(epoch FROM t1 - t0) * 1000, res);
  END LOOP;
END $f$;
SELECT bench_cached();
""")


def shape_of(plan):
    nodes = []
    for line in plan.splitlines():
        s = line.strip()
        if s.startswith("->"):
            s = s[2:].strip()
        elif nodes:
            continue            # a property line (Filter:, Index Cond: ...)
        name = re.split(r" on | using |  \(|:", s)[0].strip()
        if nodes and nodes[-1][0] == name:
            nodes[-1][1] += 1
        else:
            nodes.append([name, 1])
    return " > ".join(f"{nm} x{c}" if c > 1 else nm for nm, c in nodes)


def check_plan(n, method, k, query, want):
    lit = psql("SELECT fp FROM queries WHERE j = 1")
    q = query.replace("$1", f"'{lit}'::simhash")
    custom = psql(f"EXPLAIN (COSTS OFF) {q}")
    generic = psql(f"PREPARE p(simhash) AS {query};\nSET plan_cache_mode = force_generic_plan;\n"
                   f"EXPLAIN (COSTS OFF) EXECUTE p('{lit}');")
    cs, gs = shape_of(custom), shape_of(generic)
    plans_txt.append(f"== {LABEL[method]}, {n} rows, k = {k}\n-- custom plan (literal query):\n{custom}\n"
                     f"-- generic plan (prepared statement):\n{generic}\n")
    shapes.append((n, method, k, cs, gs))
    for which, plan in (("custom", custom), ("generic", generic)):
        if not all(re.search(w, plan) for w in want):
            surprises.append(f"{LABEL[method]}, {n} rows, k={k}: {which} plan is not as intended: "
                             f"{shape_of(plan)}")
    log(f"  plan {method} k={k}: {cs}  |  generic: {gs}")


def load(n):
    stride = (n + NQ * NPLANT) // (NQ * NPLANT)
    total = stride * NQ * NPLANT
    assert total == n + NQ * NPLANT
    log(f"loading {n} + {NQ * NPLANT} planted rows")
    psql(f"""
DROP TABLE IF EXISTS docs, docs_plain, docs_pig, queries, planted;
SELECT setseed({SEED});
CREATE TABLE queries AS SELECT j, {RAND64}::simhash AS fp FROM generate_series(1, {NQ}) j;
-- {NPLANT} neighbours of each query, at 1..3 distinct flipped bits, at random
-- positions (one in each stretch of {stride} rows) among the random rows
CREATE TABLE planted AS
SELECT x.j, x.m, x.pos, x.d, q.fp::bigint # f.mask AS fp
FROM (SELECT j, m, ((j - 1) * {NPLANT} + m - 1)::bigint * {stride} + 1 + floor(random() * {stride})::bigint AS pos,
             1 + floor(random() * 3)::int AS d
      FROM generate_series(1, {NQ}) j, generate_series(1, {NPLANT}) m) x
JOIN queries q USING (j)
CROSS JOIN LATERAL (SELECT bit_or(1::bigint << b) AS mask
                    FROM (SELECT b FROM generate_series(0, 63) b ORDER BY random() LIMIT x.d) s) f;
CREATE TABLE docs_plain (id bigint, fp bigint);
INSERT INTO docs_plain
SELECT i, coalesce(p.fp, {RAND64}) FROM generate_series(1::bigint, {total}) i LEFT JOIN planted p ON p.pos = i;
CREATE TABLE docs_pig (id bigint, f bigint);
INSERT INTO docs_pig SELECT id, fp FROM docs_plain;
CREATE TABLE docs (id bigint, fp simhash);
INSERT INTO docs SELECT id, fp::simhash FROM docs_plain;
VACUUM (ANALYZE) queries, planted, docs_plain, docs_pig, docs;
CHECKPOINT;
""")
    ok = rows(f"""
SELECT count(*), count(DISTINCT pos), count(*) FILTER (WHERE bit_count((p.fp # q.fp::bigint)::bit(64)) = p.d),
       (SELECT count(*) FROM docs_plain), (SELECT count(*) FROM docs),
       (SELECT count(*) FROM docs_plain d JOIN planted p ON p.pos = d.id AND p.fp = d.fp)
FROM planted p JOIN queries q USING (j)""")[0]
    want = [str(NQ * NPLANT)] * 3 + [str(total)] * 2 + [str(NQ * NPLANT)]
    if ok != want:
        sys.exit(f"bad test data: {ok} != {want}")
    for t in ("docs_plain", "docs_pig", "docs"):
        tables[(n, t)] = int(psql(f"SELECT pg_relation_size('{t}')"))
    psql("SELECT pg_prewarm('docs_plain'), pg_prewarm('docs_pig'), pg_prewarm('docs');")
    return total


def run_n(n):
    total = load(n)
    # (a) sequential scan
    log("(a) sequential scan")
    for k in KS:
        check_plan(n, "a", k, SQL_A.format(k=k), [r"Seq Scan on docs_plain"])
    bench_dyn(n, "a", 3, "warmup", 5, SQL_A.format(k=3))
    for k in KS:
        bench_dyn(n, "a", k, "dyn", NQ_SEQ, SQL_A.format(k=k))
    psql("DROP TABLE docs_plain;")
    # KNN reference, no index on docs yet
    if n == 1_000_000:
        log("KNN reference")
        check_plan(n, "knn", 10, SQL_KNN, [r"Limit", r"Sort", r"Seq Scan on docs"])
        bench_dyn(n, "knn", 10, "warmup", 2, SQL_KNN)
        bench_dyn(n, "knn", 10, "dyn", NQ_KNN, SQL_KNN)
    # (b) hand-written pigeonhole over 4 btree expression indexes
    log("(b) 4 btrees")
    secs = 0.0
    for i, e in enumerate(["(f >> 48) & 65535", "(f >> 32) & 65535", "(f >> 16) & 65535", "f & 65535"]):
        secs += float(psql(f"SELECT timed($q$CREATE INDEX docs_pig_c{i} ON docs_pig (({e}))$q$);"))
    size = int(psql("SELECT sum(pg_relation_size(indexrelid)) FROM pg_index WHERE indrelid = 'docs_pig'::regclass;"))
    build[(n, "b")] = (secs, size)
    log(f"  build {secs:.1f} s, {size / total:.1f} bytes/row")
    psql("ANALYZE docs_pig;\nSELECT pg_prewarm(indexrelid) FROM pg_index WHERE indrelid = 'docs_pig'::regclass;")
    check_plan(n, "b", 3, SQL_B.format(k=3), [r"BitmapOr", r"(?s)(Bitmap Index Scan on docs_pig_c.*){4}"])
    bench_dyn(n, "b", 3, "warmup", NQ, SQL_B.format(k=3))
    bench_dyn(n, "b", 3, "dyn", NQ, SQL_B.format(k=3))
    bench_cached(n, "b", 3, NQ, SQL_B.format(k=3))
    psql("DROP TABLE docs_pig;")
    # (c) ours, one index at a time
    for blocks in BLOCKS:
        m = f"c{blocks}"
        log(f"(c) GIN blocks={blocks}")
        secs = float(psql(f"SELECT timed($q$CREATE INDEX docs_fp_b{blocks} ON docs USING gin (fp simhash_ops(blocks = {blocks}))$q$);"))
        size = int(psql(f"SELECT pg_relation_size('docs_fp_b{blocks}');"))
        build[(n, m)] = (secs, size)
        log(f"  build {secs:.1f} s, {size / total:.1f} bytes/row")
        psql(f"SELECT pg_prewarm('docs_fp_b{blocks}');")
        for k in KS:
            q = SQL_C.format(k=k)
            check_plan(n, m, k, q, [rf"Bitmap Index Scan on docs_fp_b{blocks}"])
            if k <= 3:
                bench_dyn(n, m, k, "warmup", NQ, q)
                bench_dyn(n, m, k, "dyn", NQ, q)
                bench_cached(n, m, k, NQ, q)
            else:
                bench_dyn(n, m, k, "warmup", 10, q)
                bench_dyn(n, m, k, "dyn", NQ_WIDE, q)
        psql(f"DROP INDEX docs_fp_b{blocks};")


def summarize(n):
    """Per (method, k, mode): median, p95, rows per query, planted found, mismatches vs (a)."""
    res = rows(f"""
WITH t AS (
  SELECT t.*, (SELECT array_agg(x ORDER BY x) FROM unnest(t.ids) x) AS sids,
         (SELECT count(*) FROM planted p WHERE p.j = t.j AND p.pos = ANY (t.ids)) AS found
  FROM timings t WHERE t.n = {n} AND t.mode <> 'warmup')
SELECT t.method, t.k, t.mode, count(*),
       percentile_cont(0.5) WITHIN GROUP (ORDER BY t.ms), percentile_cont(0.95) WITHIN GROUP (ORDER BY t.ms),
       avg(coalesce(cardinality(t.ids), 0)), sum(t.found),
       count(a.j), count(*) FILTER (WHERE a.j IS NOT NULL AND a.sids IS DISTINCT FROM t.sids)
FROM t LEFT JOIN t a ON a.method = 'a' AND a.mode = 'dyn' AND a.k = t.k AND a.j = t.j AND t.method NOT IN ('a', 'knn')
GROUP BY 1, 2, 3 ORDER BY 1, 2, 3""")
    out = {}
    for method, k, mode, cnt, med, p95, avgrows, found, ncmp, mism in res:
        out[(n, method, int(k), mode)] = dict(count=int(cnt), med=float(med), p95=float(p95), rows=float(avgrows),
                                              found=int(found), ncmp=int(ncmp), mism=int(mism))
    return out


def fmt_ms(x):
    return f"{x:.3f}" if x < 10 else f"{x:.1f}" if x < 1000 else f"{x:.0f}"


def report(stats, total_rows):
    L = []
    L.append("# Index benchmark: exact Hamming-radius search (test/bench_index.sh)\n")
    L.append(f"Tables of N uniformly random 64-bit fingerprints plus {NQ}x{NPLANT} planted neighbours "
             f"(1..3 bits from one of {NQ} query fingerprints), setseed({SEED}). Server: one core per query "
             "(max_parallel_workers_per_gather = 0), jit off, shared_buffers 4GB, everything prewarmed and "
             "each query run once before timing. Single-process index builds (max_parallel_maintenance_workers = 0).\n")
    L.append("Latency = wall time of one query inside the backend (PL/pgSQL, clock_timestamp()), returning "
             "all ids as array_agg(id): **EXECUTE ... USING** (parsed and planned for each query), and, "
             "for (b)/(c), **cached plan** (static SQL in PL/pgSQL = a prepared statement). (a) runs "
             f"{NQ_SEQ} queries, KNN {NQ_KNN}, (c) at k > 3 {NQ_WIDE} (after 10 warm-up queries; no cached-plan run), "
             f"the others {NQ} (after a warm-up run of all {NQ}). *planted found* = planted neighbours returned / "
             "planted; *mismatches* = queries (of the first 50) whose row set differs from (a)'s at the same k. "
             "(b) is exact only for k <= 3 (4 chunks), so it runs at k = 3 only.\n")
    L.append("| method | rows | k | median ms | p95 ms | median ms, cached plan | p95 ms, cached plan | "
             "rows/query | planted found | mismatches vs (a) | build s | index bytes/row |")
    L.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    order = ["a", "b", "c4", "c5", "c6", "knn"]
    for n in SIZES:
        for m in order:
            for k in KS:
                d = stats.get((n, m, k, "dyn"))
                if not d:
                    continue
                c = stats.get((n, m, k, "cached"))
                exp = d["count"] * NPLANT
                mis = f"{d['mism']} / {d['ncmp']}" if m not in ("a", "knn") else "(reference)"
                b = build.get((n, m))
                L.append(f"| {LABEL[m]} | {n // 1_000_000}M | {k if m != 'knn' else '10-NN'} | {fmt_ms(d['med'])} | "
                         f"{fmt_ms(d['p95'])} | {fmt_ms(c['med']) if c else '-'} | {fmt_ms(c['p95']) if c else '-'} | "
                         f"{d['rows']:.2f} | {d['found']}/{exp} | {mis} | "
                         f"{b[0]:.1f} | {b[1] / total_rows[n]:.1f} |" if b else
                         f"| {LABEL[m]} | {n // 1_000_000}M | {k if m != 'knn' else '10-NN'} | {fmt_ms(d['med'])} | "
                         f"{fmt_ms(d['p95'])} | - | - | {d['rows']:.2f} | {d['found']}/{exp} | {mis} | - | - |")
                if c and c["mism"]:
                    surprises.append(f"{LABEL[m]} {n} k={k} cached-plan run: {c['mism']} mismatches")
                if d["mism"]:
                    surprises.append(f"{LABEL[m]} {n} k={k}: {d['mism']} mismatches vs (a)")
                if m != "knn" and d["found"] != exp:
                    surprises.append(f"{LABEL[m]} {n} k={k}: found {d['found']} of {exp} planted neighbours")
    L.append("")
    L.append("## Sizes and builds\n")
    L.append("| rows | object | build s | bytes | bytes/row |")
    L.append("|---:|---|---:|---:|---:|")
    for n in SIZES:
        for t in ("docs_plain", "docs_pig", "docs"):
            L.append(f"| {total_rows[n]} | table {t} | - | {tables[(n, t)]} | {tables[(n, t)] / total_rows[n]:.1f} |")
        for m in order:
            if (n, m) in build:
                s, b = build[(n, m)]
                L.append(f"| {total_rows[n]} | {LABEL[m]} | {s:.1f} ({s / (total_rows[n] / 1e6):.2f} s/M rows) | "
                         f"{b} | {b / total_rows[n]:.1f} |")
    L.append("")
    L.append("## Plan shapes (EXPLAIN (COSTS OFF) once per method, size and k; full plans in bench_index.plans.txt)\n")
    L.append("| method | rows | k | plan, literal query | plan, generic (prepared) |")
    L.append("|---|---:|---:|---|---|")
    for n, m, k, cs, gs in shapes:
        L.append(f"| {LABEL[m]} | {n // 1_000_000}M | {k} | {cs} | {gs} |")
    L.append("")
    L.append("## Targets\n")
    for n in SIZES:
        b = stats.get((n, "b", 3, "dyn"))
        for m in ("c4", "c5", "c6"):
            c = stats.get((n, m, 3, "dyn"))
            if b and c:
                ok = c["med"] <= b["med"] / 2
                L.append(f"- {n // 1_000_000}M, k=3, {LABEL[m]}: median {fmt_ms(c['med'])} ms vs (b) {fmt_ms(b['med'])} ms "
                         f"(ratio {c['med'] / b['med']:.2f}; target <= 0.5: {'met' if ok else 'NOT met'}); "
                         f"cached plan {fmt_ms(stats[(n, m, 3, 'cached')]['med'])} vs "
                         f"{fmt_ms(stats[(n, 'b', 3, 'cached')]['med'])} ms "
                         f"(ratio {stats[(n, m, 3, 'cached')]['med'] / stats[(n, 'b', 3, 'cached')]['med']:.2f})")
            if (n, m) in build:
                s, sz = build[(n, m)]
                L.append(f"- {n // 1_000_000}M, {LABEL[m]}: build {s / (total_rows[n] / 1e6):.2f} s per million rows "
                         f"(target <= 2: {'met' if s / (total_rows[n] / 1e6) <= 2 else 'NOT met'}), "
                         f"{sz / total_rows[n]:.1f} bytes/row (target <= 24: {'met' if sz / total_rows[n] <= 24 else 'NOT met'})")
    L.append("")
    L.append(f"Machine: {os.cpu_count()} cores; load average (1, 5, 15 min) at start "
             f"{', '.join(f'{x:.2f}' for x in LOAD0)}, at end {', '.join(f'{x:.2f}' for x in os.getloadavg())} "
             "(other jobs share the machine: absolute times are noisy, the side-by-side ratios less so).\n")
    L.append("## Surprises\n")
    L.extend(f"- {s}" for s in surprises) if surprises else L.append("- none detected (all plans as intended, 0 mismatches, every planted neighbour found)")
    L.append("")
    return "\n".join(L)


def plot(stats, path):
    series = []
    for m in ("a", "b", "c4", "c5", "c6"):
        pts = [(n, stats[(n, m, 3, "dyn")]["med"]) for n in SIZES if (n, m, 3, "dyn") in stats]
        if pts:
            series.append((LABEL[m], pts))
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(figsize=(7, 5))
        for label, pts in series:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=label)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xticks(SIZES)
        ax.set_xticklabels([f"{n // 1_000_000}M" for n in SIZES])
        ax.set_xlabel("table rows")
        ax.set_ylabel("median latency per query, ms (log)")
        ax.set_title("Exact Hamming search, k = 3 (EXECUTE ... USING, one core)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(path, dpi=120)
        return "matplotlib"
    except ImportError:
        dat = path + ".dat"
        with open(dat, "w") as f:
            for label, pts in series:
                f.write(f"# {label}\n")
                for n, ms in pts:
                    f.write(f"{n} {ms}\n")
                f.write("\n\n")
        cmds = ["set terminal png size 840,600",
                f"set output '{path}'", "set logscale xy", "set xlabel 'table rows'",
                "set ylabel 'median latency per query, ms'", "set title 'Exact Hamming search, k = 3'",
                "set key left top", "set grid"]
        plots = [f"'{dat}' index {i} with linespoints title '{label}'" for i, (label, _) in enumerate(series)]
        cmds.append("plot " + ", ".join(plots))
        subprocess.run(["gnuplot"], input="\n".join(cmds), text=True, check=True)
        os.remove(dat)
        return "gnuplot"


def main():
    os.makedirs(OUT, exist_ok=True)
    setup_once()
    stats, total_rows = {}, {}
    for n in SIZES:
        total_rows[n] = n + NQ * NPLANT
        run_n(n)
        stats.update(summarize(n))
    md = report(stats, total_rows)
    with open(os.path.join(OUT, "bench_index.plans.txt"), "w") as f:
        f.write("\n".join(plans_txt))
    tool = plot(stats, os.path.join(OUT, "index_latency.png"))
    md += f"Plot: test/out/index_latency.png ({tool}); median latency at k = 3 against table size, log-log.\n"
    with open(os.path.join(OUT, "bench_index.md"), "w") as f:
        f.write(md)
    print(md)


if __name__ == "__main__":
    main()
