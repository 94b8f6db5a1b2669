#!/usr/bin/python3
"""Quality benchmark driver, run by test/bench/quality.sh (which starts the cluster,
creates the extension and loads the tables natural_en, natural_zh, edited_en,
edited_zh).  Standard library only.

For every (config, set, lang): fingerprints are computed in PostgreSQL and a
sequential-scan self-join returns every pair with Hamming distance <= KMAX
together with its distance; the pairs with distance <= k are scored for
k = 0..KMAX by the corpus's eval.py (J >= 0.8, --lang).  Writes the markdown
tables to stdout and OUT/quality.md, and all numbers to OUT/quality.json.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor

KMAX = 12
THRESHOLD = '0.8'
SETS = [('natural', 'en'), ('natural', 'zh'), ('edited', 'en'), ('edited', 'zh')]
REFERENCE = {'natural': 0.65, 'edited': 0.60}   # plain Python SimHash, words, tf, k=3


def configs():
    out = []
    for n in (1, 2, 3):
        for w in ('tf', 'binary', 'sublinear'):
            out.append(('words n=%d %s' % (n, w), "simhash(body, shingle => %d, weighting => '%s')" % (n, w)))
    for n in (2, 3, 4, 5):
        for w in ('tf', 'binary'):
            out.append(('chars n=%d %s' % (n, w), "simhash_ngram(body, n => %d, weighting => '%s')" % (n, w)))
    out.append(("tsvector simple", "simhash(to_tsvector('simple', body))"))
    return out


QUICK = ['words n=1 tf', 'words n=2 binary', 'chars n=3 tf', 'tsvector simple']

CRASH_MARKERS = ('server closed the connection unexpectedly', 'terminating connection because of crash',
                 'connection to server was lost', 'could not connect to server', 'Connection refused',
                 'the database system is in recovery mode', 'the database system is starting up')


class PsqlError(Exception):
    def __init__(self, msg, crash):
        super().__init__(msg)
        self.crash = crash


def psql(sql):
    """Runs one statement; returns rows as lists of strings (tab-separated)."""
    p = subprocess.run(['psql', '-X', '-q', '-A', '-t', '-F', '\t', '-v', 'ON_ERROR_STOP=1', '-c', sql],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    if p.returncode != 0:
        err = p.stderr.strip()
        raise PsqlError(err, p.returncode == 2 or any(m in err for m in CRASH_MARKERS))
    return [line.split('\t') for line in p.stdout.splitlines() if line]


def wait_ready(timeout=120):
    t0 = time.time()
    while time.time() - t0 < timeout:
        try:
            psql('SELECT 1')
            return True
        except PsqlError:
            time.sleep(0.5)
    return False


def pairs_sql(table, expr):
    # row numbers instead of the text ids for "a < b": an integer comparison
    # is cheaper than a collation-aware one in the 12.5M-pair nested loop
    return ("WITH f AS MATERIALIZED (SELECT row_number() OVER () AS n, id, %s AS fp FROM %s) "
            "SELECT a.id, b.id, a.fp <~> b.fp FROM f a JOIN f b ON a.n < b.n "
            "WHERE a.fp <~> b.fp <= %d" % (expr, table, KMAX))


def count_sql(table, expr):
    # the same join with a plain int4 comparison instead of the extension's
    # own "simhash_distance <= integer" operator (cross-check of the latter)
    return ("WITH f AS MATERIALIZED (SELECT row_number() OVER () AS n, %s AS fp FROM %s) "
            "SELECT count(*) FROM f a JOIN f b ON a.n < b.n "
            "WHERE (a.fp <~> b.fp)::integer <= %d" % (expr, table, KMAX))


def fps_sql(table, expr):
    return "SELECT id, %s AS fp FROM %s" % (expr, table)


def find_crash_input(table, expr):
    """Bisects the table's rows for a single document whose fingerprint
    crashes the server.  Returns (id, repr of the body start) or None."""
    ids = [r[0] for r in psql('SELECT id FROM %s ORDER BY id COLLATE "C"' % table)]

    def crashes(lo, hi):   # ids[lo:hi]
        sql = ('SELECT count(%s) FROM %s WHERE id COLLATE "C" >= %s AND id COLLATE "C" <= %s'
               % (expr, table, quote(ids[lo]), quote(ids[hi - 1])))
        try:
            psql(sql)
            return False
        except PsqlError as e:
            if not e.crash:
                return False
            wait_ready()
            return True

    lo, hi = 0, len(ids)
    if not crashes(lo, hi):
        return None
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if crashes(lo, mid):
            hi = mid
        elif crashes(mid, hi):
            lo = mid
        else:
            return None   # needs two documents together (should not happen)
    doc = ids[lo]
    body = psql("SELECT body FROM %s WHERE id = %s" % (table, quote(doc)))
    return doc, (body[0][0][:300] if body else '')


def quote(s):
    return "'" + s.replace("'", "''") + "'"


class Scorer:
    def __init__(self, data, tmpdir):
        self.data, self.tmpdir = data, tmpdir
        self.eval_py = os.path.join(data, 'eval.py')
        self.counter = 0
        self.lock = threading.Lock()

    def score(self, setname, lang, pairs):
        with self.lock:
            self.counter += 1
            base = os.path.join(self.tmpdir, 'p%d' % self.counter)
        with open(base + '.tsv', 'w', encoding='utf-8') as f:
            for a, b in pairs:
                f.write('%s\t%s\n' % (a, b))
        p = subprocess.run([sys.executable, self.eval_py, base + '.tsv', os.path.join(self.data, setname),
                            '--thresholds', THRESHOLD, '--lang', lang, '--json', base + '.json'],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
        if p.returncode != 0:
            raise RuntimeError('eval.py failed: %s' % p.stderr.strip())
        with open(base + '.json', encoding='utf-8') as f:
            res = json.load(f)[THRESHOLD]['lang=' + lang]
        os.unlink(base + '.tsv'); os.unlink(base + '.json')
        # eval.py writes null precision / F1 when nothing was predicted
        res = {k: (0.0 if v is None else v) for k, v in res.items()}
        res['pred'] = len(pairs)
        return res


def run_job(scorer, cfg, expr, setname, lang):
    table = '%s_%s' % (setname, lang)
    t0 = time.time()
    fps = {i: fp for i, fp in psql(fps_sql(table, expr))}
    rows = psql(pairs_sql(table, expr))
    t_sql = time.time() - t0
    count_int4 = int(psql(count_sql(table, expr))[0][0])
    t1 = time.time()
    # cross-check the server's distances against popcount(a xor b) of the fingerprints as text
    bad = [(a, b, d) for a, b, d in rows
           if not fps[a] or not fps[b] or bin(int(fps[a], 16) ^ int(fps[b], 16)).count('1') != int(d)]
    bydist = [[] for _ in range(KMAX + 1)]
    for a, b, d in rows:
        bydist[int(d)].append((a, b) if a < b else (b, a))
    perk, cum, last = [], [], None
    for k in range(KMAX + 1):
        cum = cum + bydist[k]
        if last is not None and not bydist[k]:
            res = dict(last)            # same predictions as k-1
        else:
            res = scorer.score(setname, lang, cum)
        perk.append(res)
        last = res
    vals = list(fps.values())
    return dict(config=cfg, set=setname, lang=lang, docs=len(vals), null_fp=vals.count(''),
                distinct_fp=len(set(vals)), zero_fp=vals.count('0' * 16), bad_distance=len(bad),
                pairs_le_kmax=len(rows), pairs_le_kmax_int4=count_int4,
                sql_seconds=round(t_sql, 2), check_seconds=round(t1 - t0 - t_sql, 2),
                eval_seconds=round(time.time() - t1, 2), perk=perk)


def best_k(perk):
    return max(range(len(perk)), key=lambda k: (perk[k]['f1'], -k))


# ---- --verified: candidates within k bits, with and without the exact check ----

VKMAX = 16
UNITS = {'en': 'words', 'zh': 'characters'}   # the corpus's shingles: en \w+ words, zh characters


def verified_pairs_sql(setname, lang, k):
    """The verified pairs within k bits, by the verified simhash_pairs()."""
    t = '%s_%s' % (setname, lang)
    return ("WITH d AS MATERIALIZED (SELECT row_number() OVER (ORDER BY id) AS n, id, body FROM {t}) "
            "SELECT a.id, b.id FROM simhash_pairs($$SELECT d.n, f.fp, d.body FROM {t}_fp f "
            "JOIN (SELECT row_number() OVER (ORDER BY id) AS n, body FROM {t}) d USING (n)$$, {k}, 0.8, 3, '{u}') p "
            "JOIN d a ON a.n = p.id_a JOIN d b ON b.n = p.id_b").format(t=t, k=k, u=UNITS[lang])


def idf_sql(setname, lang):
    """IDF-weighted fingerprints from the table itself: the features are the
    document's distinct shingles (shingle_set(), the corpus's units), each of
    weight ln(N / document frequency), through simhash(text[], float8[])."""
    t = '%s_%s' % (setname, lang)
    return """
