"""Helper of test/bench/compare_old.sh: random texts for the old-versus-new
fingerprint comparison, written as COPY text format (id TAB body) to stdout.

    python3 test/bench/compare_old.py COUNT SEED

The texts are made to hit every path of the tokenizer: ASCII words with
every separator and case, CJK runs with spaces, punctuation, full-width and
half-width forms and compatibility ideographs, combining marks after ASCII,
CJK and separators (normalization pieces), words cut at 256 characters,
repeated phrases (counts above 1 for the weightings), random code points of
the whole range (assigned or not), texts of 0.9 to 3 kB made to straddle the
fast paths' block ends (1024-byte ASCII blocks, 64-byte word masks, Han runs
taken two characters at a time: dense one-letter words, words of 250 to
1100 bytes, long Han runs, every kind of neighbour), and some long texts
(tens to hundreds of kB, past work_mem when it is small).
"""
import random
import sys

N = int(sys.argv[1])
rng = random.Random(int(sys.argv[2]))

ASCII_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
ASCII_SEPS = " " * 12 + "\n\t\r\x0b\x0c\x1c\x1d\x1e\x1f" + ".,;:!?'\"()-/_[]{}<>@#$%^&*+=|\\~`\x01\x7f"
CJK = ([chr(c) for c in range(0x4E00, 0x4E00 + 400)] +      # Han
       [chr(c) for c in range(0x3041, 0x3097)] +             # hiragana
       [chr(c) for c in range(0x30A1, 0x30FB)] +             # katakana
       [chr(c) for c in range(0xAC00, 0xAC00 + 200)] +       # hangul syllables
       [chr(c) for c in range(0x20000, 0x20000 + 50)] +      # CJK extension B (4 bytes)
       ["\u3005", "\u3006", "\u3007", "\u30fc"])
CJK_OTHER = list("\u3001\u3002\u300c\u300d\uff0c\uff01\uff1f\uff08\uff09\u3000 \n") + \
    [chr(c) for c in range(0xFF21, 0xFF3B)] + \
    [chr(c) for c in range(0xFF66, 0xFF9F)] + \
    [chr(c) for c in range(0xF900, 0xF920)] + \
    ["\u3099", "\u309a", "\u309b", "\u309c", "\u1100", "\u1161", "\u11a8", "\u3131", "\u314f"]
MARKS = [chr(c) for c in range(0x300, 0x370)] + ["\u0345", "\u05b0", "\u093c", "\u0e31", "\u200d", "\ufe0f"]
OTHER_SCRIPTS = (list("\u00e9\u00c9\u00e5\u00c5\u00df\u1e9e\u0130\u0131\u03a3\u03c3\u03c2\u039f\u0394"
                      "\u0421\u043b\u043e\u0432\u05e2\u05d1\u0627\u0644\u0928\u092e\u0e20\u0e32"
                      "\ufb01\ufb03\u2126\u212b\u01c5\u00bd\u00b2\u2460\u2167\u0661\u0662"
                      "\u00a0\u2028\u2029\u0085\u200b\u00ad\u2060\ufeff") +
                 ["\U0001f600", "\U0001f44d", "\U0001f3fd", "\u0378", "\uffff", "\ue000",
                  "\U000e0080", "\U0010fffd", "\U0001d15e", "\U0001d165"])
VOCAB = ["".join(rng.choice(ASCII_LETTERS) for _ in range(rng.randint(1, 12))) for _ in range(60)]
CJK_VOCAB = ["".join(rng.choice(CJK[:600]) for _ in range(rng.randint(1, 4))) for _ in range(60)]


def ascii_text(n):
    out = []
    while len(out) < n:
        r = rng.random()
        if r < 0.6:
            out.extend(rng.choices(ASCII_LETTERS + "0123456789", k=rng.randint(1, 14)))
        elif r < 0.62:
            out.extend(rng.choices("aZ9", k=rng.randint(240, 520)))    # around 256
        else:
            out.extend(rng.choices(ASCII_SEPS, k=rng.randint(1, 3)))
    return "".join(out)


