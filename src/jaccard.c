/*
 * jaccard.c
 *	  Exact shingle similarity, the check behind verified near-duplicates:
 *	  shingle_similarity(text, text, n, units) (the Jaccard similarity of the
 *	  two texts' sets of shingles of n units), shingle_set(text, n, units) (a
 *	  text's shingle set as a sorted bigint[], to store once) and
 *	  shingle_similarity(bigint[], bigint[]) (the same for two stored sets).
 *
 * Units come from simhash's tokenizer (tokenize.c), so the normalization is
 * that of simhash(text): any server encoding, NFKC, Unicode lower case.
 * units 'words' are words (letters, marks, digits and '_', as in regex \w+)
 * and single CJK characters; units 'characters' are single letters, digits
 * and CJK characters, all else dropped; units 'auto' are 'characters' for a
 * text with more CJK characters than other letters and digits, else 'words'
 * (decided for each text).  A text with fewer than n units has
 * one shingle of all of them; a text without units has none.
 *
 * A shingle stands for its 64-bit hash (XXH3, as simhash's features): two
 * different shingles of one pair of texts share a hash with probability
 * about m^2 / 2^65 for m distinct shingles, which would count them as one
 * (about 3 * 10^-12 for two texts of 10,000 words).
 *
 * Two texts are compared in linear time with an open-addressing hash set per
 * text, sized from the text's length.  The two sets stay within work_mem: if
 * they would outgrow it, both texts are tokenized again into tuplesorts
 * (which spill to disk) and the sorted hashes are merged, with the same
 * result.
 */
#include "fingerprint.h"
#include "tokenize.h"
#include "shingle.h"
#include "feature_hash.h"

#include "catalog/pg_operator.h"
#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/memutils.h"
#include "utils/tuplesort.h"

/* ---- a set of shingle hashes ---- */

/*
 * Open addressing over uint64 slots, 0 marking an empty slot (the hash 0
 * itself is kept in has_zero).  Load factor at most 1/2.
 */
typedef struct ShingleSet
{
	uint64	   *slots;
	Size		size;			/* a power of 2 */
	Size		used;			/* distinct nonzero hashes */
	bool		has_zero;
	Size	   *budget;			/* bytes left for all the sets of a call */
	bool		overflow;		/* could not grow within the budget */
} ShingleSet;

static void
set_init(ShingleSet *set, Size expected, Size *budget)
{
	set->size = 16;
	while (set->size < 2 * expected && set->size * 2 * sizeof(uint64) <= *budget / 2)
		set->size *= 2;
	set->slots = palloc_extended(set->size * sizeof(uint64), MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
	*budget -= Min(*budget, set->size * sizeof(uint64));
	set->used = 0;
	set->has_zero = false;
	set->budget = budget;
	set->overflow = false;
}

static inline uint64 *
set_slot(uint64 *slots, Size size, uint64 hash)
{
	Size		i = (Size) hash & (size - 1);

	while (slots[i] != 0 && slots[i] != hash)
		i = (i + 1) & (size - 1);
	return &slots[i];
}

static inline bool
set_contains(const ShingleSet *set, uint64 hash)
{
	if (hash == 0)
		return set->has_zero;
	return *set_slot(set->slots, set->size, hash) == hash;
}

static inline Size
set_count(const ShingleSet *set)
{
	return set->used + (set->has_zero ? 1 : 0);
}

static void
set_grow(ShingleSet *set)
{
	Size		bytes = set->size * 2 * sizeof(uint64);
	uint64	   *slots;
	Size		i;

	if (bytes > *set->budget)
	{
		set->overflow = true;
		return;
	}
	slots = palloc_extended(bytes, MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
	for (i = 0; i < set->size; i++)
		if (set->slots[i] != 0)
			*set_slot(slots, set->size * 2, set->slots[i]) = set->slots[i];
	/* the old slots go back to the budget */
	*set->budget -= bytes;
	*set->budget += set->size * sizeof(uint64);
	pfree(set->slots);
	set->slots = slots;
	set->size *= 2;
}

/* the tokenizer's callback */
static void
set_add(uint64 hash, void *arg)
{
	ShingleSet *set = (ShingleSet *) arg;
	uint64	   *slot;

	if (set->overflow)
		return;
	if (hash == 0)
	{
		set->has_zero = true;
		return;
	}
	slot = set_slot(set->slots, set->size, hash);
	if (*slot != 0)
		return;
	*slot = hash;
	set->used++;
	if (set->used * 2 > set->size)
		set_grow(set);
}

/* ---- tokenizing a text ---- */


typedef struct TextBytes
{
	char	   *utf8;
	int			len;
	bool		converted;
} TextBytes;

static TextBytes
text_bytes(text *t)
{
	TextBytes	b;
	char	   *data = VARDATA_ANY(t);

	b.len = VARSIZE_ANY_EXHDR(t);
	b.utf8 = simhash_as_utf8(data, &b.len);
	b.converted = (b.utf8 != data);
	return b;
}

static void
text_bytes_free(TextBytes *b)
{
	if (b->converted)
		pfree(b->utf8);
}

/* the units of a text: the ones asked for, or with 'auto', by its script */
static SimhashFeatureKind
text_units(const TextBytes *b, const Shingling *sh)
{
	if (!sh->automatic)
		return sh->kind;
	return simhash_text_is_cjk(b->utf8, b->len) ? SIMHASH_FEATURE_LETTERS : SIMHASH_FEATURE_UNITS;
}

/* the shingles of a text into a set; false if the set overflowed */
static bool
text_shingle_set(TextBytes *b, const Shingling *sh, ShingleSet *set, Size *budget)
{
	SimhashFeatureKind kind = text_units(b, sh);

	/* at most one shingle per byte of text; about one per 4 for words */
	set_init(set, b->len / (kind == SIMHASH_FEATURE_LETTERS ? 2 : 4) + 1, budget);
	simhash_tokenize(b->utf8, b->len, kind, sh->n, set_add, set);
	return !set->overflow;
}

/* the shingle size n and the units, checked */
Shingling
shingle_get_shingling(int32 n, text *units_arg)
{
	Shingling	sh;
	char	   *units = text_to_cstring(units_arg);

	if (n < 1 || n > SIMHASH_MAX_SHINGLE)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("n must be between 1 and %d, not %d", SIMHASH_MAX_SHINGLE, n),
				 errhint("n is the number of units in a shingle.")));
	sh.n = n;
	sh.automatic = false;
	if (strcmp(units, "words") == 0)
		sh.kind = SIMHASH_FEATURE_UNITS;
	else if (strcmp(units, "characters") == 0)
		sh.kind = SIMHASH_FEATURE_LETTERS;
	else if (strcmp(units, "auto") == 0)
	{
		sh.kind = SIMHASH_FEATURE_UNITS;
		sh.automatic = true;
	}
	else
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid shingle units \"%s\"", units),
				 errhint("Valid units are \"words\", \"characters\" and \"auto\" (characters for a text written mostly in CJK characters, else words).")));
	pfree(units);
	return sh;
}

