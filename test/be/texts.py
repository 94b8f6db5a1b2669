#!/usr/bin/env python3
"""
Deterministic inputs for test/be/harness.c (the big-endian check, see
run.sh): the texts on stdout as UTF-8, each followed by a NUL byte (no text
holds one).

Only characters that never reach PostgreSQL's unicode_normalize() (the
harness stubs it out and checks every input against the same list):
ASCII (no NUL: a PostgreSQL text cannot hold one), CJK Unified Ideographs
U+4E00-9FFF, full-width forms U+FF01-FF5E, kana (hiragana U+3041-3096,
U+309D-309E; katakana U+30A1-30FE), CJK symbols U+3000-3029 and
U+3030-303F (not the combining marks U+302A-302F), box drawing
U+2500-257F.  Seeded: the same output on every run and machine.
"""
import random
import sys

R = random.Random(20261123)

LOWER = "abcdefghijklmnopqrstuvwxyz"
UPPER = LOWER.upper()
DIGITS = "0123456789"
ALNUM = LOWER + UPPER + DIGITS
# every ASCII byte that is not a letter or digit, NUL excepted
SEPS = [chr(c) for c in range(1, 128) if not chr(c).isalnum()]
SPACES = [" ", "\t", "\n", "\r", "\x0b", "\x0c"]

HAN = [chr(c) for c in range(0x4E00, 0xA000)]
FULLWIDTH = [chr(c) for c in range(0xFF01, 0xFF5F)]
FW_ALNUM = [c for c in FULLWIDTH if chr(ord(c) - 0xFEE0).isalnum()]
FW_PUNCT = [c for c in FULLWIDTH if not chr(ord(c) - 0xFEE0).isalnum()]
KANA = ([chr(c) for c in range(0x3041, 0x3097)] + ["\u309d", "\u309e"]
        + [chr(c) for c in range(0x30A1, 0x30FF)])
CJK_PUNCT = [chr(c) for c in list(range(0x3000, 0x302A)) + list(range(0x3030, 0x3040))]
BOX = [chr(c) for c in range(0x2500, 0x2580)]


def word(n, alphabet=ALNUM):
    return "".join(R.choice(alphabet) for _ in range(n))


def mixed_word(n):
    """a word of n bytes: lower, upper, mixed case or with digits"""
    style = R.randrange(4)
    if style == 0:
        return word(n, LOWER)
    if style == 1:
        return word(n, UPPER)
    if style == 2:
        return word(n, LOWER + UPPER)
    return word(n, ALNUM)


def sep(allow_run=True):
    k = R.choice([1, 1, 1, 1, 2, 3, 7, 9, 17]) if allow_run else 1
    pool = R.choice([SPACES, SEPS, [" "]])
    return "".join(R.choice(pool) for _ in range(k))


def word_len():
    r = R.random()
    if r < 0.9:
        return R.randint(1, 20)
    if r < 0.98:
        return R.randint(21, 64)
    return R.randint(250, 600)


def ascii_text(target):
    parts = [sep() if R.random() < 0.3 else ""]
    size = len(parts[0])
    while size < target:
        w = mixed_word(word_len())
        s = sep()
        parts += [w, s]
        size += len(w) + len(s)
    return "".join(parts)


def han_run(k):
    return "".join(R.choice(HAN) for _ in range(k))


def fill(target, piece):
    """pieces from piece() until the text has at least target bytes"""
    out = []
    size = 0
    while size < target:
        x = piece()
        out.append(x)
        size += len(x.encode())
    return "".join(out)


def han_mixed(target):
    def piece():
        r = R.random()
        if r < 0.4:
            x = han_run(R.randint(1, 12))
        elif r < 0.7:
            x = mixed_word(R.randint(1, 20))
        elif r < 0.9:
            x = R.choice([" ", "  ", "\u3000", "\t"])
        else:
            x = R.choice(SEPS + CJK_PUNCT[:4])
        return x

    return fill(target, piece)


def pool_text(pools, target):
    def piece():
        pool = R.choice(pools)
        k = R.randint(1, 12)
        x = "".join(R.choice(pool) for _ in range(k))
        if R.random() < 0.5:
            x += R.choice([" ", "", "\u3000", R.choice(SEPS)])
        return x

    return fill(target, piece)


ALL_POOLS = [list(ALNUM), SEPS, SPACES, HAN, FULLWIDTH, FW_ALNUM, FW_PUNCT, KANA,
             CJK_PUNCT, BOX]