def cjk_text(n):
    out = []
    while len(out) < n:
        r = rng.random()
        if r < 0.6:
            out.extend(rng.choices(CJK, k=rng.randint(1, 20)))
        elif r < 0.8:
            out.extend(rng.choices(CJK_OTHER, k=rng.randint(1, 2)))
        elif r < 0.9:
            out.extend(rng.choices(ASCII_LETTERS + "0123456789 ", k=rng.randint(1, 8)))
        else:
            out.append(rng.choice(MARKS + [" ", "\n"]))
    return "".join(out)


def mixed_text(n):
    pools = [ASCII_LETTERS, ASCII_SEPS, CJK, CJK_OTHER, MARKS, OTHER_SCRIPTS, "eEaAoO"]
    out = []
    while len(out) < n:
        out.extend(rng.choices(rng.choice(pools), k=rng.randint(1, 6)))
    return "".join(out)


def any_codepoint():
    r = rng.random()
    c = rng.randrange(1, 0x800) if r < 0.5 else rng.randrange(0x800, 0x10000) if r < 0.9 \
        else rng.randrange(0x10000, 0x110000)
    return chr(0x20 if 0xD800 <= c < 0xE000 else c)


CODEPOINTS = [any_codepoint() for _ in range(100000)]


def random_codepoints(n):
    return "".join(rng.choices(CODEPOINTS, k=n))


def repeated_text(n):
    vocab = rng.choice([VOCAB, CJK_VOCAB, VOCAB[:5] + CJK_VOCAB[:5]])
    seps = rng.choice([" ", " \n", ", ", "\u3002"])
    out = []
    total = 0
    while total < n:
        w = rng.choice(vocab[:rng.randint(2, len(vocab))])
        out.append(w)
        out.append(rng.choice(seps))
        total += len(w) + 1
    return "".join(out)


HAN = [chr(c) for c in range(0x4E00, 0xA000, 97)]


def boundary_text(n):
    """0.9 to 3 kB whatever n: stretches whose lengths put their ends at
    and around the fast paths' block ends"""
    out = []
    size = 0
    goal = rng.randint(900, 3000)
    while size < goal:
        r = rng.random()
        if r < 0.25:        # dense short words: more than 16 a 64-byte mask
            piece = " ".join(rng.choices("aZ9b", k=rng.randint(8, 80)))
        elif r < 0.4:       # a long word, near 256 characters or past a block
            piece = "".join(rng.choices(ASCII_LETTERS, k=rng.choice(
                [rng.randint(250, 262), rng.randint(1000, 1100), rng.randint(500, 700)])))
        elif r < 0.6:       # a long Han run, odd or even, up to a block and past
            piece = "".join(rng.choices(HAN, k=rng.randint(1, 400)))
        elif r < 0.75:      # ASCII words of usual lengths
            piece = " ".join("".join(rng.choices(ASCII_LETTERS, k=rng.randint(1, 12)))
                             for _ in range(rng.randint(1, 40)))
        else:               # one neighbour of any kind
            piece = rng.choice([rng.choice(CJK), rng.choice(CJK_OTHER), rng.choice(MARKS),
                                rng.choice(OTHER_SCRIPTS), rng.choice(ASCII_SEPS), " "])
        out.append(piece)
        size += len(piece.encode())
    return "".join(out)


KINDS = [(ascii_text, 30), (cjk_text, 25), (mixed_text, 20), (random_codepoints, 10), (repeated_text, 15),
         (boundary_text, 5)]
kinds, weights = zip(*KINDS)


def esc(s):
    return s.replace("\\", "\\\\").replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t")


out = sys.stdout
for i in range(N):
    if i % 10000 == 9999:
        n = rng.randint(20000, 300000)     # long
    elif rng.random() < 0.05:
        n = rng.randint(0, 4)              # tiny
    else:
        n = int(rng.expovariate(1 / 30)) + 1
    kind = rng.choices(kinds, weights)[0]
    out.write("r%d\t%s\n" % (i, esc(kind(n))))
