/*
 * tokenize.c
 *	  Text to features: the pinned tokenizer behind simhash(text) and
 *	  simhash_ngram(text).
 *
 * The steps, all independent of the server's locale, collation and encoding
 * (the caller converts the text to UTF-8 first, simhash_as_utf8):
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
 *
 * How it is fast (the output is defined by the steps above alone): the text
 * is cut into "pieces" that are normalized independently (an inert character
 * followed by an inert character is a piece of its own; otherwise a piece
 * runs to the next inert character).  Fast paths take the pieces of their
 * own without the general path's decoding and segment handling:
 *	 - word features, a block of up to SH_BLOCK bytes at a time
 *	   (block_words()): one pass (SSE2 where the compiler targets it,
 *	   otherwise eight bytes of word arithmetic) lower-cases the ASCII
 *	   letters and gathers bit masks of ASCII word bytes and of the first
 *	   bytes of Han characters (a range test on two bytes); the few other
 *	   non-ASCII characters are looked up once each (kana, hangul and other
 *	   CJK characters that normalization leaves alone, and the separators:
 *	   CJK punctuation, quotation marks, the full-width forms of ASCII
 *	   punctuation, the ideographic space); a letter or anything that
 *	   normalization may change ends the block.  Words are read off the
 *	   masks as start and end positions and hashed by length class (XXH3's
 *	   code for each class, without its branches on the length); CJK runs
 *	   are chains of adjacent characters, linked across white space by one
 *	   addition over the masks, and their bigrams hashed straight from the
 *	   block.  The tokens are emitted in text order.
 *	 - character features: ASCII eight bytes at a time; other characters
 *	   that are inert (or that NFKC maps to one inert character) and
 *	   followed by an inert one go to feed() one by one; runs of CJK
 *	   characters that normalization and lower-casing leave alone (the CJK
 *	   Unified Ideographs block by a range test) are found first, then
 *	   their bytes pushed.  Word features take this path too where a block
 *	   cannot start.
 * Whatever a fast path does not know (a combining mark, a character that
 * lower-casing or a multi-character NFKC mapping changes) goes to the
 * general path.  Unit and letter features (shingle_similarity) take the
 * general path throughout.  Token hashes are collected in a buffer and their
 * shingles computed in one loop (with n known to the compiler for 2 and 3);
 * features are handed to the caller in batches.
 */
#include "tokenize.h"
#include "feature_hash.h"

#include "common/unicode_norm.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "port/pg_bswap.h"

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "unicode_table.h"

#define SH_MAX_WORD_CHARS	256
#define SH_MAX_N			SIMHASH_MAX_SHINGLE
#define SH_MAX_SEGMENT		(1024 * 1024)	/* code points normalized at once */
#define SH_BATCH			256 /* features handed to the caller at once */
#define SH_TOK_KEEP			(SH_MAX_N - 1)	/* tokens kept for the next shingles */
#define SH_GRAM_BUF			1024	/* bytes of the character n-gram window */
#define SH_CHECK_EVERY		65536	/* bytes between CHECK_FOR_INTERRUPTS() */
#define SH_BLOCK			1024	/* bytes taken at once by a fast path */
#define SH_BLOCK_MASKS		(SH_BLOCK / 64 + 1) /* a bit per byte and one more */
#define SH_BLOCK_WORDS		(SH_BLOCK / 2 + 1)	/* the most words in a block */
/* the most tokens of a block: a word and the byte after it, or 3 bytes of a
 * CJK character, per token, and a unigram of the character before it */
#define SH_BLOCK_TOKENS		(SH_BLOCK / 2 + 8)

StaticAssertDecl(SH_MAX_N <= 16, "the n-gram ring holds 16 characters");

