#!/usr/bin/env bash
# test/bench/linkage_quality.sh: what each linkage removes on the evaluation corpus,
# and how many of those removals are true near-duplicates of the kept row.
#
# What it measures: for the public corpus (sets natural and edited, languages
# en and zh), fingerprints simhash(body); simhash_lineage(query, 16, 0.8,
# linkage, 3, units) (units 'words' for en, 'characters' for zh: the corpus's
# definitions) with linkage 'single' and 'center', in id order and keeping the
# longest document (rank -length(body)).  For each run:
#   removed    rows whose kept row is another row
#   precision  share of the removals whose Jaccard similarity with their kept
#              row is >= 0.8 by the corpus's truth table (exact, in integers);
#              cross-checked with the corpus's eval.py on the (removed, kept)
#              pairs (the script fails if the two disagree)
#   recall     true removals / (rows in a group of the truth graph at 0.8 minus
#              the number of groups): the most rows that can go while one row
#              of every group of near-duplicates stays
#   vs single  true removals of the run / true removals of 'single' alike
#   seconds    wall time of the simhash_lineage call
#
# How to run (from the repository root, after make install):
#   bash test/bench/linkage_quality.sh          (a few minutes on 2 cores)
# Environment: SIMHASH_DATA = corpus directory (default: <repo>/../shared/data).
# Output: a markdown table on stdout and in test/out/linkage_quality.md.
set -euo pipefail

root=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
cd "$root"
data=${SIMHASH_DATA:-$root/../shared/data}
data=$(cd "$data" && pwd)
mkdir -p test/out

source test/cluster.sh
dir=$(mktemp -d)
chmod 755 "$dir"
trap 'stop_cluster "$dir"; rm -rf "$dir"' EXIT
PGPORT_WANTED=5497 start_cluster "$dir" "jit = off" "shared_buffers = 256MB" "work_mem = 64MB"

psql -X -q -v ON_ERROR_STOP=1 -c 'CREATE EXTENSION simhash'
for s in natural edited; do
	for l in en zh; do
		psql -X -q -v ON_ERROR_STOP=1 \
			-c "CREATE TABLE ${s}_${l}_raw (id text PRIMARY KEY, body text NOT NULL)" \
			-c "\\copy ${s}_${l}_raw FROM PROGRAM 'xzcat $data/$s/docs.$l.tsv.xz'" \
			-c "CREATE TABLE ${s}_${l} AS SELECT row_number() OVER (ORDER BY id) AS n, id, body,
			        simhash(body) AS fp, -length(body) AS longest FROM ${s}_${l}_raw" \
			-c "ANALYZE ${s}_${l}"
	done
done

out=$dir/out
mkdir -p "$out"

for s in natural edited; do
	for l in en zh; do
		units=words
		[ $l = zh ] && units=characters
		for linkage in single center; do
			for order in id longest; do
				rank=""
				[ $order = longest ] && rank=", longest"
				start=$(date +%s.%N)
				psql -X -q -v ON_ERROR_STOP=1 -c "\\copy (SELECT a.id, b.id, l.distance, l.similarity
					FROM simhash_lineage('SELECT n, fp, body$rank FROM ${s}_${l}', 16, 0.8, '$linkage', 3, '$units') l
					JOIN ${s}_${l} a ON a.n = l.id JOIN ${s}_${l} b ON b.n = l.kept_id) TO '$out/$s.$l.$linkage.$order.tsv'"
				awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f\n", b - a }' >"$out/$s.$l.$linkage.$order.seconds"
				echo "$s $l $linkage $order: $(cat "$out/$s.$l.$linkage.$order.seconds") s" >&2
			done
		done
	done
done

python3 - "$data" "$out" <<'EOF' | tee test/out/linkage_quality.md
import os, re, subprocess, sys
from fractions import Fraction
sys.path.insert(0, sys.argv[1])
from shingle import open_text

data, out = sys.argv[1], sys.argv[2]
T = Fraction(4, 5)


def truth(setname, lang):
    j = {}
    with open_text(os.path.join(data, setname, 'truth.tsv')) as f:
        for line in f:
            if line.startswith('#'):
                continue
            v = line.rstrip('\n').split('\t')
            if not v[0].startswith(lang):
                continue
            inter, sa, sb = int(v[3]), int(v[4]), int(v[5])
            j[(v[0], v[1]) if v[0] < v[1] else (v[1], v[0])] = Fraction(inter, sa + sb - inter)
    return j


def removable(j):
    """rows in a group of the truth graph at T minus the number of groups"""
    parent = {}

    def find(x):
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x
    for (a, b), v in j.items():
        if v >= T:
            parent[find(a)] = find(b)
    return len(parent) - len({find(x) for x in list(parent)})


def eval_precision(path, setname, lang):
    pairs = os.path.join(out, 'pairs.tsv')
    with open(path) as f, open(pairs, 'w') as g:
        for line in f:
            a, b = line.split('\t')[:2]
            if a != b:
                g.write('%s\t%s\n' % (a, b))
    r = subprocess.run([sys.executable, os.path.join(data, 'eval.py'), pairs, os.path.join(data, setname),
                        '--thresholds', '0.8', '--lang', lang], capture_output=True, text=True, check=True).stdout
    m = re.search(r'^all\s+\d+\s+(\d+)\s+(\d+)\s', r, re.M)
    return int(m.group(1)), int(m.group(2))


print('| set | lang | linkage | kept row | removed | precision | recall | vs single | seconds |')
print('|---|---|---|---|---:|---:|---:|---:|---:|')
problems = []
for s in ('natural', 'edited'):
    for l in ('en', 'zh'):
        j = truth(s, l)
        most = removable(j)
        true_single = {}
        for linkage in ('single', 'center'):
            for order in ('id', 'longest'):
                base = os.path.join(out, '%s.%s.%s.%s' % (s, l, linkage, order))
                removed = good = 0
                with open(base + '.tsv') as f:
                    for line in f:
                        a, b = line.split('\t')[:2]
                        if a == b:
                            continue
                        removed += 1
                        good += j.get((a, b) if a < b else (b, a), 0) >= T
                tp, fp = eval_precision(base + '.tsv', s, l)
                if (tp, tp + fp) != (good, removed):
                    problems.append('%s %s %s %s: eval.py %d of %d, here %d of %d' % (
                        s, l, linkage, order, tp, tp + fp, good, removed))
                if linkage == 'single':
                    true_single[order] = good
                with open(base + '.seconds') as f:
                    seconds = float(f.read())
                print('| %s | %s | %s | %s | %d | %.4f | %.4f | %.4f | %.1f |' % (
                    s, l, linkage, 'smallest id' if order == 'id' else 'longest', removed,
                    good / removed if removed else 1.0, good / most if most else 1.0,
                    good / true_single[order] if true_single[order] else 1.0, seconds))
for p in problems:
    print('MISMATCH', p)
sys.exit(1 if problems else 0)
EOF
