"""Helper of test/bench/speed.sh, run after test/bench/speed.py: the array and tsvector
forms of simhash, timed the same way (one backend, REPS interleaved rounds,
median backend CPU time), side by side with the revisions of SPEED_REVS.

Tables made from speed.py's English table `en` (every row):
  en_words  regexp_split_to_array(lower(body), '\\W+')   simhash(text[])
  en_tsv    to_tsvector('simple', body)                   simhash(tsvector)
Like the texts, the values are stored uncompressed (STORAGE EXTERNAL).  For
each, the time of reading the values alone (array_length(body, 1),
length(body): detoasting them) is measured too, and the speed-ups are given
both whole and net of that reading.

Usage: python3 test/bench/speed_forms.py OUT.md   (appends a section to OUT.md)
"""
import os
import statistics
import sys

import speed

# (table, how it is made from en, the reading baseline, the C symbol of simhash(form))
FORMS = [
    ("en_words", "regexp_split_to_array(lower(body), '\\W+')", "array_length(body, 1)",
     "simhash_features", "text[]"),
    ("en_tsv", "to_tsvector('simple', body)", "length(body)", "simhash_tsvector", "tsvector"),
]


def main():
    md_path = sys.argv[1]
    revs = [item.split("=", 1) for item in os.environ.get("SPEED_LIBS", "").split()]
    queries = {}
    for table, make, reading, symbol, argtype in FORMS:
        speed.log(f"making {table}")
        # stored uncompressed, as speed.py stores the texts
        speed.psql(f"CREATE TABLE {table} AS SELECT {make} AS body FROM en WITH NO DATA")
        speed.psql(f"ALTER TABLE {table} ALTER body SET STORAGE EXTERNAL")
        speed.psql(f"INSERT INTO {table} SELECT {make} FROM en")
        speed.psql(f"VACUUM ANALYZE {table}")
        speed.psql(f"SELECT pg_prewarm('{table}'), pg_prewarm(reltoastrelid) "
                   f"FROM pg_class WHERE relname = '{table}'")
        queries[table] = [("reading", reading), ("now", "simhash(body)")]
        for tag, path in revs:
            speed.psql(f"CREATE FUNCTION simhash_{tag}({argtype}) RETURNS simhash "
                       f"AS '{path}', '{symbol}' LANGUAGE C IMMUTABLE STRICT")
            queries[table].append((tag, f"simhash_{tag}(body)"))
    sess = speed.Session()
    cpu = {}
    for rep in range(speed.REPS):
        for table, *_ in FORMS:
            for label, expr in queries[table]:
                _, c = sess.time_query(speed.sql_of(expr, "where", table))
                cpu.setdefault((table, label), []).append(c)
                speed.log(f"rep {rep + 1}/{speed.REPS} {table} {expr}: cpu {c:.2f} s")
    sess.close()

    m = {k: statistics.median(v) for k, v in cpu.items()}
    L = ["", "## The array and tsvector forms", "",
         f"Median backend CPU seconds of {speed.REPS} interleaved rounds over tables made from "
         "`en`; reading = the time of detoasting the values alone; x REV = how many times "
         "faster than that revision, whole / net of reading.", ""]
    head = "| form | rows | reading s | simhash s |" + "".join(f" {t} s | x {t} |" for t, _ in revs)
    L += [head, "|---" * (4 + 2 * len(revs)) + "|"]
    for table, make, reading, symbol, argtype in FORMS:
        rows = speed.psql(f"SELECT count(*) FROM {table}")
        r, now = m[(table, "reading")], m[(table, "now")]
        line = f"| `simhash({argtype})` | {rows} | {r:.2f} | {now:.2f} |"
        for tag, _ in revs:
            old = m[(table, tag)]
            net = f"{(old - r) / (now - r):.1f}" if now > r else "n/a"
            line += f" {old:.2f} | {old / now:.1f} / {net} |"
        L.append(line)
    text = "\n".join(L)
    print(text)
    with open(md_path, "a") as f:
        f.write(text + "\n")


if __name__ == "__main__":
    main()
