/*
 * fuzz_fingerprint.c
 *	  libFuzzer target: simhash(text, n, weighting) and simhash_ngram() on
 *	  arbitrary valid UTF-8 (what a UTF-8 database holds), through the SQL
 *	  entry points.  Two oracles:
 *	  - the fingerprint equals a plain recomputation from the features
 *		simhash_tokenize() emits (per-bit vote sums of the weighted distinct
 *		features, no bit-plane counter, no hash table);
 *	  - the tokenizer's piecewise normalization gives the same features as
 *		the input normalized to NFKC as a whole first (texts of up to
 *		NFKC_ORACLE_MAX_LEN bytes that are not all ASCII: NFKC leaves ASCII
 *		text as it is, so that the check would compare the tokenizer's
 *		output on one input with itself).
 *	  The first byte chooses the features (words or characters), the size n
 *	  and the weighting; the rest is the text, cut at its first byte that is
 *	  not valid UTF-8.
 */
#include "tokenize.h"

#include <stdlib.h>

#include "common/unicode_norm.h"
#include "common/unicode_norm_table.h"
#include "fuzz.h"
#include "mb/pg_wchar.h"

/*
 * the frontend unicode_normalize() of libpgcommon recomposes by a linear
 * search of its table: slow enough to check whole-text NFKC on short texts only
 */
#define NFKC_ORACLE_MAX_LEN 512

extern Datum simhash_text(PG_FUNCTION_ARGS);
extern Datum simhash_ngram(PG_FUNCTION_ARGS);

typedef struct Features
{
	uint64	   *hash;
	size_t		n;
	size_t		cap;
} Features;

static void
collect(uint64 hash, void *arg)
{
	Features   *f = arg;

	if (f->n == f->cap)
	{
		f->cap = f->cap ? 2 * f->cap : 256;
		f->hash = realloc(f->hash, f->cap * sizeof(uint64));
	}
	f->hash[f->n++] = hash;
}

static int
cmp_hash(const void *a, const void *b)
{
	uint64		x = *(const uint64 *) a,
				y = *(const uint64 *) b;

	return (x > y) - (x < y);
}

/* weighting 0 = tf, 1 = binary, 2 = sublinear */
static simhash
recompute(Features *f, int weighting)
{
	int64		vote[64] = {0};
	simhash		result = 0;
	size_t		i,
				j;
	int			bit;

	qsort(f->hash, f->n, sizeof(uint64), cmp_hash);
	for (i = 0; i < f->n; i = j)
	{
		int64		count,
					w;

		for (j = i; j < f->n && f->hash[j] == f->hash[i]; j++)
			;
		count = j - i;
		w = weighting == 0 ? count : weighting == 1 ? 1 : 1 + pg_leftmost_one_pos64(count);
		for (bit = 0; bit < 64; bit++)
			vote[bit] += ((f->hash[i] >> bit) & 1) ? w : -w;
	}
	for (bit = 0; bit < 64; bit++)
		if (vote[bit] > 0)
			result |= UINT64CONST(1) << bit;
	return result;
}

static bool
all_ascii(const char *s, size_t len)
{
	size_t		i;

	for (i = 0; i < len; i++)
		if ((unsigned char) s[i] >= 0x80)
			return false;
	return true;
}

/* makes room for need more bytes in out */
static void
reserve(char **out, size_t outlen, size_t *outcap, size_t need)
{
	if (outlen + need > *outcap)
	{
		*outcap = 2 * (outlen + need);
		*out = realloc(*out, *outcap);
	}
}

/* appends s (valid UTF-8) normalized to NFKC by unicode_normalize() to out */
static void
append_nfkc(const char *s, size_t len, char **out, size_t *outlen, size_t *outcap)
{
	pg_wchar   *wide = malloc((len + 1) * sizeof(pg_wchar));
	pg_wchar   *norm;
	size_t		n = 0,
				i;

	for (i = 0; i < len; i += pg_utf_mblen((const unsigned char *) s + i))
		wide[n++] = utf8_to_unicode((const unsigned char *) s + i);
	wide[n] = 0;
	norm = unicode_normalize(UNICODE_NFKC, wide);
	for (n = 0; norm[n] != 0; n++)
		;
	reserve(out, *outlen, outcap, 4 * n);
	for (i = 0; i < n; i++)
		*outlen += pg_utf_mblen(unicode_to_utf8(norm[i], (unsigned char *) *out + *outlen));
	free(wide);
	free(norm);
}

