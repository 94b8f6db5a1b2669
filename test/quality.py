#!/usr/bin/python3
"""Quality benchmark driver, run by test/quality.sh (which starts the cluster,
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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--data', required=True)
    ap.add_argument('--out', required=True)
    ap.add_argument('--quick', action='store_true', help='only a few configs (smoke check)')
    ap.add_argument('--jobs', type=int, default=int(os.environ.get('QUALITY_JOBS', os.cpu_count() or 2)))
    a = ap.parse_args()

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
