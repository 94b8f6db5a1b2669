#!/bin/bash
# test/crosscheck.sh: cross-checks simhash(text, shingle, weighting),
# simhash_ngram(text, 3, weighting) and their 128-bit forms simhash128() and
# simhash128_ngram() of the installed extension against the independent
# Python reference test/reference.py, on the public corpus
# (natural en + zh, edited zh) and on synthetic tricky strings.
#
#   test/crosscheck.sh            (as root or as a user who can run initdb)
#   test/crosscheck.sh --sample   (the test suite: test/data/sample.tsv, in the repository)
#
# SIMHASH_DATA: the corpus directory (default: <repo>/../shared/data); the
# whole corpus takes a few minutes, the sample a few seconds.
# Prints the number of compared values and of mismatches; exits 1 on any
# mismatch (the mismatches are listed, and kept in $SIMHASH_KEEP if set).
set -euo pipefail

cd "$(dirname "$0")/.."
PY=/usr/bin/python3
# the reference's character classes, case mapping and NFKC are Unicode 14.0's
# (the Python of Debian 12); a newer Python's would differ from the frozen
# fingerprints (test/cross-version.sh checks those across PostgreSQL versions)
pyuni=$($PY -c 'import unicodedata; print(unicodedata.unidata_version)')
if [ "$pyuni" != 14.0.0 ]; then
	echo "crosscheck: skipped (test/reference.py needs Python's Unicode 14.0.0 data, as Debian 12's Python 3.11 has; $PY has $pyuni)"
	exit 0
fi
if [ "${1:-}" = --sample ]; then
	load_corpus="CREATE TEMP TABLE sample (n int, id text, lang text, role text, original text, rate text, source text, package text, body text);
\\copy sample FROM 'test/data/sample.tsv'
INSERT INTO t SELECT id, body FROM sample;"
else
	data=$(realpath "${SIMHASH_DATA:-$(dirname "$(pwd)")/shared/data}")
	load_corpus="\\copy t(id, body) FROM PROGRAM 'xzcat $data/natural/docs.en.tsv.xz'
\\copy t(id, body) FROM PROGRAM 'xzcat $data/natural/docs.zh.tsv.xz'
\\copy t(id, body) FROM PROGRAM 'xzcat $data/edited/docs.zh.tsv.xz'"
fi
dir=$(mktemp -d "${TMPDIR:-/tmp}/simhash-crosscheck.XXXXXX")

