#!/usr/bin/env python3
"""A hamming index on a table that keeps taking inserts (bench_live.sh).

The table starts with N random 64-bit fingerprints (SQL random(), fixed
seed) and 30 query fingerprints with a planted neighbour at every distance
0..16.  The index is built, then N more rows are inserted in batches of
10,000 (INSERT ... SELECT, one transaction each) with autovacuum on.  After
every N/5 rows, in one backend with cached plans (static PL/pgSQL), the
median over the 30 queries (each run twice, the first untimed) of
  fp <~> q <= k for k = 3, 9, 16, and ORDER BY fp <~> q LIMIT 10,
and the index's state (hamming_index_info) when the measurement begins, and whether
a VACUUM of the table (autovacuum's) or a merge ran while it went on.  At the end the same 2N rows
are measured after REINDEX (a fresh index).  Every answer is compared with
the sequential scan's (counts and id checksums).

Variants, each a separate table loaded the same way:
  merged   the index as it is (VACUUM, autovacuum and tail_limit merge the tail)
  merged, tail_limit = 512 kB (an insert merges a smaller tail)
  frozen   tail_limit at its maximum and autovacuum off for the table: the tail
           is never merged (how the index behaved before merges)
  btree    a btree on fp (insert time and size only)
  gin      the GIN operator class simhash_ops, fastupdate on (insert time, size)

With --concurrent instead: the same N rows built, then N more inserted by 4
pgbench clients at once (batches of 10,000, each a transaction, paced to
take about two minutes), while a reader measures the queries above over and over, each round in one
REPEATABLE READ transaction so that its answers can be compared with the
sequential scan's on the same snapshot; then a fresh REINDEX of the 2N rows,
measured the same way; and the insert time of the same 4 writers, as fast
as they go and without the reader, into a hamming-indexed table and into a
table with a btree.

With --sweep instead: the trade-off that tail_limit sets.  For each
tail_limit of LIVE_LIMITS (kB, comma-separated, "auto" for the option
unset; default 64,256,512,1024,4096,auto), N rows built and LIVE_INSERT
(default N) inserted in batches as above (autovacuum on); the insert time
beside a btree's, and, unless LIVE_MEASURE=0, for each query shape the
largest and the median ratio to a fresh REINDEX over the five measurements.

With --levels instead: what a second level of small probe tables (merged
from the tail every few thousand rows) would cost a lookup, measured with
what exists.  A fresh index of 2N rows with a tail of 0, 2,000 and 5,000
rows; fresh indexes of 25,000 and 100,000 rows (the second level's size)
and an index of no rows (what any scan costs); each measured as above,
three rounds in turn, the median of the three.  A lookup through both
levels would cost about: the 2N-row index with its tail, plus the small
index less the empty one.  Then what each way would cost N inserted rows
(levels_inserts below): the insert times of a btree, of four btrees (each
row in four sorted orders at once) and of the index's appends alone, and
merges of the main tables and of a second level timed, from which the insert
time of each way is estimated beside its k = 3.

With --merge-memory instead: what a merge costs with little memory.  N rows
built (autovacuum off), then rounds of: rows deleted and VACUUM
(tombstones), 20,000 rows inserted, hamming_merge_tail timed, alternately
with maintenance_work_mem = 1GB (more than the index's entries take) and
16MB (less); the median of each, and every answer checked against the
sequential scan's at the end.

With --build-memory instead: CREATE INDEX of N rows (autovacuum off) three
times with each maintenance_work_mem of 1GB (the entries in memory), 64MB
(the default) and 16MB, alternately, and a btree's build beside; then rounds
of a tail of max(N/4, 1.4M) rows inserted and merged (hamming_merge_tail)
alternately with 1GB and 16MB, where the tail outgrows memory and is sorted
in runs on temporary files; hamming_index_check and every answer checked
against the sequential scan's after each part.

With --merge-stall instead: whether a merge makes readers or writers wait.
N rows built (autovacuum off), then three merges, each after a tail of
max(N/20, 50,000) rows was inserted and a CHECKPOINT: one pgbench client
looking up k = 3 around a random fingerprint and one inserting single rows,
both logging every transaction's latency, and hamming_merge_tail 3 s in
(the first merge of the built index, which reserves as many blocks as the
index has, then two that reuse the pages of the one before).  For each, the
median and largest latency of the 2 s before the merge, and of the
transactions that overlapped it: how many, median, 99th percentile and
largest.
hamming_index_check and every answer checked against the sequential
scan's at the end.
"""
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ARGS = [a for a in sys.argv[1:] if not a.startswith("--")]
CONCURRENT = "--concurrent" in sys.argv[1:]
AFTER_MERGE = "--after-merge" in sys.argv[1:]
SWEEP = "--sweep" in sys.argv[1:]
LEVELS = "--levels" in sys.argv[1:]
MERGE_MEMORY = "--merge-memory" in sys.argv[1:]
BUILD_MEMORY = "--build-memory" in sys.argv[1:]
MERGE_STALL = "--merge-stall" in sys.argv[1:]
LEVEL_ROWS = (25_000, 100_000)
LEVEL_TAILS = (2_000, 5_000)
SWEEP_LIMITS = os.environ.get("LIVE_LIMITS", "64,256,512,1024,4096,auto").split(",")
SWEEP_MEASURE = os.environ.get("LIVE_MEASURE", "1") != "0"
N = int(ARGS[0]) if ARGS else 1_000_000
INSERT = int(os.environ.get("LIVE_INSERT", N))
WRITERS = 4
WRITE_SECONDS = 120     # the writers' pace while the reader measures
BATCH = 10_000
KS = (3, 9, 16)
T0 = time.time()


def log(msg):
    print(f"[{time.time() - T0:7.1f} s] {msg}", file=sys.stderr, flush=True)


