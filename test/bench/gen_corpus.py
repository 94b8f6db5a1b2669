#!/usr/bin/python3
"""A generated corpus of realistic documents with planted near-copies, for the
scale benchmark (test/bench/scale.sh).  Needs python3-numpy and the public
evaluation corpus (--data, else $SIMHASH_DATA, else <repo>/../shared/data).

  gen_corpus.py N [--seed S] [--copies 0.1] [--data DIR] [--truth FILE] > docs.tsv

Writes N documents to stdout as `id <TAB> body` (PostgreSQL COPY text format,
ids 1..N).  The text is drawn from the corpus's natural documents: English and
Chinese in the corpus's proportion, each document's length (in tokens) that of
a random real document of its language.  A document walks the text of a few
consecutive real documents (--topic: a file's chunks, a package's pages):
with probability --stay it goes on with the real text, else it goes on after
another occurrence there of the token it is at (English tokens are
whitespace-separated words with their punctuation, Chinese ones characters or
runs of ASCII letters and digits; line breaks kept).  So its phrases,
vocabulary and topic are real, and its text is new.

Real collections also hold families of documents that share a block of
text and differ elsewhere: a licence stanza, a manual page's footer, a news
agency's boilerplate.  Their members are unrelated by the truth's measure
(Jaccard 0.3-0.5) and yet are what lands within k bits of each other in the
public corpus, so the generator plants them too: a share --boiler of the
documents (--boiler-zh for Chinese) carry one of --blocks blocks (walks as
long as the language's short documents, --block-length, the same in every
run whatever --seed, chosen with weight falling as 1/rank) before or after
their own text, cut to --own (a range) of the block's length.  The groups grow
with the corpus, so the share of unrelated pairs within k bits, p(k), does
not depend on its size.  `scale.py pk` measures p(k) against the real
corpus's; doc/scale.md has the table.

A share --copies of the documents are planted near-copies: an original gets
1..3 copies, each at an edit rate from 0.01, 0.03, 0.05, 0.10, 0.20, made of
max(1, round(rate x tokens)) deletions, insertions or substitutions at random
positions, the new tokens drawn from the language's token frequencies (the
corpus's edited set is made the same way).  --truth FILE lists every planted
pair as `id_a <TAB> id_b <TAB> rate` (rate: the copy's, or `copy-copy`).
Generated corpora are not to be committed.
"""
import argparse
import os
import re
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
RATES = [0.01, 0.03, 0.05, 0.10, 0.20]
BATCH = 20000


def default_data():
    return os.environ.get('SIMHASH_DATA') or os.path.normpath(os.path.join(HERE, '..', '..', '..', 'shared', 'data'))


class Language:
    """The successor table and length distribution of one language."""

    def __init__(self, texts, zh):
        self.zh = zh
        vocab = {}
        seqs = []
        for t in texts:
            if zh:
                toks = re.findall(r'[A-Za-z0-9_]+|[^\s]|\n', t)
            else:
                toks = re.findall(r'\S+|\n', t)
            seqs.append(np.array([vocab.setdefault(w, len(vocab)) for w in toks], dtype=np.int64))
        self.words = np.array(sorted(vocab, key=vocab.get), dtype=object)
        self.lengths = np.array([len(s) for s in seqs if len(s) > 0], dtype=np.int64)
        allt = np.concatenate(seqs)
        # the position after each token, -1 at a document's end
        ends = np.cumsum([len(x) for x in seqs]) - 1
        after = np.arange(1, len(allt) + 1, dtype=np.int64)
        after[ends[ends >= 0]] = -1
        self.tokens = allt
        self.after = after
        self.doc_start = np.concatenate([[0], ends + 1])   # position of each real document
        # every position, by (token, position)
        self.occ = np.argsort(allt, kind='stable')
        self.key = allt[self.occ] * (len(allt) + 1) + self.occ

    def walk(self, rng, n, stay, topic):
        """n token sequences (a list of arrays), longest first: each walks the
        text of topic consecutive real documents, going on with the text with
        probability stay, else after another occurrence of its token there"""
        lens = np.sort(self.lengths[rng.integers(0, len(self.lengths), n)])[::-1]
        out = np.empty((n, int(lens[0])), dtype=np.int64)
        ndocs = len(self.doc_start) - 1
        first = rng.integers(0, max(ndocs - topic, 1), n)
        lo = self.doc_start[first]
        hi = self.doc_start[np.minimum(first + topic, ndocs)]
        pos = lo + (rng.random(n) * (hi - lo)).astype(np.int64)
        span = len(self.tokens) + 1
        active = n
        for step in range(int(lens[0])):
            while lens[active - 1] <= step:     # only the documents still this long
                active -= 1
            pos, lo, hi = pos[:active], lo[:active], hi[:active]
            tok = self.tokens[pos]
            out[:active, step] = tok
            a = np.searchsorted(self.key, tok * span + lo)
            b = np.searchsorted(self.key, tok * span + hi)
            other = self.occ[np.minimum(a + (rng.random(active) * (b - a)).astype(np.int64), len(self.occ) - 1)]
            nxt = np.where(rng.random(active) < stay, self.after[pos], self.after[other])
            restart = lo + (rng.random(active) * (hi - lo)).astype(np.int64)
            pos = np.where((nxt < 0) | (nxt >= hi), restart, nxt)
        return [out[i, :lens[i]] for i in range(n)]

    def templates(self, rng, n, stay, topic, quantile):
        """n boilerplate blocks (walks like the documents, as long as the
        language's documents below the given length percentile: a footer, a
        licence stanza) and the share of the documents that carry each,
        falling as 1/rank"""
        short = self.lengths[self.lengths <= np.percentile(self.lengths, quantile)]
        blocks = [b[:short[rng.integers(0, len(short))]] for b in self.walk(rng, n, stay, topic)]
        w = 1.0 / np.arange(1, n + 1)
        return blocks, w / w.sum()

    def boiler(self, rng, seq, blocks, weights, own):
        """seq cut to a share of a boilerplate block's length (drawn from own,
        a (low, high) range) with the block before or after it"""
        block = blocks[rng.choice(len(blocks), p=weights)]
        seq = seq[:max(1, int(round(rng.uniform(*own) * len(block))))]
        return np.concatenate([block, seq] if rng.random() < 0.5 else [seq, block])

    def edit(self, rng, seq, rate):
        toks = list(seq)
        for _ in range(max(1, round(rate * len(toks)))):
            op = rng.integers(0, 3)
            pos = int(rng.integers(0, len(toks) + (1 if op == 1 else 0))) if toks else 0
            new = int(self.tokens[rng.integers(0, len(self.tokens))])
            if op == 0 and len(toks) > 1:
                del toks[pos]
            elif op == 1 or not toks:
                toks.insert(pos, new)
            else:
                toks[pos] = new
        return np.array(toks, dtype=np.int64)

    def text(self, seq):
        w = self.words[seq]
        if self.zh:
            return ''.join(w)
        return ' '.join(w).replace(' \n ', '\n').replace('\n ', '\n').replace(' \n', '\n')