typedef struct Tokenizer
{
	SimhashFeatureKind kind;
	int			n;
	SimhashFeatureBatchCallback emit;
	void	   *arg;
	int			nbatch;

	/* word features */
	int			wordlen;		/* bytes */
	int			wordchars;		/* code points */
	pg_wchar	cjk_prev;		/* last CJK character of the current run */
	int			cjk_run;		/* characters in the current CJK run */
	size_t		cjk_prev_end;	/* end of cjk_prev in the text when it is
								 * those bytes as they are (fast path), or 0 */
	int			ntok;			/* tokens in tok[] not yet shingled */
	uint64		ntokens;		/* tokens shingled */

	/* character features: the UTF-8 of the last characters in gram[] */
	uint64		nchars;
	bool		gap;			/* a separator since the last character */
	bool		last_cjk;		/* the last character was CJK */
	int			gramlen;		/* bytes used in gram[] */

	/* the general path's look-ahead: the character at peek_pos */
	size_t		peek_pos;
	size_t		peek_next;
	pg_wchar	peek_cp;
	uint8		peek_props;

	/* normalization segment, allocated when first needed */
	pg_wchar   *seg;
	int			seglen;
	int			segcap;

	/* buffers, each written before it is read (not zeroed) */
	uint64		batch[SH_BATCH + SH_BLOCK_TOKENS];
	/* token hashes: the last n - 1 shingled ones, then ntok new ones */
	uint64		tok[SH_TOK_KEEP + SH_BATCH + SH_BLOCK_TOKENS];
	/* the current word as UTF-8; 8 bytes of slack for 8-byte stores */
	unsigned char word[SH_MAX_WORD_CHARS * 4 + 8];
	/* blocks: the block with ASCII letters lower-cased (and 16 bytes of
	 * slack) */
	unsigned char low[SH_BLOCK + 16];
	/* blocks: where the words start and end, where the chains of adjacent
	 * CJK characters begin and end (16 more for bit_positions()) */
	uint32		starts[SH_BLOCK_WORDS + 16];
	uint32		ends[SH_BLOCK_WORDS + 16];
	uint32		chain_first[SH_BLOCK / 3 + 1 + 16];
	uint32		chain_last[SH_BLOCK / 3 + 1 + 16];
	/* blocks with CJK characters: the words' hashes and places in tok[] */
	uint64		whash[SH_BLOCK_WORDS];
	uint16		wordslot[SH_BLOCK_WORDS];
	/* blocks: the tokens' numbers by length class (1-3, 4-8, 9-16, longer) */
	uint16		bycls[4][SH_BLOCK_TOKENS];
	int			gramstart[16];	/* start of character i in gram[], i mod 16 */
	unsigned char gram[SH_GRAM_BUF];
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

/* whether cp is in the CJK Unified Ideographs block (all SH_UC_CJK | SH_UC_INERT) */
#define SH_IS_HAN(cp)	((pg_wchar) ((cp) - SH_UC_HAN_FIRST) <= SH_UC_HAN_LAST - SH_UC_HAN_FIRST)

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

/* ---- eight bytes at a time, byte i of the text in bits 8i..8i+7 ---- */

#define SH_HIGH_BITS	UINT64CONST(0x8080808080808080)
#define SH_BYTES(b)		(UINT64CONST(0x0101010101010101) * (b))

static inline uint64
load_le64(const unsigned char *p, size_t avail)
{
	uint64		v = 0;

	/* a fixed-size copy is one load; a shorter one goes through memory */
	if (likely(avail >= 8))
		memcpy(&v, p, 8);
	else
		memcpy(&v, p, avail);
#ifdef WORDS_BIGENDIAN
	v = pg_bswap64(v);
#endif
	return v;
}

static inline void
store_le64(unsigned char *p, uint64 v)
{
#ifdef WORDS_BIGENDIAN
	v = pg_bswap64(v);
#endif
	memcpy(p, &v, 8);
}

/*
 * For eight ASCII bytes: the high bit of each byte that is a WORD character
 * (the ASCII WORD characters are exactly 0-9, A-Z and a-z).  No addition
 * carries across bytes, since every byte is below 0x80.
 */
static inline uint64
ascii_word_bits(uint64 v)
{
	uint64		l = v | SH_BYTES(0x20);
	uint64		alpha = (l + SH_BYTES(0x80 - 'a')) & ~(l + SH_BYTES(0x80 - 'z' - 1));
	uint64		digit = (v + SH_BYTES(0x80 - '0')) & ~(v + SH_BYTES(0x80 - '9' - 1));

	return (alpha | digit) & SH_HIGH_BITS;
}

/* index of the lowest byte whose high bit is set in x (x != 0) */
static inline int
first_byte(uint64 x)
{
	return pg_rightmost_one_pos64(x) >> 3;
}

/* ---- feature emission ---- */

static void
flush_batch(Tokenizer *t)
{
	if (t->nbatch > 0)
		t->emit(t->batch, t->nbatch, t->arg);
	t->nbatch = 0;
}

static inline void
emit_feature(Tokenizer *t, uint64 h)
{
	t->batch[t->nbatch++] = h;
	if (unlikely(t->nbatch == SH_BATCH))
		flush_batch(t);
}

/* the shingles of n tokens ending at tokens[0 .. m - 1] */
static pg_attribute_always_inline void
shingle_run(const uint64 *tokens, int m, int n, uint64 *out)
{
	int			i;

	for (i = 0; i < m; i++)
		out[i] = simhash_shingle_hash(tokens + i - (n - 1), n);
}

/*
 * Hand the features of the tokens in tok[] to the caller: the tokens
 * themselves (n = 1) or the shingles that end at them, computed in one loop
 * (with n known to the compiler for the usual sizes), then keep the last
 * n - 1 tokens in front of the buffer.
 */
static void
flush_tokens(Tokenizer *t)
{
	int			n = t->n;
	int			m = t->ntok;
	uint64	   *first = t->tok + SH_TOK_KEEP;
	int			skip = 0;
	int			i;

	if (m == 0)
		return;
	if (n == 1)
		t->emit(first, m, t->arg);
	else
	{
		/* the first n - 1 tokens of the text end no shingle */
		if (t->ntokens < (uint64) (n - 1))
			skip = (int) Min((uint64) m, (uint64) (n - 1) - t->ntokens);
		switch (n)
		{
			case 2:
				shingle_run(first + skip, m - skip, 2, t->batch);
				break;
			case 3:
				shingle_run(first + skip, m - skip, 3, t->batch);
				break;
			default:
				shingle_run(first + skip, m - skip, n, t->batch);
				break;
		}
		if (m > skip)
			t->emit(t->batch, m - skip, t->arg);
		/* upwards: the source is never below the destination */
		for (i = 0; i < n - 1; i++)
			first[i - (n - 1)] = first[m + i - (n - 1)];
	}
	t->ntokens += m;
	t->ntok = 0;
}

static inline void
emit_token(Tokenizer *t, uint64 h)
{
	t->tok[SH_TOK_KEEP + t->ntok++] = h;
	if (unlikely(t->ntok >= SH_BATCH))
		flush_tokens(t);
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

/* appends one character's UTF-8 to the n-gram window and emits an n-gram */
static inline void
push_char_bytes(Tokenizer *t, const unsigned char *bytes, int len)
{
	int			n = t->n;
	int			i;

	if (unlikely(t->gramlen + 4 > SH_GRAM_BUF))
	{
		/* keep the last n - 1 characters (there are more than 16) */
		int			from = n == 1 ? t->gramlen : t->gramstart[(t->nchars - (n - 1)) & 15];
		uint64		c;

		memmove(t->gram, t->gram + from, t->gramlen - from);
		t->gramlen -= from;
		for (c = t->nchars - (n - 1); c < t->nchars; c++)
			t->gramstart[c & 15] -= from;
	}
	t->gramstart[t->nchars & 15] = t->gramlen;
	/* one to four bytes: no call */
	for (i = 0; i < len; i++)
		t->gram[t->gramlen + i] = bytes[i];
	t->gramlen += len;
	t->nchars++;
	if (t->nchars >= (uint64) n)
	{
		int			start = t->gramstart[(t->nchars - n) & 15];

		emit_feature(t, simhash_feature_hash((const char *) t->gram + start, t->gramlen - start));
	}
}

/* a WORD or CJK character, for character features */
static inline void
push_char(Tokenizer *t, pg_wchar cp, bool cjk)
{
	unsigned char buf[4];

	if (t->gap && t->nchars > 0 && !(cjk && t->last_cjk))
		push_char_bytes(t, (const unsigned char *) " ", 1);
	push_char_bytes(t, buf, utf8_encode(cp, buf));
	t->gap = false;
	t->last_cjk = cjk;
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

/* one normalized code point, through the general path */
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
			push_char(t, cp, cls == SH_UC_CJK);
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
			t->cjk_prev_end = 0;
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
		/* fewer than n characters: never compacted, so gram[] holds them all */
		if (t->nchars > 0 && t->nchars < (uint64) t->n)
			emit_feature(t, simhash_feature_hash((const char *) t->gram, t->gramlen));
	}
	else
	{
		end_word(t);
		end_cjk_run(t);
		flush_tokens(t);
		/* fewer than n tokens: they are the last ones kept */
		if (t->ntokens > 0 && t->ntokens < (uint64) t->n)
		{
			uint64		h = simhash_shingle_hash(t->tok + SH_TOK_KEEP - t->ntokens,
											 (int) t->ntokens);

			t->emit(&h, 1, t->arg);
		}
	}
	flush_batch(t);
}

/* ---- fast path: ASCII ---- */

/*
 * How many bytes from pos on are ASCII bytes each followed by an ASCII byte
 * or by the end of the text (each such byte is a normalization piece of its
 * own), looking at most at 8 of them; v gets the bytes (zero beyond len).
 */
static inline int
ascii_pieces(const unsigned char *s, size_t pos, size_t len, uint64 *v)
{
	size_t		avail = len - pos;
	uint64		high;

	*v = load_le64(s + pos, avail);
	high = *v & SH_HIGH_BITS;
	if (high)
		return first_byte(high) - 1;
	if (avail <= 8)
		return (int) avail;
	return s[pos + 8] < 0x80 ? 8 : 7;
}

/*
 * Whether the character at pos (or the end of the text) lets the character
 * before it be a normalization piece of its own: ASCII and every INERT code
 * point do (the general path would find it inert too).
 */
static inline bool
inert_at(const unsigned char *s, size_t pos, size_t len)
{
	int			l;
	pg_wchar	cp;

	if (pos >= len || s[pos] < 0x80)
		return true;
	l = utf8_length(s[pos]);
	cp = utf8_decode(s + pos, l);
	/* decode_char() maps the last two to inert characters */
	return SH_IS_HAN(cp) ||
		(char_props(cp) & (SH_UC_INERT | SH_UC_MAPS_INERT | SH_UC_UNASSIGNED)) != 0;
}

/*
 * For eight ASCII bytes (byte i in bits 8i..8i+7): bit i set when byte i is
 * a WORD byte.  The multiplication gathers the high bits of the eight bytes
 * into the top byte (no two partial products meet, so nothing carries).
 */
static inline uint32
ascii_word_mask8(uint64 v)
{
	return (uint32) (((ascii_word_bits(v) >> 7) * UINT64CONST(0x0102040810204080)) >> 56);
}

/*
 * The positions of the set bits of x, plus base, written to out from k on;
 * returns k plus their number.  They are written four, four more and eight
 * more at a time whatever their number (out has room for sixteen more than
 * there are bits), then one by one: the branches between those steps are well
 * predicted for the usual text (a word or two between CJK runs; about ten
 * words in 64 bytes of English).
 */
static pg_attribute_always_inline int
bit_positions(uint64 x, int base, uint32 *out, int k)
{
	/* the number of set bits, without a popcnt instruction (not in x86-64) */
	uint64		c = x - ((x >> 1) & UINT64CONST(0x5555555555555555));
	int			count;
	int			i;

	c = (c & UINT64CONST(0x3333333333333333)) + ((c >> 2) & UINT64CONST(0x3333333333333333));
	c = (c + (c >> 4)) & UINT64CONST(0x0F0F0F0F0F0F0F0F);
	count = (int) ((c * UINT64CONST(0x0101010101010101)) >> 56);

	/* a position written for no bit is junk, overwritten later */
#define SH_NEXT_POSITION(i) \
	do { \
		out[k + (i)] = (uint32) (base + pg_rightmost_one_pos64(x | (UINT64CONST(1) << 63))); \
		x &= x - 1; \
	} while (0)
#define SH_FOUR_POSITIONS(i) \
	do { \
		SH_NEXT_POSITION((i)); SH_NEXT_POSITION((i) + 1); \
		SH_NEXT_POSITION((i) + 2); SH_NEXT_POSITION((i) + 3); \
	} while (0)
	SH_FOUR_POSITIONS(0);
	if (count > 4)
	{
		SH_FOUR_POSITIONS(4);
		if (count > 8)
		{
			SH_FOUR_POSITIONS(8);
			SH_FOUR_POSITIONS(12);
			for (i = 16; x; x &= x - 1)
				out[k + i++] = (uint32) (base + pg_rightmost_one_pos64(x));
		}
	}
#undef SH_FOUR_POSITIONS
#undef SH_NEXT_POSITION
	return k + count;
}

/* append ASCII word bytes to the pending word, splitting it as feed() does */
static void
word_append(Tokenizer *t, const unsigned char *bytes, int n)
{
	while (n > 0)
	{
		int			k;

		if (t->wordchars == SH_MAX_WORD_CHARS)
			end_word(t);
		k = Min(n, SH_MAX_WORD_CHARS - t->wordchars);
		memcpy(t->word + t->wordlen, bytes, k);
		t->wordlen += k;
		t->wordchars += k;
		bytes += k;
		n -= k;
	}
}

/* character features over ASCII from pos up to about stop */
static size_t
ascii_chars(Tokenizer *t, const unsigned char *s, size_t pos, size_t stop, size_t len)
{
	while (pos < stop)
	{
		uint64		v;
		int			usable = ascii_pieces(s, pos, len, &v);
		uint64		words;
		int			k;

		if (usable <= 0)
			break;
		words = ascii_word_bits(v);
		for (k = 0; k < usable; k++)
		{
			if ((words >> (8 * k)) & 0x80)
			{
				unsigned char c = s[pos + k] | 0x20;

				if (t->gap && t->nchars > 0)
					push_char_bytes(t, (const unsigned char *) " ", 1);
				push_char_bytes(t, &c, 1);
				t->gap = false;
				t->last_cjk = false;
			}
			else
				t->gap = true;
		}
		pos += usable;
	}
	return pos;
}

/* ---- fast path: CJK runs ---- */

/* CJK characters that normalization and lower-casing leave alone */
#define SH_CJK_FAST_MASK	(SH_UC_CLASS_MASK | SH_UC_INERT | SH_UC_UNASSIGNED | \
							 SH_UC_MAPS_INERT | SH_UC_HAS_LOWER)
