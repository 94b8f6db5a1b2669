#!/usr/bin/env bash
# test/bench/fpbench/run.sh: the fingerprint functions outside the server, on the
# corpus, side by side with earlier revisions: instructions executed
# (Valgrind's cachegrind: the same number on every run, whatever the
# machine's neighbours do) and CPU time, and the fingerprints compared.
#
#   bash test/bench/fpbench/run.sh [REV...]        (default: 636edec, that is 0.3.0)
#
# For the working tree's src/ and each REV's, compiles src/fingerprint.c
# and src/tokenize.c with the server's compiler flags (pg_config) into
# driver.c (the server functions are test/fuzz/stubs.c's, with
# PostgreSQL's libpgcommon), then for simhash(body) (3-shingles,
# sublinear), simhash_ngram(body) (3, tf) and simhash(text[]) (the ASCII
# words) over the English and the Chinese documents of
# ../shared/data/{natural,edited} (SIMHASH_DATA):
#   - instructions per byte of text: cachegrind over the first 2 MB, minus
#     reading them (a run with no pass), whole program;
#   - CPU time: FPBENCH_ROUNDS (default 7) rounds alternating the builds,
#     each the fastest of 3 passes over all the documents; the median;
#   - sameness: the XOR of all fingerprints must be the same for every
#     build (exit 1 otherwise).
# Needs gcc, pg_config (server headers and libpgcommon), xxHash headers;
# valgrind for the instruction counts (n/a without it).
# Limits: no server (no detoasting, executor, TOAST), so the times are
# those of the functions alone; the server's own numbers are test/bench/speed.sh's.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(git -C "$here" rev-parse --show-toplevel)
DATA=${SIMHASH_DATA:-$root/../shared/data}
PG_CONFIG=${PG_CONFIG:-pg_config}
ROUNDS=${FPBENCH_ROUNDS:-7}
revs=("$@")
[ ${#revs[@]} -gt 0 ] || revs=(636edec)

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# the documents as NUL-ended texts (COPY text format decoded)
python3 - "$DATA" "$tmp" <<'PY'
import lzma, sys
data, out = sys.argv[1], sys.argv[2]
def unescape(s):
    r, i = [], 0
    while i < len(s):
        c = s[i]
        if c == "\\" and i + 1 < len(s):
            r.append({"n": "\n", "t": "\t", "r": "\r", "\\": "\\"}.get(s[i + 1], s[i + 1]))
            i += 2
        else:
            r.append(c)
            i += 1
    return "".join(r)
for lang in ("en", "zh"):
    texts = []
    for part in ("natural", "edited"):
        with lzma.open(f"{data}/{part}/docs.{lang}.tsv.xz", "rt", encoding="utf-8") as f:
            for line in f:
                texts.append(unescape(line.rstrip("\n").split("\t", 1)[1]).encode())
    with open(f"{out}/{lang}.txt", "wb") as f:
        f.write(b"".join(t + b"\0" for t in texts))
    with open(f"{out}/{lang}.2mb.txt", "wb") as f:
        size = 0
        for t in texts:
            if size > 2_000_000:
                break
            f.write(t + b"\0")
            size += len(t)
PY

cflags=$("$PG_CONFIG" --cflags)
cflags_sl=$("$PG_CONFIG" --cflags_sl)
inc=$("$PG_CONFIG" --includedir-server)
build() {	# build TREE NAME
	gcc $cflags $cflags_sl -I"$1/src" -I"$inc" -w -o "$tmp/$2" "$here/driver.c" \
		"$here/../../fuzz/stubs.c" "$1/src/fingerprint.c" "$1/src/tokenize.c" \
		"$("$PG_CONFIG" --pkglibdir)/libpgcommon.a" "$("$PG_CONFIG" --pkglibdir)/libpgport.a" -lm
}
names=(now)
build "$root" now
for rev in "${revs[@]}"; do
	name=$(git -C "$root" rev-parse --short=7 "$rev")
	mkdir -p "$tmp/tree-$name"
	git -C "$root" archive "$rev" src | tar -x -C "$tmp/tree-$name"
	build "$tmp/tree-$name" "$name"
	names+=("$name")
done

# instructions of one build on the 2 MB file with PASSES passes
count() {	# count NAME LANG PASSES MODE
	valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \
		"$tmp/$1" "$tmp/$2.2mb.txt" "$3" "$4" 2>&1 | awk '/I *refs/ {gsub(",", "", $NF); print $NF}'
}
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

status=0
echo "| function | text | build | instructions per byte | x now | CPU ms (median of $ROUNDS) | MB/s | x now |"
echo "|---|---|---|---:|---:|---:|---:|---:|"
for mode in text ngram array; do
	for lang in en zh; do
		[ "$mode" = array ] && [ "$lang" = zh ] && continue
		declare -A ins=() ms=() xor=()
		for name in "${names[@]}"; do
			if command -v valgrind >/dev/null; then
				mb=$("$tmp/$name" "$tmp/$lang.2mb.txt" 0 "$mode" | awk '{print $2}')
				ins[$name]=$(python3 -c "print(($(count "$name" "$lang" 1 "$mode") - \
					$(count "$name" "$lang" 0 "$mode")) / ($mb * 1e6))")
			fi
		done
		for r in $(seq "$ROUNDS"); do
			for name in "${names[@]}"; do
				read -r _ mb t x < <("$tmp/$name" "$tmp/$lang.txt" 3 "$mode")
				ms[$name]+="$t "
				xor[$name]=$x
			done
		done
		medn=$(median ${ms[now]})
		for name in "${names[@]}"; do
			med=$(median ${ms[$name]})
			python3 -c "
i, i0 = '${ins[$name]:-}', '${ins[now]:-}'
print('| %s | %s | %s | %s | %s | %.1f | %.0f | %.2f |' % ('$mode', '$lang', '$name',
      '%.1f' % float(i) if i else 'n/a', '%.2f' % (float(i) / float(i0)) if i else 'n/a',
      $med, $mb / ($med / 1e3), $med / $medn))"
			if [ "${xor[$name]}" != "${xor[now]}" ]; then
				echo "fpbench: $mode $lang: $name's fingerprints differ from now's (${xor[$name]} != ${xor[now]})" >&2
				status=1
			fi
		done
		unset ins ms xor
	done
done
exit $status
