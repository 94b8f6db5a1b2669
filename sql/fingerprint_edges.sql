-- The tokenizer's fast paths at their edges: a non-ASCII character at every
-- offset of an 8-byte step, words cut at 256 characters, CJK runs next to
-- spaces, punctuation, combining marks and characters that normalization
-- maps; and the edges of the block-wise paths (ASCII taken 1024 bytes at a
-- time, words across a block's end, short separator runs, Han runs of every
-- length and what ends them, full-width forms, a table of thousands of
-- distinct features; mixed blocks of ASCII, Han, kana, hangul and CJK
-- punctuation: runs, chains and lone characters across byte 1024, what ends
-- a block).  Expected values come from the independent Python reference
-- (test/reference.py), not from the C code.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS simhash;
RESET client_min_messages;
CREATE TEMP TABLE edge (label text, body text);
INSERT INTO edge VALUES
	(E'ascii1+combining', E'a\u0301b c'),
	(E'ascii1+cjk', E'x\u4e2d\u6587 END'),
	(E'ascii2+combining', E'aa\u0301b c'),
	(E'ascii2+cjk', E'Ab\u4e2d\u6587 END'),
	(E'ascii3+combining', E'aaa\u0301b c'),
	(E'ascii3+cjk', E'Abx\u4e2d\u6587 END'),
	(E'ascii4+combining', E'aaaa\u0301b c'),
	(E'ascii4+cjk', E'AbAb\u4e2d\u6587 END'),
	(E'ascii5+combining', E'aaaaa\u0301b c'),
	(E'ascii5+cjk', E'AbAbx\u4e2d\u6587 END'),
	(E'ascii6+combining', E'aaaaaa\u0301b c'),
	(E'ascii6+cjk', E'AbAbAb\u4e2d\u6587 END'),
	(E'ascii7+combining', E'aaaaaaa\u0301b c'),
	(E'ascii7+cjk', E'AbAbAbx\u4e2d\u6587 END'),
	(E'ascii8+combining', E'aaaaaaaa\u0301b c'),
	(E'ascii8+cjk', E'AbAbAbAb\u4e2d\u6587 END'),
	(E'ascii9+combining', E'aaaaaaaaa\u0301b c'),
	(E'ascii9+cjk', E'AbAbAbAbx\u4e2d\u6587 END'),
	(E'ascii10+combining', E'aaaaaaaaaa\u0301b c'),
	(E'ascii10+cjk', E'AbAbAbAbAb\u4e2d\u6587 END'),
	(E'word cut at 256 mid-step', E'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxYZzzzzzzzzzz tail'),
	(E'word of 300, then a word', E'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa b'),
	(E'word of 512 exactly', E'QQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQ'),
	(E'upper case and digits', E'The 3 QUICK brown Foxes2 jumped OVER 42 lazy DOGS'),
	(E'every ASCII separator', E'a\u0009b\u000ac\u000dd\u000be\u000cf\u001cg\u001fh.i,j;k:l!m?n''o"p(q)r-s/t_u[v]w{x}y<z>0@1#2$3'),
	(E'accent after ASCII at the end', E'cafe\u0301'),
	(E'accent first', E'\u0301abc'),
	(E'cjk run with spaces', E'\u4e2d \u6587\u000a\u5b57\u3000\u7b26'),
	(E'cjk and full-width comma', E'\u4e2d\uff0c\u6587\u3002\u5b57'),
	(E'cjk then voiced mark', E'\u304b\u3099\u304d \u30cf\u309a\u4e2d'),
	(E'cjk then ASCII then cjk', E'\u4e2da\u6587 b \u5b57'),
	(E'cjk extension B', E'\U00020000\U00020001\u4e2d'),
	(E'half-width katakana', E'\uff76\uff9e\uff77\uff9e\u4e2d\u6587'),
	(E'compatibility ideographs', E'\uf900\uf901\u4e2d'),
	(E'lone cjk between words', E'a \u4e2d b'),
	(E'repeats', E'the cat the cat the cat the dog and the cat'),
	(E'mixed scripts', E'Stra\u00dfe \u0421\u043b\u043e\u0432\u043e \u4e2d\u6587\u65b0\u95fb \uff46\uff55\uff4c\uff4c'),
	(E'block: word across byte 1024', repeat('a ', 510) || 'Abcdefgh end'),
	(E'block: word of 300 across byte 1024', repeat('b ', 450) || repeat('x', 300) || ' end'),
	(E'block: 3000 bytes of one word', repeat('Q', 3000) || ' q'),
	(E'block: 1023 bytes then a combining mark', repeat('c', 1023) || E'\u0301d e'),
	(E'block: 1024 bytes then cjk', repeat('d ', 512) || E'\u4e2d\u6587'),
	(E'many distinct words', (SELECT string_agg('w' || i, ' ') FROM generate_series(0, 5999) i)),
	(E'many repeats of few words', repeat('one two three four five ', 2000)),
	(E'han runs of 1 to 6', E'\u4e2d \u4e2d\u6587 \u4e2d\u6587\u5b57. \u4e2d\u6587\u5b57\u7b26, \u4e2d\u6587\u5b57\u7b26\u4e32; \u4e2d\u6587\u5b57\u7b26\u4e32\u5c3e'),
	(E'han then short separators', E'\u4e2d\u6587(\u5b57)\u7b26\n\u4e32 \u5c3e-x\u4e2d\t\t\u6587'),
	(E'han then full-width punctuation', E'\u4e2d\u6587\uff0c\u5b57\u7b26\uff1a\uff08\u4e32\uff09\uff01\u5c3e\uff1f'),
	(E'full-width letters and digits', E'\uff21\uff22\uff23 \uff44\uff45\uff46 \uff11\uff12\uff13 \u4e2d\uff21\u6587'),
	(E'kana and hangul runs', E'\u3072\u3089\u304c\u306a\u30ab\u30bf\u30ab\u30ca\u4e2d\u6587 \ud55c\uad6d\uc5b4'),
	(E'box drawing and ideographic stop', E'\u2500\u2500 \u4e2d\u6587\u3002\u5b57\u2502\u7b26\u2500x'),
	(E'unassigned next to words and han', E'ab\u0378cd \u4e2d\u0378\u6587'),
	(E'accented words between han', E'\u4e2d\u00e9t\u00e9\u6587 Stra\u00dfe\u5b57'),
	(E'mixed block: han run across byte 1024 with a space', repeat(E'\u4e2d', 341) || E' \u6587\u5b57 end'),
	(E'mixed block: han chain across byte 1024', 'x' || repeat(E'\u4e2d\u6587', 200) || '.'),
	(E'mixed block: lone han before byte 1024, word after', repeat('ab ', 339) || E'\u3002\u5b57 abc def'),
	(E'mixed block: lone han before byte 1024, han after', repeat('ab ', 339) || E'\u3002\u5b57 \u6587x'),
	(E'mixed block: lone han, ideographic space across byte 1024, full stop', repeat('ab ', 339) || E'\u3002\u5b57\u3000\u3002y'),
	(E'mixed block: han then combining mark at byte 1023', repeat(E'\u4e2d', 341) || E'\u0301\u6587'),
	(E'mixed block: punctuation and spaces between han', E'\u4e2d \n\t \u6587\u3001\u5b57\u201c\u7b26\u201d \u4e32\u2014\u5c3e'),
	(E'mixed block: kana, hangul and han with punctuation', E'\u30ab\u30bf\u30ab\u30ca\u3001\u3072\u3089\u304c\u306a\u3002\ud55c\uad6d \u4e2d\u6587'),
	(E'mixed block: curly quotes and dashes in english', E'\u201cHello\u201d \u2014 the world\u2019s end\u2026 ok'),
	(E'mixed block: a letter stops it', E'\u4e2d\u6587 caf\u00e9 \u5b57\uff21\u7b26 x'),
	(E'mixed block: sentences over 3 blocks', repeat(E'\u4e2d\u6587 news\uff0c\u6d4b\u8bd5 Test\u3002', 150));
SELECT label, simhash(body) AS "3 sublinear", simhash(body, 1, 'tf') AS "1 tf",
       simhash(body, 2, 'binary') AS "2 binary", simhash_ngram(body) AS "ngram 3 tf",
       simhash_ngram(body, 1, 'sublinear') AS "ngram 1 sublinear"
FROM edge ORDER BY label COLLATE "C";