#define SH_CJK_FAST			(SH_UC_CJK | SH_UC_INERT)

static inline pg_wchar
decode3(const unsigned char *p)
{
	return ((p[0] & 0x0F) << 12) | ((p[1] & 0x3F) << 6) | (p[2] & 0x3F);
}

/*
 * Whether the character at p is a Han character, from its first two bytes:
 * the block's characters are all of three bytes and, the block starting and
 * ending on a 64-character boundary, their first two bytes make exactly the
 * 16-bit numbers from SH_HAN_KEY(FIRST) to SH_HAN_KEY(LAST) (in valid UTF-8
 * a lead byte E4-E9 is followed by a continuation byte, and any other
 * character's first byte gives a number outside).
 */
#define SH_HAN_KEY(cp)	(((0xE0 | ((cp) >> 12)) << 8) | 0x80 | (((cp) >> 6) & 0x3F))
StaticAssertDecl(SH_UC_HAN_FIRST >= 0x800 && SH_UC_HAN_LAST <= 0xFFFF &&
				 (SH_UC_HAN_FIRST & 0x3F) == 0 && (SH_UC_HAN_LAST & 0x3F) == 0x3F,
				 "the Han block must be three-byte characters on 64-character boundaries");

static inline uint32
han_at(const unsigned char *p)
{
	uint32		key = ((uint32) p[0] << 8) | p[1];

	return key - SH_HAN_KEY(SH_UC_HAN_FIRST) <=
		SH_HAN_KEY(SH_UC_HAN_LAST) - SH_HAN_KEY(SH_UC_HAN_FIRST);
}

/* whether the three-byte character at p is one of them (Han: no lookup) */
static inline bool
fast_cjk3(const unsigned char *p)
{
	return han_at(p) || (char_props(decode3(p)) & SH_CJK_FAST_MASK) == SH_CJK_FAST;
}

#ifdef __SSE2__
/* a byte as compared signed after flipping its top bit */
#define SH_FLIPPED(b)	_mm_set1_epi8((char) (((b) & 0xFF) ^ 0x80))

