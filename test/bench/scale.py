#!/usr/bin/python3
"""Near-duplicates at scale: the driver of test/bench/scale.sh (which starts
the cluster and creates the extension).  Needs python3-numpy (and
python3-matplotlib for the plot) and the public evaluation corpus.

  scale.py quality            the four sets of the public corpus
  scale.py pk                 p(k) of the real corpus and of a generated one
  scale.py scale N            N generated documents end to end
  scale.py plot N             test/bench/plots/scale.png from the last runs

Methods, side by side:
  simhash64   simhash(body), k = 16 (exact tables, or bands at --recall)
  simhash128  simhash128(body), k = 28 (bands at --recall)
  shingle_simhash128  the shingle set's 128 bits, k = 26 (bands at --recall)
  shingle_simhash256  parts 0 and 1 of shingle_simhash128 side by side, 256
              bits, distances added, k = 49 (bands at --recall256)
  minhash     100 permutations of the same shingles (shingle_set(body)),
              LSH with 20 bands of 5 rows (numpy), here in the benchmark
Every method's candidates are verified the same way (shingle_verify_pairs,
Jaccard >= 0.8 of the 3-shingle sets).  Writes markdown tables to stdout and
all numbers to OUT/scale_*.json.
"""
import argparse
import json
import os
import statistics
import subprocess
import struct
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.environ.get('SIMHASH_DATA') or os.path.normpath(os.path.join(HERE, '..', '..', '..', 'shared', 'data'))
OUT = os.environ.get('SCALE_OUT') or os.path.join(HERE, '..', 'out')
SETS = [('natural', 'en'), ('natural', 'zh'), ('edited', 'en'), ('edited', 'zh')]
UNITS = {'en': 'words', 'zh': 'characters'}
K64, K128, KSET, K256 = 16, 28, 26, 49


