/*
 * tokenize.c
 *	  Text to features: the pinned tokenizer behind simhash(text) and
 *	  simhash_ngram(text).
 *
 * The steps, all independent of the server's locale, collation and encoding
 * (the caller converts the text to UTF-8 first):
 *	 1. code points unassigned in Unicode 14.0 become spaces;
 *	 2. NFKC normalization, done piecewise between "inert" characters (ASCII,
 *		CJK ideographs, kana, hangul syllables, ...), which no neighbour can
 *		change; only the runs between them are handed to PostgreSQL's
 *		unicode_normalize().  To bound memory, a run of more than
 *		SH_MAX_SEGMENT code points without an inert character is normalized
 *		in pieces of SH_MAX_SEGMENT (part of the pinned behaviour);
 *	 3. simple lower-case mapping (Unicode 14.0, table in unicode_table.h);
 *	 4. characters are classified as WORD (letters, marks, digits that are
 *		not CJK), CJK (Han, kana, hangul), SPACE or OTHER.
 *
 * Word features (SIMHASH_FEATURE_WORDS): a token is a maximal run of WORD
 * characters (split every SH_MAX_WORD_CHARS code points), or a CJK bigram:
 * every two adjacent CJK characters of a CJK run (white space inside a CJK
 * run is skipped; a run of one character is a unigram token).  Features are
 * the shingles of n consecutive tokens; a text with fewer than n tokens gives
 * one feature made of all of them.
 *
 * Unit features (SIMHASH_FEATURE_UNITS), the shingles of shingle_similarity():
 * as word features, except that every CJK character is a token of its own
 * and '_' is a word character (the units of regex \w+ and of CJK text).
 *
 * Letter features (SIMHASH_FEATURE_LETTERS), the other shingles of
 * shingle_similarity(): every WORD or CJK character is a token of its own,
 * all other characters are dropped; features are shingles of n tokens.
 *
 * Character features (SIMHASH_FEATURE_CHARS): the WORD and CJK characters in
 * order, with one space between two of them that were separated by other
 * characters (none between two CJK characters); features are the n-grams of
 * that sequence (the whole sequence when it is shorter than n).
 */
#include "simhash.h"
#include "feature_hash.h"

#include "common/unicode_norm.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"

#include "unicode_table.h"

#define SH_MAX_WORD_CHARS	256
#define SH_MAX_N			SIMHASH_MAX_SHINGLE
#define SH_MAX_SEGMENT		(1024 * 1024)	/* code points normalized at once */

typedef struct Tokenizer
{
	SimhashFeatureKind kind;
	int			n;
	SimhashFeatureCallback emit;
	void	   *arg;

	/* word features */
	unsigned char word[SH_MAX_WORD_CHARS * 4];
	int			wordlen;		/* bytes */
	int			wordchars;		/* code points */
	pg_wchar	cjk_prev;		/* last CJK character of the current run */
	int			cjk_run;		/* characters in the current CJK run */
	uint64		window[SH_MAX_N];	/* last n token hashes, oldest first */
	uint64		ntokens;

	/* character features */
	pg_wchar	chars[SH_MAX_N];	/* last n characters (ring) */
	uint64		nchars;
	bool		gap;			/* a separator since the last character */
	bool		last_cjk;		/* the last character was CJK */

	/* normalization segment */
	pg_wchar   *seg;
	int			seglen;
	int			segcap;
} Tokenizer;

/* UTF-8 (the input is already validated) */
static inline int
utf8_length(unsigned char lead)
{
	return lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;
}

static inline pg_wchar
utf8_decode(const unsigned char *p, int len)
{
	switch (len)
	{
		case 2:
			return ((p[0] & 0x1F) << 6) | (p[1] & 0x3F);
		case 3:
			return ((p[0] & 0x0F) << 12) | ((p[1] & 0x3F) << 6) | (p[2] & 0x3F);
		default:
			return ((p[0] & 0x07) << 18) | ((p[1] & 0x3F) << 12) | ((p[2] & 0x3F) << 6) | (p[3] & 0x3F);
	}
}