/*
 * For sixteen bytes x (top bits flipped) and the byte after each, x1 (the
 * same): a bit for each byte that starts a Han character, that is, whose
 * (first byte, second byte) lies within the keys' range, lexicographically.
 */
static inline uint32
han_starts16(__m128i x, __m128i x1)
{
	const __m128i lead_lo = SH_FLIPPED(SH_HAN_KEY(SH_UC_HAN_FIRST) >> 8);
	const __m128i lead_hi = SH_FLIPPED(SH_HAN_KEY(SH_UC_HAN_LAST) >> 8);
	const __m128i below_lead = SH_FLIPPED((SH_HAN_KEY(SH_UC_HAN_FIRST) >> 8) - 1);
	const __m128i above_lead = SH_FLIPPED((SH_HAN_KEY(SH_UC_HAN_LAST) >> 8) + 1);
	const __m128i second_lo = SH_FLIPPED(SH_HAN_KEY(SH_UC_HAN_FIRST));
	const __m128i second_hi = SH_FLIPPED(SH_HAN_KEY(SH_UC_HAN_LAST));

	return (uint32) _mm_movemask_epi8(_mm_and_si128(
		_mm_and_si128(_mm_cmpgt_epi8(x, below_lead), _mm_cmplt_epi8(x, above_lead)),
		_mm_andnot_si128(_mm_or_si128(
			_mm_and_si128(_mm_cmpeq_epi8(x, lead_lo), _mm_cmplt_epi8(x1, second_lo)),
			_mm_and_si128(_mm_cmpeq_epi8(x, lead_hi), _mm_cmpgt_epi8(x1, second_hi))),
			_mm_set1_epi8(-1))));
}
#endif

/*
 * The end of the run of such three-byte characters from pos on (before
 * limit): Han characters eight at a time without a branch between them (a
 * bit each; the run goes on to the first clear one, and the bits after it,
 * taken from no character's first byte, do not count), then one at a time
 * through the table.  With SSE2 the eight tests are made on 32 bytes at
 * once: a bit for every byte, of which those of bytes 0, 3, ..., 21 count.
 */
static inline size_t
fast_cjk3_run(const unsigned char *s, size_t pos, size_t limit)
{
#ifdef __SSE2__
	const __m128i flip = SH_FLIPPED(0);

	while (pos + 32 <= limit)
	{
		__m128i		a = _mm_xor_si128(_mm_loadu_si128((const __m128i *) (s + pos)), flip);
		__m128i		b = _mm_xor_si128(_mm_loadu_si128((const __m128i *) (s + pos + 16)), flip);
		/* the byte after each (the last one's is not needed) */
		__m128i		a1 = _mm_or_si128(_mm_srli_si128(a, 1), _mm_slli_si128(b, 15));
		__m128i		b1 = _mm_srli_si128(b, 1);
		uint32		han = han_starts16(a, a1) | han_starts16(b, b1) << 16;
		uint32		stop = ~han & 0x249249;	/* bytes 0, 3, ..., 21 */

		if (stop != 0)
		{
			pos += pg_rightmost_one_pos32(stop);
			goto one_by_one;
		}
		pos += 24;
	}
#endif
	while (pos + 24 <= limit)
	{
		const unsigned char *p = s + pos;
		uint32		han = han_at(p) | han_at(p + 3) << 1 | han_at(p + 6) << 2 |
			han_at(p + 9) << 3 | han_at(p + 12) << 4 | han_at(p + 15) << 5 |
			han_at(p + 18) << 6 | han_at(p + 21) << 7;

		if (han != 0xFF)
		{
			pos += 3 * pg_rightmost_one_pos32(~han);
			break;
		}
		pos += 24;
	}
#ifdef __SSE2__
one_by_one:
#endif
	while (pos + 3 <= limit && (s[pos] & 0xF0) == 0xE0 && fast_cjk3(s + pos))
		pos += 3;
	return pos;
}

/* character features of the run of such CJK characters at s[pos .. end) */
static void
cjk_chars(Tokenizer *t, const unsigned char *s, size_t pos, size_t end)
{
	if (t->gap && t->nchars > 0 && !t->last_cjk)
		push_char_bytes(t, (const unsigned char *) " ", 1);
	for (; pos < end; pos += 3)
		push_char_bytes(t, s + pos, 3);
	t->gap = false;
	t->last_cjk = true;
}

/*
 * Word features of the run of such CJK characters at s[pos .. end): one
 * bigram token for each two adjacent ones (the first with the last character
 * of the run so far), hashed straight from the text in one loop.
 */
static void
cjk_bigrams(Tokenizer *t, const unsigned char *s, size_t pos, size_t end)
{
	size_t		c = pos + 3;

	if (t->wordlen > 0)
		end_word(t);
	if (t->cjk_run > 0)
	{
		if (t->cjk_prev_end == pos)
			emit_token(t, simhash_hash_4to8(s + pos - 3, 6));
		else
		{
			unsigned char buf[8];
			int			l = utf8_encode(t->cjk_prev, buf);

			memcpy(buf + l, s + pos, 3);
			emit_token(t, simhash_feature_hash((const char *) buf, l + 3));
		}
	}
	while (c < end)
	{
		uint64	   *out = t->tok + SH_TOK_KEEP + t->ntok;
		int			k,
					m = (int) Min((end - c) / 3, (size_t) (SH_BATCH - t->ntok));

		for (k = 0; k < m; k++)
			out[k] = simhash_hash_4to8(s + c - 3 + 3 * k, 6);
		c += 3 * m;
		t->ntok += m;
		if (t->ntok == SH_BATCH)
			flush_tokens(t);
	}
	t->cjk_prev = decode3(s + end - 3);
	t->cjk_run += (int) ((end - pos) / 3);
	t->cjk_prev_end = end;
}

/* ---- fast path: word features over mixed text, a block at a time ---- */

/* what block_char() makes of a character */
typedef enum BlockChar
{
	SH_BC_CJK,					/* a CJK character of the fast path */
	SH_BC_BREAK,				/* a separator that ends a CJK run */
	SH_BC_SPACE,				/* white space: a CJK run goes on across it */
	SH_BC_STOP					/* anything else: the block ends before it */
} BlockChar;

/*
 * A non-ASCII character other than Han at p, in a block: CJK characters that
 * normalization and lower-casing leave alone (kana, hangul, ...), and the
 * inert separators (CJK punctuation, quotation marks, dashes), or those NFKC
 * maps to one (the full-width forms of ASCII punctuation, the ideographic
 * space); unassigned code points become spaces.  Letters, digits and the
 * characters whose normalization depends on their neighbours stop the block.
 */
