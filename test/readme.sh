#!/usr/bin/env bash
# test/readme.sh: every SQL block of README.md and of each page of doc/, in
# order, each page on a fresh database.
#   bash test/readme.sh [FILE.md ...]   (run by test/run-tests.sh on its cluster)
# Needs a running server with simhash installed (PGHOST, PGPORT, PGUSER of
# the environment).  Each ```sql block runs as pasted into psql (psql
# variables and meta-commands included), all blocks of a page in one psql
# session, stopping at the first error; a block followed by a plain ``` block
# of psql output must print exactly that output (compared without trailing
# white space).  A page of doc/ continues the README's Quick start: its
# database first gets the README's blocks up to the one marked
# <!-- readme-test: setup -->.  A block marked before its opening line with
#   <!-- readme-test: fragment -->   (part of a statement, a signature, or
#                                     a statement with $1 parameters for an
#                                     application),
#   <!-- readme-test: benchmark -->  (needs a benchmark's corpus or tables),
#   <!-- readme-test: citus -->      (needs a Citus cluster)
# is skipped, with its reason.  NOTICEs are not compared.  A statement that
# runs longer than 60 s fails (a recipe must terminate).  Ends with
# "readme: N passed, M failed".
set -uo pipefail
cd "$(dirname "$0")/.."