def psql(sql):
    r = subprocess.run(["psql", "-X", "-q", "-At", "-F", "\t", "-v", "ON_ERROR_STOP=1", "-f", "-"],
                       input=sql, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"psql failed:\n{sql[:2000]}\n{r.stderr}")
    return r.stdout.strip("\n")


def setup():
    psql(r"""
CREATE EXTENSION IF NOT EXISTS simhash;
CREATE OR REPLACE FUNCTION random_fp() RETURNS simhash LANGUAGE sql VOLATILE AS
$$ SELECT (((random() * 4294967296)::bigint << 32) | (random() * 4294967296)::bigint)::simhash $$;
CREATE OR REPLACE FUNCTION flip_bits(fp simhash, d int) RETURNS simhash LANGUAGE sql VOLATILE AS
$$ SELECT (fp::bigint # coalesce((SELECT bit_or(1::bigint << b) FROM
     (SELECT b FROM generate_series(0, 63) b ORDER BY random() LIMIT d) s), 0))::simhash $$;
""")


def load(table, index_sql, rows=N):
    psql(f"""
SELECT setseed(0.42);
DROP TABLE IF EXISTS {table}, queries;
CREATE TABLE queries AS SELECT j, random_fp() AS fp FROM generate_series(1, 30) j;
CREATE TABLE {table} (id bigint, fp simhash);
INSERT INTO {table} SELECT i, random_fp() FROM generate_series(1, {rows}) i;
INSERT INTO {table} SELECT 10000000000 + j * 100 + d, flip_bits(q.fp, d) FROM queries q, generate_series(0, 16) d;
{index_sql}
VACUUM ANALYZE {table};
CHECKPOINT;
""")


def measure(table, snapshot=False):
    """median ms of each query shape, and whether every answer equals the sequential scan's
    (snapshot: all of it in one REPEATABLE READ transaction, for a table that takes writes)"""
    out = {}
    ok = True
    shapes = [(f"k = {k}", f"SELECT count(*) || ':' || coalesce(sum(hashint8(id)), 0) FROM {table} WHERE fp <~> v_q <= {k}")
              for k in KS]
    shapes.append(("LIMIT 10", f"SELECT string_agg(d::text, ',') FROM (SELECT fp <~> v_q AS d FROM {table} ORDER BY fp <~> v_q LIMIT 10) s"))
    for name, query in shapes:
        res = psql(("BEGIN ISOLATION LEVEL REPEATABLE READ;\n" if snapshot else "") + f"""
CREATE OR REPLACE FUNCTION pg_temp.bench() RETURNS TABLE (j int, ms float8, r text) LANGUAGE plpgsql AS $f$
DECLARE v_q simhash; t0 timestamptz; pass int;
BEGIN
  FOR pass IN 1..2 LOOP
    FOR j, v_q IN SELECT q.j, q.fp FROM queries q ORDER BY q.j LOOP
      t0 := clock_timestamp();
      {query} INTO r;
      ms := extract(epoch FROM clock_timestamp() - t0) * 1000;
      IF pass = 2 THEN RETURN NEXT; END IF;
    END LOOP;
  END LOOP;
END $f$;
SET enable_seqscan = off; SET enable_bitmapscan = off; SET enable_sort = off;
SELECT j, ms, r FROM pg_temp.bench();
RESET enable_seqscan; RESET enable_bitmapscan; RESET enable_sort;
SET enable_indexscan = off; SET enable_bitmapscan = off;
CREATE OR REPLACE FUNCTION pg_temp.truth() RETURNS TABLE (j int, r text) LANGUAGE plpgsql AS $f$
DECLARE v_q simhash;
BEGIN
  FOR j, v_q IN SELECT q.j, q.fp FROM queries q ORDER BY q.j LOOP
    {query} INTO r;
    RETURN NEXT;
  END LOOP;
END $f$;
SELECT j, -1, r FROM pg_temp.truth();
""" + ("COMMIT;\n" if snapshot else ""))
        timed, truth = {}, {}
        for line in res.splitlines():
            j, ms, r = line.split("\t")
            (truth if ms == "-1" else timed)[int(j)] = (float(ms), r)
        ok &= all(timed[j][1] == truth[j][1] for j in truth)
        out[name] = statistics.median(ms for ms, _ in timed.values())
    return out, ok


def info(table):
    size, tail, merges = psql(f"""
SELECT pg_relation_size('{table}_fp'), i.tail_entries, i.merges FROM hamming_index_info('{table}_fp') i
""").split("\t")
    return int(size), int(tail), int(merges)


def vacuuming(table):
    """whether a VACUUM (autovacuum's) of the table is running now"""
    return psql(f"SELECT count(*) > 0 FROM pg_stat_progress_vacuum WHERE relid = '{table}'::regclass") == "t"