static BlockChar
block_char(const unsigned char *p)
{
	int			l = utf8_length(p[0]);
	pg_wchar	cp = utf8_decode(p, l);
	uint8		props = char_props(cp);

	if (l == 3 && (props & SH_CJK_FAST_MASK) == SH_CJK_FAST)
		return SH_BC_CJK;
	if (props & SH_UC_UNASSIGNED)
		return SH_BC_SPACE;
	if (props & SH_UC_MAPS_INERT)
	{
		cp = cp >= 0xFF01 && cp <= 0xFF5E ? cp - 0xFEE0 :
			map_lookup(sh_uc_nfkc_map, lengthof(sh_uc_nfkc_map), cp);
		props = char_props(cp);
	}
	else if (!(props & SH_UC_INERT))
		return SH_BC_STOP;
	if (props & SH_UC_HAS_LOWER)
		return SH_BC_STOP;
	switch (props & SH_UC_CLASS_MASK)
	{
		case SH_UC_OTHER:
			return SH_BC_BREAK;
		case SH_UC_SPACE:
			return SH_BC_SPACE;
		default:
			return SH_BC_STOP;
	}
}

/*
 * block_char() of each code point of two or three bytes, plus one, as it is
 * first asked for (0: not yet); the process's own, like the tables
 */
static uint8 block_char_cache[0x10000];

static inline BlockChar
block_char_cached(const unsigned char *p)
{
	pg_wchar	cp;

	if (p[0] >= 0xF0)
		return block_char(p);
	cp = p[0] < 0xE0 ? utf8_decode(p, 2) : decode3(p);
	if (unlikely(block_char_cache[cp] == 0))
		block_char_cache[cp] = (uint8) block_char(p) + 1;
	return (BlockChar) (block_char_cache[cp] - 1);
}

/* the classes of 64 bytes of a block, a bit per byte */
typedef struct ByteClasses
{
	uint64		word;			/* ASCII WORD bytes */
	uint64		high;			/* non-ASCII bytes */
	uint64		cont;			/* UTF-8 continuation bytes */
	uint64		han;			/* first bytes of Han characters */
} ByteClasses;

/* for eight ASCII bytes: the high bit of each that is in [lo, hi] */
#define SH_ASCII_RANGE(v, lo, hi) \
	(((v) + SH_BYTES(0x80 - (lo))) & ~((v) + SH_BYTES(0x80 - (hi) - 1)) & SH_HIGH_BITS)
/* the high bits of eight bytes gathered into a byte (see ascii_word_mask8) */
#define SH_GATHER8(x)	((uint32) ((((x) >> 7) * UINT64CONST(0x0102040810204080)) >> 56))
#ifdef __SSE2__
/* for sixteen bytes: 0xFF for each in [lo, hi] (moved to start at -128) */
#define SH_RANGE16(v, lo, hi) \
	_mm_cmplt_epi8(_mm_add_epi8((v), _mm_set1_epi8((char) (0x80 - (lo)))), \
				   _mm_set1_epi8((char) (0x80 + (hi) - (lo) + 1)))
#endif

/*
 * The classes of the bytes at s[pos + off ..], up to 64 of them and no
 * further than pos + avail (bits beyond are junk), with those bytes
 * lower-cased (ASCII letters only) into t->low + off and up to 15 bytes after
 * them.
 */
static inline void
classify64(Tokenizer *t, const unsigned char *s, size_t pos, size_t off,
		   size_t avail, size_t len, ByteClasses *bc)
{
	size_t		end = Min(off + 64, avail);

	memset(bc, 0, sizeof(*bc));
#ifdef __SSE2__
	for (; off < end; off += 16)
	{
		const unsigned char *p = s + pos + off;
		unsigned char tail[32];
		__m128i		v,
					low;
		uint32		high;
		int			shift = (int) (off & 63);

		/* the last bytes of the text (and the one after each) from a copy */
		if (pos + off + 17 > len)
		{
			memset(tail, 0, sizeof(tail));
			memcpy(tail, p, len - pos - off);
			p = tail;
		}
		v = _mm_loadu_si128((const __m128i *) p);
		low = _mm_add_epi8(v, _mm_and_si128(SH_RANGE16(v, 'A', 'Z'), _mm_set1_epi8(0x20)));
		_mm_storeu_si128((__m128i *) (t->low + off), low);
		bc->word |= (uint64) (uint32) _mm_movemask_epi8(_mm_or_si128(SH_RANGE16(low, 'a', 'z'),
																	 SH_RANGE16(v, '0', '9'))) << shift;
		high = (uint32) _mm_movemask_epi8(v);
		if (high)
		{
			__m128i		v1 = _mm_loadu_si128((const __m128i *) (p + 1));

			bc->high |= (uint64) high << shift;
			bc->cont |= (uint64) (uint32) _mm_movemask_epi8(SH_RANGE16(v, 0x80, 0xBF)) << shift;
			bc->han |= (uint64) han_starts16(_mm_xor_si128(v, SH_FLIPPED(0)),
											 _mm_xor_si128(v1, SH_FLIPPED(0))) << shift;
		}
	}
#else
	for (; off < end; off += 8)
	{
		uint64		v = load_le64(s + pos + off, len - pos - off);
		uint64		high = v & SH_HIGH_BITS;
		uint64		ascii = v & ~((high >> 7) * 0xFF);	/* non-ASCII bytes zeroed */
		int			shift = (int) (off & 63);

		store_le64(t->low + off, v | (SH_ASCII_RANGE(ascii, 'A', 'Z') >> 2));
		bc->word |= (uint64) ascii_word_mask8(ascii) << shift;
		bc->high |= (uint64) SH_GATHER8(high) << shift;
		for (; high; high &= high - 1)
		{
			int			i = first_byte(high);
			const unsigned char *p = s + pos + off + i;

			if ((p[0] & 0xC0) == 0x80)
				bc->cont |= UINT64CONST(1) << (shift + i);
			else if (han_at(p))
				bc->han |= UINT64CONST(1) << (shift + i);
		}
	}
#endif
}

/*
 * The ASCII white space among the 64 bytes at t->low + off, of which count
 * are the block's (bits beyond them are junk, or zero beyond those written):
 * 9-13 and 28-32 (gen_unicode_table.py asserts it).
 */
static inline uint64
ascii_space64(const Tokenizer *t, size_t off, size_t count)
{
	uint64		space = 0;
	size_t		i;

#ifdef __SSE2__
	for (i = 0; i < Min(count, 64); i += 16)
	{
		__m128i		v = _mm_loadu_si128((const __m128i *) (t->low + off + i));

		space |= (uint64) (uint32) _mm_movemask_epi8(_mm_or_si128(SH_RANGE16(v, 9, 13),
																  SH_RANGE16(v, 28, 32))) << i;
	}
#else
	for (i = 0; i < Min(count, 64); i += 8)
	{
		uint64		v = load_le64(t->low + off + i, 8);
		uint64		ascii = v & ~(((v & SH_HIGH_BITS) >> 7) * 0xFF);

		space |= (uint64) SH_GATHER8(SH_ASCII_RANGE(ascii, 9, 13) |
									 SH_ASCII_RANGE(ascii, 28, 32)) << i;
	}
#endif
	return space;
}

/* the start of the character before the one at s[i] (i > 0) */
static inline size_t
char_before(const unsigned char *s, size_t i)
{
	do
		i--;
	while (i > 0 && (s[i] & 0xC0) == 0x80);
	return i;
}

