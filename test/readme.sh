#!/usr/bin/env bash
# test/readme.sh: every SQL block of README.md, in order, on a fresh database.
#   bash test/readme.sh        (run by test/run-tests.sh on its cluster)
# Needs a running server with simhash installed (PGHOST, PGPORT, PGUSER of
# the environment).  Each ```sql block runs as pasted into psql (psql
# variables and meta-commands included), all in one psql session, stopping at
# the first error; a block followed by a plain ``` block of psql output must print exactly that
# output (compared without trailing white space).  A block marked
# <!-- readme-test: citus --> needs a Citus cluster: it is skipped here, with
# its reason.  NOTICEs are not compared.  Ends with "readme: N passed, M failed".
set -uo pipefail
cd "$(dirname "$0")/.."

readme=${README:-README.md}
db=simhash_readme_test
work=$(mktemp -d /tmp/simhash-readme.XXXXXX)
trap 'rm -rf "$work"' EXIT

# split README into numbered blocks: NNN.sql (the code), NNN.out (the output
# shown right after it, if any), NNN.skip (the reason to skip it)
python3 - "$readme" "$work" <<'EOF'
import re, sys
text = open(sys.argv[1], encoding='utf-8').read().split('\n')
out = sys.argv[2]
i, n, mark = 0, 0, None
while i < len(text):
    line = text[i]
    m = re.match(r'<!-- readme-test: (\w+) -->', line)
    if m:
        mark = m.group(1)
    if line.strip() == '```sql':
        j = i + 1
        while text[j].strip() != '```':
            j += 1
        n += 1
        base = '%s/%03d' % (out, n)
        open(base + '.sql', 'w', encoding='utf-8').write('\n'.join(text[i + 1:j]) + '\n')
        open(base + '.line', 'w').write(str(i + 1))
        if mark:
            open(base + '.skip', 'w').write(mark)
        mark = None
        # a plain ``` block right after it: the output psql must print
        if j + 1 < len(text) and text[j + 1].strip() == '```':
            k = j + 2
            while text[k].strip() != '```':
                k += 1
            open(base + '.out', 'w', encoding='utf-8').write('\n'.join(text[j + 2:k]) + '\n')
            j = k
        i = j
    elif line.startswith('```'):
        j = i + 1
        while text[j].strip() != '```':
            j += 1
        i = j
        mark = None
    i += 1
EOF

psql -X -q -d postgres -c "SET client_min_messages = warning" -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db" >/dev/null || {
	echo "readme: cannot create database $db"
	echo "readme: 0 passed, 1 failed"
	exit 1
}

# one psql session, as a reader pasting block after block: psql variables set
# by one block serve the next ones; a marker line before each block splits
# the output; the first error stops the session
: >"$work/all.sql"
for sql in "$work"/*.sql; do
	[ "$sql" = "$work/all.sql" ] && continue
	base=${sql%.sql}
	[ -f "$base.skip" ] && continue
	printf '\\echo @@block %s\n' "$(basename "$base")" >>"$work/all.sql"
	cat "$sql" >>"$work/all.sql"
done
psql -X -q -d "$db" -v ON_ERROR_STOP=1 -P footer=off -f "$work/all.sql" >"$work/all.got" 2>&1

python3 - "$work" <<'EOF2'
import glob, os, re, sys
work = sys.argv[1]
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
        got.setdefault('000', []).append(line.rstrip())
passed = failed = 0
for sql in sorted(glob.glob(os.path.join(work, '[0-9]*.sql'))):
    base = sql[:-4]
    name = os.path.basename(base)
    where = 'README.md:' + open(base + '.line').read()
    if os.path.exists(base + '.skip'):
        print('block at %s: skipped (needs a %s cluster, which this test does not start)'
              % (where, open(base + '.skip').read()))
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
            print('block at %s: FAILED (output differs from the README)' % where)
            print('    README:')
            for l in want:
                print('      ' + l)
            print('    psql:')
            for l in have:
                print('      ' + l)
            failed += 1
            continue
    print('block at %s: ok' % where)
    passed += 1
for l in got.get('000', []):
    print('before the first block: ' + l)
print('readme: %d passed, %d failed' % (passed, failed))
sys.exit(1 if failed else 0)
EOF2
rc=$?

psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $db" >/dev/null
exit $rc
