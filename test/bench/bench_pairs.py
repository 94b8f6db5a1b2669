"""Helper of test/bench/bench_pairs.sh: loads the tables, times the queries, writes the report.

Usage: python3 test/bench/bench_pairs.py OUT.md PLANS.txt SIZE...   (PGHOST etc. set by test/cluster.sh)
"""
import os
import platform
import re
import statistics
import subprocess
import sys

REPS = 3
TARGETS = {100_000: 0.060, 1_000_000: 1.0, 10_000_000: 15.0}
HAND_TIMEOUT = "5min"
NEAR_SHARE = 0.01

CHUNKS = ["(fp::bigint >> 48) & 65535", "(fp::bigint >> 32) & 65535",
          "(fp::bigint >> 16) & 65535", "fp::bigint & 65535"]


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def psql(sql):
    r = subprocess.run(["psql", "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-c", sql],
                       capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"psql failed: {sql}\n{r.stderr}")
    return r.stdout.strip()


def measure(sql, work_mem="1GB", timeout=None):
    """Runs sql (returning one count) in a fresh backend; returns a dict with
    count, elapsed and cpu (s), maxrss (MB), or None when statement_timeout
    cancelled it."""
    script = [f"SET work_mem = '{work_mem}';"]
    if timeout:
        script.append(f"SET statement_timeout = '{timeout}';")
    # DEBUG1 shows the plan of simhash_pairs (blocks, tables, in memory or not)
    script += ["SET log_statement_stats = on;", "SET client_min_messages = debug1;", sql + ";"]
    r = subprocess.run(["psql", "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1"], input="\n".join(script),
                       capture_output=True, text=True)
    if r.returncode != 0:
        if "canceling statement due to statement timeout" in r.stderr:
            return None
        sys.exit(f"psql failed: {sql}\n{r.stderr}")
    stats = re.findall(r"!\s+([\d.]+) s user, ([\d.]+) s system, ([\d.]+) s elapsed\s*\n"
                       r"[^\n]*\n!\s+(\d+) kB max resident size", r.stderr)
    if not stats:
        sys.exit(f"no statistics for {sql}\n{r.stderr}")
    user, system, elapsed, rss = stats[-1]
    plan = re.search(r"DEBUG:  simhash_\w+: \d+ rows, (.*)", r.stderr)
    return dict(count=int(r.stdout.strip().splitlines()[-1]), elapsed=float(elapsed),
                cpu=float(user) + float(system), maxrss=int(rss) / 1024,
                plan=plan.group(1) if plan else None)


def median_of(sql, reps, **kw):
    runs = [measure(sql, **kw) for _ in range(reps)]
    if any(r is None for r in runs):
        return None
    counts = {r["count"] for r in runs}
    if len(counts) != 1:
        sys.exit(f"counts differ between runs of {sql}: {counts}")
    return dict(count=runs[0]["count"],
                elapsed=statistics.median(r["elapsed"] for r in runs),
                cpu=statistics.median(r["cpu"] for r in runs),
                maxrss=max(r["maxrss"] for r in runs), plan=runs[0]["plan"],
                runs=[r["elapsed"] for r in runs])


def load(n):
    t = f"pairs_{n}"
    base = n - int(n * NEAR_SHARE)
    log(f"loading {t}")
    psql(f"DROP TABLE IF EXISTS {t}")
    psql(f"CREATE TABLE {t} (id bigint, fp simhash)")
    psql(f"SELECT setseed(0.5); INSERT INTO {t} SELECT g, "
         f"((floor(random() * 4294967296)::bigint << 32) | floor(random() * 4294967296)::bigint)::simhash "
         f"FROM generate_series(1, {base}) g")
    # near copies: 3 random bit positions (1 to 3 distinct) flipped in a random row
    psql(f"SELECT setseed(0.25); INSERT INTO {t} SELECT c.id, (b.fp::bigint # c.mask)::simhash FROM "
         f"(SELECT {base} + g AS id, 1 + floor(random() * {base})::bigint AS base_id, "
         f"(1::bigint << floor(random() * 64)::integer) | (1::bigint << floor(random() * 64)::integer) "
         f"| (1::bigint << floor(random() * 64)::integer) AS mask "
         f"FROM generate_series(1, {n - base}) g) c JOIN {t} b ON b.id = c.base_id")
    for i, chunk in enumerate(CHUNKS, 1):
        psql(f"CREATE INDEX {t}_chunk{i} ON {t} (({chunk}))")
    psql(f"VACUUM ANALYZE {t}")
    psql(f"SELECT pg_prewarm('{t}')")
    return t