if [ $# -gt 0 ]; then
	pages=("$@")
else
	pages=(README.md doc/*.md)
fi
db=simhash_readme_test
work=$(mktemp -d /tmp/simhash-readme.XXXXXX)
trap 'rm -rf "$work"' EXIT
passed_all=0 failed_all=0

# run_page PAGE: splits PAGE into its blocks, runs them, compares; adds to the counts
run_page() {
	local readme=$1 rc
	rm -rf "$work/page"
	mkdir -p "$work/page"

# split README into numbered blocks: NNN.sql (the code), NNN.out (the output
# shown right after it, if any), NNN.skip (the reason to skip it)
python3 - "$readme" "$work/page" <<'EOF'
import re, sys
page = sys.argv[1]
out = sys.argv[2]
# a page of doc/ first runs the README's blocks up to the setup mark
setup = []
if page != 'README.md':
    lines = open('README.md', encoding='utf-8').read().split('\n')
    marked = False
    for i, line in enumerate(lines):
        if re.match(r'<!-- readme-test: setup -->', line):
            marked = True
        if line.strip() == '```sql':
            j = i + 1
            while lines[j].strip() != '```':
                j += 1
            setup.append('\n'.join(lines[i + 1:j]))
            if marked:
                break
open(out + '/setup.sql', 'w', encoding='utf-8').write('\n'.join(setup) + '\n')
text = open(page, encoding='utf-8').read().split('\n')
def close(j, opened):
    # the line of the fence that closes the block opened at line opened
    while j < len(text) and text[j].strip() != '```':
        j += 1
    if j == len(text):
        open(out + '/unclosed', 'w').write(str(opened + 1))
        sys.exit(0)
    return j
i, n, mark = 0, 0, None
while i < len(text):
    line = text[i]
    m = re.match(r'<!-- readme-test: (\w+) -->', line)
    if m and m.group(1) != 'setup':
        mark = m.group(1)
    if line.strip() == '```sql':
        j = close(i + 1, i)
        n += 1
        base = '%s/%03d' % (out, n)
        open(base + '.sql', 'w', encoding='utf-8').write('\n'.join(text[i + 1:j]) + '\n')
        open(base + '.line', 'w').write(str(i + 1))
        if mark:
            open(base + '.skip', 'w').write(mark)
        mark = None
        # a plain ``` block right after it: the output psql must print
        if j + 1 < len(text) and text[j + 1].strip() == '```':
            k = close(j + 2, j + 1)
            open(base + '.out', 'w', encoding='utf-8').write('\n'.join(text[j + 2:k]) + '\n')
            j = k
        i = j
    elif line.startswith('```'):
        i = close(i + 1, i)
        mark = None
    i += 1
EOF

	psql -X -q -d postgres -c "SET client_min_messages = warning" -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db" >/dev/null || {
		echo "readme: cannot create database $db"
		failed_all=$(( failed_all + 1 ))
		return
	}

	# one psql session, as a reader pasting block after block: psql variables set
	# by one block serve the next ones; a marker line before each block splits
	# the output; the first error stops the session
	{
		echo "SET statement_timeout = '60s';"
		echo '\echo @@block 000'
		cat "$work/page/setup.sql"
	} >"$work/page/all.sql"
	local sql base
	for sql in "$work"/page/[0-9]*.sql; do
		[ -e "$sql" ] || continue
		base=${sql%.sql}
		[ -f "$base.skip" ] && continue
		printf '\\echo @@block %s\n' "$(basename "$base")" >>"$work/page/all.sql"
		cat "$sql" >>"$work/page/all.sql"
	done
	psql -X -q -d "$db" -v ON_ERROR_STOP=1 -P footer=off -f "$work/page/all.sql" >"$work/page/all.got" 2>&1

	python3 - "$work/page" "$readme" >"$work/page/report" <<'EOF2'
import glob, os, re, sys
work, page = sys.argv[1], sys.argv[2]
got = {}
current = None
for line in open(os.path.join(work, 'all.got'), encoding='utf-8'):
    m = re.match(r'@@block (\d+)$', line.rstrip('\n'))
    if m:
        current = m.group(1)
        got[current] = []
    elif current is not None:
        got[current].append(line.rstrip())
    else:
        got.setdefault('before', []).append(line.rstrip())
reasons = {'citus': 'needs a Citus cluster, which this test does not start',
           'fragment': 'a fragment, not a statement to paste',
           'benchmark': "needs a benchmark's corpus"}
passed = failed = 0
if os.path.exists(os.path.join(work, 'unclosed')):
    print('%s: FAILED: the code block opened at line %s is never closed'
          % (page, open(os.path.join(work, 'unclosed')).read()))
    failed += 1
setup_errors = [l for l in got.get('000', []) if re.match(r'^(psql:\S+: )?(ERROR|WARNING|FATAL):', l)]
if setup_errors:
    print('%s: FAILED: the README\'s Quick start did not run as its setup' % page)
    for l in setup_errors:
        print('    ' + l)
    failed += 1
for sql in sorted(glob.glob(os.path.join(work, '[0-9]*.sql'))):
    base = sql[:-4]
    name = os.path.basename(base)
    where = '%s:%s' % (page, open(base + '.line').read())
    if os.path.exists(base + '.skip'):
        mark = open(base + '.skip').read()
        print('block at %s: skipped (%s)' % (where, reasons.get(mark, 'marked ' + mark)))
        continue
    lines = got.get(name)
    if lines is None:
        print('block at %s: FAILED (not run: an earlier block failed)' % where)
        failed += 1
        continue
    errors = [l for l in lines if re.match(r'^(psql:\S+: )?(ERROR|WARNING|FATAL):', l)]
    if errors:
        print('block at %s: FAILED' % where)
        for l in lines:
            print('    ' + l)
        failed += 1
        continue
    if os.path.exists(base + '.out'):
        want = [l.rstrip() for l in open(base + '.out', encoding='utf-8') if l.strip()]
        have = [l for l in lines if l.strip() and not re.match(r'^psql:\S+: NOTICE:', l)]
        if want != have:
            print('block at %s: FAILED (output differs from the page)' % where)
            print('    page:')
            for l in want:
                print('      ' + l)
            print('    psql:')
            for l in have:
                print('      ' + l)
            failed += 1
            continue
    print('block at %s: ok' % where)
    passed += 1
for l in got.get('before', []):
    print('before the first block: ' + l)
print('%d %d' % (passed, failed))
EOF2
	sed '$d' "$work/page/report"
	local counts
	counts=$(tail -n 1 "$work/page/report")
	passed_all=$(( passed_all + ${counts% *} ))
	failed_all=$(( failed_all + ${counts#* } ))
	psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $db" >/dev/null
}

for page in "${pages[@]}"; do
	run_page "$page"
done
echo "readme: $passed_all passed, $failed_all failed"
[ "$failed_all" = 0 ]