/*
 * s (valid UTF-8) normalized to NFKC as a whole, as UTF-8, malloc'd.  The
 * frontend unicode_normalize() is slow on ASCII (it looks up a composition
 * for every two adjacent characters by a linear search), so the text is
 * normalized in segments that begin at an ASCII character: each run of
 * non-ASCII characters together with the ASCII character before it, and
 * other ASCII characters are copied.  That is the whole-text normalization
 * because an ASCII character has no decomposition and combining class 0 (it
 * is never reordered, and a composition never reaches past it) and is never
 * the second character of a composition: LLVMFuzzerInitialize() checks both
 * in PostgreSQL's table.  (The tokenizer's own pieces are a different and
 * much finer cut, whose correctness is what the oracle checks.)
 */
static char *
nfkc_whole(const char *s, size_t len, size_t *outlen)
{
	size_t		cap = len + 1,
				i = 0;
	char	   *out = malloc(cap);

	*outlen = 0;
	while (i < len)
	{
		size_t		start = i,
					end;

		/* the ASCII characters before the next non-ASCII one, but the last */
		while (i < len && (unsigned char) s[i] < 0x80)
			i++;
		if (i > start && i < len)
			i--;
		reserve(&out, *outlen, &cap, i - start);
		memcpy(out + *outlen, s + start, i - start);
		*outlen += i - start;
		if (i == len)
			break;
		/* that character (if any) and the run of non-ASCII ones after it */
		end = i + ((unsigned char) s[i] < 0x80);
		while (end < len && (unsigned char) s[end] >= 0x80)
			end++;
		append_nfkc(s + i, end - i, &out, outlen, &cap);
		i = end;
	}
	return out;
}

/* the two properties of ASCII in Unicode normalization that nfkc_whole() uses */
int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	size_t		i;

	for (i = 0; i < lengthof(UnicodeDecompMain); i++)
	{
		const pg_unicode_decomposition *e = &UnicodeDecompMain[i];

		/* only characters with a decomposition or a combining class are listed */
		if (e->codepoint < 0x80)
			abort();
		if (DECOMPOSITION_SIZE(e) == 2 && !DECOMPOSITION_NO_COMPOSE(e) &&
			UnicodeDecomp_codepoints[e->dec_index + 1] < 0x80)
			abort();
	}
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const weightings[] = {"tf", "binary", "sublinear"};
	SimhashFeatureKind kind;
	int			n,
				weighting;
	const char *body;
	size_t		len,
				nlen;
	Datum		result;
	Features	f = {0},
				g = {0};
	char	   *normalized;

	if (size < 1)
		return 0;
	kind = (data[0] & 1) ? SIMHASH_FEATURE_CHARS : SIMHASH_FEATURE_WORDS;
	n = ((data[0] >> 1) & 15) + 1;
	weighting = (data[0] >> 5) % 3;
	body = (const char *) data + 1;
	len = pg_encoding_verifymbstr(PG_UTF8, body, size - 1);

	FUZZ_CHECK(fuzz_call(kind == SIMHASH_FEATURE_WORDS ? simhash_text : simhash_ngram, &result, 3,
						 PointerGetDatum(fuzz_text(body, len)), Int32GetDatum(n),
						 PointerGetDatum(fuzz_text(weightings[weighting], strlen(weightings[weighting])))));
	fuzz_reset_memory();

	simhash_tokenize(body, len, kind, n, collect, &f);
	fuzz_reset_memory();
	FUZZ_CHECK(DatumGetSimhash(result) == recompute(&f, weighting));

	if (len <= NFKC_ORACLE_MAX_LEN && !all_ascii(body, len))
	{
		normalized = nfkc_whole(body, len, &nlen);
		simhash_tokenize(normalized, nlen, kind, n, collect, &g);
		fuzz_reset_memory();
		qsort(g.hash, g.n, sizeof(uint64), cmp_hash);	/* f is sorted by recompute() */
		FUZZ_CHECK(f.n == g.n && (f.n == 0 || memcmp(f.hash, g.hash, f.n * sizeof(uint64)) == 0));
		free(normalized);
	}
	free(f.hash);
	free(g.hash);
	return 0;
}
