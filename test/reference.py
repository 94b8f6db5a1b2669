#!/usr/bin/python3
"""test/reference.py: an INDEPENDENT reference implementation of the simhash
extension's text fingerprints, written from the specification only (not from
src/tokenize.c), and used by test/crosscheck.sh to cross-check the C code.

    simhash(text, shingle=1, weighting='tf')     word / CJK-bigram shingles
    simhash_ngram(text, n=3, weighting='tf')     character n-grams
    simhash128(text, shingle=1, weighting='tf')  the 128-bit forms of both
    simhash128_ngram(text, n=3, weighting='tf')

The first two return the fingerprint as 16 lower-case hex digits, like
simhash_out, the 128-bit ones as 32, like simhash128_out: the 64-bit value,
then the fingerprint of the features' second hashes (XXH3-64 with seed 128 of
each feature hash written as 8 little-endian bytes).
It needs Python 3.11 (unicodedata 14.0.0) and python3-xxhash.

Where the C code works incrementally (piecewise NFKC, a token state machine,
bit-sliced counters), this file does the plain thing: NFKC of the whole text,
a regular expression over the string of character classes, and a column count
over the binary digits of the feature hashes.
"""
import re
import struct
import sys
import unicodedata
from collections import Counter
from functools import lru_cache

import xxhash

assert unicodedata.unidata_version == "14.0.0", unicodedata.unidata_version

# CJK blocks (inclusive): Han, kana, hangul and their relatives
CJK_RANGES = [
    (0x1100, 0x11FF), (0x2E80, 0x2FDF), (0x3005, 0x3007), (0x3021, 0x3029),
    (0x3038, 0x303B), (0x3040, 0x30FF), (0x3130, 0x318F), (0x31F0, 0x31FF),
    (0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xA960, 0xA97F), (0xAC00, 0xD7FF),
    (0xF900, 0xFAFF), (0xFF66, 0xFF9F), (0x20000, 0x323AF),
]
MAX_WORD = 256          # a longer run of WORD characters is cut into pieces


def xxh3(data: bytes) -> int:
    """XXH3_64bits, seed 0."""
    return xxhash.xxh3_64_intdigest(data, seed=0)


@lru_cache(maxsize=None)
def char_class(c):
    """Step 4: 'W' (word), 'C' (CJK), 'S' (space) or 'O' (other)."""
    if unicodedata.category(c)[0] in "LMN":
        cp = ord(c)
        return "C" if any(lo <= cp <= hi for lo, hi in CJK_RANGES) else "W"
    return "S" if c.isspace() else "O"


@lru_cache(maxsize=None)
def unassigned(c):
    return unicodedata.category(c) in ("Cn", "Cs")


SEGMENT = 1024 * 1024   # longest stretch normalized at once (step 2)


@lru_cache(maxsize=None)
def composition_seconds():
    """Code points that can be the second of a canonical composition."""
    seconds = set(range(0x1161, 0x1176)) | set(range(0x11A8, 0x11C3))  # jamo
    for cp in range(0x110000):
        d = unicodedata.decomposition(chr(cp))
        if d and not d.startswith("<") and len(d.split()) == 2:
            seconds.add(int(d.split()[1], 16))
    return seconds


@lru_cache(maxsize=None)
def boundary(c):
    """A safe place to cut NFKC: NFKC leaves c alone, it is a starter, and
    nothing before it can compose with it (or NFKC maps it to one such)."""
    n = unicodedata.normalize("NFKC", c)
    return (len(n) == 1 and unicodedata.combining(n) == 0
            and ord(n) not in composition_seconds()
            and unicodedata.normalize("NFKC", n) == n)


def nfkc(text):
    """Step 2: NFKC of the whole text, except that a stretch of more than
    SEGMENT code points with no boundary character is normalized in pieces of
    SEGMENT code points (the first piece counting the boundary before it)."""
    out, start, run_start = [], 0, 0
    for i, c in enumerate(text + "a"):          # a sentinel boundary
        if boundary(c) or i == len(text):
            if i - run_start > SEGMENT:         # anchor + run longer than a piece
                out.append(unicodedata.normalize("NFKC", text[start:run_start]))
                for p in range(run_start, i, SEGMENT):
                    out.append(unicodedata.normalize("NFKC", text[p:min(p + SEGMENT, i)]))
                start = i
            run_start = i
    out.append(unicodedata.normalize("NFKC", text[start:]))
    return "".join(out)


@lru_cache(maxsize=16)
def prepare(text):
    """Steps 1-4: returns (chars, classes), two strings of equal length."""
    text = "".join(" " if unassigned(c) else c for c in text)      # 1
    text = nfkc(text)                                                # 2
    # 3: simple lower case, one code point at a time (so no final-sigma
    # context; U+0130 lowers to "i" + U+0307, of which the "i" is kept)
    chars = "".join(c.lower()[0] for c in text)
    classes = "".join(char_class(c) for c in chars)                  # 4
    return chars, classes