def psql(sql, fetch=True):
    p = subprocess.run(['psql', '-X', '-q', '-A', '-t', '-F', '\t', '-v', 'ON_ERROR_STOP=1', '-c', sql],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    if p.returncode != 0:
        raise RuntimeError('%s\n%s' % (sql[:300], p.stderr))
    return [line.split('\t') for line in p.stdout.splitlines() if line] if fetch else None


def timed(sql, settings=''):
    """runs sql (with SET lines before it) in one session, returns (seconds, rows)"""
    script = settings + '\n\\timing on\n' + sql + ';\n'
    p = subprocess.run(['psql', '-X', '-q', '-A', '-t', '-F', '\t', '-v', 'ON_ERROR_STOP=1'],
                       input=script, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    if p.returncode != 0:
        raise RuntimeError('%s\n%s' % (sql[:300], p.stderr))
    rows, ms = [], None
    for line in p.stdout.splitlines():
        if line.startswith('Time: '):
            ms = float(line.split()[1])
        elif line:
            rows.append(line.split('\t'))
    return ms / 1000.0, rows


def has_128():
    return psql("SELECT count(*) FROM pg_proc p JOIN pg_type t ON t.oid = p.prorettype "
                "WHERE p.proname = 'simhash128' AND t.typname = 'simhash128' "
                "AND p.proargtypes[0] = 'text'::regtype")[0][0] != '0'


# ---- MinHash LSH (numpy) ----

PERMS, BANDS, ROWS = 100, 20, 5


ELEM = np.dtype([('len', '>i4'), ('val', '>i8')])


def parse_binary_sets(buf):
    """(ids, offsets, hashes) of a binary COPY of (id bigint, s bigint[])"""
    pos = 11 + 4
    pos += 4 + struct.unpack_from('>i', buf, pos)[0]
    ids, counts, chunks = [], [], []
    while True:
        (nf,) = struct.unpack_from('>h', buf, pos)
        pos += 2
        if nf == -1:
            break
        _, i, alen, ndim = struct.unpack_from('>iqii', buf, pos)
        pos += 4 + 8 + 4
        end = pos + alen
        n = struct.unpack_from('>i', buf, pos + 12)[0] if ndim == 1 else 0
        if n:
            data = np.frombuffer(buf, dtype=ELEM, count=n, offset=pos + 20)
            chunks.append(data['val'])
        ids.append(i)
        counts.append(n)
        pos = end
    hashes = (np.concatenate(chunks) if chunks else np.zeros(0, dtype='>i8')).astype(np.int64).view(np.uint64)
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    return np.array(ids, dtype=np.int64), offsets, hashes


def shingle_chunks(table, units, chunk_docs=100000):
    """(ids, offsets, hashes) of the shingle_set of every body, as uint64, a
    range of ids at a time (binary COPY: the sets never exist as text)"""
    lo, hi = [int(x) for x in psql('SELECT min(id), max(id) FROM %s' % table)[0]]
    for a in range(lo, hi + 1, chunk_docs):
        cmd = ("COPY (SELECT id, shingle_set(body, 3, '%s') FROM %s WHERE id >= %d AND id < %d) "
               "TO STDOUT (FORMAT binary)" % (units, table, a, a + chunk_docs))
        p = subprocess.run(['psql', '-X', '-q', '-c', cmd], stdout=subprocess.PIPE, check=True)
        yield parse_binary_sets(p.stdout)


def minhash_signatures(offsets, hashes, chunk_docs=50000):
    rng = np.random.default_rng(12345)
    a = rng.integers(1, 2 ** 63, PERMS, dtype=np.uint64) | np.uint64(1)
    b = rng.integers(0, 2 ** 63, PERMS, dtype=np.uint64)
    n = len(offsets) - 1
    sig = np.full((n, PERMS), np.iinfo(np.uint32).max, dtype=np.uint32)
    nonempty = offsets[1:] > offsets[:-1]
    for d0 in range(0, n, chunk_docs):
        d1 = min(n, d0 + chunk_docs)
        docs = np.nonzero(nonempty[d0:d1])[0] + d0
        if len(docs) == 0:
            continue
        x = hashes[offsets[d0]:offsets[d1]]
        starts = offsets[docs] - offsets[d0]
        with np.errstate(over='ignore'):
            for i in range(PERMS):
                h = ((a[i] * x + b[i]) >> np.uint64(32)).astype(np.uint32)
                sig[docs, i] = np.minimum.reduceat(h, starts)
    return sig


def lsh_pairs(ids, sig):
    """candidate pairs (id_a < id_b) of docs equal on all ROWS values of a band"""
    out = []
    with np.errstate(over='ignore'):
        for band in range(BANDS):
            key = np.zeros(len(ids), dtype=np.uint64)
            for r in range(ROWS):
                key = key * np.uint64(0x9E3779B97F4A7C15) + sig[:, band * ROWS + r].astype(np.uint64)
            order = np.argsort(key, kind='stable')
            k = key[order]
            same = np.nonzero(k[1:] == k[:-1])[0]
            if len(same) == 0:
                continue
            # runs of equal keys: [start, end)
            brk = np.nonzero(np.diff(same) != 1)[0]
            starts = np.concatenate([[same[0]], same[brk + 1]])
            ends = np.concatenate([same[brk], [same[-1]]]) + 2
            two = ends - starts == 2
            out.append(np.stack([ids[order[starts[two]]], ids[order[starts[two] + 1]]], axis=1))
            for s, e in zip(starts[~two], ends[~two]):
                g = ids[order[s:e]]
                ii, jj = np.triu_indices(len(g), 1)
                out.append(np.stack([g[ii], g[jj]], axis=1))
    if not out:
        return np.zeros((0, 2), dtype=np.int64)
    p = np.concatenate(out)
    p = np.stack([p.min(axis=1), p.max(axis=1)], axis=1)
    return np.unique(p, axis=0)


def load_pairs(table, pairs):
    psql('DROP TABLE IF EXISTS %s; CREATE UNLOGGED TABLE %s (id_a bigint, id_b bigint)' % (table, table), False)
    with tempfile.NamedTemporaryFile('w', suffix='.tsv', delete=False) as f:
        np.savetxt(f, pairs, fmt='%d', delimiter='\t')
        name = f.name
    os.chmod(name, 0o644)
    subprocess.run(['psql', '-X', '-q', '-c', "\\copy %s FROM '%s'" % (table, name)], check=True)
    os.unlink(name)


def minhash(table, units, verify_sql_docs):
    """runs the MinHash LSH pipeline; returns times, candidate pairs, verified count"""
    t0 = time.time()
    shingles_s = signatures_s = 0.0
    all_ids, sigs = [], []
    it = shingle_chunks(table, units)
    while True:
        t = time.time()
        chunk = next(it, None)
        shingles_s += time.time() - t
        if chunk is None:
            break
        t = time.time()
        all_ids.append(chunk[0])
        sigs.append(minhash_signatures(chunk[1], chunk[2]))
        signatures_s += time.time() - t
    ids, sig = np.concatenate(all_ids), np.concatenate(sigs)
    t2 = time.time()
    pairs = lsh_pairs(ids, sig)
    t3 = time.time()
    load_pairs('mh_cand', pairs)
    tv, rows = timed("SELECT count(*) FROM shingle_verify_pairs('SELECT id_a, id_b, 0 FROM mh_cand', %s, 0.8, 3, '%s')"
                     % (sql_literal(verify_sql_docs), units))
    return {'shingles_s': shingles_s, 'signatures_s': signatures_s, 'lsh_s': t3 - t2, 'verify_s': tv,
            'total_s': t3 - t0 + tv, 'candidates': len(pairs), 'verified': int(rows[0][0])}, pairs


def sql_literal(s):
    return "'" + s.replace("'", "''") + "'"


# ---- the public corpus ----

def eval_f1(pairs_path, setdir, lang):
    with tempfile.NamedTemporaryFile('r', suffix='.json', delete=False) as f:
        jpath = f.name
    subprocess.run([sys.executable, os.path.join(DATA, 'eval.py'), pairs_path, setdir, '--thresholds', '0.8',
                    '--lang', lang, '--json', jpath], stdout=subprocess.DEVNULL, check=True)
    with open(jpath) as f:
        j = json.load(f)
    os.unlink(jpath)
    return j


def f1_of(j):
    """precision, recall, F1 at 0.8, overall, from eval.py's json"""
    def find(d):
        if isinstance(d, dict):
            if 'f1' in d and 'precision' in d:
                return d
            for key in ('0.8', 'all'):
                if key in d:
                    r = find(d[key])
                    if r:
                        return r
            for v in d.values():
                r = find(v)
                if r:
                    return r
        return None
    r = find(j)
    return r['precision'], r['recall'], r['f1']


def load_set(s, lang):
    t = 'q_%s_%s' % (s, lang)
    psql("DROP TABLE IF EXISTS %s; CREATE TABLE %s (sid text, body text)" % (t, t), False)
    subprocess.run(['psql', '-X', '-q', '-c', "\\copy %s FROM PROGRAM 'xzcat %s'"
                    % (t, os.path.join(DATA, s, 'docs.%s.tsv.xz' % lang))], check=True)
    psql("ALTER TABLE %s ADD id bigserial PRIMARY KEY; ALTER TABLE %s ADD fp simhash; "
         "UPDATE %s SET fp = simhash(body)" % (t, t, t), False)
    if has_128():
        psql("ALTER TABLE %s ADD fp128 simhash128, ADD fpset simhash128, ADD fpset1 simhash128; "
             "UPDATE %s SET fp128 = simhash128(body), fpset = shingle_simhash128(body, 3, '%s'), "
             "fpset1 = shingle_simhash128(body, 3, '%s', 1)" % (t, t, UNITS[lang], UNITS[lang]), False)
    psql("VACUUM ANALYZE %s" % t, False)
    return t


def truth_pairs(s, lang, min_j):
    """the set of (sid_a, sid_b) with J >= min_j"""
    import lzma
    out = set()
    with lzma.open(os.path.join(DATA, s, 'truth.tsv.xz'), 'rt') as f:
        for line in f:
            if line.startswith('#'):
                continue
            v = line.rstrip('\n').split('\t')
            inter, sa, sb = int(v[3]), int(v[4]), int(v[5])
            if inter >= min_j * (sa + sb - inter) and v[0].startswith(lang):
                out.add((min(v[0], v[1]), max(v[0], v[1])))
    return out


def score(t, s, lang, sid_pairs, verified_sid_pairs, n):
    t8 = truth_pairs(s, lang, 0.8)
    t5 = truth_pairs(s, lang, 0.5)
    cand = set((min(a, b), max(a, b)) for a, b in sid_pairs)
    with tempfile.NamedTemporaryFile('w', suffix='.tsv', delete=False) as f:
        for a, b in verified_sid_pairs:
            f.write('%s\t%s\n' % (a, b))
        path = f.name
    p, r, f1 = f1_of(eval_f1(path, os.path.join(DATA, s), lang))
    os.unlink(path)
    return {'docs': n, 'candidates': len(cand), 'cand_per_doc': len(cand) / n,
            'recall_cand': len(cand & t8) / max(len(t8), 1),
            'unrelated_rate': len(cand - t5) / (n * (n - 1) / 2.0),
            'verified_precision': p, 'verified_recall': r, 'verified_f1': f1}


def quality(a):
    rows = []
    for s, lang in SETS:
        t = load_set(s, lang)
        units = UNITS[lang]
        n = int(psql('SELECT count(*) FROM %s' % t)[0][0])
        sid = dict((int(i), x) for i, x in psql('SELECT id, sid FROM %s' % t))
        methods = [('simhash64', 'fp', K64, '1')]
        if has_128():
            for c in a.configs128.split(','):
                k, recall = c.split(':')
                methods.append(('simhash128', 'fp128', int(k), recall))
            for c in a.configs_set.split(','):
                k, recall = c.split(':')
                methods.append(('shingle_simhash128', 'fpset', int(k), recall))
            for c in a.configs256.split(',') if a.configs256 else []:
                k, recall = c.split(':')
                methods.append(('shingle 256 bits', 'fpset, fpset1', int(k), recall))
        for name, col, k, recall in methods:
            settings = 'SET simhash.pairs_recall = %s;' % recall
            tc, cand = timed("SELECT id_a, id_b FROM simhash_pairs('SELECT id, %s FROM %s', %d)" % (col, t, k), settings)
            tv, ver = timed("SELECT id_a, id_b FROM simhash_pairs('SELECT id, %s, body FROM %s', %d, 0.8, 3, '%s')"
                            % (col, t, k, units), settings)
            r = score(t, s, lang, [(sid[int(x)], sid[int(y)]) for x, y in cand],
                      [(sid[int(x)], sid[int(y)]) for x, y in ver], n)
            r.update({'set': s, 'lang': lang, 'method': '%s k=%d%s' % (name, k, '' if recall == '1' else ' recall ' + recall),
                      'candidates_s': tc, 'verified_s': tv})
            rows.append(r)
        m, pairs = minhash(t, units, 'SELECT id, body FROM %s' % t)
        vt, ver = timed("SELECT id_a, id_b FROM shingle_verify_pairs('SELECT id_a, id_b, 0 FROM mh_cand', "
                        "'SELECT id, body FROM %s', 0.8, 3, '%s')" % (t, units))
        r = score(t, s, lang, [(sid[int(x)], sid[int(y)]) for x, y in pairs],
                  [(sid[int(x)], sid[int(y)]) for x, y in ver], n)
        r.update({'set': s, 'lang': lang, 'method': 'minhash 20x5', 'candidates_s': m['shingles_s'] + m['signatures_s'] + m['lsh_s'],
                  'verified_s': m['total_s']})
        rows.append(r)
        for r in rows[-len(methods) - 1:]:
            print('%-8s %-3s %-18s cand/doc %.3f  recall(J>=.8) %.4f  p %.2e  verified P/R/F1 %.3f/%.3f/%.4f' % (
                s, lang, r['method'], r['cand_per_doc'], r['recall_cand'], r['unrelated_rate'],
                r['verified_precision'], r['verified_recall'], r['verified_f1']), flush=True)
        rows.extend(alone(t, s, lang, sid))
    return rows


def alone(t, s, lang, sid):
    """the best F1 of each fingerprint without verification: every pair
    within K bits predicted a near-duplicate (J >= 0.8), for each K up to
    its largest, from one exact simhash_pairs call's distances"""
    t8 = truth_pairs(s, lang, 0.8)
    out = []
    fps = [('simhash', 'fp', 24)]
    if has_128():
        fps += [('shingle_simhash128', 'fpset', 40), ('shingle 256 bits', 'fpset, fpset1', 72)]
    for name, col, kmax in fps:
        pairs = psql("SET simhash.pairs_recall = 1; SELECT id_a, id_b, distance FROM simhash_pairs("
                     "'SELECT id, %s FROM %s', %d)" % (col, t, kmax))
        by_k = [[0, 0] for _ in range(kmax + 1)]    # [predicted, true] at distance d
        for x, y, d in pairs:
            a, b = sid[int(x)], sid[int(y)]
            by_k[int(d)][0] += 1
            by_k[int(d)][1] += (min(a, b), max(a, b)) in t8
        best = (0.0, 0, 0.0, 0.0)
        pred = tp = 0
        for k in range(kmax + 1):
            pred += by_k[k][0]
            tp += by_k[k][1]
            if pred and tp:
                p, r = tp / pred, tp / len(t8)
                best = max(best, (2 * p * r / (p + r), k, p, r))
        f1, k, p, r = best
        print('%-8s %-3s %-18s alone: best F1 %.4f at K = %d (P %.3f R %.3f)' % (s, lang, name, f1, k, p, r), flush=True)
        out.append({'set': s, 'lang': lang, 'method': name + ' alone', 'best_f1': f1, 'best_k': k,
                    'precision': p, 'recall': r})
    return out


# ---- p(k): unrelated pairs within k bits, real and generated ----

def pk(a):
    """p(k) of the natural sets (pairs not in the truth, J < 0.5) and of a
    generated corpus four times their size per language (no planted copies;
    pairs with J < 0.5 too), with the real corpus's count of such pairs: a
    ratio over a handful of real pairs is mostly noise"""
    res, count = {}, {}
    ks64, ks128 = [12, 14, 16], [24, 26, 28, 30]
    # the fingerprints and their radii: simhash(body), simhash128(body), the
    # shingle set's 128 bits (shingle_simhash128, the advice's), and 256 bits,
    # parts 0 and 1 of it side by side (the column list 'fpset, fpset1')
    fps = [('fp', ks64)] + ([('fp128', ks128), ('fpset', ks128), ('fpset, fpset1', [49, 53, 57])] if has_128() else [])
    for lang in ('en', 'zh'):
        t = load_set('natural', lang)
        t5 = truth_pairs('natural', lang, 0.5)
        sid = dict((int(i), x) for i, x in psql('SELECT id, sid FROM %s' % t))
        n = len(sid)
        for col, ks in fps:
            rows = psql("SELECT id_a, id_b, distance FROM simhash_pairs('SELECT id, %s FROM %s', %d)" % (col, t, max(ks)))
            un = [int(d) for x, y, d in rows if (min(sid[int(x)], sid[int(y)]), max(sid[int(x)], sid[int(y)])) not in t5]
            for k in ks:
                count[(lang, col, k)] = sum(1 for d in un if d <= k)
                res[('real', lang, col, k)] = count[(lang, col, k)] / (n * (n - 1) / 2.0)
    # the generated corpus: four times as many documents per language as the natural set
    gen = os.path.join(tempfile.mkdtemp(), 'gen.tsv')
    with open(gen, 'w') as f:
        subprocess.run([sys.executable, os.path.join(HERE, 'gen_corpus.py'), '27200', '--copies', '0', '--seed', '7'],
                       stdout=f, check=True)
    os.chmod(os.path.dirname(gen), 0o755)
    os.chmod(gen, 0o644)
    psql("DROP TABLE IF EXISTS pk_gen; CREATE TABLE pk_gen (id bigint, body text)", False)
    subprocess.run(['psql', '-X', '-q', '-c', "\\copy pk_gen FROM '%s'" % gen], check=True)
    os.unlink(gen)
    psql("ALTER TABLE pk_gen ADD lang text, ADD fp simhash; UPDATE pk_gen SET fp = simhash(body), "
         "lang = CASE WHEN body ~ '[\\u4e00-\\u9fff]' THEN 'zh' ELSE 'en' END", False)
    if has_128():
        units = "CASE lang WHEN 'zh' THEN 'characters' ELSE 'words' END"
        psql("ALTER TABLE pk_gen ADD fp128 simhash128, ADD fpset simhash128, ADD fpset1 simhash128; "
             "UPDATE pk_gen SET fp128 = simhash128(body), fpset = shingle_simhash128(body, 3, %s), "
             "fpset1 = shingle_simhash128(body, 3, %s, 1)" % (units, units), False)
    for lang in ('en', 'zh'):
        n = int(psql("SELECT count(*) FROM pk_gen WHERE lang = '%s'" % lang)[0][0])
        for col, ks in fps:
            # unrelated as in the truth: Jaccard < 0.5 (walks of one topic may come closer)
            rows = psql("SELECT p.distance FROM simhash_pairs('SELECT id, %s FROM pk_gen WHERE lang = ''%s''', %d) p "
                        "JOIN pk_gen a ON a.id = p.id_a JOIN pk_gen b ON b.id = p.id_b "
                        "WHERE shingle_similarity(a.body, b.body, 3, '%s') < 0.5" % (col, lang, max(ks), UNITS[lang]))
            for k in ks:
                res[('generated', lang, col, k)] = sum(1 for (d,) in rows if int(d) <= k) / (n * (n - 1) / 2.0)
    print('| fingerprint | k | en real (pairs) | en generated | ratio | zh real (pairs) | zh generated | ratio |')
    print('|---|---:|---:|---:|---:|---:|---:|---:|')
    names = {'fp': 'simhash', 'fp128': 'simhash128', 'fpset': 'shingle_simhash128', 'fpset, fpset1': '256 bits'}
    for col, ks in fps:
        for k in ks:
            cells = []
            for lang in ('en', 'zh'):
                r, g = res[('real', lang, col, k)], res[('generated', lang, col, k)]
                cells += ['%.2e (%d)' % (r, count[(lang, col, k)]), '%.2e' % g, '%.2f' % (g / r if r else float('nan'))]
            print('| %s | %d | %s |' % (names[col], k, ' | '.join(cells)), flush=True)
    return [dict({'source': s, 'lang': l, 'fingerprint': c, 'k': k, 'p': v},
                 **({'pairs': count[(l, c, k)]} if s == 'real' else {})) for (s, l, c, k), v in res.items()]


# ---- N generated documents end to end ----

def scale(a):
    n = a.n
    if a.docs:
        docs, truth = a.docs, a.truth
    else:
        work = tempfile.mkdtemp(prefix='simhash-scale-')
        os.chmod(work, 0o755)
        docs, truth = os.path.join(work, 'docs.tsv'), os.path.join(work, 'truth.tsv')
        t0 = time.time()
        with open(docs, 'w') as f:
            subprocess.run([sys.executable, os.path.join(HERE, 'gen_corpus.py'), str(n), '--seed', str(a.seed),
                            '--truth', truth], stdout=f, check=True)
        os.chmod(docs, 0o644)
        os.chmod(truth, 0o644)
        print('generated %d documents in %.0f s' % (n, time.time() - t0), flush=True)
    psql("DROP TABLE IF EXISTS gen, gen_truth; CREATE TABLE gen (id bigint PRIMARY KEY, body text); "
         "CREATE TABLE gen_truth (id_a bigint, id_b bigint, rate text)", False)
    subprocess.run(['psql', '-X', '-q', '-c', "\\copy gen FROM '%s'" % docs], check=True)
    subprocess.run(['psql', '-X', '-q', '-c', "\\copy gen_truth FROM '%s'" % truth], check=True)
    if not a.docs:
        os.unlink(docs)
        os.unlink(truth)
    psql("VACUUM ANALYZE gen", False)
    # the planted pairs with J >= 0.8: what a method should find
    psql("DROP TABLE IF EXISTS gen_pos; CREATE TABLE gen_pos AS SELECT t.id_a, t.id_b, t.rate FROM gen_truth t "
         "JOIN gen a ON a.id = t.id_a JOIN gen b ON b.id = t.id_b "
         "WHERE shingle_similarity(a.body, b.body, 3, 'words') >= 0.8", False)
    npos = int(psql('SELECT count(*) FROM gen_pos')[0][0])
    nplanted = int(psql('SELECT count(*) FROM gen_truth')[0][0])
    print('%d planted pairs, %d with J >= 0.8' % (nplanted, npos), flush=True)
    results = {'n': n, 'planted': nplanted, 'positives': npos, 'methods': []}

    methods = [('simhash64', 'simhash(body) AS fp', K64, a.recall64)]
    if has_128():
        methods.append(('simhash128', 'simhash128(body) AS fp', K128, a.recall))
        # the shingle set's fingerprint, with the verification's units
        methods.append(('shingle_simhash128', "shingle_simhash128(body, 3, 'words') AS fp", KSET, a.recall))
        # 256 bits: parts 0 and 1 of it, distances added
        methods.append(('shingle_simhash256', "shingle_simhash128(body, 3, 'words', 0) AS fp, "
                        "shingle_simhash128(body, 3, 'words', 1) AS fp1", K256, a.recall256))
    if a.methods:
        methods = [m for m in methods if m[0] in a.methods.split(',')]
    for name, fn, k, recall in methods:
        settings = 'SET simhash.pairs_recall = %s;' % recall
        r = {'method': '%s k=%d recall %s' % (name, k, recall)}
        fps = 'f.fp, f.fp1' if 'fp1' in fn else 'f.fp'
        r['fingerprints_s'] = median_time(a.runs, lambda: timed(
            "DROP TABLE IF EXISTS gen_fp; CREATE TABLE gen_fp AS SELECT id, %s FROM gen" % fn)[0])
        psql('VACUUM ANALYZE gen_fp', False)
        r['candidates_s'] = median_time(a.runs, lambda: timed(
            "DROP TABLE IF EXISTS gen_cand; CREATE UNLOGGED TABLE gen_cand AS "
            "SELECT * FROM simhash_pairs('SELECT id, %s FROM gen_fp f', %d)" % (fps, k), settings)[0])
        r['candidates'] = int(psql('SELECT count(*) FROM gen_cand')[0][0])
        r['found_positives'] = int(psql('SELECT count(*) FROM gen_pos p JOIN gen_cand c USING (id_a, id_b)')[0][0])
        r['unrelated_candidates'] = int(psql('SELECT count(*) FROM gen_cand c WHERE ' + UNPLANTED)[0][0])
        r['below_half_share'] = below_half_share('gen_cand', r['candidates'])
        if r['candidates'] / n <= a.max_verify_per_doc:
            q = 'SELECT f.id, %s, g.body FROM gen_fp f JOIN gen g USING (id)' % fps
            r['verified_s'], rows = timed("SELECT count(*) FROM simhash_pairs(%s, %d, 0.8, 3, 'words')"
                                          % (sql_literal(q), k), settings)
            r['verified'] = int(rows[0][0])
            r['clusters_s'], rows = timed("SELECT count(DISTINCT cluster_id) FROM simhash_clusters(%s, %d, 0.8, 3, 'words')"
                                          % (sql_literal(q), k), settings)
            r['clusters'] = int(rows[0][0])
            r['end_to_end_s'] = r['fingerprints_s'] + r['clusters_s']
        report(r, n, npos)
        results['methods'].append(r)
    if not a.minhash:
        return results
    m, pairs = minhash('gen', 'words', 'SELECT id, body FROM gen')
    r = {'method': 'minhash 20x5'}
    r.update(m)
    r['candidates_s'] = m['shingles_s'] + m['signatures_s'] + m['lsh_s']
    r['found_positives'] = int(psql('SELECT count(*) FROM gen_pos p JOIN mh_cand c USING (id_a, id_b)')[0][0])
    r['unrelated_candidates'] = int(psql('SELECT count(*) FROM mh_cand c WHERE ' + UNPLANTED)[0][0])
    r['below_half_share'] = below_half_share('mh_cand', r['candidates'])
    r['end_to_end_s'] = m['total_s']
    report(r, n, npos)
    results['methods'].append(r)
    return results


# a candidate pair c that is not a planted pair
UNPLANTED = 'NOT EXISTS (SELECT 1 FROM gen_truth t WHERE t.id_a = c.id_a AND t.id_b = c.id_b)'


def below_half_share(table, candidates, sample=20000):
    """the share of the unplanted candidates whose Jaccard similarity is
    below 0.5 (unrelated, as p(k) counts them; the rest are documents of one
    family, alike by chance or by a shared block), from a random sample"""
    pct = min(100.0, 100.0 * 2 * sample / max(candidates, 1))
    v = psql("SELECT avg((shingle_similarity(a.body, b.body, 3, 'words') < 0.5)::int) FROM "
             "(SELECT c.id_a, c.id_b FROM %s c TABLESAMPLE BERNOULLI (%f) WHERE %s LIMIT %d) s "
             "JOIN gen a ON a.id = s.id_a JOIN gen b ON b.id = s.id_b" % (table, pct, UNPLANTED, sample))[0][0]
    return float(v) if v else 0.0


def median_time(runs, fn):
    return statistics.median(fn() for _ in range(runs))


def report(r, n, npos):
    print('%-28s fp %s  cand %.1f s  %.2f cand/doc  %.3f unplanted/doc  %.3f of them J < 0.5/doc  recall(J>=.8) %.4f  '
          'verified %s  clusters %s  end-to-end %s'
          % (r['method'], fmt(r.get('fingerprints_s')), r['candidates_s'], r['candidates'] / n,
             r['unrelated_candidates'] / n, r['unrelated_candidates'] / n * r['below_half_share'],
             r['found_positives'] / max(npos, 1), fmt(r.get('verified_s')),
             fmt(r.get('clusters_s')), fmt(r.get('end_to_end_s'))), flush=True)


def fmt(x):
    return '-' if x is None else '%.1f s' % x


def plot(a):
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    with open(os.path.join(OUT, 'scale_scale_%d.json' % a.n)) as f:
        sc = json.load(f)
    with open(os.path.join(OUT, 'scale_quality.json')) as f:
        qu = [r for r in json.load(f) if 'verified_f1' in r]
    fig, ax = plt.subplots(1, 3, figsize=(16, 4.8))
    names = [m['method'] for m in sc['methods']]
    cand = [m.get('fingerprints_s', 0) + m['candidates_s'] for m in sc['methods']]
    rest = [max(m.get('end_to_end_s', 0) - c, 0) for m, c in zip(sc['methods'], cand)]
    ax[0].barh(names, cand, label='fingerprints and candidates')
    ax[0].barh(names, rest, left=cand, label='verification and clusters (not run for simhash64)')
    ax[0].set_xlabel('seconds, %d generated documents' % sc['n'])
    ax[0].legend(fontsize=8, loc='lower center', bbox_to_anchor=(0.5, 1.0))
    y = np.arange(len(names))
    unplanted = [m['unrelated_candidates'] / sc['n'] for m in sc['methods']]
    ax[1].barh(y + 0.2, unplanted, height=0.4, label='not planted pairs')
    ax[1].barh(y - 0.2, [u * m.get('below_half_share', 1.0) for u, m in zip(unplanted, sc['methods'])],
               height=0.4, label='of them unrelated (Jaccard < 0.5)')
    ax[1].set_yticks(y)
    ax[1].set_yticklabels(names)
    ax[1].set_xscale('log')
    ax[1].legend(fontsize=8, loc='lower center', bbox_to_anchor=(0.5, 1.0))
    ax[1].set_xlabel('candidates per document (%d documents)' % sc['n'])
    sets = ['%s %s' % (r['set'], r['lang']) for r in qu]
    labels = sorted(set(r['method'] for r in qu))
    for i, m in enumerate(labels):
        xs = [j for j, r in enumerate([r for r in qu if r['method'] == m])]
        ys = [r['verified_f1'] for r in qu if r['method'] == m]
        ax[2].plot(xs, ys, marker='o', label=m)
    ax[2].set_xticks(range(len(sorted(set(sets), key=sets.index))))
    ax[2].set_xticklabels(sorted(set(sets), key=sets.index), fontsize=8, rotation=30)
    ax[2].set_ylabel('verified F1 at J >= 0.8 (public corpus)')
    ax[2].legend(fontsize=7, loc='center left', bbox_to_anchor=(1.02, 0.5))
    fig.tight_layout()
    path = os.path.join(HERE, 'plots', 'scale.png')
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fig.savefig(path, dpi=90)
    print('wrote', path)
    return {}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('what', choices=['quality', 'pk', 'scale', 'plot'])
    ap.add_argument('n', type=int, nargs='?', default=1000000)
    ap.add_argument('--recall', default='0.9', help='simhash.pairs_recall for simhash128')
    ap.add_argument('--recall64', default='0.9', help='simhash.pairs_recall for simhash (1: exact)')
    ap.add_argument('--configs128', default='28:0.9,28:1,30:0.9',
                    help='quality: the simhash128 runs, k:recall, comma-separated')
    ap.add_argument('--configs-set', default='26:0.9,28:0.9',
                    help='quality: the shingle_simhash128 runs, k:recall, comma-separated')
    ap.add_argument('--recall256', default='0.99', help='simhash.pairs_recall for the 256-bit fingerprint')
    ap.add_argument('--configs256', default='49:0.95,49:0.99,49:1',
                    help='quality: the 256-bit runs (shingle_simhash128 parts 0 and 1, distances added), k:recall')
    ap.add_argument('--runs', type=int, default=1, help='runs of the fingerprint and candidate steps (median)')
    ap.add_argument('--seed', type=int, default=1)
    ap.add_argument('--docs', help='scale: a corpus made by gen_corpus.py (N documents) instead of a new one')
    ap.add_argument('--truth', help='scale: its --truth file')
    ap.add_argument('--methods', help='scale: of simhash64,simhash128,shingle_simhash128,shingle_simhash256, '
                    'the ones to run (default all)')
    ap.add_argument('--no-minhash', dest='minhash', action='store_false',
                    help='scale: leave out the MinHash LSH baseline (its Python plumbing takes most of the time)')
    ap.add_argument('--max-verify-per-doc', type=float, default=5.0,
                    help='skip verification when candidates per document exceed this')
    a = ap.parse_args()
    os.makedirs(OUT, exist_ok=True)
    res = {'quality': quality, 'pk': pk, 'scale': scale, 'plot': plot}[a.what](a)
    if a.what == 'plot':
        return
    path = os.path.join(OUT, 'scale_%s%s.json' % (a.what, '_%d' % a.n if a.what == 'scale' else ''))
    with open(path, 'w') as f:
        json.dump(res, f, indent=1)
    print('wrote', path)


if __name__ == '__main__':
    main()