/* not a position: the character t->cjk_prev, before the block; none */
#define SH_BEFORE		(-8)
#define SH_NONE			(-16)

/* bit i of a mask of 64-bit words */
#define SH_BIT(m, i)	(((m)[(i) >> 6] >> ((i) & 63)) & 1)

/* the number of tokens of a word of l ASCII bytes (l > 0) */
#define SH_WORD_TOKENS(l)	(((l) + SH_MAX_WORD_CHARS - 1) / SH_MAX_WORD_CHARS)

/*
 * The token hashes of a word of l ASCII bytes at w, one per
 * SH_MAX_WORD_CHARS of them, into out; returns their number.
 */
static int
word_token_hashes(const unsigned char *w, int l, uint64 *out)
{
	int			k = 0;

	for (; l > SH_MAX_WORD_CHARS; l -= SH_MAX_WORD_CHARS, w += SH_MAX_WORD_CHARS)
		out[k++] = simhash_feature_hash((const char *) w, SH_MAX_WORD_CHARS);
	out[k++] = simhash_feature_hash((const char *) w, l);
	return k;
}

/*
 * Word features over up to SH_BLOCK bytes from pos on, of ASCII, Han and
 * the other characters block_char() takes, each a normalization piece of
 * its own; returns the new pos (pos itself when the first character is not
 * one of them).
 *
 * One pass gathers bit masks of the block's bytes (classify64()): ASCII
 * word bytes, first bytes of CJK characters, and breaks (first bytes of the
 * non-ASCII separators; the ASCII punctuation is added only when the block
 * has CJK characters) -- and lower-cases the block into t->low.  Words are
 * read off the word mask as start and end positions; CJK characters as
 * chains of characters right after one another (first and last).  Whether a
 * chain continues the run before it (a CJK character before it with no word
 * byte or break in between, white space allowed) is read for all of them at
 * once off a sum: adding the CJK mask to the mask of bytes that are neither
 * word bytes nor breaks carries from each CJK character up to the next word
 * byte or break, so the carries into each position (the sum XOR its
 * operands) mark the characters inside a run.  The tokens -- words, a bigram
 * of each character with the one before it in its run, a unigram for a run
 * of one -- go to tok[] in text order: the CJK ones hashed as they are met,
 * each word given its place and hashed with the others by length class.  A
 * word touching either end of the block continues or starts the pending word
 * of t->word, and a run open at either end continues or leaves t->cjk_prev,
 * as the general path would.
 */
