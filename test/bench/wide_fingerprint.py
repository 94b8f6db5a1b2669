#!/usr/bin/python3
"""How wide must a SimHash of the shingle set be for a given table size?

A model experiment on the public corpus, outside PostgreSQL: each document's
3-shingle set (the corpus's own shingle.py, which defines its truth), each
distinct shingle one vote, hashed by xxh64 and widened to W bits by
splitmix64 of (hash + a salt per 64-bit word), as shingle_simhash128 widens
with its two salted halves.  For W = 64, 128, 256 and 512, every pair of
documents of each set is compared, and for every radius K:

  recall  the share of the pairs with Jaccard >= 0.8 (truth.tsv) within K bits
  p       the share of all pairs that are within K bits and have Jaccard < 0.5
          (not in truth.tsv, which lists every pair >= 0.5): unrelated
          candidates per document at N rows are p x N

Printed per width: the least K whose recall is >= 0.995 in every set, and p
there per set (with p x 10^7), and where the unrelated candidates' Jaccard
lies.  Needs python3-numpy and python3-xxhash.

  /usr/bin/python3 test/bench/wide_fingerprint.py [--data DIR]
"""
import argparse
import importlib.util
import lzma
import os
import sys

import numpy as np
import xxhash

WIDTHS = (64, 128, 256, 512)
SETS = (('natural', 'en'), ('natural', 'zh'), ('edited', 'en'), ('edited', 'zh'))
POP8 = np.array([bin(i).count('1') for i in range(256)], dtype=np.uint8)


def splitmix64(x):
    """splitmix64's finalizer of x + the golden gamma, on a numpy uint64 array"""
    with np.errstate(over='ignore'):
        x = x + np.uint64(0x9E3779B97F4A7C15)
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return x ^ (x >> np.uint64(31))


def fingerprints(sets, words):
    """one row of `words` uint64 per document: the SimHash of its shingle set"""
    out = np.zeros((len(sets), words), dtype=np.uint64)
    salts = splitmix64(np.arange(1000, 1000 + words, dtype=np.uint64))
    for d, s in enumerate(sets):
        if not s:
            continue
        hs = np.array([xxhash.xxh64_intdigest(x.encode('utf-8')) for x in s], dtype=np.uint64)
        for w in range(words):
            with np.errstate(over='ignore'):
                v = splitmix64(hs + salts[w])
            bits = np.unpackbits(v.view(np.uint8).reshape(-1, 8), axis=1, bitorder='little')
            votes = bits.sum(axis=0, dtype=np.int64) * 2 > len(hs)
            out[d, w] = np.packbits(votes, bitorder='little').view(np.uint64)[0]
    return out


def load(data, s, lang, shingle):
    ids, sets = [], []
    with lzma.open(os.path.join(data, s, 'docs.%s.tsv.xz' % lang), 'rt', encoding='utf-8') as f:
        for line in f:
            i, body = line.rstrip('\n').split('\t', 1)
            ids.append(i)
            sets.append(shingle.shingles(shingle.unescape(body), lang))
    truth = {}
    with lzma.open(os.path.join(data, s, 'truth.tsv.xz'), 'rt') as f:
        for line in f:
            if line.startswith('#'):
                continue
            a, b, j = line.split('\t')[:3]
            if a.startswith(lang):
                truth[(a, b)] = float(j)
    return ids, sets, truth


def main():
    ap = argparse.ArgumentParser()
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument('--data', default=os.environ.get('SIMHASH_DATA', os.path.join(here, '../../../shared/data')))
    a = ap.parse_args()
    spec = importlib.util.spec_from_file_location('shingle', os.path.join(a.data, 'shingle.py'))
    shingle = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(shingle)

    # (set, lang, width) -> (histogram of all pairs' distances, of the J >= 0.8 pairs', of the
    # J >= 0.5 pairs', the number of pairs, the unrelated pairs within width / 4, the shingle sets)
    results = {}
    for s, lang in SETS:
        ids, sets, truth = load(a.data, s, lang, shingle)
        pos = {x: i for i, x in enumerate(ids)}
        n = len(ids)
        tp = [(pos[x], pos[y], j) for (x, y), j in truth.items() if x in pos and y in pos]
        for width in WIDTHS:
            fp = fingerprints(sets, width // 64)
            hist = np.zeros(width + 1, dtype=np.int64)
            near = []   # pairs within width / 4 that are not in the truth
            for i0 in range(0, n, 256):
                i1 = min(n, i0 + 256)
                x = fp[i0:i1, None, :] ^ fp[None, :, :]
                d = POP8[x.view(np.uint8)].reshape(i1 - i0, n, -1).sum(axis=2, dtype=np.int32)
                for r in range(i1 - i0):
                    row = d[r, i0 + r + 1:]
                    hist += np.bincount(row, minlength=width + 1)
                    for c in np.nonzero(row <= width // 4)[0]:
                        near.append((i0 + r, i0 + r + 1 + int(c), int(row[c])))
            dist = lambda i, j: int(sum(POP8[(fp[i] ^ fp[j]).view(np.uint8)]))
            t8 = np.bincount([dist(i, j) for i, j, jac in tp if jac >= 0.8], minlength=width + 1)
            t5 = np.bincount([dist(i, j) for i, j, jac in tp], minlength=width + 1)
            tset = set((min(i, j), max(i, j)) for i, j, _ in tp)
            unrel = [(i, j, dd) for i, j, dd in near if (i, j) not in tset]
            results[(s, lang, width)] = (hist, t8, t5, n * (n - 1) // 2, unrel, sets)
            print('%s %s W=%d done (%d docs)' % (s, lang, width, n), file=sys.stderr, flush=True)

    print('| width W | least K with recall >= 0.995 in every set | recall per set at K | p per set at K | unrelated per document at 10M | Jaccard of the unrelated candidates |')
    print('|---:|---:|---|---|---|---|')
    for width in WIDTHS:
        k = 0
        while k < width:
            ok = all(np.cumsum(results[(s, l, width)][1])[k] >= 0.995 * results[(s, l, width)][1].sum() for s, l in SETS)
            if ok:
                break
            k += 1
        if k > width // 4:
            sys.exit('W=%d needs K = %d, beyond the width / 4 up to which unrelated pairs were kept' % (width, k))
        recalls, ps, per10m = [], [], []
        bins = np.zeros(5, dtype=np.int64)
        for s, l in SETS:
            hist, t8, t5, total, unrel, sets = results[(s, l, width)]
            recalls.append('%.4f' % (np.cumsum(t8)[k] / max(t8.sum(), 1)))
            p = (np.cumsum(hist)[k] - np.cumsum(t5)[k]) / total
            ps.append('%.1e' % p)
            per10m.append('%.1f' % (p * 1e7))
            for i, j, dd in unrel:
                if dd <= k:
                    bins[min(4, int(shingle.jaccard_sets(sets[i], sets[j]) * 10))] += 1
        share = ', '.join('%d%% in [0.%d, 0.%d)' % (round(100 * b / max(bins.sum(), 1)), q, q + 1)
                          for q, b in enumerate(bins) if b)
        print('| %d | %d | %s | %s | %s | %s |' % (width, k, ' / '.join(recalls), ' / '.join(ps), ' / '.join(per10m), share))
    print('\nSets in order: natural en, natural zh, edited en, edited zh.')


if __name__ == '__main__':
    main()