static double
jaccard(int64 inter, int64 size_a, int64 size_b)
{
	if (size_a + size_b == 0)
		return 1.0;				/* two texts without shingles */
	return (double) inter / (double) (size_a + size_b - inter);
}

/* ---- the fallback beyond work_mem: sorted hashes, merged ---- */

typedef struct SortSink
{
	Tuplesortstate *sort;
} SortSink;

static void
sort_add(uint64 hash, void *arg)
{
	/* the sort key is the signed value; any total order will do */
	tuplesort_putdatum(((SortSink *) arg)->sort, Int64GetDatum((int64) hash), false);
}

static Tuplesortstate *
sorted_shingles(TextBytes *b, const Shingling *sh)
{
	SortSink	sink;

	sink.sort = tuplesort_begin_datum(INT8OID, Int8LessOperator, InvalidOid, false,
									  work_mem / 2, NULL, TUPLESORT_NONE);
	simhash_tokenize(b->utf8, b->len, text_units(b, sh), sh->n, sort_add, &sink);
	tuplesort_performsort(sink.sort);
	return sink.sort;
}

/* the next distinct value of a sorted stream; false at its end */
static bool
sorted_next(Tuplesortstate *sort, bool *started, int64 *value)
{
	Datum		d;
	bool		isnull;

	for (;;)
	{
#if PG_VERSION_NUM >= 160000
		if (!tuplesort_getdatum(sort, true, false, &d, &isnull, NULL))
#else
		if (!tuplesort_getdatum(sort, true, &d, &isnull, NULL))
#endif
			return false;
		CHECK_FOR_INTERRUPTS();
		if (!*started || DatumGetInt64(d) != *value)
		{
			*started = true;
			*value = DatumGetInt64(d);
			return true;
		}
	}
}

static double
similarity_sorted(TextBytes *a, TextBytes *b, const Shingling *sh)
{
	Tuplesortstate *sa = sorted_shingles(a, sh);
	Tuplesortstate *sb = sorted_shingles(b, sh);
	bool		started_a = false,
				started_b = false;
	int64		va = 0,
				vb = 0;
	int64		size_a = 0,
				size_b = 0,
				inter = 0;
	bool		more_a = sorted_next(sa, &started_a, &va);
	bool		more_b = sorted_next(sb, &started_b, &vb);

	while (more_a || more_b)
	{
		if (more_a && (!more_b || va < vb))
		{
			size_a++;
			more_a = sorted_next(sa, &started_a, &va);
		}
		else if (more_b && (!more_a || vb < va))
		{
			size_b++;
			more_b = sorted_next(sb, &started_b, &vb);
		}
		else
		{
			size_a++;
			size_b++;
			inter++;
			more_a = sorted_next(sa, &started_a, &va);
			more_b = sorted_next(sb, &started_b, &vb);
		}
	}
	tuplesort_end(sa);
	tuplesort_end(sb);
	return jaccard(inter, size_a, size_b);
}

