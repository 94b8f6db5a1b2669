#!/bin/bash
# test/be/run.sh: the tokenizer gives the same feature hashes on a big-endian
# machine as on x86-64.
#
#   test/be/run.sh [REV]
#
# The feature hashes of src/tokenize.c are a compatibility promise: the same
# on every architecture.  Its byte-order-sensitive code (load_le64/store_le64
# under WORDS_BIGENDIAN, the shingle hash of feature_hash.h, which writes
# token hashes as little-endian bytes, XXH3) is only ever run little-endian
# on the machines we have; this runs it big-endian, on s390x under qemu-user.
#
# What it does: installs gcc-s390x-linux-gnu and qemu-user when missing
# (Debian/Ubuntu, as root); writes >5000 seeded texts (texts.py); builds
# harness.c, which #includes src/tokenize.c with stubs for the server
# functions it calls, natively (x86-64, SSE2 path) and for s390x (static,
# -DWORDS_BIGENDIAN, the portable SWAR path); runs both on the texts and
# compares their outputs (per text and per configuration -- word shingles
# n = 1, 2, 3, 5, 16, character n-grams n = 1, 3 -- count, XOR, sum and the
# first four feature hashes); exits 1 on any difference, printing the first
# differing lines.  Also: the s390x binary must report big-endian at run time
# and WORDS_BIGENDIAN at compile time; an x86-64 build without SSE2 (the SWAR
# path, little-endian) must agree too; a negative control (s390x WITHOUT
# WORDS_BIGENDIAN) must DIFFER, or the comparison could not see a byte-order
# bug; and when /usr/bin/python3 has xxhash and Unicode 14.0.0, the native
# output must equal test/reference.py's (reference_check.py), so the harness
# computes the extension's real features.
#
# REV: test src/ as committed in that git revision (default: the working
# tree's src/).  The harness always comes from the working tree.
#
# Limits: the tokenizer only (simhash_tokenize_batch), not the server-side
# parts (fingerprint accumulation, SQL functions, encoding conversion, index
# code), and not the PostgreSQL server itself on big-endian.  The texts hold
# only characters that never reach PostgreSQL's unicode_normalize()
# (ASCII without NUL, CJK ideographs U+4E00-9FFF, full-width forms
# U+FF01-FF5E, kana, U+3000-303F without the combining marks U+302A-302F, box
# drawing): the harness stubs normalization out (abort) and checks every text
# against that list, so the general path's normalization pieces, unit and
# letter features, and texts over 64 kB (CHECK_FOR_INTERRUPTS) are not
# exercised.  The s390x build uses the x86-64 server headers' pg_config.h
# plus -DWORDS_BIGENDIAN: its other values match s390x LP64 (SIZEOF_LONG 8,
# MAXIMUM_ALIGNOF 8, ...) except ALIGNOF_PG_INT128_TYPE (16; 8 on s390x,
# and int128 is not used here) and the x86-only HAVE_X86_64_POPCNTQ,
# HAVE__GET_CPUID, USE_SSE42_CRC32C_WITH_RUNTIME_CHECK (no code of the
# tokenizer uses them).  qemu-user emulates the s390x instructions; it is
# not real hardware.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
rev=${1:-}
PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
XXHASH_H=${XXHASH_H:-/usr/include/xxhash.h}
NICE="nice -n 19"