CREATE TABLE IF NOT EXISTS {t}_idf AS
WITH s AS MATERIALIZED (SELECT row_number() OVER (ORDER BY id) AS n, shingle_set(body, 3, '{u}') AS sh FROM {t}),
df AS (SELECT h, count(*) AS df FROM s, unnest(s.sh) h GROUP BY h)
SELECT s.n, simhash(array_agg(h::text ORDER BY h), array_agg(ln((SELECT count(*) FROM s)::float8 / df.df) ORDER BY h)) AS fp
FROM s, unnest(s.sh) h JOIN df USING (h) GROUP BY s.n""".format(t=t, u=UNITS[lang])


def verified_sql(setname, lang, fps='fp'):
    """Per k = 0..VKMAX: candidates (pairs within k bits of simhash(body),
    found by simhash_pairs), and the same after the check
    shingle_similarity >= 0.8, scored against the corpus's truth table, all in
    PostgreSQL.  A pair is positive iff inter / union >= 0.8, in integers."""
    t = '%s_%s' % (setname, lang)
    return """
WITH d AS MATERIALIZED (
  SELECT row_number() OVER (ORDER BY id) AS n, id, body, simhash(body) AS fp FROM {t}),
cand AS MATERIALIZED (
  SELECT p.distance, shingle_similarity(a.body, b.body, 3, '{units}') >= 0.8 AS verified,
         least(a.id, b.id) AS id_a, greatest(a.id, b.id) AS id_b
  FROM simhash_pairs('SELECT n, fp FROM {t}_{fps}', {kmax}) p
  JOIN d a ON a.n = p.id_a JOIN d b ON b.n = p.id_b),
