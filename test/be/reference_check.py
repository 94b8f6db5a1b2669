#!/usr/bin/python3
"""
The lines harness.c prints, computed by test/reference.py (the independent
Python implementation) instead: shows that the harness, built outside the
server with stubs, computes the extension's features.  Needs python3-xxhash
and unicodedata 14.0.0 (Debian bookworm's /usr/bin/python3).

    reference_check.py TEXTS [EVERY]    (EVERY: only every EVERY-th text)
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import reference  # noqa: E402

CONFIGS = [("words", 1), ("words", 2), ("words", 3), ("words", 5), ("words", 16),
           ("chars", 1), ("chars", 3)]
M = (1 << 64) - 1


def main():
    every = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    with open(sys.argv[1], "rb") as f:
        records = f.read().split(b"\0")[:-1]
    for lineno, record in enumerate(records, 1):
        if (lineno - 1) % every == 0:
            text = record.decode()
            for kind, n in CONFIGS:
                hs = (reference.word_features(text, n) if kind == "words"
                      else reference.ngram_features(text, n))
                x = 0
                for h in hs:
                    x ^= h
                first = (list(hs[:4]) + [0, 0, 0, 0])[:4]
                print("%d %s%d count=%d xor=%016x sum=%016x first=%s"
                      % (lineno, kind, n, len(hs), x, sum(hs) & M,
                         ",".join("%016x" % h for h in first)))


main()