def mixed_all(target):
    def piece():
        r = R.random()
        if r < 0.35:
            x = mixed_word(word_len())
        elif r < 0.5:
            x = sep()
        elif r < 0.65:
            x = han_run(R.randint(1, 12))
        else:
            pool = R.choice(ALL_POOLS)
            x = "".join(R.choice(pool) for _ in range(R.randint(1, 12)))
        return x

    return fill(target, piece)


texts = []

# edge cases
texts += ["", " ", "a", "A", "0", "_", "\u4e00", "\u9fff", "\uff21", "\uff01", "\u3042",
          "\u30a2", "\u3000", "\u2500", "\u4e00\u4e01", "a\u4e00", "\u4e00a", "a \u4e00",
          "\u4e00 \u4e01", "\u4e00\u3000\u4e01", "\u4e00.\u4e01", "\uff21\uff22", "ab\uff43d"]
texts += [c for c in SEPS]
texts += [c * 20 for c in SEPS]

# single words of every length 1..20, alone or with separators around
for n in range(1, 21):
    for _ in range(40):
        w = mixed_word(n)
        shape = R.randrange(4)
        if shape == 0:
            texts.append(w)
        elif shape == 1:
            texts.append(sep() + w)
        elif shape == 2:
            texts.append(w + sep())
        else:
            texts.append(" " * R.randrange(24) + w + sep() + mixed_word(R.randint(1, 20)))

# long words: 250..600 bytes (and a few beyond a block), around other words
for _ in range(150):
    w = mixed_word(R.randint(250, 600))
    shape = R.randrange(3)
    if shape == 0:
        texts.append(w)
    elif shape == 1:
        texts.append(ascii_text(R.randint(0, 1100)) + w + sep() + ascii_text(R.randint(0, 300)))
    else:
        texts.append(" " * R.randrange(64) + w + " " + mixed_word(R.randint(250, 600)))
for n in (1023, 1024, 1025, 1030, 2047, 2048, 2049, 2500):
    texts.append(word(n, LOWER))
    texts.append(" " + word(n, ALNUM) + " x")

# every ASCII separator between words of all lengths
for s in SEPS:
    for _ in range(5):
        texts.append(s.join(mixed_word(R.randint(1, 20)) for _ in range(R.randint(2, 40))))

# texts of 1000..3000 bytes of ASCII
for _ in range(1500):
    texts.append(ascii_text(R.randint(1000, 3000)))

# a fixed text behind every shift 0..79: blocks and 8/16-byte steps at every offset
bases = [ascii_text(1500), han_mixed(1500), pool_text([list(ALNUM), FW_ALNUM, FW_PUNCT], 1500),
         mixed_all(1500)]
for b in bases:
    for k in range(80):
        texts.append("x" * k + " " + b)
        texts.append(" " * k + b)

# Han runs of 1..12 characters among ASCII words and spaces
for _ in range(600):
    texts.append(han_mixed(R.randint(1, 200)))
for _ in range(400):
    texts.append(han_mixed(R.randint(1000, 3000)))

# long Han runs (1..400 characters: many eight-character steps, and runs
# across the 1024-byte block ends) among kana, CJK punctuation and ASCII
for _ in range(300):
    texts.append(fill(R.randint(100, 3000), lambda: han_run(R.choice([R.randint(1, 30), R.randint(30, 400)])) +
                      R.choice(KANA + CJK_PUNCT + [" ", "a", "1 ", ", "])))

# full-width letters, digits and punctuation (and with ASCII)
for _ in range(400):
    texts.append(pool_text([FW_ALNUM, FW_PUNCT, FULLWIDTH], R.randint(1, 600)))
for _ in range(200):
    texts.append(pool_text([FW_ALNUM, FW_PUNCT, list(ALNUM), SEPS], R.randint(1, 2000)))

# kana (with Han, CJK punctuation, ASCII)
for _ in range(300):
    texts.append(pool_text([KANA], R.randint(1, 400)))
for _ in range(300):
    texts.append(pool_text([KANA, HAN, CJK_PUNCT, list(ALNUM)], R.randint(1, 2000)))

# box drawing and CJK punctuation among words
for _ in range(200):
    texts.append(pool_text([BOX, CJK_PUNCT, list(LOWER), HAN], R.randint(1, 1200)))

# everything mixed, long
for _ in range(700):
    texts.append(mixed_all(R.randint(1000, 3000)))


w = sys.stdout.buffer
for t in texts:
    w.write(t.encode() + b"\0")
print("texts.py: %d texts, %d bytes" % (len(texts), sum(len(t.encode()) for t in texts)),
      file=sys.stderr)