/* ---- shingle_similarity(text, text, n, units) ---- */

PG_FUNCTION_INFO_V1(shingle_similarity);
Datum
shingle_similarity(PG_FUNCTION_ARGS)
{
	text	   *ta = PG_GETARG_TEXT_PP(0);
	text	   *tb = PG_GETARG_TEXT_PP(1);
	Shingling	sh = shingle_get_shingling(PG_GETARG_INT32(2), PG_GETARG_TEXT_PP(3));
	TextBytes	a = text_bytes(ta);
	TextBytes	b = text_bytes(tb);
	Size		budget = (Size) work_mem * 1024;
	ShingleSet	sa,
				sb;
	double		result;

	if (text_shingle_set(&a, &sh, &sa, &budget) && text_shingle_set(&b, &sh, &sb, &budget))
	{
		const ShingleSet *small = set_count(&sa) <= set_count(&sb) ? &sa : &sb;
		const ShingleSet *large = small == &sa ? &sb : &sa;
		int64		inter = small->has_zero && large->has_zero ? 1 : 0;
		Size		i;

		for (i = 0; i < small->size; i++)
		{
			if ((i & 0xFFFF) == 0)
				CHECK_FOR_INTERRUPTS();
			if (small->slots[i] != 0 && set_contains(large, small->slots[i]))
				inter++;
		}
		result = jaccard(inter, set_count(&sa), set_count(&sb));
	}
	else
		result = similarity_sorted(&a, &b, &sh);
	text_bytes_free(&a);
	text_bytes_free(&b);
	PG_RETURN_FLOAT8(result);
}

/* ---- stored sets: shingle_set(text, n, units) and shingle_similarity(bigint[], bigint[]) ---- */

static int
cmp_int64(const void *a, const void *b)
{
	int64		x = *(const int64 *) a;
	int64		y = *(const int64 *) b;

	return x < y ? -1 : x > y ? 1 : 0;
}

/*
 * Sorts n int64 hashes ascending.  The hashes are uniform, so one counting
 * pass on their top bits (the sign bit flipped, about one value a bucket)
 * leaves them nearly sorted, and an insertion sort finishes in linear time.
 * Should the hashes crowd into few buckets after all, the insertion sort
 * gives up after 8 moves a value on average and qsort finishes.
 */
static void
sort_hashes(int64 *v, Size n)
{
	const uint64 flip = UINT64CONST(1) << 63;
	int			bits = 1;
	Size	   *counts;
	int64	   *dst;
	Size		i;
	Size		sum = 0;
	Size		moves = 0;

	if (n < 2)
		return;
	while (bits < 20 && ((Size) 1 << bits) < n)
		bits++;
	counts = palloc0(((Size) 1 << bits) * sizeof(Size));
	dst = palloc_extended(n * sizeof(int64), MCXT_ALLOC_HUGE);
	for (i = 0; i < n; i++)
		counts[((uint64) v[i] ^ flip) >> (64 - bits)]++;
	for (i = 0; i < ((Size) 1 << bits); i++)
	{
		Size		c = counts[i];

		counts[i] = sum;
		sum += c;
	}
	for (i = 0; i < n; i++)
		dst[counts[((uint64) v[i] ^ flip) >> (64 - bits)]++] = v[i];
	for (i = 1; i < n; i++)
	{
		int64		x = dst[i];
		Size		j = i;

		if ((i & 0xFFFF) == 0)
			CHECK_FOR_INTERRUPTS();
		for (; j > 0 && dst[j - 1] > x; j--)
			dst[j] = dst[j - 1];
		dst[j] = x;
		moves += i - j;
		if (moves > 8 * n)
		{
			qsort(dst, n, sizeof(int64), cmp_int64);
			break;
		}
	}
	memcpy(v, dst, n * sizeof(int64));
	pfree(dst);
	pfree(counts);
}

/*
 * The shingle set of a text (len bytes in the database encoding): its
 * distinct hashes in no particular order (as int64), palloc'd; *count of
 * them.  Its hash table is built within maintenance_work_mem (16 to 32 bytes
 * a distinct shingle), an error beyond; the result is 8 bytes a shingle.
 */