need=()
command -v s390x-linux-gnu-gcc >/dev/null || need+=(gcc-s390x-linux-gnu)
command -v qemu-s390x >/dev/null || need+=(qemu-user)
if [ ${#need[@]} -gt 0 ]; then
	echo "run.sh: installing ${need[*]}"
	apt-get update -q >/dev/null
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${need[@]}" >/dev/null
fi

tmp=$(mktemp -d /tmp/simhash-be.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/tree/test/be" "$tmp/inc"
if [ -n "$rev" ]; then
	git -C "$root" archive "$rev" src | tar -x -C "$tmp/tree"
	echo "run.sh: src/ of $(git -C "$root" rev-parse --short "$rev")"
else
	cp -r "$root/src" "$tmp/tree/"
	echo "run.sh: src/ of the working tree ($root)"
fi
cp "$here/harness.c" "$tmp/tree/test/be/"
cp "$XXHASH_H" "$tmp/inc/"
pginc=$("$PG_CONFIG" --includedir-server)

# PGXS's flags for the extension, minus the x86-only ones
CFLAGS="-O2 -fno-strict-aliasing -fwrapv -fexcess-precision=standard -Wall -Wextra
	-Wno-unused-parameter -Wno-sign-compare -Wno-missing-field-initializers"
INC="-I$tmp/inc -I$pginc"
src="$tmp/tree/test/be/harness.c"

python3 "$here/texts.py" > "$tmp/texts" 2>"$tmp/texts.log"
ntexts=$(tr -cd '\000' < "$tmp/texts" | wc -c)	# each text ends with a NUL byte

echo "run.sh: building"
$NICE gcc $CFLAGS $INC "$src" -o "$tmp/h-x86"
$NICE gcc $CFLAGS -U__SSE2__ $INC "$src" -o "$tmp/h-x86-nosse" 2>/dev/null
qemu=(qemu-s390x)
if ! $NICE s390x-linux-gnu-gcc $CFLAGS -static -DWORDS_BIGENDIAN $INC "$src" -o "$tmp/h-s390x"; then
	echo "run.sh: static link failed, linking dynamically"
	$NICE s390x-linux-gnu-gcc $CFLAGS -DWORDS_BIGENDIAN $INC "$src" -o "$tmp/h-s390x" -L /usr/s390x-linux-gnu
	qemu=(qemu-s390x -L /usr/s390x-linux-gnu)
fi
$NICE s390x-linux-gnu-gcc $CFLAGS -static -DHARNESS_NO_ORDER_CHECK $INC "$src" -o "$tmp/h-s390x-ctl" 2>/dev/null ||
	$NICE s390x-linux-gnu-gcc $CFLAGS -DHARNESS_NO_ORDER_CHECK $INC "$src" -o "$tmp/h-s390x-ctl" -L /usr/s390x-linux-gnu 2>/dev/null

echo "run.sh: running on $ntexts texts"
$NICE "$tmp/h-x86" "$tmp/texts" > "$tmp/out-x86" 2> "$tmp/err-x86"
$NICE "$tmp/h-x86-nosse" "$tmp/texts" > "$tmp/out-x86-nosse" 2> "$tmp/err-x86-nosse"
$NICE "${qemu[@]}" "$tmp/h-s390x" "$tmp/texts" > "$tmp/out-s390x" 2> "$tmp/err-s390x"
ctl=$( ($NICE "${qemu[@]}" "$tmp/h-s390x-ctl" "$tmp/texts" > "$tmp/out-ctl" 2>/dev/null; echo $?) 2>/dev/null )
sed 's/^/  x86-64:        /' "$tmp/err-x86"
sed 's/^/  x86-64 -SSE2:  /' "$tmp/err-x86-nosse"
sed 's/^/  s390x (qemu):  /' "$tmp/err-s390x"

fail=0
if ! grep -q 'byte order at run time: big-endian; WORDS_BIGENDIAN defined' "$tmp/err-s390x"; then
	echo "run.sh: FAIL: the s390x binary is not big-endian with WORDS_BIGENDIAN"
	fail=1
fi
if ! grep -q 'byte order at run time: little-endian; WORDS_BIGENDIAN not defined; SSE2 path compiled' "$tmp/err-x86"; then
	echo "run.sh: FAIL: the native binary is not little-endian x86-64 with SSE2"
	fail=1
fi
nlines=$(wc -l < "$tmp/out-x86")
if [ "$nlines" -ne $((ntexts * 7)) ]; then
	echo "run.sh: FAIL: $nlines lines for $ntexts texts"
	fail=1
fi

compare() {		# name file
	if cmp -s "$tmp/out-x86" "$2"; then
		echo "run.sh: $1: all $nlines lines agree with x86-64"
	else
		echo "run.sh: FAIL: $1 differs from x86-64 ($(diff "$tmp/out-x86" "$2" | grep -c '^>' || true) lines); the first differences (< x86-64, > $1):"
		diff "$tmp/out-x86" "$2" | head -20
		fail=1
	fi
}
compare "s390x" "$tmp/out-s390x"
compare "x86-64 without SSE2" "$tmp/out-x86-nosse"

if [ "$ctl" -eq 0 ] && cmp -s "$tmp/out-x86" "$tmp/out-ctl"; then
	echo "run.sh: FAIL: negative control: s390x without WORDS_BIGENDIAN gives the same output"
	fail=1
else
	echo "run.sh: negative control: s390x without WORDS_BIGENDIAN differs, as it must" \
		"($(diff "$tmp/out-x86" "$tmp/out-ctl" | grep -c '^>' || true) lines differ, exit $ctl)"
fi

if /usr/bin/python3 -c 'import unicodedata, xxhash; assert unicodedata.unidata_version == "14.0.0"' 2>/dev/null; then
	$NICE /usr/bin/python3 "$here/reference_check.py" "$tmp/texts" > "$tmp/out-ref"
	compare "test/reference.py" "$tmp/out-ref"
else
	echo "run.sh: skipped the test/reference.py check (/usr/bin/python3 lacks xxhash or Unicode 14.0.0)"
fi

if [ "$fail" -ne 0 ]; then
	echo "run.sh: FAILED"
	exit 1
fi
echo "run.sh: OK: $ntexts texts, $nlines lines, identical on x86-64 and s390x (big-endian)"