# A token run is a run of WORD characters, or a CJK run: CJK characters with
# only SPACE characters between them.
RUN = re.compile(r"W+|C(?:S*C)*")


def tokens(text):
    """Step 5: the tokens, in text order."""
    chars, classes = prepare(text)
    out = []
    for m in RUN.finditer(classes):
        run = chars[m.start():m.end()]
        if m.group()[0] == "W":
            out += [run[i:i + MAX_WORD] for i in range(0, len(run), MAX_WORD)]
        else:
            cjk = [c for c, k in zip(run, m.group()) if k == "C"]
            if len(cjk) == 1:
                out.append(cjk[0])
            else:
                out += [a + b for a, b in zip(cjk, cjk[1:])]
    return out


def ngram_sequence(text):
    """The character sequence of simhash_ngram: WORD and CJK characters, one
    space where a gap of SPACE/OTHER characters separated them, except between
    two CJK characters."""
    chars, classes = prepare(text)
    seq = []
    last = None                     # (index, class) of the last kept char
    for i, (c, k) in enumerate(zip(chars, classes)):
        if k not in "WC":
            continue
        if last is not None and last[0] < i - 1 and not (k == "C" and last[1] == "C"):
            seq.append(" ")
        seq.append(c)
        last = (i, k)
    return "".join(seq)


def shingle_hash(hashes):
    """Hash of a shingle: XXH3 of its token hashes, 8 bytes little-endian each."""
    return xxh3(struct.pack("<%dQ" % len(hashes), *hashes))


@lru_cache(maxsize=16)
def word_features(text, n):
    """Steps 6-7: the feature hashes of simhash(text, n)."""
    hs = [xxh3(t.encode("utf-8")) for t in tokens(text)]
    if n == 1:
        return hs
    if 0 < len(hs) < n:
        return [shingle_hash(hs)]
    return [shingle_hash(hs[i:i + n]) for i in range(len(hs) - n + 1)]


@lru_cache(maxsize=16)
def ngram_features(text, n):
    seq = ngram_sequence(text)
    if 0 < len(seq) < n:
        return [xxh3(seq.encode("utf-8"))]
    return [xxh3(seq[i:i + n].encode("utf-8")) for i in range(len(seq) - n + 1)]


def fingerprint(features, weighting="tf"):
    """Steps 8-9.  A feature of weight w is w votes of weight 1; bit i is set
    when more than half of the votes have bit i set (counter[i] > 0)."""
    counts = Counter(features)
    if weighting == "tf":
        votes = list(features)
    elif weighting == "binary":
        votes = list(counts)
    elif weighting == "sublinear":
        # 1 + floor(log2(c)) == c.bit_length()
        votes = [h for h, c in counts.items() for _ in range(c.bit_length())]
    else:
        raise ValueError("invalid weighting %r" % weighting)
    if not votes:
        return "0" * 16
    rows = [format(h, "064b") for h in votes]          # most significant first
    bits = "".join("1" if 2 * col.count("1") > len(votes) else "0"
                   for col in zip(*rows))
    return "%016x" % int(bits, 2)


def simhash(text, shingle=1, weighting="tf"):
    return fingerprint(word_features(text, shingle), weighting)


def simhash_ngram(text, n=3, weighting="tf"):
    return fingerprint(ngram_features(text, n), weighting)


def second_hash(h):
    """The feature hash of a 128-bit fingerprint's low half."""
    return xxhash.xxh3_64_intdigest(struct.pack("<Q", h), seed=128)


def fingerprint128(features, weighting="tf"):
    """The high half from the features, the low half from their second
    hashes (a feature's count, and so its weight, is the same in both)."""
    return (fingerprint(features, weighting)
            + fingerprint([second_hash(h) for h in features], weighting))


def simhash128(text, shingle=1, weighting="tf"):
    return fingerprint128(word_features(text, shingle), weighting)


def simhash128_ngram(text, n=3, weighting="tf"):
    return fingerprint128(ngram_features(text, n), weighting)


if __name__ == "__main__":
    # python3 test/reference.py TEXT [shingle [weighting]]: a quick look
    text = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    w = sys.argv[3] if len(sys.argv) > 3 else "tf"
    print("tokens:", tokens(text))
    print("ngram sequence:", repr(ngram_sequence(text)))
    print("simhash:", simhash(text, n, w))
    print("simhash_ngram:", simhash_ngram(text, 3 if n == 1 else n, w))
    print("simhash128:", simhash128(text, n, w))
    print("simhash128_ngram:", simhash128_ngram(text, 3 if n == 1 else n, w))