int64 *
shingle_distinct_set(const char *data, int len, const Shingling *sh, Size *count)
{
	TextBytes	b;
	Size		budget = (Size) maintenance_work_mem * 1024;
	ShingleSet	set;
	int64	   *values;
	Size		i,
				j = 0;

	b.len = len;
	b.utf8 = simhash_as_utf8(data, &b.len);
	b.converted = (b.utf8 != data);
	if (!text_shingle_set(&b, sh, &set, &budget))
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("text has too many distinct shingles for maintenance_work_mem"),
				 errdetail("The shingle set of a text of %d bytes outgrew maintenance_work_mem (%d kB) after %zu distinct shingles.",
						   len, maintenance_work_mem, set_count(&set)),
				 errhint("A shingle set takes 16 to 32 bytes a distinct shingle while it is built: raise maintenance_work_mem, or compare two such texts with shingle_similarity(text, text), which spills to disk.")));
	text_bytes_free(&b);
	*count = set_count(&set);
	values = palloc_extended(Max(*count, 1) * sizeof(int64), MCXT_ALLOC_HUGE);
	if (set.has_zero)
		values[j++] = 0;
	for (i = 0; i < set.size; i++)
		if (set.slots[i] != 0)
			values[j++] = (int64) set.slots[i];
	pfree(set.slots);
	return values;
}

/* the same in ascending order */
int64 *
shingle_sorted_set(const char *data, int len, const Shingling *sh, Size *count)
{
	int64	   *values = shingle_distinct_set(data, len, sh, count);

	sort_hashes(values, *count);
	return values;
}

/* the Jaccard similarity of two sorted sets */
double
shingle_sorted_jaccard(const int64 *a, Size na, const int64 *b, Size nb)
{
	Size		i = 0,
				j = 0;
	int64		inter = 0;

	while (i < na && j < nb)
	{
		if (((i + j) & 0xFFFF) == 0)
			CHECK_FOR_INTERRUPTS();
		if (a[i] < b[j])
			i++;
		else if (a[i] > b[j])
			j++;
		else
		{
			inter++;
			i++;
			j++;
		}
	}
	return jaccard(inter, na, nb);
}

PG_FUNCTION_INFO_V1(shingle_set);
Datum
shingle_set(PG_FUNCTION_ARGS)
{
	text	   *t = PG_GETARG_TEXT_PP(0);
	Shingling	sh = shingle_get_shingling(PG_GETARG_INT32(1), PG_GETARG_TEXT_PP(2));
	Size		count;
	int64	   *values = shingle_sorted_set(VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t), &sh, &count);
	Datum	   *elems;
	Size		i;

	if (count > MaxAllocSize / sizeof(int64) - 1)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("text has too many distinct shingles for a shingle set (%zu)", count),
				 errhint("Compare such texts with shingle_similarity(text, text).")));
	elems = palloc(Max(count, 1) * sizeof(Datum));
	for (i = 0; i < count; i++)
		elems[i] = Int64GetDatum(values[i]);
	PG_RETURN_ARRAYTYPE_P(construct_array(elems, (int) count, INT8OID, 8, FLOAT8PASSBYVAL,
										  TYPALIGN_DOUBLE));
}

/*
 * The elements of a shingle set, checked: one dimension, no NULL, strictly
 * ascending.  what names it in the error ("argument 1").
 */
int64 *
shingle_set_elements(ArrayType *arr, Size *count, const char *what)
{
	int64	   *v;
	Size		i;

	if (ARR_NDIM(arr) > 1 || ARR_HASNULL(arr))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s is not a shingle set", what),
				 errdetail("A shingle set has one dimension and no NULLs."),
				 errhint("Make shingle sets with shingle_set(text).")));
	*count = ArrayGetNItems(ARR_NDIM(arr), ARR_DIMS(arr));
	v = (int64 *) ARR_DATA_PTR(arr);
	for (i = 1; i < *count; i++)
		if (v[i] <= v[i - 1])
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("%s is not a shingle set", what),
					 errdetail("Element %zu is not greater than the element before it.", i + 1),
					 errhint("Make shingle sets with shingle_set(text).")));
	return v;
}

PG_FUNCTION_INFO_V1(shingle_set_similarity);
Datum
shingle_set_similarity(PG_FUNCTION_ARGS)
{
	ArrayType  *arr_a = PG_GETARG_ARRAYTYPE_P(0);
	ArrayType  *arr_b = PG_GETARG_ARRAYTYPE_P(1);
	Size		na,
				nb;
	int64	   *a = shingle_set_elements(arr_a, &na, "argument 1");
	int64	   *b = shingle_set_elements(arr_b, &nb, "argument 2");

	PG_RETURN_FLOAT8(shingle_sorted_jaccard(a, na, b, nb));
}