static size_t
block_words(Tokenizer *t, const unsigned char *s, size_t pos, size_t len)
{
	uint64		words[SH_BLOCK_MASKS];
	uint64		cjk[SH_BLOCK_MASKS];
	uint64		breaks[SH_BLOCK_MASKS];
	uint64		high[SH_BLOCK_MASKS];
	uint64		linked[SH_BLOCK_MASKS];
	size_t		avail = Min(len - pos, SH_BLOCK);
	size_t		n = avail;		/* the block's end */
	size_t		off;
	int			nw,
				i,
				k,
				nwords,
				nends,
				nchains,
				nlast,
				first,
				last;
	uint64		prev,
				any_cjk = 0,
				any_break = 0;

	/* classify, up to the first character the block does not take */
	for (off = 0; off < avail; off += 64)
	{
		ByteClasses bc;
		uint64		valid = avail - off >= 64 ? ~UINT64CONST(0) :
			~(~UINT64CONST(0) << (avail - off));
		uint64		other;

		classify64(t, s, pos, off, avail, len, &bc);
		words[off >> 6] = bc.word & valid;
		cjk[off >> 6] = bc.han & valid;
		high[off >> 6] = bc.high & valid;
		breaks[off >> 6] = 0;
		for (other = bc.high & ~bc.cont & ~bc.han & valid; other; other &= other - 1)
		{
			int			b = pg_rightmost_one_pos64(other);
			BlockChar	c = block_char_cached(s + pos + off + b);

			if (unlikely(c == SH_BC_STOP))
			{
				n = off + b;
				goto classified;
			}
			cjk[off >> 6] |= (uint64) (c == SH_BC_CJK) << b;
			breaks[off >> 6] |= (uint64) (c == SH_BC_BREAK) << b;
		}
	}
classified:
	/* the block ends at a character's start */
	if (n == avail && n < len - pos && (s[pos + n] & 0xC0) == 0x80)
		n = char_before(s + pos, n);
	/* the last character stays when what follows may combine with it */
	if (n > 0 && !inert_at(s, pos + n, len))
		n = char_before(s + pos, n);
	if (n == 0)
		return pos;
	/* no bits at or beyond n (the mask n / 64 is unset when n % 64 == 0) */
	nw = (int) (n >> 6);
	if ((n & 63) == 0)
		words[nw] = cjk[nw] = breaks[nw] = high[nw] = 0;
	else
	{
		uint64		below = ~(~UINT64CONST(0) << (n & 63));

		words[nw] &= below;
		cjk[nw] &= below;
		breaks[nw] &= below;
		high[nw] &= below;
	}

	/* a pending word ends unless the block starts with a word byte */
	if (t->wordlen > 0 && !(words[0] & 1))
		end_word(t);

	/* where words start (a word byte after another byte) and end */
	nwords = 0;
	nends = 0;
	nchains = 0;
	nlast = 0;
	prev = 0;
	for (i = 0; i <= nw; i++)
	{
		uint64		w = words[i];
		uint64		before = (w << 1) | (prev >> 63);

		nwords = bit_positions(w & ~before, i << 6, t->starts, nwords);
		nends = bit_positions(~w & before, i << 6, t->ends, nends);
		prev = w;
		any_cjk |= cjk[i];
		any_break |= w | breaks[i];
	}
	Assert(nwords == nends);

	/*
	 * The ASCII punctuation is a break too, needed only when a CJK run can be
	 * in the block, and then looked for in the lower-cased copy.
	 */
	if (any_cjk != 0 || (t->cjk_run > 0 && any_break == 0))
	{
		for (i = 0; i <= nw; i++)
		{
			uint64		ascii = ~(high[i] | words[i] | ascii_space64(t, i << 6, n - (i << 6)));

			if (i == nw)
				ascii &= ~(~UINT64CONST(0) << (n & 63));
			breaks[i] |= ascii;
			any_break |= ascii;
		}
	}

	/*
	 * The block's words are tokens, except one that continues the pending
	 * word and one that reaches the end of the block (it may go on).
	 */
	first = 0;
	last = nwords;
	if (nwords > 0 && t->starts[0] == 0 && t->wordlen > 0)
	{
		word_append(t, t->low, t->ends[0]);
		if (t->ends[0] < n)
			end_word(t);
		first = 1;
	}
	if (last > first && t->ends[last - 1] == n)
		last--;

	if (any_cjk == 0)
	{
		/* words only: a CJK run open before the block ends at a break */
		if (t->cjk_run > 0 && any_break != 0)
			end_cjk_run(t);
		/* straight into tok[], which has room for a block's tokens */
		if (likely(simhash_hash_spans(t->low, t->starts, t->ends, first, last,
									  t->tok + SH_TOK_KEEP + t->ntok - first,
									  &t->bycls[0][0], SH_BLOCK_TOKENS) <= SH_MAX_WORD_CHARS))
			t->ntok += last - first;
		else
		{
			/* a word of more than SH_MAX_WORD_CHARS is more than one token */
			for (k = first; k < last; k++)
				t->ntok += word_token_hashes(t->low + t->starts[k], t->ends[k] - t->starts[k],
											 t->tok + SH_TOK_KEEP + t->ntok);
		}
	}
	else
	{
		uint64	   *out = t->tok + SH_TOK_KEEP + t->ntok;
		uint32		lengths;
		/* a run of one, at a position or t->cjk_prev (SH_BEFORE), or none */
		int			pending = t->cjk_run == 1 ? SH_BEFORE : SH_NONE;
		/* the run's last character so far: a position or SH_BEFORE */
		int			prevc = t->cjk_run > 0 ? SH_BEFORE : SH_NONE;
		int			wi = first,
					ci = 0,
					m;
		uint64		carry = t->cjk_run > 0;
		bool		open = false;

		/* the CJK characters, and those that continue a run */
		for (i = 0; i <= nw; i++)
		{
			uint64		g = ~(words[i] | breaks[i]);
			uint64		sum = g + cjk[i];
			uint64		c1 = sum < g;

			sum += carry;
			carry = c1 | (sum < carry);
			linked[i] = (sum ^ g ^ cjk[i]) & cjk[i];
			if (i == nw)
				open = (((sum ^ g ^ cjk[i]) >> (n & 63)) & 1) != 0;
			/* chains of CJK characters one right after the other */
			nchains = bit_positions(cjk[i] & ~((cjk[i] << 3) | (i > 0 ? cjk[i - 1] >> 61 : 0)),
									i << 6, t->chain_first, nchains);
			nlast = bit_positions(cjk[i] & ~((cjk[i] >> 3) | (i < nw ? cjk[i + 1] << 61 : 0)),
								  i << 6, t->chain_last, nlast);
		}

		/*
		 * The tokens in order, words and CJK characters merged: the CJK
		 * tokens hashed at once, each word given its place (as many as it
		 * makes tokens) and hashed with the others by length class after.
		 */
		m = 0;
#define SH_PENDING_UNIGRAM() \
		do { \
			if (pending >= 0) \
				out[m++] = simhash_hash_1to3(t->low + pending, 3); \
			else if (pending == SH_BEFORE) \
			{ \
				unsigned char buf[4]; \
				\
				out[m++] = simhash_feature_hash((const char *) buf, \
												utf8_encode(t->cjk_prev, buf)); \
			} \
			pending = SH_NONE; \
		} while (0)
		Assert(nchains == nlast);
		while (ci < nchains || wi < last)
		{
			if (ci < nchains && (wi >= last || t->chain_first[ci] < t->starts[wi]))
			{
				uint32		q = t->chain_first[ci],
							last_char = t->chain_last[ci++];

				if (SH_BIT(linked, q))
				{
					/* a bigram with the run's last character, not next to it */
					unsigned char buf[8];
					int			l;

					if (prevc >= 0)
					{
						memcpy(buf, t->low + prevc, 3);
						l = 3;
					}
					else
						l = utf8_encode(t->cjk_prev, buf);
					memcpy(buf + l, t->low + q, 3);
					out[m++] = simhash_feature_hash((const char *) buf, l + 3);
					pending = SH_NONE;
				}
				else
				{
					SH_PENDING_UNIGRAM();
					pending = (int) q;
				}
				/* the rest of the chain: a bigram each */
				if (last_char > q)
				{
					for (; q < last_char; q += 3)
						out[m++] = simhash_hash_4to8(t->low + q, 6);
					pending = SH_NONE;
				}
				prevc = (int) last_char;
			}
			else
			{
				SH_PENDING_UNIGRAM();
				t->wordslot[wi] = (uint16) m;
				m += SH_WORD_TOKENS(t->ends[wi] - t->starts[wi]);
				wi++;
			}
		}
		if (open)
		{
			uint32		q = t->chain_last[nchains - 1];

			t->cjk_run = pending >= 0 ? 1 : 2;
			t->cjk_prev = decode3(t->low + q);
			t->cjk_prev_end = pos + q + 3;
		}
		else
		{
			SH_PENDING_UNIGRAM();
			t->cjk_run = 0;
		}
#undef SH_PENDING_UNIGRAM
		Assert(m <= SH_BLOCK_TOKENS);

		/* the words' hashes to their places */
		lengths = simhash_hash_spans(t->low, t->starts, t->ends, first, last,
									 t->whash, &t->bycls[0][0], SH_BLOCK_TOKENS);
		if (likely(lengths <= SH_MAX_WORD_CHARS))
		{
			for (k = first; k < last; k++)
				out[t->wordslot[k]] = t->whash[k];
		}
		else
		{
			for (k = first; k < last; k++)
				(void) word_token_hashes(t->low + t->starts[k], t->ends[k] - t->starts[k],
										 out + t->wordslot[k]);
		}
		t->ntok += m;
	}
	if (t->ntok >= SH_BATCH)
		flush_tokens(t);
	if (last < nwords)
		word_append(t, t->low + t->starts[last], t->ends[last] - t->starts[last]);
	return pos + n;
}

/*
 * Word or character features over non-ASCII characters from pos on (about
 * SH_BLOCK bytes at most), each a normalization piece of its own, that
 * is inert (or mapped by NFKC to one inert character) and followed by an
 * inert one: feed() takes it as the general path would.  Runs of CJK
 * characters that normalization and lower-casing leave alone go to
 * cjk_bigrams() or cjk_chars().  Returns the new pos; the general path takes
 * over at the first other character.
 */
static size_t
nonascii_pieces(Tokenizer *t, const unsigned char *s, size_t pos, size_t len)
{
	size_t		limit = Min(len, pos + SH_BLOCK);

	while (pos < limit && s[pos] >= 0x80)
	{
		int			l = utf8_length(s[pos]);
		size_t		next = pos + l;
		pg_wchar	cp;
		uint8		props;

		if (l == 3 && fast_cjk3(s + pos))
		{
			size_t		end = next;

			end = fast_cjk3_run(s, end, limit);
			if (!inert_at(s, end, len))
				end -= 3;
			if (end > pos && t->kind == SIMHASH_FEATURE_WORDS)
				cjk_bigrams(t, s, pos, end);
			else if (end > pos)
				cjk_chars(t, s, pos, end);
			if (end < next)
				break;
			pos = end;
			continue;
		}
		if (!inert_at(s, next, len))
			break;
		cp = utf8_decode(s + pos, l);
		props = char_props(cp);
		if (props & SH_UC_INERT)
			feed(t, cp, props);
		else if (props & SH_UC_MAPS_INERT)
		{
			/* the full-width forms of ASCII map to ASCII */
			pg_wchar	m = cp >= 0xFF01 && cp <= 0xFF5E ? cp - 0xFEE0 :
				map_lookup(sh_uc_nfkc_map, lengthof(sh_uc_nfkc_map), cp);

			feed(t, m, char_props(m));
		}
		else
			break;
		pos = next;
	}
	return pos;
}

