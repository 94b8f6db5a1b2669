/*
 * shingle_set.c
 *	  Shingle sets: a text's shingles of n units as a set of 64-bit hashes,
 *	  built once in an open-addressing hash set within a budget
 *	  (shingle_text_set, shingle_distinct_set) or sorted
 *	  (shingle_sorted_set), the Jaccard similarity of two sorted sets, a set
 *	  read from a stored bigint[], and the fingerprints of a set (the votes
 *	  of shingle_simhash128, shingle_set_parts; the 256-bit fingerprint of a
 *	  text that the hamming index keeps, shingle_text_quarters).  The SQL
 *	  functions on shingles are in jaccard.c and shingle_fingerprint.c.
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
 */
#include "accumulator.h"
#include "tokenize.h"
#include "shingle_set.h"
#include "simhash128.h"
#include "feature_hash.h"

#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/memutils.h"

#define SHINGLE_VOTE_BATCH 256

/* ---- a set of shingle hashes ---- */

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
			*shingle_set_slot(slots, set->size * 2, set->slots[i]) = set->slots[i];
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
	slot = shingle_set_slot(set->slots, set->size, hash);
	if (*slot != 0)
		return;
	*slot = hash;
	set->used++;
	if (set->used * 2 > set->size)
		set_grow(set);
}

/* ---- tokenizing a text ---- */


TextBytes
shingle_text_bytes(text *t)
{
	TextBytes	b;
	char	   *data = VARDATA_ANY(t);

	b.len = VARSIZE_ANY_EXHDR(t);
	b.utf8 = simhash_as_utf8(data, &b.len);
	b.converted = (b.utf8 != data);
	return b;
}

void
shingle_text_bytes_free(TextBytes *b)
{
	if (b->converted)
		pfree(b->utf8);
}

/* the units of a text: the ones asked for, or with 'auto', by its script */
SimhashFeatureKind
shingle_text_units(const TextBytes *b, const Shingling *sh)
{
	if (!sh->automatic)
		return sh->kind;
	return simhash_text_is_cjk(b->utf8, b->len) ? SIMHASH_FEATURE_LETTERS : SIMHASH_FEATURE_UNITS;
}

/* the shingles of a text into a set; false if the set overflowed */
bool
shingle_text_set(TextBytes *b, const Shingling *sh, ShingleSet *set, Size *budget)
{
	SimhashFeatureKind kind = shingle_text_units(b, sh);

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

/* the Jaccard similarity of two sets of size_a and size_b with inter in common */
double
shingle_jaccard(int64 inter, int64 size_a, int64 size_b)
{
	if (size_a + size_b == 0)
		return 1.0;				/* two texts without shingles */
	return (double) inter / (double) (size_a + size_b - inter);
}


/* ---- sets as arrays of hashes, and their fingerprints ---- */

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
	if (!shingle_text_set(&b, sh, &set, &budget))
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("text has too many distinct shingles for maintenance_work_mem"),
				 errdetail("The shingle set of a text of %d bytes outgrew maintenance_work_mem (%d kB) after %zu distinct shingles.",
						   len, maintenance_work_mem, shingle_set_count(&set)),
				 errhint("A shingle set takes 16 to 32 bytes a distinct shingle while it is built: raise maintenance_work_mem, or compare two such texts with shingle_similarity(text, text), which spills to disk.")));
	shingle_text_bytes_free(&b);
	*count = shingle_set_count(&set);
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
	return shingle_jaccard(inter, na, nb);
}

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

/*
 * The hashes of the features x || h and y || h, h in decimal: what
 * simhash(text[]) hashes for them.  h is written once, the prefix twice.
 */
static inline void
prefixed_hashes(int64 h, char x, char y, uint64 *a, uint64 *b)
{
	char		buf[128];		/* 1 + MAXINT8LEN bytes used; the size keeps the
								 * compiler from flagging XXH3's longer paths */
	int			len = pg_lltoa(h, buf + 1) + 1;

	buf[0] = x;
	*a = simhash_feature_hash(buf, len);
	buf[0] = y;
	*b = simhash_feature_hash(buf, len);
}

/*
 * The fingerprints of parts first .. first + nparts - 1 of a shingle set
 * (count distinct hashes, in any order): each shingle's hashes for all the
 * parts are computed together, and each half votes them in batches.
 */
void
shingle_set_parts(const int64 *set, Size count, int first, int nparts, Simhash128 *out)
{
	SimhashAcc	acc[2 * SHINGLE_PARTS_AT_ONCE];
	uint64		hashes[2 * SHINGLE_PARTS_AT_ONCE][SHINGLE_VOTE_BATCH];
	Size		i = 0;
	int			p;

	Assert(nparts >= 1 && nparts <= SHINGLE_PARTS_AT_ONCE);
	for (p = 0; p < 2 * nparts; p++)
		simhash_acc_init(&acc[p]);
	while (i < count)
	{
		int			n = 0;

		CHECK_FOR_INTERRUPTS();
		for (; i < count && n < SHINGLE_VOTE_BATCH; i++, n++)
			for (p = 0; p < nparts; p++)
			{
				char		x = 'a' + 2 * (first + p);

				prefixed_hashes(set[i], x, x + 1, &hashes[2 * p][n], &hashes[2 * p + 1][n]);
			}
		for (p = 0; p < 2 * nparts; p++)
			simhash_acc_add_units(&acc[p], hashes[p], n);
	}
	for (p = 0; p < nparts; p++)
	{
		out[p].hi = simhash_acc_finish(&acc[2 * p]);
		out[p].lo = simhash_acc_finish(&acc[2 * p + 1]);
	}
}

/*
 * The 256-bit fingerprint of a text's shingle set (len bytes in the
 * database encoding) with shingles of 3 units 'auto': shingle_simhash256(
 * text, 3, 'auto') as four 64-bit quarters, part 0's high and low halves,
 * then part 1's; false for a text without shingles (all quarters 0).  What
 * the hamming index keeps of a text.
 */
const Shingling shingle_text_shingling = {3, SIMHASH_FEATURE_UNITS, true};

/* the four quarters of a set's 256-bit fingerprint (parts 0 and 1) */
void
shingle_set_quarters(const int64 *set, Size count, uint64 *quarters)
{
	Simhash128	parts[SHINGLE_PARTS_AT_ONCE];

	shingle_set_parts(set, count, 0, SHINGLE_PARTS_AT_ONCE, parts);
	quarters[0] = parts[0].hi;
	quarters[1] = parts[0].lo;
	quarters[2] = parts[1].hi;
	quarters[3] = parts[1].lo;
}

bool
shingle_text_quarters(const char *data, int len, uint64 *quarters)
{
	Size		count;
	int64	   *set = shingle_distinct_set(data, len, &shingle_text_shingling, &count);

	shingle_set_quarters(set, count, quarters);
	pfree(set);
	return count > 0;
}