def load(data):
    sys.path.insert(0, data)
    from shingle import read_tsv  # noqa: E402
    en = [t for _, t in read_tsv(os.path.join(data, 'natural', 'docs.en.tsv'))]
    zh = [t for _, t in read_tsv(os.path.join(data, 'natural', 'docs.zh.tsv'))]
    return Language(en, False), Language(zh, True), len(en) / (len(en) + len(zh))


def escape(text):
    return text.replace('\\', '\\\\').replace('\t', '\\t').replace('\r', '\\r').replace('\n', '\\n')


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('n', type=int)
    ap.add_argument('--seed', type=int, default=1)
    ap.add_argument('--copies', type=float, default=0.1, help='share of the documents that are planted copies')
    ap.add_argument('--stay', type=float, default=0.9,
                    help='probability that a walk goes on with the real text rather than jump')
    ap.add_argument('--topic', type=int, default=50,
                    help='consecutive real documents (a file, a package) that one document walks')
    ap.add_argument('--topic-zh', type=int, default=2, help='--topic for Chinese')
    ap.add_argument('--boiler', type=float, default=0.085,
                    help='share of the English documents that carry a boilerplate block')
    ap.add_argument('--boiler-zh', type=float, default=0.07, help='--boiler for Chinese')
    ap.add_argument('--blocks', type=int, default=100, help='boilerplate blocks per language')
    ap.add_argument('--block-length', type=float, default=25,
                    help="a block is as long as a random document of the language below this length percentile")
    ap.add_argument('--block-length-zh', type=float, default=50, help='--block-length for Chinese')
    ap.add_argument('--own', type=float, nargs=2, default=[0.3, 1.0],
                    help="a boilerplate document's own text, as a share of its block's length: a range")
    ap.add_argument('--data', default=default_data())
    ap.add_argument('--truth')
    a = ap.parse_args()
    rng = np.random.default_rng(a.seed)
    en, zh, en_share = load(a.data)
    # the same blocks in every run, whatever --seed: corpora made in parts share them
    brng = np.random.default_rng(0)
    blocks = dict((lang.zh, lang.templates(brng, a.blocks, a.stay, a.topic_zh if lang.zh else a.topic,
                                                   a.block_length_zh if lang.zh else a.block_length)) for lang in (en, zh))
    out = sys.stdout
    buf = []
    truth = open(a.truth, 'w') if a.truth else None
    next_id = 1
    while next_id <= a.n:
        batch = min(BATCH, a.n - next_id + 1)
        # per family: an original and 1..3 copies; families hold the share a.copies of copies
        ncopies = rng.integers(1, 4, batch)
        is_family = rng.random(batch) < a.copies / (2.0 * (1.0 - a.copies) + 1e-9)
        docs = []
        for lang, share in ((en, en_share), (zh, 1.0 - en_share)):
            k = int(round(batch * share))
            docs.append((lang, lang.walk(rng, k, a.stay, a.topic_zh if lang.zh else a.topic)))
        rows = []
        for lang, seqs in docs:
            share = a.boiler_zh if lang.zh else a.boiler
            for s in seqs:
                if rng.random() < share:
                    s = lang.boiler(rng, s, *blocks[lang.zh], a.own)
                rows.append((lang, s))
        order = rng.permutation(len(rows))
        i = 0
        while i < len(order) and next_id <= a.n:
            lang, seq = rows[order[i]]
            orig = next_id
            buf.append('%d\t%s\n' % (orig, escape(lang.text(seq))))
            next_id += 1
            if is_family[i % batch] and len(seq) > 0:
                copies = []
                rates = rng.permutation(len(RATES))[:ncopies[i % batch]]
                for r in rates:
                    if next_id > a.n:
                        break
                    buf.append('%d\t%s\n' % (next_id, escape(lang.text(lang.edit(rng, seq, RATES[r])))))
                    if truth:
                        truth.write('%d\t%d\t%s\n' % (orig, next_id, RATES[r]))
                        for c in copies:
                            truth.write('%d\t%d\tcopy-copy\n' % (c, next_id))
                    copies.append(next_id)
                    next_id += 1
            i += 1
        out.write(''.join(buf))
        buf = []
    if truth:
        truth.close()


if __name__ == '__main__':
    main()