pos AS (SELECT id_a, id_b FROM truth_{s}
        WHERE left(id_a, 2) = '{lang}' AND 5 * inter >= 4 * (size_a + size_b - inter)),
scored AS (SELECT c.*, p.id_a IS NOT NULL AS positive FROM cand c LEFT JOIN pos p USING (id_a, id_b))
SELECT k, (SELECT count(*) FROM d) AS docs, (SELECT count(*) FROM pos) AS positives,
       count(s.*) FILTER (WHERE s.distance <= k) AS candidates,
       count(s.*) FILTER (WHERE s.distance <= k AND s.positive) AS tp,
       count(s.*) FILTER (WHERE s.distance <= k AND s.verified) AS verified,
       count(s.*) FILTER (WHERE s.distance <= k AND s.verified AND s.positive) AS verified_tp
FROM generate_series(0, {kmax}) k LEFT JOIN scored s ON true
GROUP BY k ORDER BY k""".format(t=t, s=setname, lang=lang, units=UNITS[lang], kmax=VKMAX, fps=fps)


def prf(tp, pred, pos):
    p = tp / pred if pred else 0.0
    r = tp / pos if pos else 0.0
    return p, r, (2 * p * r / (p + r) if p + r else 0.0)


def verified_main(a):
    rows, problems, idf = {}, [], {}
    for s, l in SETS:
        t = '%s_%s' % (s, l)
        psql("CREATE TABLE IF NOT EXISTS %s_fp AS SELECT row_number() OVER (ORDER BY id) AS n, simhash(body) AS fp "
             "FROM %s" % (t, t))
        t0 = time.time()
        res = []
        for k, docs, pos, cand, tp, ver, vtp in psql(verified_sql(s, l)):
            k, docs, pos, cand, tp, ver, vtp = map(int, (k, docs, pos, cand, tp, ver, vtp))
            res.append(dict(k=k, docs=docs, positives=pos, candidates=cand, per_doc=cand / docs,
                            simhash=prf(tp, cand, pos), verified=prf(vtp, ver, pos)))
        rows[(s, l)] = res
        # the best SimHash alone: IDF weights from the table
        psql(idf_sql(s, l))
        idf[(s, l)] = max(((int(k), prf(int(tp), int(cand), int(pos))[2])
                           for k, docs, pos, cand, tp, ver, vtp in psql(verified_sql(s, l, 'idf'))),
                          key=lambda x: (x[1], -x[0]))
        # cross-check of the last cell: the verified simhash_pairs(), scored by eval.py
        with tempfile.TemporaryDirectory() as tmp:
            check = Scorer(a.data, tmp).score(s, l, [tuple(x) for x in psql(verified_pairs_sql(s, l, VKMAX))])
        if abs(check['f1'] - res[-1]['verified'][2]) > 1e-9:
            problems.append('%s %s: verified simhash_pairs() scored by eval.py F1 %.6f, in SQL %.6f'
                            % (s, l, check['f1'], res[-1]['verified'][2]))
        print('  %s %s: %.1f s; eval.py on verified simhash_pairs(k = %d): F1 %.4f' % (
            s, l, time.time() - t0, VKMAX, check['f1']), file=sys.stderr, flush=True)
    md = ['# Verified near-duplicates: precision / recall / F1 against k', '',
          'Candidates: every pair within k bits of `simhash(body)` (`simhash_pairs`); verified: the '
          'candidates with `shingle_similarity(a, b, 3, units) >= 0.8` (units `words` for en, '
          '`characters` for zh, the corpus\'s definitions). Scored in PostgreSQL against the exact '
          'truth at Jaccard >= 0.8. Cells: precision / recall / F1.', '']
    for s, l in SETS:
        r = rows[(s, l)]
        md += ['## %s %s (%d documents, %d positive pairs)' % (s, l, r[0]['docs'], r[0]['positives']), '',
               '| k | candidates / doc | SimHash alone P / R / F1 | verified P / R / F1 |',
               '|---:|---:|---|---|']
        for x in r:
            md.append('| %d | %.3f | %.3f / %.3f / %.3f | %.3f / %.3f / %.4f |' % (
                (x['k'], x['per_doc']) + x['simhash'] + x['verified']))
        md.append('')
    md += ['## Summary', '', '| set | lang | best k alone (F1) | IDF-weighted alone: best k (F1) | '
           'verified F1 at k = 14 | at k = 16 | candidates / doc at 16 |', '|---|---|---|---|---:|---:|---:|']
    for s, l in SETS:
        r = rows[(s, l)]
        b = max(r, key=lambda x: (x['simhash'][2], -x['k']))
        md.append('| %s | %s | %d (%.3f) | %d (%.3f) | %.4f | %.4f | %.3f |' % (
            s, l, b['k'], b['simhash'][2], idf[(s, l)][0], idf[(s, l)][1], r[14]['verified'][2],
            r[16]['verified'][2], r[16]['per_doc']))
    if problems:
        md += ['', '## Problems', ''] + ['- ' + p for p in problems]
    text = '\n'.join(md) + '\n'
    sys.stdout.write(text)
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, 'quality_verified.md'), 'w', encoding='utf-8') as f:
        f.write(text)
    with open(os.path.join(a.out, 'quality_verified.json'), 'w', encoding='utf-8') as f:
        json.dump({'%s_%s' % k: v for k, v in rows.items()}, f, indent=1)
    if a.plot:
        plot_verified(rows, a.plot)
    return 1 if problems else 0


def plot_verified(rows, path):
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
    for ax, key, title in ((axes[0], 'simhash', 'SimHash alone: pairs within k bits'),
                           (axes[1], 'verified', 'verified: within k bits and Jaccard >= 0.8')):
        for (s, l), r in rows.items():
            ax.plot([x['k'] for x in r], [x[key][2] for x in r], marker='o', markersize=3,
                    label='%s %s' % (s, l))
        ax.set_title(title, fontsize=10)
        ax.set_xlabel('k (Hamming distance)')
        ax.grid(alpha=0.3)
        ax.set_xticks(range(0, VKMAX + 1, 2))
    axes[0].set_ylabel('F1 at Jaccard >= 0.8')
    axes[1].legend(loc='lower right', fontsize=8)
    ax2 = axes[1].twinx()
    for (s, l), r in rows.items():
        ax2.plot([x['k'] for x in r], [x['per_doc'] for x in r], linestyle=':', linewidth=1)
    ax2.set_ylabel('candidates per document (dotted)')
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--data', required=True)
    ap.add_argument('--out', required=True)
    ap.add_argument('--quick', action='store_true', help='only a few configs (smoke check)')
    ap.add_argument('--verified', action='store_true',
                    help='candidates then exact verification, k = 0..%d, instead of the feature sweep' % VKMAX)
    ap.add_argument('--plot', help='with --verified: write the F1 plot to this PNG file')
    ap.add_argument('--jobs', type=int, default=int(os.environ.get('QUALITY_JOBS', os.cpu_count() or 2)))
    a = ap.parse_args()
    if a.verified:
        return verified_main(a)

    cfgs = configs()
    if a.quick:
        cfgs = [c for c in cfgs if c[0] in QUICK]
    order = {c[0]: i for i, c in enumerate(cfgs)}
    # biggest tables first for a better balance between the workers
    jobs = [(c, e, s, l) for s, l in sorted(SETS, key=lambda x: x != ('natural', 'en')) for c, e in cfgs]
    results, failed, problems = {}, [], []
    t0 = time.time()
    with tempfile.TemporaryDirectory() as tmp:
        scorer = Scorer(a.data, tmp)

        def work(job):
            try:
                r = run_job(scorer, *job)
                results[(job[0], job[2], job[3])] = r
                print('  %-20s %-7s %s  sql %5.1fs  eval %5.1fs  pairs(d<=%d) %d' % (
                    job[0], job[2], job[3], r['sql_seconds'], r['eval_seconds'], KMAX, r['pairs_le_kmax']),
                    file=sys.stderr, flush=True)
            except PsqlError as e:
                failed.append((job, e))
                print('  %-20s %-7s %s  FAILED: %s' % (job[0], job[2], job[3], e), file=sys.stderr, flush=True)
                if e.crash:
                    wait_ready()

        with ThreadPoolExecutor(max_workers=max(1, a.jobs)) as pool:
            list(pool.map(work, jobs))

        # a crash also kills the other worker's query: re-run failures alone,
        # and look for the input of a reproducible crash
        for job, e in failed:
            cfg, expr, s, l = job
            try:
                results[(cfg, s, l)] = run_job(scorer, *job)
                problems.append('%s %s %s: failed once while another query was running (%s), '
                                'fine when re-run alone' % (cfg, s, l, str(e).splitlines()[0]))
            except PsqlError as e2:
                msg = '%s %s %s: %s' % (cfg, s, l, ' | '.join(str(e2).splitlines()))
                if e2.crash:
                    wait_ready()
                    hit = find_crash_input('%s_%s' % (s, l), expr)
                    msg += ('; SERVER CRASH reproduced on document %s, expression %s, body starts %r'
                            % (hit[0], expr, hit[1]) if hit else '; server crash (no single document found)')
                problems.append(msg)
    elapsed = time.time() - t0

    for r in results.values():
        if r['null_fp']:
            problems.append('%s %s %s: %d NULL fingerprints' % (r['config'], r['set'], r['lang'], r['null_fp']))
        if r['zero_fp']:
            problems.append('%s %s %s: %d all-zero fingerprints' % (r['config'], r['set'], r['lang'], r['zero_fp']))

        if r['bad_distance']:
            problems.append('%s %s %s: %d pairs whose <~> differs from popcount(xor)'
                            % (r['config'], r['set'], r['lang'], r['bad_distance']))
        if r['pairs_le_kmax'] != r['pairs_le_kmax_int4']:
            problems.append('%s %s %s: "<~> <= %d" returned %d pairs, the int4 comparison %d'
                            % (r['config'], r['set'], r['lang'], KMAX, r['pairs_le_kmax'], r['pairs_le_kmax_int4']))
    log = os.environ.get('SIMHASH_SERVER_LOG')
    if log and os.path.exists(log):
        with open(log, encoding='utf-8', errors='replace') as f:
            for line in f:
                if any(m in line for m in ('terminated by signal', 'PANIC', 'TRAP:', 'WARNING:', 'server process')):
                    problems.append('server log: ' + line.strip())

    keys = sorted(results, key=lambda x: (order[x[0]], SETS.index((x[1], x[2]))))
    version = psql("SELECT extversion FROM pg_extension WHERE extname = 'simhash'")[0][0]
    md = ['# simhash quality benchmark (extension version %s)' % version, '',
          'Pairs by sequential-scan self-join over Hamming distance k = 0..%d; scored by eval.py at '
          'J >= %s per language. Reference (plain Python SimHash, words, tf, k = 3): F1 %.2f natural, '
          '%.2f edited.%s' % (KMAX, THRESHOLD, REFERENCE['natural'], REFERENCE['edited'],
                              ' (--quick: only %d configs)' % len(cfgs) if a.quick else ''), '',
          '## Best k per (config, set, lang)', '',
          '| config | set | lang | best k | predicted | TP | FP | FN | precision | recall | F1 |',
          '|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|']
    for key in keys:
        r = results[key]
        k = best_k(r['perk'])
        x = r['perk'][k]
        md.append('| %s | %s | %s | %d | %d | %d | %d | %d | %.4f | %.4f | %.4f |' % (
            key[0], key[1], key[2], k, x['pred'], x['tp'], x['fp'], x['fn'], x['precision'], x['recall'], x['f1']))
    md += ['', '## F1 at k = 3, and worst-of-four best-k F1', '',
           '| config | ' + ' | '.join('%s %s' % sl for sl in SETS) + ' | worst best-k F1 |',
           '|---|' + '---:|' * (len(SETS) + 1)]
    worst = {}
    for cfg, _ in cfgs:
        cells, bests = [], []
        for s, l in SETS:
            r = results.get((cfg, s, l))
            cells.append('%.4f' % r['perk'][3]['f1'] if r else 'ERROR')
            bests.append(r['perk'][best_k(r['perk'])]['f1'] if r else 0.0)
        worst[cfg] = min(bests)
        md.append('| %s | %s | %.4f |' % (cfg, ' | '.join(cells), worst[cfg]))
    md.append('')
    if worst:
        w = max(worst, key=lambda c: worst[c])
        md.append('**Best config (highest worst-of-four best-k F1): %s, worst-of-four F1 %.4f**' % (w, worst[w]))
    if problems:
        md += ['', '## Problems', ''] + ['- ' + p for p in problems]
    md += ['', '_%d configs x %d (set, lang), fingerprint+join+scoring %.0f s with %d workers._'
           % (len(cfgs), len(SETS), elapsed, a.jobs)]
    text = '\n'.join(md) + '\n'
    sys.stdout.write(text)
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, 'quality.md'), 'w', encoding='utf-8') as f:
        f.write(text)
    with open(os.path.join(a.out, 'quality.json'), 'w', encoding='utf-8') as f:
        json.dump([results[k] for k in keys], f, indent=1)
    return 1 if failed and any('CRASH' in p for p in problems) else 0


if __name__ == '__main__':
    sys.exit(main())