/* ---- the general path: decoding and piecewise normalization ---- */

/*
 * Decode the code point at pos (input already verified as UTF-8 by the
 * caller), apply step 1 and the single-character NFKC shortcut; *next gets
 * the position after it.
 */
static inline pg_wchar
decode_char(const unsigned char *s, size_t pos, size_t *next, uint8 *props)
{
	pg_wchar	cp;
	uint8		p;
	int			n;

	if (s[pos] < 0x80)
	{
		cp = s[pos];
		*next = pos + 1;
		*props = sh_uc_stage2[0][cp];
		return cp;
	}
	n = utf8_length(s[pos]);
	cp = utf8_decode(s + pos, n);
	*next = pos + n;
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

/* decode_char, remembering the last character decoded as a look-ahead */
static inline pg_wchar
next_char(Tokenizer *t, const unsigned char *s, size_t pos, size_t *next, uint8 *props)
{
	if (pos != t->peek_pos)
	{
		t->peek_cp = decode_char(s, pos, &t->peek_next, &t->peek_props);
		t->peek_pos = pos;
	}
	*next = t->peek_next;
	*props = t->peek_props;
	return t->peek_cp;
}

static void
seg_append(Tokenizer *t, pg_wchar cp)
{
	if (t->seg == NULL)
	{
		t->segcap = 64;
		t->seg = palloc(t->segcap * sizeof(pg_wchar));
	}
	else if (t->seglen + 1 >= t->segcap)
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

/* one piece from pos on; returns the position after it */
static size_t
general_piece(Tokenizer *t, const unsigned char *s, size_t pos, size_t len)
{
	size_t		next;
	uint8		props;
	pg_wchar	cur = next_char(t, s, pos, &next, &props);

	if (props & SH_UC_INERT)
	{
		uint8		nxt_props = SH_UC_INERT;

		if (next < len)
		{
			size_t		after;

			(void) next_char(t, s, next, &after, &nxt_props);
		}
		if (nxt_props & SH_UC_INERT)
		{
			feed(t, cur, props);	/* nothing to normalize */
			return next;
		}
	}
	/* cur starts a segment that runs to the next inert character */
	seg_append(t, cur);
	while (next < len)
	{
		size_t		after;
		pg_wchar	nxt = next_char(t, s, next, &after, &props);

		if (props & SH_UC_INERT)
			break;
		seg_append(t, nxt);
		next = after;
		if (t->seglen >= SH_MAX_SEGMENT)
		{
			seg_flush(t);
			CHECK_FOR_INTERRUPTS();
		}
	}
	if (t->seglen > 0)
		seg_flush(t);
	return next;
}

/* ---- entry points ---- */

void
simhash_tokenize_batch(const char *utf8, size_t len, SimhashFeatureKind kind, int n,
					   SimhashFeatureBatchCallback emit, void *arg)
{
	const unsigned char *s = (const unsigned char *) utf8;
	Tokenizer	t;
	size_t		pos = 0;
	size_t		next_check = SH_CHECK_EVERY;

	Assert(n >= 1 && n <= SH_MAX_N);
	memset(&t, 0, offsetof(Tokenizer, batch));
	t.kind = kind;
	t.n = n;
	t.emit = emit;
	t.arg = arg;
	t.peek_pos = SIZE_MAX;

	while (pos < len)
	{
		size_t		stop;
		size_t		p;

		if (pos >= next_check)
		{
			CHECK_FOR_INTERRUPTS();
			next_check = pos + SH_CHECK_EVERY;
		}
		stop = Min(len, next_check);
		if (kind != SIMHASH_FEATURE_WORDS && kind != SIMHASH_FEATURE_CHARS)
			p = pos;			/* unit and letter features: the general path only */
		else if (kind == SIMHASH_FEATURE_WORDS)
		{
			p = block_words(&t, s, pos, len);
			if (p == pos)
				p = nonascii_pieces(&t, s, pos, len);
		}
		else if (s[pos] < 0x80)
			p = ascii_chars(&t, s, pos, stop, len);
		else
			p = nonascii_pieces(&t, s, pos, len);
		pos = p != pos ? p : general_piece(&t, s, pos, len);
	}
	finish(&t);
	if (t.seg)
		pfree(t.seg);
}

/* the one-feature-at-a-time interface, on top of the batched one */
typedef struct OneByOne
{
	SimhashFeatureCallback emit;
	void	   *arg;
} OneByOne;

static void
one_by_one(const uint64 *hashes, int n, void *arg)
{
	OneByOne   *o = (OneByOne *) arg;
	int			i;

	for (i = 0; i < n; i++)
		o->emit(hashes[i], o->arg);
}

void
simhash_tokenize(const char *utf8, size_t len, SimhashFeatureKind kind, int n,
				 SimhashFeatureCallback emit, void *arg)
{
	OneByOne	o;

	o.emit = emit;
	o.arg = arg;
	simhash_tokenize_batch(utf8, len, kind, n, one_by_one, &o);
}

/*
 * Whether a text is written mostly in CJK characters: more Han, kana and
 * hangul characters than words of other letters and digits (runs of them,
 * ASCII or not), by the classes of the characters as written (before
 * normalization).  The choice of shingle_similarity(..., units => 'auto'):
 * with units 'words', each is one unit.
 */
bool
simhash_text_is_cjk(const char *utf8, size_t len)
{
	const unsigned char *s = (const unsigned char *) utf8;
	int64		cjk = 0,
				words = 0;
	bool		in_word = false;
	size_t		pos = 0;

	while (pos < len)
	{
		bool		word;

		if ((pos & 0xFFFF) == 0)
			CHECK_FOR_INTERRUPTS();
		if (s[pos] < 0x80)
		{
			word = (unsigned char) ((s[pos] | 0x20) - 'a') < 26 || (unsigned char) (s[pos] - '0') < 10;
			pos++;
		}
		else
		{
			int			l = utf8_length(s[pos]);
			uint8		class = char_props(utf8_decode(s + pos, l)) & SH_UC_CLASS_MASK;

			word = class == SH_UC_WORD;
			if (class == SH_UC_CJK)
				cjk++;
			pos += l;
		}
		if (word && !in_word)
			words++;
		in_word = word;
	}
	return cjk > words;
}

/* s (len bytes) as UTF-8, converted from the database encoding if needed */
char *
simhash_as_utf8(const char *s, int *len)
{
	char	   *u;

	if (GetDatabaseEncoding() == PG_UTF8)
		return (char *) s;
	u = pg_server_to_any(s, *len, PG_UTF8);
	if (u != s)
		*len = strlen(u);
	return u;
}