def insert_all(table, on_step=None, rows=N):
    """rows in batches; returns the seconds the inserts took (not the measurements)"""
    spent = 0.0
    for b in range(rows // BATCH):
        t = time.time()
        psql(f"INSERT INTO {table} SELECT {N} + {b * BATCH} + i, random_fp() FROM generate_series(1, {BATCH}) i;")
        spent += time.time() - t
        done = (b + 1) * BATCH
        if on_step and done % (rows // 5) == 0:
            on_step(done)
    return spent


def main():
    setup()
    rows_out = []
    sizes = {}
    for variant, opts in (("merged", ""), ("merged 512 kB", " WITH (tail_limit = 512)"),
                          ("frozen", " WITH (tail_limit = 2147483647)")):
        table = "live_" + variant.split()[0] + ("_small" if "512" in variant else "")
        log(f"{variant}: loading {N} rows")
        load(table, f"CREATE INDEX {table}_fp ON {table} USING hamming (fp){opts};" +
             (f" ALTER TABLE {table} SET (autovacuum_enabled = off);" if variant == "frozen" else ""))
        t, ok = measure(table)
        size, tail, merges = info(table)
        rows_out.append((variant, "built", 0, t, ok, size, tail, merges))

        def step(done, table=table, variant=variant):
            # the state when the measurement begins; marked when a VACUUM
            # (autovacuum's) or a merge ran while it went on
            busy = vacuuming(table)
            size, tail, merges = info(table)
            t, ok = measure(table)
            busy = busy or vacuuming(table) or info(table)[2] != merges
            rows_out.append((variant, "inserted" + (" (autovacuum or a merge beside)" if busy else ""),
                             done, t, ok, size, tail, merges))
            log(f"{variant} +{done}: {t} exact={ok} size={size} tail={tail} merges={merges}")

        spent = insert_all(table, step)
        sizes[variant] = (spent, info(table)[0])
        if variant.startswith("merged"):
            psql(f"VACUUM {table};")
            t, ok = measure(table)
            size, tail, merges = info(table)
            rows_out.append((variant, "after VACUUM", N, t, ok, size, tail, merges))
            if variant == "merged":
                psql(f"REINDEX INDEX {table}_fp;")
                t, ok = measure(table)
                size, tail, merges = info(table)
            if variant == "merged":
                rows_out.append(("fresh", "after REINDEX", N, t, ok, size, tail, merges))
        psql(f"DROP TABLE {table};")

    for variant, index_sql in (("btree", "CREATE INDEX live_btree_fp ON live_btree (fp);"),
                               ("gin", "CREATE INDEX live_gin_fp ON live_gin USING gin (fp) WITH (fastupdate = on);")):
        table = f"live_{variant}"
        log(f"{variant}: loading {N} rows")
        load(table, index_sql)
        spent = insert_all(table)
        sizes[variant] = (spent, int(psql(f"SELECT pg_relation_size('{table}_fp')")))
        psql(f"DROP TABLE {table};")

    fresh = next(r for r in rows_out if r[0] == "fresh")[3]
    shapes = list(fresh)
    print(f"## A hamming index taking inserts: {N:,} rows built, {N:,} inserted in batches of {BATCH:,}\n")
    print("Median ms over 30 queries (cached plans, one backend); ratio to a fresh REINDEX of the "
          f"{2 * N:,} rows in brackets; exact = every answer equals the sequential scan's.\n")
    print("| index | state | rows inserted | " + " | ".join(shapes) +
          " | exact | size (MB) | bytes a row | tail entries | merges |")
    print("|---|---|---:|" + "---:|" * len(shapes) + "---|---:|---:|---:|---:|")
    for variant, state, done, t, ok, size, tail, merges in rows_out:
        total = N + 30 * 17 + done
        cells = " | ".join(f"{t[s]:.3f} ({t[s] / fresh[s]:.2f}x)" for s in shapes)
        print(f"| {variant} | {state} | {done:,} | {cells} | {'yes' if ok else 'NO'} | "
              f"{size / 2**20:.1f} | {size / total:.1f} | {tail:,} | {merges} |")
    print(f"\n### Inserting {N:,} rows in batches of {BATCH:,} into a table of {N:,}\n")
    print("| index | insert time (s) | ratio to btree | index size after (MB) |")
    print("|---|---:|---:|---:|")
    for variant in ("merged", "merged 512 kB", "frozen", "btree", "gin"):
        spent, size = sizes[variant]
        print(f"| {variant} | {spent:.1f} | {spent / sizes['btree'][0]:.2f}x | {size / 2**20:.1f} |")


def concurrent_inserts(table, seconds=None):
    """N rows by WRITERS pgbench clients in batches, spread over about
    `seconds` if given (pgbench --rate), else as fast as they go; returns the
    wall seconds"""
    # pgbench has no per-client batch counter: a sequence numbers the batches
    psql("DROP SEQUENCE IF EXISTS batches; CREATE SEQUENCE batches;")
    with tempfile.NamedTemporaryFile("w", suffix=".sql", delete=False) as f:
        f.write(f"SELECT nextval('batches') AS b \\gset\n"
                f"INSERT INTO {table} SELECT {N} + (:b - 1) * {BATCH} + i, random_fp() FROM generate_series(1, {BATCH}) i;\n")
        path = f.name
    os.chmod(path, 0o644)
    t = time.time()
    rate = ["-R", "%.3f" % (N / BATCH / seconds)] if seconds else []
    r = subprocess.run(["pgbench", "-n", "-c", str(WRITERS), "-j", str(WRITERS),
                        "-t", str(N // BATCH // WRITERS), "-f", path] + rate,
                       capture_output=True, text=True)
    spent = time.time() - t
    os.unlink(path)
    if r.returncode != 0:
        sys.exit(f"pgbench failed:\n{r.stdout}\n{r.stderr}")
    return spent


def main_concurrent():
    setup()
    table = "live_conc"
    log(f"concurrent: loading {N} rows")
    load(table, f"CREATE INDEX {table}_fp ON {table} USING hamming (fp);")
    rounds = []
    done = threading.Event()
    result = {}

    def writers():
        result["spent"] = concurrent_inserts(table, WRITE_SECONDS)
        done.set()

    w = threading.Thread(target=writers)
    w.start()
    while not done.is_set():
        t0 = time.time() - T0
        t, ok = measure(table, snapshot=True)
        size, tail, merges = info(table)
        rows = int(psql(f"SELECT count(*) FROM {table}"))
        rounds.append((f"{t0:.0f} s", rows, t, ok, size, tail, merges))
        log(f"concurrent round at {t0:.0f} s: {rows} rows {t} exact={ok} tail={tail} merges={merges}")
    w.join()
    spent = result["spent"]
    t, ok = measure(table)
    size, tail, merges = info(table)
    rows = int(psql(f"SELECT count(*) FROM {table}"))
    rounds.append(("writers done", rows, t, ok, size, tail, merges))
    psql(f"REINDEX INDEX {table}_fp;")
    fresh, fresh_ok = measure(table)
    fresh_size = info(table)[0]
    psql(f"DROP TABLE {table};")

    # insert times without the reader, hamming and btree
    alone = {}
    for variant, index_sql in (("hamming", "CREATE INDEX live_calone_fp ON live_calone USING hamming (fp);"),
                               ("btree", "CREATE INDEX live_calone_fp ON live_calone (fp);")):
        log(f"{variant}, {WRITERS} writers without a reader: loading")
        load("live_calone", index_sql)
        alone[variant] = concurrent_inserts("live_calone")
        psql("DROP TABLE live_calone;")

    shapes = list(fresh)
    print(f"## {WRITERS} writers and a reader: {N:,} rows built, {N:,} inserted by {WRITERS} clients at once\n")
    print(f"Each round: the median ms over 30 queries (cached plans), read while the writers insert; ratio to a "
          f"fresh REINDEX of the {2 * N:,} rows in brackets; exact = every answer equals the sequential scan's "
          "on the same snapshot.\n")
    print("| round (since start) | rows | " + " | ".join(shapes) + " | exact | size (MB) | tail entries | merges |")
    print("|---|---:|" + "---:|" * len(shapes) + "---|---:|---:|---:|")
    for when, rows, t, ok, size, tail, merges in rounds + [("fresh REINDEX", 2 * N + 30 * 17, fresh, fresh_ok, fresh_size, 0, 0)]:
        cells = " | ".join(f"{t[s]:.3f} ({t[s] / fresh[s]:.2f}x)" for s in shapes)
        print(f"| {when} | {rows:,} | {cells} | {'yes' if ok else 'NO'} | {size / 2**20:.1f} | {tail:,} | {merges} |")
    print(f"\n{WRITERS} writers, {N:,} rows: into the hamming-indexed table {spent:.1f} s paced with the reader, "
          f"{alone['hamming']:.1f} s as fast as they go without it; into a table with a btree on fp {alone['btree']:.1f} s "
          f"(hamming without the reader: {alone['hamming'] / alone['btree']:.2f}x btree's time).")


def main_after_merge():
    setup()
    table = "live_am"
    log(f"after merge: loading {N} rows")
    load(table, f"CREATE INDEX {table}_fp ON {table} USING hamming (fp); "
         f"ALTER TABLE {table} SET (autovacuum_enabled = off);")
    rows_out = []

    def row(state, done):
        t, ok = measure(table)
        size, tail, merges = info(table)
        rows_out.append((state, done, t, ok, size, tail, merges))
        log(f"{state} +{done}: {t} exact={ok} tail={tail} merges={merges}")

    row("built", 0)
    done = merges = 0
    while merges == 0 and done < N:
        psql(f"INSERT INTO {table} SELECT {N} + {done} + i, random_fp() FROM generate_series(1, {BATCH}) i;")
        done += BATCH
        merges = info(table)[2]
        if merges == 0 and done % (5 * BATCH) == 0:
            row("tail growing", done)
    if merges == 0:
        sys.exit("no insert merged the tail")
    row("right after the merge by an insert", done)
    psql(f"VACUUM {table};")
    row("after VACUUM", done)
    psql(f"REINDEX INDEX {table}_fp;")
    row("after REINDEX", done)
    fresh = rows_out[-1][2]
    shapes = list(fresh)
    print(f"## What a merge leaves: {N:,} rows built, then batches of {BATCH:,} until an insert merges the tail\n")
    print("Median ms over 30 queries (cached plans, one backend, autovacuum off for the table); "
          "ratio to the REINDEX at the end in brackets.\n")
    print("| state | rows inserted | " + " | ".join(shapes) + " | exact | tail entries | merges |")
    print("|---|---:|" + "---:|" * len(shapes) + "---|---:|---:|")
    for state, done, t, ok, size, tail, merges in rows_out:
        cells = " | ".join(f"{t[s]:.3f} ({t[s] / fresh[s]:.2f}x)" for s in shapes)
        print(f"| {state} | {done:,} | {cells} | {'yes' if ok else 'NO'} | {tail:,} | {merges} |")


def main_sweep():
    setup()
    results = {}
    fresh = None
    for limit in SWEEP_LIMITS:
        table = f"live_sweep_{limit}"
        option = "" if limit == "auto" else f" WITH (tail_limit = {int(limit)})"
        log(f"tail_limit = {limit}: loading {N} rows")
        load(table, f"CREATE INDEX {table}_fp ON {table} USING hamming (fp){option};")
        steps = []

        def step(done, table=table, limit=limit):
            t, ok = measure(table)
            steps.append((t, ok, info(table)[1]))
            log(f"tail_limit = {limit} +{done}: {t} exact={ok}")

        spent = insert_all(table, step if SWEEP_MEASURE else None, INSERT)
        size, tail, merges = info(table)
        if fresh is None and SWEEP_MEASURE:
            psql(f"REINDEX INDEX {table}_fp;")
            fresh, fresh_ok = measure(table)
            steps.append((fresh, fresh_ok, 0))
        results[limit] = (spent, size, merges, tail, steps)
        psql(f"DROP TABLE {table};")
    log("btree: loading")
    load("live_sweepb", "CREATE INDEX live_sweepb_fp ON live_sweepb (fp);")
    btree = insert_all("live_sweepb", rows=INSERT)
    psql("DROP TABLE live_sweepb;")

    shapes = list(fresh) if fresh else []
    print(f"## What tail_limit trades: {N:,} rows built, {INSERT:,} inserted in batches of {BATCH:,}, autovacuum on\n")
    if shapes:
        print(f"Each query shape: the largest and the median ratio to a fresh REINDEX of the {N + INSERT:,} rows over "
              f"the five measurements (after every {INSERT // 5:,} rows; median ms over 30 queries, cached plans, one "
              "backend); exact = every answer equals the sequential scan's; largest tail: at the measurements and at the "
              "end.\n")
    print("| tail_limit (kB) | insert time (s) | ratio to btree | merges | largest tail | " +
          "".join(f"{s} max (median) | " for s in shapes) + ("exact | " if shapes else "") + "size after (MB) |")
    print("|---:|---:|---:|---:|---:|" + "---:|" * len(shapes) + ("---|" if shapes else "") + "---:|")
    for limit, (spent, size, merges, tail, steps) in results.items():
        timed = steps[:5]
        cells = "".join(f"{max(t[s] for t, _, _ in timed) / fresh[s]:.2f}x "
                        f"({statistics.median(t[s] for t, _, _ in timed) / fresh[s]:.2f}x) | " for s in shapes)
        largest = max([tail] + [tl for _, _, tl in timed])
        exact = ("yes | " if all(ok for _, ok, _ in steps) else "NO | ") if shapes else ""
        print(f"| {limit} | {spent:.1f} | {spent / btree:.2f}x | {merges} | {largest:,} | {cells}{exact}{size / 2**20:.1f} |")
    print(f"| btree | {btree:.1f} | 1.00x | | | " + "| " * len(shapes) + ("| " if shapes else "") + "|")
    if shapes:
        print("\nFresh REINDEX: " + ", ".join(f"{s} {fresh[s]:.3f} ms" for s in shapes) + ".")


def main_levels():
    setup()
    big = "live_lv"
    log(f"levels: loading {2 * N} rows")
    load(big, f"CREATE INDEX {big}_fp ON {big} USING hamming (fp) WITH (tail_limit = 2147483647); "
         f"ALTER TABLE {big} SET (autovacuum_enabled = off);", rows=2 * N)
    small = {}
    for rows in (0,) + LEVEL_ROWS:
        table = f"live_lv{rows}"
        small[rows] = table
        psql(f"""
SELECT setseed(0.17);
DROP TABLE IF EXISTS {table};
CREATE TABLE {table} (id bigint, fp simhash);
INSERT INTO {table} SELECT i, random_fp() FROM generate_series(1, {rows}) i;
CREATE INDEX {table}_fp ON {table} USING hamming (fp);
VACUUM ANALYZE {table};
""")
    times = {}
    exact = True

    def take(name, table):
        nonlocal exact
        t, ok = measure(table)
        exact &= ok
        times.setdefault(name, []).append(t)
        log(f"{name}: {t} exact={ok}")

    tail = 0
    for rnd in range(3):
        take(f"{2 * N:,} rows, fresh", big)
        for rows, table in small.items():
            take(f"{rows:,} rows, fresh", table)
    for want in LEVEL_TAILS:
        psql(f"INSERT INTO {big} SELECT 20000000000 + {tail} + i, random_fp() FROM generate_series(1, {want - tail}) i;")
        tail = want
        if info(big)[1] != tail:
            sys.exit(f"the tail holds {info(big)[1]} rows, not {tail}")
        for rnd in range(3):
            take(f"{2 * N:,} rows, tail of {tail:,}", big)
    med = {name: {s: statistics.median(t[s] for t in ts) for s in ts[0]} for name, ts in times.items()}
    fresh = med[f"{2 * N:,} rows, fresh"]
    empty = med["0 rows, fresh"]
    shapes = list(fresh)
    print(f"## What a second level of probe tables would cost: a {2 * N:,}-row index, small indexes, tails\n")
    print("Median ms over 30 queries (cached plans, one backend), the median of three rounds; "
          f"ratio to the fresh {2 * N:,}-row index in brackets; every answer "
          + ("equals" if exact else "does NOT always equal") + " the sequential scan's.\n")
    print("| index | " + " | ".join(shapes) + " |")
    print("|---|" + "---:|" * len(shapes))
    for name, t in med.items():
        print(f"| {name} | " + " | ".join(f"{t[s]:.4f} ({t[s] / fresh[s]:.2f}x)" for s in shapes) + " |")
    # the small indexes have no near neighbours of the queries: their nearest-first scans go far,
    # which a second level probed to the first's radius would not; so only the radii are estimated
    radii = [s for s in shapes if s.startswith("k = ")]
    print(f"\nEstimated lookup through two levels: the {2 * N:,}-row index with its tail, plus a small index "
          "less the empty one (ratio to fresh):\n")
    print("| second level | tail | " + " | ".join(radii) + " |")
    print("|---:|---:|" + "---:|" * len(radii))
    for rows in LEVEL_ROWS:
        for want in LEVEL_TAILS:
            t = med[f"{2 * N:,} rows, tail of {want:,}"]
            s_ = med[f"{rows:,} rows, fresh"]
            print(f"| {rows:,} | {want:,} | " + " | ".join(
                f"{(t[s] + s_[s] - empty[s]) / fresh[s]:.2f}x" for s in radii) + " |")
    levels_inserts(lambda rows, tail: (med[f"{2 * N:,} rows, tail of {tail:,}"]["k = 3"]
                                       + (med[f"{rows:,} rows, fresh"]["k = 3"] - empty["k = 3"] if rows else 0))
                   / fresh["k = 3"])


def merge_seconds(table):
    """hamming_merge_tail of the table's index, timed in the server"""
    took = psql(f"""
CREATE FUNCTION pg_temp.merge_seconds() RETURNS float8 LANGUAGE plpgsql AS $f$
DECLARE t0 timestamptz := clock_timestamp();
BEGIN
  IF NOT hamming_merge_tail('{table}_fp') THEN RAISE EXCEPTION 'no merge'; END IF;
  RETURN extract(epoch FROM clock_timestamp() - t0);
END $f$;
SELECT pg_temp.merge_seconds();
""")
    return float(took)


def levels_inserts(k3_ratio):
    """
    What each way of keeping k = 3 near a fresh index would cost N inserted
    rows (in batches, as the main benchmark inserts them into N built):
    measured, the insert time of a btree on fp, of four btrees on fp and its
    rotations by 16, 32 and 48 bits (a stand-in for writing each row into the
    four sorted orders at once), and of a hamming index whose tail is never
    merged (appends only: what every way pays first); merges timed, of an
    index of 1.5 N rows (the average size while N rows go into N) with a
    tail of T rows (one level; the main tables of two levels), and of a small
    index of L / 2 rows (a second level's average size) with a tail of 2,000.
    The estimate: appends plus N / T merges of each kind.
    """
    tables = {"btree": "CREATE INDEX {t}_b ON {t} ((fp::bigint));",
              "four btrees": "CREATE INDEX {t}_b ON {t} ((fp::bigint)); " + " ".join(
                  f"CREATE INDEX {{t}}_r{b} ON {{t}} (((fp::bigint << {b}) | ((fp::bigint >> {64 - b}) & "
                  f"{(1 << b) - 1})));" for b in (16, 32, 48)),
              "appends": "CREATE INDEX {t}_fp ON {t} USING hamming (fp) WITH (tail_limit = 2147483647); "
                         "ALTER TABLE {t} SET (autovacuum_enabled = off);"}
    for i, (name, sql) in enumerate(tables.items()):
        log(f"levels, inserts: loading {N} rows ({name})")
        load(f"live_lvi{i}", sql.format(t=f"live_lvi{i}"))
    spent = {name: 0.0 for name in tables}
    for b in range(N // BATCH):
        order = list(enumerate(tables))
        for i, name in (order if b % 2 == 0 else order[::-1]):
            t = time.time()
            psql(f"INSERT INTO live_lvi{i} SELECT {N} + {b * BATCH} + i, random_fp() FROM generate_series(1, {BATCH}) i;")
            spent[name] += time.time() - t
    log(f"levels, inserts: {spent}")
    for i in range(len(tables)):
        psql(f"DROP TABLE live_lvi{i};")

    big = "live_lvm"
    log(f"levels, merges: loading {3 * N // 2} rows")
    load(big, f"CREATE INDEX {big}_fp ON {big} USING hamming (fp) WITH (tail_limit = 2147483647); "
         f"ALTER TABLE {big} SET (autovacuum_enabled = off);", rows=3 * N // 2)
    added = 0
    major = {}
    for tail in (5_000,) + LEVEL_ROWS:
        major[tail] = []
        for rnd in range(3):
            psql(f"INSERT INTO {big} SELECT 30000000000 + {added} + i, random_fp() FROM generate_series(1, {tail}) i;")
            added += tail
            major[tail].append(merge_seconds(big))
        log(f"merge of {3 * N // 2:,} rows with a tail of {tail:,}: {major[tail]}")
    minor = {}
    for rows in LEVEL_ROWS:
        table = f"live_lvs{rows}"
        psql(f"""
DROP TABLE IF EXISTS {table};
CREATE TABLE {table} (id bigint, fp simhash);
INSERT INTO {table} SELECT i, random_fp() FROM generate_series(1, {rows // 2}) i;
CREATE INDEX {table}_fp ON {table} USING hamming (fp) WITH (tail_limit = 2147483647);
ALTER TABLE {table} SET (autovacuum_enabled = off);
""")
        minor[rows] = []
        for rnd in range(5):
            psql(f"INSERT INTO {table} SELECT {rows} + {rnd * LEVEL_TAILS[0]} + i, random_fp() "
                 f"FROM generate_series(1, {LEVEL_TAILS[0]}) i;")
            minor[rows].append(merge_seconds(table))
        log(f"merge of {rows // 2:,} rows with a tail of {LEVEL_TAILS[0]:,}: {minor[rows]}")
        psql(f"DROP TABLE {table};")
    psql(f"SELECT hamming_index_check('{big}_fp');")
    _, ok = measure(big)
    psql(f"DROP TABLE {big};")

    btree = spent["btree"]
    major_s = {t: statistics.median(v) for t, v in major.items()}
    minor_s = {r: statistics.median(v) for r, v in minor.items()}
    print(f"\n## What keeping k = 3 near a fresh index would cost {N:,} inserted rows\n")
    print(f"Measured: {N:,} rows inserted in batches of {BATCH:,} into {N:,} (the batches of each table in turn); "
          f"merges (`hamming_merge_tail`, timed in the server, the median of several) of an index of {3 * N // 2:,} "
          f"rows with a tail of T rows, and of small indexes of half a second level's rows with a tail of "
          f"{LEVEL_TAILS[0]:,}; every answer of the merged index "
          + ("equals" if ok else "does NOT always equal") + " the sequential scan's, and hamming_index_check passes.\n")
    print("| measured | s |")
    print("|---|---:|")
    for name, s_ in spent.items():
        print(f"| insert, {name} | {s_:.1f} ({s_ / btree:.2f}x btree) |")
    for t, s_ in major_s.items():
        print(f"| merge of {3 * N // 2:,} rows, tail of {t:,} | {s_:.3f} |")
    for r, s_ in minor_s.items():
        print(f"| merge of {r // 2:,} rows, tail of {LEVEL_TAILS[0]:,} | {s_:.4f} |")
    print("\nEstimated: k = 3 against a fresh index (from the lookups above), and the insert time (appends, "
          "plus a merge of the main tables every T rows, plus, with a second level of up to L rows, a merge of it "
          f"every {LEVEL_TAILS[0]:,}):\n")
    print("| way | k = 3 | insert time (s) | ratio to btree |")
    print("|---|---:|---:|---:|")
    ways = [("one level, tail under 5,000", k3_ratio(0, 5_000), N / 5_000 * major_s[5_000])]
    ways += [(f"two levels, second under {rows:,}, tail under {LEVEL_TAILS[0]:,}", k3_ratio(rows, LEVEL_TAILS[0]),
              N / rows * major_s[rows] + N / LEVEL_TAILS[0] * minor_s[rows]) for rows in LEVEL_ROWS]
    for name, k3, merges in ways:
        total = spent["appends"] + merges
        print(f"| {name} | {k3:.2f}x | {total:.1f} | {total / btree:.2f}x |")
    print(f"| each row written into four sorted orders (four btrees) | 1x (no tail) | {spent['four btrees']:.1f} "
          f"| {spent['four btrees'] / btree:.2f}x |")


def main_merge_memory():
    if N * 24 <= 16 * 2**20:
        sys.exit("--merge-memory needs more than 700,000 rows (more than 16MB at 24 bytes a row)")
    setup()
    table = "live_mm"
    log(f"merge memory: loading {N} rows")
    load(table, f"CREATE INDEX {table}_fp ON {table} USING hamming (fp) WITH (tail_limit = 2147483647); "
         f"ALTER TABLE {table} SET (autovacuum_enabled = off);")
    settings = (("more than the entries take", "1GB"), ("less than the entries take", "16MB"))
    times = {name: [] for name, _ in settings}
    added = 0
    for rnd in range(6):
        for name, mwm in settings:
            psql(f"DELETE FROM {table} WHERE id % 211 = {len(times[name]) * 2 + (mwm == '16MB')};")
            psql(f"VACUUM {table};")
            psql(f"INSERT INTO {table} SELECT {2 * N} + {added} + i, random_fp() FROM generate_series(1, 20000) i;")
            added += 20000
            t = time.time()
            merged = psql(f"SET maintenance_work_mem = '{mwm}'; SELECT hamming_merge_tail('{table}_fp');")
            spent = time.time() - t
            if merged != "t":
                sys.exit(f"no merge with maintenance_work_mem = {mwm}")
            times[name].append(spent)
            log(f"{name}: {spent:.3f} s")
    psql(f"SELECT hamming_index_check('{table}_fp');")
    _, ok = measure(table)
    size, tail, merges = info(table)
    print(f"## A merge with little memory: {N:,} rows built, "
          "20,000 inserted and about 0.5% deleted (VACUUM) before each merge\n")
    print(f"{merges} merges on one index, alternately with each setting; every answer "
          + ("equals" if ok else "does NOT always equal") + " the sequential scan's, and hamming_index_check passes.\n")
    print("| maintenance_work_mem | | median (s) | range (s) |")
    print("|---|---|---:|---:|")
    for name, mwm in settings:
        ts = times[name]
        print(f"| {mwm} | {name} | {statistics.median(ts):.3f} | {min(ts):.3f}-{max(ts):.3f} |")


def main_build_memory():
    """CREATE INDEX, and a merge of a tail, with memory for all their entries and with less
    (sorted in runs on temporary files), side by side; a btree's build beside"""
    settings = ("1GB", "64MB", "16MB")
    setup()
    table = "live_bm"
    log(f"build memory: loading {N} rows")
    load(table, f"ALTER TABLE {table} SET (autovacuum_enabled = off);")
    rows = int(psql(f"SELECT count(*) FROM {table}"))
    builds = {mwm: [] for mwm in settings + ("btree",)}
    sizes = {}
    for rnd in range(3):
        for mwm in settings + ("btree",):
            psql(f"DROP INDEX IF EXISTS {table}_fp; DROP INDEX IF EXISTS {table}_btree;")
            t = time.time()
            if mwm == "btree":
                psql(f"SET maintenance_work_mem = '64MB'; CREATE INDEX {table}_btree ON {table} (fp);")
            else:
                psql(f"SET maintenance_work_mem = '{mwm}'; "
                     f"CREATE INDEX {table}_fp ON {table} USING hamming (fp) WITH (tail_limit = 2147483647);")
                sizes[mwm] = info(table)[0]
            builds[mwm].append(time.time() - t)
            log(f"build {mwm}: {builds[mwm][-1]:.2f} s")
    # the index of the last build in runs stays: checked, then its tail grows past memory
    psql(f"DROP INDEX IF EXISTS {table}_btree; DROP INDEX IF EXISTS {table}_fp; SET maintenance_work_mem = '16MB'; "
         f"CREATE INDEX {table}_fp ON {table} USING hamming (fp) WITH (tail_limit = 2147483647);")
    psql(f"SELECT hamming_index_check('{table}_fp');")
    _, built_ok = measure(table)
    tail = max(N // 4, 16 * 2**20 // 24 * 2)
    merges = {mwm: [] for mwm in ("1GB", "16MB")}
    added = 0
    for rnd in range(3):
        for mwm in merges:
            psql(f"INSERT INTO {table} SELECT {2 * N} + {added} + i, random_fp() FROM generate_series(1, {tail}) i;")
            added += tail
            t = time.time()
            merged = psql(f"SET maintenance_work_mem = '{mwm}'; SELECT hamming_merge_tail('{table}_fp');")
            merges[mwm].append(time.time() - t)
            if merged != "t":
                sys.exit(f"no merge with maintenance_work_mem = {mwm}")
            log(f"merge {mwm}: {merges[mwm][-1]:.2f} s")
    psql(f"SELECT hamming_index_check('{table}_fp');")
    _, merged_ok = measure(table)

    def runs(entries, mwm):
        load_rows = int(mwm.rstrip("GMB")) * (2**30 if mwm.endswith("GB") else 2**20) // 24
        return -(-entries // load_rows)

    print(f"## CREATE INDEX with less memory than its entries take: {rows:,} rows\n")
    print("Three builds with each setting, alternately. A build whose entries (24 bytes a row) outgrow "
          "maintenance_work_mem sorts them in runs on temporary files and merges the runs as it writes the "
          "tables; the index is the same size "
          + ("(" + ", ".join(f"{sizes[m] / rows:.1f}" for m in settings) + " bytes a row), ")
          + "hamming_index_check passes and every answer "
          + ("equals" if built_ok else "does NOT always equal") + " the sequential scan's.\n")
    print("| maintenance_work_mem | runs | median (s) | range (s) | vs in memory |")
    print("|---|---:|---:|---:|---:|")
    base = statistics.median(builds["1GB"])
    for mwm in settings + ("btree",):
        ts = builds[mwm]
        label = "btree, 64MB" if mwm == "btree" else mwm
        nruns = "" if mwm == "btree" else (runs(rows, mwm) if runs(rows, mwm) > 1 else "in memory")
        print(f"| {label} | {nruns} | {statistics.median(ts):.2f} | {min(ts):.2f}-{max(ts):.2f} | "
              f"{statistics.median(ts) / base:.2f}x |")
    print(f"\n## A merge of a tail larger than memory: {tail:,} rows inserted before each merge\n")
    print("Three merges with each setting, alternately, on one index; at 16MB the tail is sorted in "
          f"{runs(tail, '16MB')} runs. hamming_index_check passes and every answer "
          + ("equals" if merged_ok else "does NOT always equal") + " the sequential scan's.\n")
    print("| maintenance_work_mem | median (s) | range (s) |")
    print("|---|---:|---:|")
    for mwm, ts in merges.items():
        print(f"| {mwm} | {statistics.median(ts):.2f} | {min(ts):.2f}-{max(ts):.2f} |")


def main_merge_stall():
    """the latency of lookups and single-row inserts while a merge runs, beside the seconds before"""
    setup()
    table = "live_ms"
    log(f"merge stall: loading {N} rows")
    load(table, f"ALTER TABLE {table} SET (autovacuum_enabled = off); "
                f"CREATE INDEX {table}_fp ON {table} USING hamming (fp) WITH (tail_limit = 2147483647);")
    tail = max(N // 20, 50_000)
    seconds = 10 + N // 500_000
    fp_vars = "\\set hi random(0, 4294967295)\n\\set lo random(0, 4294967295)\n"
    fp = "((:hi::bigint << 32) | :lo)::simhash"
    scripts = {
        "lookup": f"{fp_vars}SELECT count(*) FROM {table} WHERE fp <~> {fp} <= 3;\n",
        "insert": f"{fp_vars}INSERT INTO {table} VALUES (-1, {fp});\n",
    }
    merges = []
    added = 0
    with tempfile.TemporaryDirectory() as tmp:
        os.chmod(tmp, 0o777)
        for w, label in enumerate(("first", "second", "third")):
            psql(f"INSERT INTO {table} SELECT {2 * N} + {added} + i, random_fp() FROM generate_series(1, {tail}) i; "
                 "CHECKPOINT;")
            added += tail
            procs = []
            for name, script in scripts.items():
                path = os.path.join(tmp, f"{name}.sql")
                with open(path, "w") as f:
                    f.write(script)
                procs.append(subprocess.Popen(
                    ["pgbench", "-n", "-c", "1", "-T", str(seconds), "-f", path, "-l",
                     f"--log-prefix={tmp}/{name}{w}"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE))
            time.sleep(3)
            start = time.time()
            if psql(f"SELECT hamming_merge_tail('{table}_fp');") != "t":
                sys.exit(f"no {label} merge")
            end = time.time()
            for p in procs:
                if p.wait() != 0:
                    sys.exit(f"pgbench failed: {p.stderr.read().decode()}")
            stats = {}
            for name in scripts:
                before, during = [], []
                for fname in os.listdir(tmp):
                    if fname.startswith(f"{name}{w}."):
                        for line in open(os.path.join(tmp, fname)):
                            f = line.split()
                            done = int(f[4]) + int(f[5]) / 1e6
                            ms = int(f[2]) / 1000
                            if done >= start and done - ms / 1000 <= end:
                                during.append(ms)
                            elif start - 2 <= done - ms / 1000 and done < start:
                                before.append(ms)
                before.sort()
                during.sort()
                stats[name] = (statistics.median(before), before[-1], len(during), statistics.median(during),
                               during[int(0.99 * (len(during) - 1))], during[-1])
            merges.append((label, end - start, stats))
            log(f"{label} merge: {end - start:.2f} s, " + ", ".join(
                f"{n} largest {s[1]:.1f} ms before, {s[5]:.1f} ms during" for n, s in stats.items()))
    psql(f"SELECT hamming_index_check('{table}_fp');")
    _, ok = measure(table)
    rows = int(psql(f"SELECT count(*) FROM {table}"))
    print(f"## Lookups and inserts while a merge runs: {N:,} rows built, {rows:,} at the end\n")
    print(f"A tail of {tail:,} rows inserted before each merge; one client looking up k = 3 around a random "
          "fingerprint and one inserting single rows; latency in ms in the 2 s before the merge and of "
          "the transactions that overlapped it. hamming_index_check passes and every answer "
          + ("equals" if ok else "does NOT always equal") + " the sequential scan's.\n")
    print("| merge | took (s) | lookups before: median | largest | during: lookups | median | 99% | largest "
          "| inserts before: median | largest | during: inserts | median | 99% | largest |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for label, took, stats in merges:
        cells = " | ".join(f"{s[0]:.3f} | {s[1]:.1f} | {s[2]:,} | {s[3]:.3f} | {s[4]:.2f} | {s[5]:.1f}"
                           for s in stats.values())
        print(f"| {label} | {took:.2f} | {cells} |")

if __name__ == "__main__":
    (main_concurrent() if CONCURRENT else main_after_merge() if AFTER_MERGE
     else main_sweep() if SWEEP else main_levels() if LEVELS
     else main_merge_memory() if MERGE_MEMORY else main_build_memory() if BUILD_MEMORY
     else main_merge_stall() if MERGE_STALL else main())