def hand_join(t, form):
    dist = "bit_count((a.fp::bigint # b.fp::bigint)::bit(64)) <= 3"
    chunk = lambda c, r: c.replace("fp", f"{r}.fp")
    if form == "or":
        cond = " OR ".join(f"({chunk(c, 'a')}) = ({chunk(c, 'b')})" for c in CHUNKS)
        return (f"SELECT count(*) FROM {t} a JOIN {t} b ON ({cond}) "
                f"AND a.id < b.id AND {dist}")
    union = " UNION ".join(
        f"SELECT a.id, b.id FROM {t} a JOIN {t} b ON ({chunk(c, 'a')}) = ({chunk(c, 'b')}) "
        f"AND a.id < b.id AND {dist}" for c in CHUNKS)
    return f"SELECT count(*) FROM ({union}) s"


def fmt_s(r):
    if r is None:
        return "> 300 (cancelled)"
    return f"{r['elapsed']:.3f}"


def main():
    out_md, out_plans = sys.argv[1], sys.argv[2]
    sizes = [int(s) for s in sys.argv[3:]]
    psql("CREATE EXTENSION IF NOT EXISTS simhash")
    psql("CREATE EXTENSION IF NOT EXISTS pg_prewarm")
    load_before = os.getloadavg()
    plans = []
    results = {}
    hand_form = None
    for n in sizes:
        t = load(n)
        pairs = f"SELECT count(*) FROM simhash_pairs('SELECT id, fp FROM {t}', %d)"
        r = results[n] = {}
        log(f"{t}: baseline")
        r["baseline"] = measure(f"SELECT count(*) FROM (SELECT id, fp FROM {t} OFFSET 0) s")
        log(f"{t}: simhash_pairs k=3 in memory")
        r["mem"] = median_of(pairs % 3, REPS)
        log(f"{t}: simhash_pairs k=3 spilled")
        r["spill"] = measure(pairs % 3, work_mem="4MB")
        log(f"{t}: simhash_pairs k=6")
        r["k6"] = measure(pairs % 6)
        for fn in ("clusters", "dedup"):
            log(f"{t}: simhash_{fn} k=3")
            r[fn] = measure(f"SELECT count(*) FROM simhash_{fn}('SELECT id, fp FROM {t}', 3)")
        if hand_form is None:
            # both forms once at the first size, then the faster one
            trial = {}
            for form in ("or", "union"):
                log(f"{t}: hand-written join ({form})")
                trial[form] = median_of(hand_join(t, form), REPS, timeout=HAND_TIMEOUT)
            r["hand_forms"] = trial
            hand_form = min(trial, key=lambda f: trial[f]["elapsed"] if trial[f] else 1e9)
            r["hand"] = trial[hand_form]
        else:
            log(f"{t}: hand-written join ({hand_form})")
            reps = REPS if n < 10_000_000 else 1
            r["hand"] = median_of(hand_join(t, hand_form), reps, timeout=HAND_TIMEOUT)
        plans.append(f"-- {t}, hand-written join ({hand_form})\n"
                     + psql("EXPLAIN (COSTS OFF) " + hand_join(t, hand_form)) + "\n")
        counts = {r["mem"]["count"], r["spill"]["count"]}
        if r["hand"] is not None:
            counts.add(r["hand"]["count"])
        if len(counts) != 1:
            sys.exit(f"{t}: simhash_pairs and the hand-written join disagree: {counts}")
        log(f"{t}: {r}")
    load_after = os.getloadavg()

    with open(out_plans, "w") as f:
        f.write("\n".join(plans))

    lines = []
    add = lines.append
    add("## simhash_pairs benchmark (test/bench/bench_pairs.sh)")
    add("")
    add(f"Host: {platform.machine()}, {os.cpu_count()} CPUs, {platform.platform()}; "
        f"{psql('SELECT version()').split(',')[0]}. One core per query "
        f"(max_parallel_workers_per_gather = 0, jit = off). Load average "
        f"{load_before[0]:.1f} before, {load_after[0]:.1f} after (other jobs share the machine: "
        f"CPU time is the steadier figure).")
    add("")
    add(f"Tables: 99% uniformly random fingerprints, {NEAR_SHARE:.0%} near copies (1-3 bits) "
        f"of random rows; ids ascending. Times in seconds.")
    add("")
    add("| rows | pairs k=3 | simhash_pairs k=3, 1GB (median of 3) | CPU | target | met "
        f"| hand-written join k=3 ({hand_form}) | speed-up | same count "
        "| simhash_pairs k=3, default work_mem 4MB |")
    add("|---:|---:|---:|---:|---:|:-:|---:|---:|:-:|---:|")
    for n, r in results.items():
        mem, hand, spill = r["mem"], r["hand"], r["spill"]
        target = TARGETS.get(n)
        met = "yes" if target and mem["elapsed"] <= target else ("no" if target else "")
        speedup = f"{hand['elapsed'] / mem['elapsed']:.0f}x" if hand else f"> {300 / mem['elapsed']:.0f}x"
        same = "yes" if hand else "not run to the end"
        add(f"| {n:,} | {mem['count']:,} | {mem['elapsed']:.3f} | {mem['cpu']:.3f} | "
            f"{target if target else ''} | {met} | {fmt_s(hand)} | {speedup} | {same} | "
            f"{spill['elapsed']:.3f} (CPU {spill['cpu']:.3f}) |")
    add("")
    add("Individual runs (s), simhash_pairs k=3 in memory: " + "; ".join(
        f"{n:,}: " + ", ".join(f"{x:.3f}" for x in r["mem"]["runs"]) for n, r in results.items()))
    first = next(iter(results.values()))
    if "hand_forms" in first:
        add("")
        add("Hand-written join forms at the first size (median of 3, s): " + ", ".join(
            f"{form} {fmt_s(res)}" for form, res in first["hand_forms"].items())
            + f"; the {hand_form} form is used for the larger tables.")
    add("")
    add("Plans chosen by simhash_pairs (DEBUG1): " + "; ".join(
        f"{n:,}: k=3 {r['mem']['plan']}, with 4MB {r['spill']['plan']}, k=6 {r['k6']['plan']}"
        for n, r in results.items()))
    add("")
    add("Peak memory of the backend (ru_maxrss, MB; baseline = the same backend only reading "
        "the table, which includes the shared buffers it touches):")
    add("")
    add("| rows | baseline | simhash_pairs k=3, 1GB | minus baseline | "
        "simhash_pairs k=3, 4MB (spill) | minus baseline |")
    add("|---:|---:|---:|---:|---:|---:|")
    for n, r in results.items():
        b = r["baseline"]["maxrss"]
        add(f"| {n:,} | {b:.0f} | {r['mem']['maxrss']:.0f} | {r['mem']['maxrss'] - b:.0f} | "
            f"{r['spill']['maxrss']:.0f} | {r['spill']['maxrss'] - b:.0f} |")
    add("")
    add("Other calls, once, work_mem = 1GB (s, with pairs or rows returned):")
    add("")
    add("| rows | simhash_pairs k=6 | pairs k=6 | simhash_clusters k=3 | simhash_dedup k=3 |")
    add("|---:|---:|---:|---:|---:|")
    for n, r in results.items():
        add(f"| {n:,} | {r['k6']['elapsed']:.3f} | {r['k6']['count']:,} | "
            f"{r['clusters']['elapsed']:.3f} | {r['dedup']['elapsed']:.3f} |")
    add("")
    text = "\n".join(lines)
    print(text)
    with open(out_md, "w") as f:
        f.write(text + "\n")


if __name__ == "__main__":
    main()