/* writes cp as UTF-8, returns its length */
static inline int
utf8_encode(pg_wchar cp, unsigned char *out)
{
	if (cp < 0x80)
	{
		out[0] = (unsigned char) cp;
		return 1;
	}
	if (cp < 0x800)
	{
		out[0] = 0xC0 | (cp >> 6);
		out[1] = 0x80 | (cp & 0x3F);
		return 2;
	}
	if (cp < 0x10000)
	{
		out[0] = 0xE0 | (cp >> 12);
		out[1] = 0x80 | ((cp >> 6) & 0x3F);
		out[2] = 0x80 | (cp & 0x3F);
		return 3;
	}
	out[0] = 0xF0 | (cp >> 18);
	out[1] = 0x80 | ((cp >> 12) & 0x3F);
	out[2] = 0x80 | ((cp >> 6) & 0x3F);
	out[3] = 0x80 | (cp & 0x3F);
	return 4;
}

static inline uint8
char_props(pg_wchar cp)
{
	if (cp >= 0x110000)
		return SH_UC_OTHER | SH_UC_UNASSIGNED;
	return sh_uc_stage2[sh_uc_stage1[cp >> 8]][cp & 0xFF];
}

static pg_wchar
map_lookup(const uint32 (*map)[2], int n, pg_wchar cp)
{
	int			lo = 0,
				hi = n - 1;

	while (lo <= hi)
	{
		int			mid = (lo + hi) / 2;

		if (map[mid][0] == cp)
			return map[mid][1];
		if (map[mid][0] < cp)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	elog(ERROR, "simhash: code point U+%04X missing from a character map", cp);
	return cp;					/* keep compiler quiet */
}

/* ---- feature emission ---- */

static void
emit_token(Tokenizer *t, uint64 h)
{
	if (t->n == 1)
	{
		t->ntokens++;
		t->emit(h, t->arg);
		return;
	}
	if (t->ntokens < (uint64) t->n)
		t->window[t->ntokens] = h;
	else
	{
		memmove(t->window, t->window + 1, (t->n - 1) * sizeof(uint64));
		t->window[t->n - 1] = h;
	}
	t->ntokens++;
	if (t->ntokens >= (uint64) t->n)
		t->emit(simhash_shingle_hash(t->window, t->n), t->arg);
}

static void
end_word(Tokenizer *t)
{
	if (t->wordlen > 0)
		emit_token(t, simhash_feature_hash((const char *) t->word, t->wordlen));
	t->wordlen = 0;
	t->wordchars = 0;
}

static void
end_cjk_run(Tokenizer *t)
{
	if (t->cjk_run == 1)
	{
		unsigned char buf[4];

		emit_token(t, simhash_feature_hash((const char *) buf, utf8_encode(t->cjk_prev, buf)));
	}
	t->cjk_run = 0;
}

static void
emit_char_ngram(Tokenizer *t, int len)
{
	unsigned char buf[SH_MAX_N * 4];
	int			nbytes = 0;
	int			i;

	for (i = 0; i < len; i++)
	{
		nbytes += utf8_encode(t->chars[(t->nchars - len + i) % t->n], buf + nbytes);
	}
	t->emit(simhash_feature_hash((const char *) buf, nbytes), t->arg);
}

static void
push_char(Tokenizer *t, pg_wchar c)
{
	t->chars[t->nchars % t->n] = c;
	t->nchars++;
	if (t->nchars >= (uint64) t->n)
		emit_char_ngram(t, t->n);
}

/* a SPACE or OTHER character: ends a word; OTHER also ends a CJK run */
static inline void
separator(Tokenizer *t, int cls)
{
	if (t->wordlen > 0)
		end_word(t);
	if (cls != SH_UC_SPACE && t->cjk_run > 0)
		end_cjk_run(t);			/* a CJK run continues across white space */
}

/*
 * One ASCII character followed by another ASCII character (so no
 * normalization can involve it), for word features: the hot path.
 */
static inline void
feed_ascii_word(Tokenizer *t, unsigned char c, uint8 props)
{
	switch (props & SH_UC_CLASS_MASK)
	{
		case SH_UC_WORD:
			if (t->cjk_run > 0)
				end_cjk_run(t);
			if (t->wordchars == SH_MAX_WORD_CHARS)
				end_word(t);
			t->word[t->wordlen++] = (c >= 'A' && c <= 'Z') ? c + ('a' - 'A') : c;
			t->wordchars++;
			break;
		default:
			if (c == '_' && t->kind == SIMHASH_FEATURE_UNITS)
				feed_ascii_word(t, c, SH_UC_WORD);
			else
				separator(t, props & SH_UC_CLASS_MASK);
			break;
	}
}

/* one normalized code point */
static void
feed(Tokenizer *t, pg_wchar cp, uint8 props)
{
	int			cls;

	if (cp < 0x80)
	{
		if (cp >= 'A' && cp <= 'Z')
			cp += 'a' - 'A';
	}
	else if (props & SH_UC_HAS_LOWER)
	{
		cp = map_lookup(sh_uc_lower_map, lengthof(sh_uc_lower_map), cp);
		props = char_props(cp);
	}
	cls = props & SH_UC_CLASS_MASK;
	if (cp == '_' && t->kind == SIMHASH_FEATURE_UNITS)
		cls = SH_UC_WORD;

	if (t->kind == SIMHASH_FEATURE_LETTERS)
	{
		if (cls == SH_UC_WORD || cls == SH_UC_CJK)
		{
			unsigned char buf[4];

			emit_token(t, simhash_feature_hash((const char *) buf, utf8_encode(cp, buf)));
		}
		return;
	}
	if (t->kind == SIMHASH_FEATURE_CHARS)
	{
		if (cls == SH_UC_WORD || cls == SH_UC_CJK)
		{
			bool		cjk = (cls == SH_UC_CJK);

			if (t->gap && t->nchars > 0 && !(cjk && t->last_cjk))
				push_char(t, ' ');
			push_char(t, cp);
			t->gap = false;
			t->last_cjk = cjk;
		}
		else
			t->gap = true;
		return;
	}

	switch (cls)
	{
		case SH_UC_WORD:
			if (t->cjk_run > 0)
				end_cjk_run(t);
			if (t->wordchars == SH_MAX_WORD_CHARS)
				end_word(t);
			if (cp < 0x80)
				t->word[t->wordlen++] = (unsigned char) cp;
			else
				t->wordlen += utf8_encode(cp, t->word + t->wordlen);
			t->wordchars++;
			break;
		case SH_UC_CJK:
			if (t->wordlen > 0)
				end_word(t);
			if (t->kind == SIMHASH_FEATURE_UNITS)
			{
				unsigned char buf[4];

				emit_token(t, simhash_feature_hash((const char *) buf, utf8_encode(cp, buf)));
				break;
			}
			if (t->cjk_run > 0)
			{
				unsigned char buf[8];
				int			len = utf8_encode(t->cjk_prev, buf);

				len += utf8_encode(cp, buf + len);
				emit_token(t, simhash_feature_hash((const char *) buf, len));
			}
			t->cjk_prev = cp;
			t->cjk_run++;
			break;
		default:
			separator(t, cls);
			break;
	}
}

static void
finish(Tokenizer *t)
{
	if (t->kind == SIMHASH_FEATURE_CHARS)
	{
		if (t->nchars > 0 && t->nchars < (uint64) t->n)
			emit_char_ngram(t, (int) t->nchars);
		return;
	}
	end_word(t);
	end_cjk_run(t);
	if (t->ntokens > 0 && t->ntokens < (uint64) t->n)
		t->emit(simhash_shingle_hash(t->window, (int) t->ntokens), t->arg);
}

/* ---- decoding and piecewise normalization ---- */

/*
 * Decode the code point at *pos (input already verified as UTF-8 by the
 * caller) and apply step 1 and the single-character NFKC shortcut.
 */
static inline pg_wchar
next_char(const unsigned char *s, size_t len, size_t *pos, uint8 *props)
{
	pg_wchar	cp;
	uint8		p;

	if (s[*pos] < 0x80)
	{
		cp = s[*pos];
		(*pos)++;
		*props = char_props(cp);
		return cp;
	}
	{
		int			n = utf8_length(s[*pos]);

		cp = utf8_decode(s + *pos, n);
		*pos += n;
	}
	p = char_props(cp);
	if (p & SH_UC_UNASSIGNED)
	{
		cp = ' ';
		p = char_props(cp);
	}
	else if (p & SH_UC_MAPS_INERT)
	{
		cp = map_lookup(sh_uc_nfkc_map, lengthof(sh_uc_nfkc_map), cp);
		p = char_props(cp);
	}
	*props = p;
	return cp;
}

static void
seg_append(Tokenizer *t, pg_wchar cp)
{
	if (t->seglen + 1 >= t->segcap)
	{
		t->segcap *= 2;
		t->seg = repalloc(t->seg, t->segcap * sizeof(pg_wchar));
	}
	t->seg[t->seglen++] = cp;
}

static void
seg_flush(Tokenizer *t)
{
	pg_wchar   *out;
	int			i;

	t->seg[t->seglen] = 0;
	if (unicode_is_normalized_quickcheck(UNICODE_NFKC, t->seg) == UNICODE_NORM_QC_YES)
		out = t->seg;
	else
		out = unicode_normalize(UNICODE_NFKC, t->seg);
	for (i = 0; out[i] != 0; i++)
		feed(t, out[i], char_props(out[i]));
	if (out != t->seg)
		pfree(out);
	t->seglen = 0;
}

void
simhash_tokenize(const char *utf8, size_t len, SimhashFeatureKind kind, int n,
				 SimhashFeatureCallback emit, void *arg)
{
	const unsigned char *s = (const unsigned char *) utf8;
	Tokenizer  *t = palloc0(sizeof(Tokenizer));
	size_t		pos = 0;
	size_t		next_check = 65536;
	pg_wchar	cur;
	uint8		cur_props;

	Assert(n >= 1 && n <= SH_MAX_N);
	t->kind = kind;
	t->n = n;
	t->emit = emit;
	t->arg = arg;
	t->segcap = 64;
	t->seg = palloc(t->segcap * sizeof(pg_wchar));

	if (len == 0)
	{
		finish(t);
		return;
	}
	cur = next_char(s, len, &pos, &cur_props);
	for (;;)
	{
		pg_wchar	nxt = 0;
		uint8		nxt_props = 0;
		bool		more = pos < len;

		if (pos >= next_check)
		{
			CHECK_FOR_INTERRUPTS();
			next_check = pos + 65536;
		}
		/* runs of ASCII need no normalization and no table beyond ASCII */
		if (cur < 0x80 && (t->kind == SIMHASH_FEATURE_WORDS || t->kind == SIMHASH_FEATURE_UNITS))
		{
			while (pos < len && s[pos] < 0x80)
			{
				feed_ascii_word(t, (unsigned char) cur, cur_props);
				cur = s[pos++];
				cur_props = sh_uc_stage2[0][cur];
				if (pos >= next_check)
				{
					CHECK_FOR_INTERRUPTS();
					next_check = pos + 65536;
				}
			}
			more = pos < len;
		}
		if (more)
			nxt = next_char(s, len, &pos, &nxt_props);

		if ((cur_props & SH_UC_INERT) && (!more || (nxt_props & SH_UC_INERT)))
			feed(t, cur, cur_props);	/* the common case: nothing to normalize */
		else
		{
			/* cur starts a segment that runs to the next inert character */
			seg_append(t, cur);
			while (more && !(nxt_props & SH_UC_INERT))
			{
				seg_append(t, nxt);
				if (t->seglen >= SH_MAX_SEGMENT)
				{
					seg_flush(t);
					CHECK_FOR_INTERRUPTS();
				}
				more = pos < len;
				if (more)
					nxt = next_char(s, len, &pos, &nxt_props);
			}
			if (t->seglen > 0)
				seg_flush(t);
		}
		if (!more)
			break;
		cur = nxt;
		cur_props = nxt_props;
	}
	finish(t);
	pfree(t->seg);
	pfree(t);
}