source test/cluster.sh
cleanup() {
	stop_cluster "$dir"
	[ -n "${SIMHASH_KEEP:-}" ] && cp "$dir"/*.tsv "$SIMHASH_KEEP"/ 2>/dev/null
	rm -rf "$dir"
}
trap cleanup EXIT
PGPORT_WANTED=5496 start_cluster "$dir"

# ---- synthetic strings (COPY text format: id TAB body) ----
$PY - "$dir/synthetic.tsv" <<'EOF'
import random, sys, unicodedata

cases = {
    "empty": "",
    "punct-only": "!!! ... ??? --- ,,, ;;; (*&^%$#@)",
    "space-only": " \t\n\r\u00a0\u3000\u2028\x1c\x1f\x85",
    "combining-e": "e\u0301",
    "combining-cafe": "cafe\u0301 caf\u00e9 CAFE\u0301 Caf\u00c9",
    "combining-reorder": "a\u0301\u0316 a\u0316\u0301 e\u0301\u0301 q\u0307\u0323",
    "combining-at-start": "\u0301abc \u0301 \u0308",
    "combining-after-space": "x \u0301y",
    "combining-after-cjk": "\u4e2d\u0301\u6587",
    "combining-after-punct": "a.\u0301b",
    "fullwidth": "\uff21\uff22\uff23\uff11\uff12\uff13 \uff26\uff35\uff2c\uff2c\u3000\uff37\uff29\uff24\uff34\uff28\uff01",
    "halfwidth-kana": "\uff76\uff9e\uff77\uff9e\uff78\uff9e \uff8a\uff9f\uff8b\uff9f \uff73\uff9e \uff70\uff71",
    "halfwidth-voiced-alone": "\uff9e\uff9f\uff9e",
    "kana-combining-voiced": "\u304b\u3099\u304d\u309a \u304b\u309b \u30cf\u309c",
    "hangul-jamo-lvt": "\u1100\u1161\u11a8 \u1100\u1161 \u1161 \u11a8",
    "hangul-lv-plus-t": "\uac00\u11a8 \uac01\u11a8 \uac00\u11a7",
    "hangul-compat-jamo": "\u3131\u314f\u3134 \u3131 \u314f",
    "hangul-halfwidth": "\uffa1\uffc2\uffa4",
    "hangul-old-jamo": "\ua960\u1161\u11a8 \ud7b0 \u1100\ud7b0",
    "hangul-words": "\ud55c\uad6d\uc5b4 \ud14d\uc2a4\ud2b8\uc785\ub2c8\ub2e4",
    "ligatures": "\ufb01 \ufb02 \ufb03ce o\ufb00er \ufb05 \u0132",
    "turkish-i": "\u0130stanbul \u0130 I\u0307 \u0131 \u0130\u0301",
    "greek-sigma": "\u039f\u0394\u039f\u03a3 \u1f48\u0394\u038c\u03a3 \u03c3\u03bf\u03c6\u03cc\u03c2 \u03a3\u038a\u03a3\u03a5\u03a6\u039f\u03a3",
    "emoji": "\U0001f44d\U0001f3fd \U0001f468\u200d\U0001f469\u200d\U0001f467 \u2764\ufe0f \U0001f1eb\U0001f1f7 word\U0001f600word",
    "unassigned": "abc\u0378def \U000e0080 x\uffffy \U0010ffff z",
    "unicode15-chars": "abc\U0001fae8def \u4e2d\U00031350\u6587 \u4e2d\U0002b739\u6587",
    "private-use": "a\ue000b \U000f0000",
    "mixed-cjk-latin": "\u6211\u7528PostgreSQL\u6570\u636e\u5e93 abc\u4e2ddef \u4e2d\u6587abc\u4e2d\u6587",
    "cjk-spaces": "\u4e2d \u6587 \u5b57\n\u7b26\u3000\u4e32\t\u6d4b",
    "cjk-punct": "\u4e2d\uff0c\u6587\u3002\u5b57",
    "cjk-single": "\u4e2d",
    "cjk-single-words": "\u4e2d a \u6587 b",
    "cjk-compat": "\uf900\uf901 \u2f00\u2f01 \u2e80\u2e81 \u3005\u3006\u3007",
    "cjk-ext": "\U00020000\U00020001 \U0002a700",
    "squared": "\u337b\u3300 \u3231 \u2460 \u24b6 \u33a1",
    "numbers": "\u0661\u0662\u0663 \u00bd \u00b2 \u2167 \u2079 \u1d2c",
    "word-256": "a" * 256,
    "word-257": "a" * 257 + " b",
    "word-600": "x" * 600,
    "word-512-mark": ("e\u0301" * 300) + " end",
    "word-256-multibyte": "\u00e9" * 256 + "\u00e9",
    "long-cjk-run": "\u4e00\u4e01\u4e02\u4e03" * 100,
    "thai-devanagari": "\u0e20\u0e32\u0e29\u0e32\u0e44\u0e17\u0e22 \u0928\u092e\u0938\u094d\u0924\u0947 \u0915\u093c",
    "arabic-forms": "\ufefb \ufdfa \ufe8d\ufe8e",
    "case-specials": "\u01c5 \u1e9e \u00df K \u212b \u2126 \u13a0\u13a1 \uab70",
    "format-chars": "a\u200bb c\u200dd e\u00adf \ufeffg h\u180ei \u2060j",
    "vertical-forms": "\ufe35x\ufe36 \ufe10",
    "kana-spacing-marks": "\u304b\u309b \u309b\u309c",
    "titlecase": "\u01c4\u01c5\u01c6 \u1f88 \u1fbc",
    "mixed-scripts": "Stra\u00dfe \u0421\u043b\u043e\u0432\u043e \u05e2\u05d1\u05e8\u05d9\u05ea 123abc \u0661\u0662x",
    "tabs-newlines": "line1\nline2\r\nline3\tcol \\ backslash \\n",
    "superscript-words": "x\u00b2 H\u2082O m\u00b3 \u2122",
    "repeated": "the the the the cat cat the",
}
# NFKC over a run of 1M combining marks: the C code normalizes at most
# 1048576 code points at once
cases["combining-1M"] = "a" + "\u0301" * 1048575 + "\u0316"

# random strings from a pool of troublesome characters, and from random
# assigned code points
rng = random.Random(20240514)
pool = list(
    "aAeEiIzZ09 .,-'\t\n\u00a0\u3000"
    "\u0300\u0301\u0307\u0316\u0323\u0345\u0308\u0653\u05b0\u093c\u0e31\u3099\u309a\u309b\u309c"
    "\u00c5\u00e9\u0130\u0131\u03a3\u03c2\u1e9e\u212b\u2126\u01c5\ufb01\ufb03"
    "\u1100\u1112\u1161\u1175\u11a7\u11a8\u11c2\u11ff\u3131\u314f\u3164\uac00\uac01\ud7a3\ua960\ud7b0\uffa1\uffc2"
    "\u304b\u30cf\u30a6\uff76\uff8a\uff73\uff9e\uff9f\uff70"
    "\u4e00\u4e2d\uf900\u2f00\u337b\u3231\u2460\u00bd\u00b2\u1d2c\u0f73\u0f77\u0f81"
    "\u0b47\u0b3e\u0b57\u0cc6\u0cc2\u0cd5\u0dd9\u0dcf\u0ddf\u1025\u102e\u1b05\u1b35"
    "\u0627\u0653\u0654\u0655\ufefb\ufdfa\u200b\u200d\u00ad\ufe0f\u0378\uffff"
) + ["\U0001f600", "\U0001f3fd", "\U00020000", "\U0001d15e", "\U0001d165", "\U0001d16e",
     "\U000110a5", "\U000110ba", "\U00011131", "\U00011127", "\U0001fae8", "\U000e0080"]
for i in range(1500):
    cases["rand-pool-%04d" % i] = "".join(rng.choice(pool) for _ in range(rng.randint(1, 30)))
assigned = []
while len(assigned) < 20000:
    cp = rng.randrange(0x20, 0x40000)
    if not 0xD800 <= cp < 0xE000 and unicodedata.category(chr(cp)) not in ("Cn", "Cs", "Co"):
        assigned.append(chr(cp))
for i in range(500):
    cases["rand-cp-%04d" % i] = "".join(rng.choice(assigned) + rng.choice(" \u0301a\u4e2d.")
                                        for _ in range(rng.randint(1, 20)))

def esc(s):
    return s.replace("\\", "\\\\").replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t")

with open(sys.argv[1], "w", encoding="utf-8") as f:
    for k, v in cases.items():
        f.write("syn-%s\t%s\n" % (k, esc(v)))
EOF

# ---- fingerprints in PostgreSQL ----
psql -X -q -v ON_ERROR_STOP=1 <<EOF
CREATE EXTENSION simhash;
CREATE TABLE t (id text PRIMARY KEY, body text NOT NULL);
$load_corpus
\copy t(id, body) FROM '$dir/synthetic.tsv'
CREATE TABLE cfg (config text, kind text, n int, weighting text);
INSERT INTO cfg
	SELECT 'simhash/' || n || '/' || w, 'words', n, w
	FROM generate_series(1, 3) n, unnest('{tf,binary,sublinear}'::text[]) w
	UNION ALL
	SELECT 'simhash_ngram/3/' || w, 'chars', 3, w
	FROM unnest('{tf,binary,sublinear}'::text[]) w
	UNION ALL
	SELECT 'simhash128/' || n || '/' || w, 'words128', n, w
	FROM generate_series(1, 3, 2) n, unnest('{tf,binary,sublinear}'::text[]) w
	UNION ALL
	SELECT 'simhash128_ngram/3/tf', 'chars128', 3, 'tf';
\copy t TO '$dir/bodies.tsv'
\copy (SELECT t.id, c.config, CASE c.kind WHEN 'words' THEN simhash(t.body, c.n, c.weighting)::text WHEN 'chars' THEN simhash_ngram(t.body, c.n, c.weighting)::text WHEN 'words128' THEN simhash128(t.body, c.n, c.weighting)::text ELSE simhash128_ngram(t.body, c.n, c.weighting)::text END FROM t CROSS JOIN cfg c ORDER BY 1, 2) TO '$dir/results.tsv'
EOF

# ---- comparison with the reference ----
$PY - "$dir/bodies.tsv" "$dir/results.tsv" "$dir/mismatches.tsv" <<'EOF'
import re, sys
from collections import Counter
sys.path.insert(0, "test")
import reference

UNESC = {"n": "\n", "r": "\r", "t": "\t", "b": "\b", "f": "\f", "v": "\v", "\\": "\\"}
def unescape(s):    # COPY text format (as written by COPY TO)
    return re.sub(r"\\(.)", lambda m: UNESC.get(m.group(1), m.group(1)), s)

bodies = {}
with open(sys.argv[1], encoding="utf-8", newline="\n") as f:
    for line in f:
        i, b = line.rstrip("\n").split("\t")
        bodies[i] = unescape(b)
compared = 0
bad = Counter()
with open(sys.argv[2], encoding="utf-8") as f, open(sys.argv[3], "w") as out:
    for line in f:
        i, config, got = line.rstrip("\n").split("\t")
        kind, n, w = config.split("/")
        fn = {"simhash": reference.simhash, "simhash_ngram": reference.simhash_ngram,
              "simhash128": reference.simhash128, "simhash128_ngram": reference.simhash128_ngram}[kind]
        want = fn(bodies[i], int(n), w)
        compared += 1
        if got != want:
            bad[config] += 1
            out.write("%s\t%s\tC=%s\tref=%s\t%a\n" % (i, config, got, want, bodies[i][:80]))
            if sum(bad.values()) <= 40:
                print("MISMATCH %s %s: C %s, reference %s, body (%d chars) %a"
                      % (i, config, got, want, len(bodies[i]), bodies[i][:40]))
print("compared: %d values (%d texts), mismatches: %d" % (compared, len(bodies), sum(bad.values())))
for config, k in sorted(bad.items()):
    print("  %-24s %d" % (config, k))
sys.exit(1 if bad else 0)
EOF
