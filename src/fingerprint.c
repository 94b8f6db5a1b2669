/*
 * fingerprint.c
 *	  Computing fingerprints: feature hashing, and, with the vote
 *	  accumulator of accumulator.c, the SQL functions simhash(text, ...),
 *	  simhash_ngram(text, ...), simhash(tsvector), simhash(text[]),
 *	  simhash(text[], float8[]) and the aggregate simhash_agg(text, float8);
 *	  and the 128-bit simhash128(text, ...), simhash128_ngram(text, ...),
 *	  simhash128(tsvector) and simhash128(text[]), whose high half is the
 *	  64-bit function's value and whose low half is voted by the same
 *	  features' second hashes (simhash_low_hash), in the same pass.
 */
#include "simhash128.h"
#include "accumulator.h"
#include "tokenize.h"

#include <math.h>

#include "access/tupmacs.h"
#include "catalog/pg_operator.h"
#include "catalog/pg_type.h"
#include "common/pg_prng.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "tsearch/ts_type.h"
#include "utils/array.h"
#include "utils/arrayaccess.h"
#include "utils/builtins.h"
#include "utils/tuplesort.h"

#include "feature_hash.h"

/* ---- weighting ---- */

typedef enum Weighting
{
	WEIGHT_TF,					/* weight = occurrences */
	WEIGHT_BINARY,				/* weight = 1 per distinct feature */
	WEIGHT_SUBLINEAR			/* weight = 1 + floor(log2(occurrences)) */
} Weighting;

static Weighting
parse_weighting(text *arg)
{
	const char *s = VARDATA_ANY(arg);
	int			len = VARSIZE_ANY_EXHDR(arg);

#define WEIGHTING_IS(name) (len == strlen(name) && memcmp(s, name, len) == 0)
	if (WEIGHTING_IS("sublinear"))
		return WEIGHT_SUBLINEAR;
	if (WEIGHTING_IS("tf"))
		return WEIGHT_TF;
	if (WEIGHTING_IS("binary"))
		return WEIGHT_BINARY;
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("invalid simhash weighting \"%s\"", text_to_cstring(arg)),
			 errhint("Valid weightings are \"tf\", \"binary\" and \"sublinear\".")));
	return WEIGHT_TF;			/* keep compiler quiet */
}

static int
parse_size(int32 n, const char *what)
{
	if (n < 1 || n > SIMHASH_MAX_SHINGLE)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be between 1 and %d, not %d", what, SIMHASH_MAX_SHINGLE, n)));
	return n;
}

/*
 * Feature collection.  Term frequency needs no memory: each occurrence votes
 * once.  The other weightings need each distinct feature's count: an
 * open-addressing table of slots, each a hash (keys[]) and its count
 * (counts[]; 0: an empty slot), one memory access for the usual probe.  A
 * slot is chosen by multiplying the hash, which is uniform already, by an
 * odd number drawn once per backend, so that no text can be made to pile its
 * features onto a few slots.  The arrays live as long as the calling
 * expression (fn_extra) and are reused row after row; only the counts are
 * cleared.  They stay within work_mem: when the table would outgrow it, its
 * contents go to a tuplesort (each hash as many times as it was counted,
 * which spills to disk by itself) and it starts empty; at the end the sorted
 * hashes are counted again.  The votes are integer sums, so the result is
 * the same.
 */
typedef struct FeatureTable
{
	uint64	   *keys;			/* a slot's hash, where its count is not 0 */
	uint32	   *counts;			/* a slot's count; 0: empty */
	Size		size;			/* slots in use, a power of 2 */
	int			shift;			/* 64 - log2(size) */
	Size		used;			/* slots taken */
	Size		limit;			/* the most slots taken before it grows */
	Size		allocated;		/* slots allocated */
	Size		max_size;		/* the most slots work_mem allows */
	MemoryContext mcxt;			/* of the arrays */
} FeatureTable;

typedef struct FeatureSink
{
	Weighting	weighting;
	SimhashAcc	acc;
	SimhashAcc *low;			/* a 128-bit fingerprint's low half, or NULL */
	FeatureTable *table;
	Tuplesortstate *spill;		/* counted hashes, once the table overflowed */
} FeatureSink;

/*
 * The table grows before more than one slot in SLOTS_PER_ENTRY is taken: a
 * new hash finds its first slot taken with a probability below 1 /
 * SLOTS_PER_ENTRY.  At its largest (work_mem) it fills up to half.
 */
#define SLOTS_PER_ENTRY	4
#define SLOT_BYTES		(sizeof(uint64) + sizeof(uint32))

static uint64 slot_multiplier;	/* odd; 0 until drawn */

static inline Size
slot_of(uint64 hash, int shift)
{
	return (Size) ((hash * slot_multiplier) >> shift);
}

static void
table_set_size(FeatureTable *tab, Size size)
{
	tab->size = size;
	tab->shift = 64 - pg_leftmost_one_pos64(size);
	tab->limit = size < tab->max_size ? size / SLOTS_PER_ENTRY : size / 2;
	memset(tab->counts, 0, size * sizeof(uint32));
}

static void
table_alloc(FeatureTable *tab, Size size)
{
	/* zeroed once: the probe reads the keys of empty slots too */
	tab->keys = MemoryContextAllocExtended(tab->mcxt, size * sizeof(uint64),
										   MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
	tab->counts = MemoryContextAllocHuge(tab->mcxt, size * sizeof(uint32));
	tab->allocated = size;
}

/* an empty table with room for expected_features entries (within work_mem) */
static void
table_reset(FeatureTable *tab, Size expected_features)
{
	Size		size = 64;

	if (slot_multiplier == 0)
		slot_multiplier = pg_prng_uint64(&pg_global_prng_state) | 1;
	/* growing to max_size holds the old half and the new table at once */
	tab->max_size = 64;
	while (tab->max_size * 2 * SLOT_BYTES * 3 / 2 <= (Size) work_mem * 1024 &&
		   tab->max_size < ((Size) 1 << 32))
		tab->max_size *= 2;
	while (size < SLOTS_PER_ENTRY * expected_features && size < Min((Size) 1 << 16, tab->max_size))
		size *= 2;
	if (tab->allocated < size)
	{
		if (tab->keys)
		{
			pfree(tab->keys);
			pfree(tab->counts);
		}
		table_alloc(tab, size);
	}
	tab->used = 0;
	table_set_size(tab, size);
}

/* twice the slots, the taken ones moved to their new places */
static void
table_grow(FeatureTable *tab)
{
	uint64	   *keys = tab->keys;
	uint32	   *counts = tab->counts;
	Size		size = tab->size;
	Size		i;

	table_alloc(tab, size * 2);
	table_set_size(tab, size * 2);
	for (i = 0; i < size; i++)
	{
		if ((i & 65535) == 0)
			CHECK_FOR_INTERRUPTS();
		if (counts[i] != 0)
		{
			Size		mask = tab->size - 1;
			Size		j = slot_of(keys[i], tab->shift);

			while (tab->counts[j] != 0)
				j = (j + 1) & mask;
			tab->keys[j] = keys[i];
			tab->counts[j] = counts[i];
		}
	}
	pfree(keys);
	pfree(counts);
}

/* move the table's counts to the tuplesort and empty it */
static void
sink_spill(FeatureSink *sink)
{
	FeatureTable *tab = sink->table;
	Size		i;

	if (sink->spill == NULL)
		sink->spill = tuplesort_begin_datum(INT8OID, Int8LessOperator, InvalidOid, false,
											work_mem, NULL, TUPLESORT_NONE);
	for (i = 0; i < tab->size; i++)
	{
		uint32		count;

		CHECK_FOR_INTERRUPTS();
		for (count = tab->counts[i]; count > 0; count--)
			tuplesort_putdatum(sink->spill, Int64GetDatum((int64) tab->keys[i]), false);
	}
	tab->used = 0;
	memset(tab->counts, 0, tab->size * sizeof(uint32));
}

/* votes of weight 1 for the features of these hashes, in both halves */
static void
sink_vote(FeatureSink *sink, const uint64 *hashes, int n)
{
	simhash_acc_add_units(&sink->acc, hashes, n);
	if (sink->low != NULL)
		simhash_acc_add_low_units(sink->low, hashes, n);
}

/* a vote of integer weight w for the feature of this hash, in both halves */
static void
sink_vote_times(FeatureSink *sink, uint64 hash, uint32 w)
{
	simhash_acc_add_times(&sink->acc, hash, w);
	if (sink->low != NULL)
		simhash_acc_add_times(sink->low, simhash_low_hash(hash), w);
}

/*
 * Count one occurrence of each hash, and vote as the count grows: the
 * weight of a feature counted c times is the number of counts from 1 to c
 * that earn a vote of 1 (binary: 1; sublinear: the powers of 2, so 1 +
 * floor(log2(c))), so each hash whose new count earns one goes to the
 * accumulator at once and nothing is left to do at the end.  The usual
 * cases take no branch: the hash's slot is empty or holds the hash itself
 * (either way the hash is written to it and its count goes up by one); only
 * a slot holding another hash probes further.  The hashes are taken as many
 * at a time as there is room for new entries (and votes); then the table
 * grows (or spills) and the rest follow.  From the first spill on the counts
 * are final only at the end: the votes so far are dropped and the spilled
 * counts vote then.
 */
#define SINK_VOTES	256

static void
sink_count(FeatureSink *sink, const uint64 *hashes, int n)
{
	FeatureTable *tab = sink->table;
	/* a count c earns a vote when (c | other) & (c - 1) is 0 */
	uint32		other = sink->weighting == WEIGHT_SUBLINEAR ? 0 : ~(uint32) 0;
	uint64		votes[SINK_VOTES];
	int			k = 0;

	while (k < n)
	{
		/* the table in locals: the stores below cannot change them */
		uint64	   *keys = tab->keys;
		uint32	   *counts = tab->counts;
		Size		mask = tab->size - 1;
		int			shift = tab->shift;
		Size		used = tab->used;
		int			stop = k + (int) Min(Min(tab->limit - used, (Size) (n - k)), (Size) SINK_VOTES);
		int			nvotes = 0;

		for (; k < stop; k++)
		{
			uint64		hash = hashes[k];
			Size		i = slot_of(hash, shift);
			uint32		c = counts[i];

			/*
			 * One branch, rarely taken: another hash in the slot (where c is
			 * 0 the key is stale).  Written as one word, or the compiler
			 * makes two branches of it, one of them unpredictable.
			 */
			if (unlikely(((keys[i] ^ hash) & -(uint64) (c != 0)) != 0))
			{
				do
				{
					i = (i + 1) & mask;
					c = counts[i];
				} while (c != 0 && keys[i] != hash);
			}
			keys[i] = hash;
			counts[i] = ++c;
			used += c == 1;
			votes[nvotes] = hash;
			nvotes += ((c | other) & (c - 1)) == 0;
		}
		tab->used = used;
		if (sink->spill == NULL)
			sink_vote(sink, votes, nvotes);
		if (k < n && tab->used == tab->limit)
		{
			if (tab->size < tab->max_size)
				table_grow(tab);
			else
			{
				if (sink->spill == NULL)
				{
					simhash_acc_init(&sink->acc);
					if (sink->low != NULL)
						simhash_acc_init(sink->low);
				}
				sink_spill(sink);
			}
		}
	}
}

static void
sink_add(const uint64 *hashes, int n, void *arg)
{
	FeatureSink *sink = (FeatureSink *) arg;

	if (sink->weighting == WEIGHT_TF)
		sink_vote(sink, hashes, n);
	else
		sink_count(sink, hashes, n);
}

static inline uint32
sink_weight(FeatureSink *sink, uint32 count)
{
	return sink->weighting == WEIGHT_SUBLINEAR ? 1 + pg_leftmost_one_pos32(count) : 1;
}

static simhash
sink_finish(FeatureSink *sink)
{
	if (sink->weighting == WEIGHT_TF)
		return simhash_acc_finish(&sink->acc);
	if (sink->spill != NULL)
	{
		Datum		value;
		bool		isnull;
		uint64		current = 0;
		uint32		count = 0;

		sink_spill(sink);
		tuplesort_performsort(sink->spill);
#if PG_VERSION_NUM >= 160000
		while (tuplesort_getdatum(sink->spill, true, false, &value, &isnull, NULL))
#else
		while (tuplesort_getdatum(sink->spill, true, &value, &isnull, NULL))
#endif
		{
			uint64		hash = (uint64) DatumGetInt64(value);

			CHECK_FOR_INTERRUPTS();
			if (count > 0 && hash != current)
			{
				sink_vote_times(sink, current, sink_weight(sink, count));
				count = 0;
			}
			current = hash;
			count++;
		}
		if (count > 0)
			sink_vote_times(sink, current, sink_weight(sink, count));
		tuplesort_end(sink->spill);
		sink->spill = NULL;
	}
	return simhash_acc_finish(&sink->acc);
}

/*
 * The table of distinct features of the calling expression, kept in
 * fn_extra (or a new one, for a call without one).
 */
static FeatureTable *
feature_table(FunctionCallInfo fcinfo)
{
	FeatureTable *tab;

	if (fcinfo->flinfo != NULL && fcinfo->flinfo->fn_extra != NULL)
		return (FeatureTable *) fcinfo->flinfo->fn_extra;
	if (fcinfo->flinfo != NULL)
	{
		tab = MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(FeatureTable));
		tab->mcxt = fcinfo->flinfo->fn_mcxt;
		fcinfo->flinfo->fn_extra = tab;
	}
	else
	{
		tab = palloc0(sizeof(FeatureTable));
		tab->mcxt = CurrentMemoryContext;
	}
	return tab;
}

/*
 * The fingerprint of the text argument; with low not NULL, the low half of
 * its 128-bit fingerprint in *low too.
 */
static simhash
fingerprint_text(FunctionCallInfo fcinfo, SimhashFeatureKind kind, int n, Weighting weighting,
				 uint64 *low)
{
	text	   *body = PG_GETARG_TEXT_PP(0);
	FeatureSink sink;
	SimhashAcc	low_acc;
	int			len = VARSIZE_ANY_EXHDR(body);
	char	   *utf8 = simhash_as_utf8(VARDATA_ANY(body), &len);
	simhash		result;

	sink.weighting = weighting;
	simhash_acc_init(&sink.acc);
	sink.low = NULL;
	if (low != NULL)
	{
		simhash_acc_init(&low_acc);
		sink.low = &low_acc;
	}
	sink.spill = NULL;
	sink.table = NULL;
	if (weighting != WEIGHT_TF)
	{
		sink.table = feature_table(fcinfo);
		/* about one feature per 3 bytes of text (a CJK character) or more */
		table_reset(sink.table, len / 3);
	}
	simhash_tokenize_batch(utf8, len, kind, n, sink_add, &sink);
	if (utf8 != VARDATA_ANY(body))
		pfree(utf8);
	result = sink_finish(&sink);
	if (low != NULL)
		*low = simhash_acc_finish(&low_acc);
	if (sink.table != NULL && fcinfo->flinfo == NULL)
	{
		pfree(sink.table->keys);
		pfree(sink.table->counts);
		pfree(sink.table);
	}
	return result;
}

PG_FUNCTION_INFO_V1(simhash_text);
Datum
simhash_text(PG_FUNCTION_ARGS)
{
	int			n = parse_size(PG_GETARG_INT32(1), "shingle");
	Weighting	weighting = parse_weighting(PG_GETARG_TEXT_PP(2));

	PG_RETURN_SIMHASH(fingerprint_text(fcinfo, SIMHASH_FEATURE_WORDS, n, weighting, NULL));
}

/* the 128-bit fingerprint of (text, size, weighting) arguments */
static Simhash128 *
fingerprint128_text(FunctionCallInfo fcinfo, SimhashFeatureKind kind, const char *size_name)
{
	int			n = parse_size(PG_GETARG_INT32(1), size_name);
	Weighting	weighting = parse_weighting(PG_GETARG_TEXT_PP(2));
	uint64		low;
	uint64		high = fingerprint_text(fcinfo, kind, n, weighting, &low);

	return simhash128_make(high, low);
}

PG_FUNCTION_INFO_V1(simhash128_text);
Datum
simhash128_text(PG_FUNCTION_ARGS)
{
	PG_RETURN_SIMHASH128_P(fingerprint128_text(fcinfo, SIMHASH_FEATURE_WORDS, "shingle"));
}

PG_FUNCTION_INFO_V1(simhash_ngram);
Datum
simhash_ngram(PG_FUNCTION_ARGS)
{
	int			n = parse_size(PG_GETARG_INT32(1), "n");
	Weighting	weighting = parse_weighting(PG_GETARG_TEXT_PP(2));

	PG_RETURN_SIMHASH(fingerprint_text(fcinfo, SIMHASH_FEATURE_CHARS, n, weighting, NULL));
}

PG_FUNCTION_INFO_V1(simhash128_ngram);
Datum
simhash128_ngram(PG_FUNCTION_ARGS)
{
	PG_RETURN_SIMHASH128_P(fingerprint128_text(fcinfo, SIMHASH_FEATURE_CHARS, "n"));
}

/* hash of a feature given by the user, as UTF-8 bytes, not normalized */
static inline uint64
hash_given_feature(const char *s, int len, bool is_utf8)
{
	char	   *u;
	uint64		h;

	if (is_utf8)
		return simhash_feature_hash(s, len);
	u = simhash_as_utf8(s, &len);
	h = simhash_feature_hash(u, len);
	if (u != s)
		pfree(u);
	return h;
}

/*
 * Features given by the user (array elements, tsvector lexemes) with their
 * integer weights, gathered as spans of one buffer and hashed in batches by
 * simhash_hash_spans() (no branch on a feature's length).  In a database
 * whose encoding is not UTF-8 each feature is converted and hashed on its
 * own instead.
 */
#define GIVEN_BATCH 256

typedef struct GivenBatch
{
	const unsigned char *base;	/* every feature lies in it */
	SimhashAcc *acc;			/* the votes */
	SimhashAcc *low;			/* a 128-bit fingerprint's low half, or NULL */
	bool		is_utf8;
	int			n;
	uint32		start[GIVEN_BATCH];
	uint32		end[GIVEN_BATCH];
	uint32		weight[GIVEN_BATCH];
	uint32		weights_or;		/* of weight[0 .. n - 1]: 1 when all are 1 */
	uint64		hash[GIVEN_BATCH];
	uint16		lists[4][GIVEN_BATCH + 1];
} GivenBatch;

static void
given_init(GivenBatch *b, const void *base, SimhashAcc *acc, SimhashAcc *low)
{
	simhash_acc_init(acc);
	if (low != NULL)
		simhash_acc_init(low);
	b->base = base;
	b->acc = acc;
	b->low = low;
	b->is_utf8 = GetDatabaseEncoding() == PG_UTF8;
	b->n = 0;
	b->weights_or = 0;
}

/*
 * Add the votes of the batch's features, whose hashes (or second hashes) are
 * h[]: all of weight 1 (every array, most tsvectors) in one go; otherwise
 * those of weight 1 are listed apart from the others (each written to both
 * lists and counted in one, without a branch) and added in one go, and the
 * others are listed by the bits of their weights below 16 the same way and
 * each list added as features of weight 2^bit; what a weight has above 15
 * (rare) is added on its own.
 */
static void
given_votes(GivenBatch *b, SimhashAcc *acc, const uint64 *h)
{
	uint64		ones[GIVEN_BATCH];
	uint16		others[GIVEN_BATCH];
	uint64		bybit[4][GIVEN_BATCH];
	int			nones = 0,
				nothers = 0,
				c0 = 0,
				c1 = 0,
				c2 = 0,
				c3 = 0,
				i;

	if (b->weights_or == 1)
	{
		acc_add_units_at(acc, h, b->n, 0);
		return;
	}
	for (i = 0; i < b->n; i++)
	{
		ones[nones] = h[i];
		others[nothers] = (uint16) i;
		nones += b->weight[i] == 1;
		nothers += b->weight[i] != 1;
	}
	acc_add_units_at(acc, ones, nones, 0);
	for (i = 0; i < nothers; i++)
	{
		uint64		hi = h[others[i]];
		uint32		w = b->weight[others[i]];

		bybit[0][c0] = bybit[1][c1] = bybit[2][c2] = bybit[3][c3] = hi;
		c0 += w & 1;
		c1 += (w >> 1) & 1;
		c2 += (w >> 2) & 1;
		c3 += (w >> 3) & 1;
		if (unlikely(w > 15))
			simhash_acc_add_times(acc, hi, w & ~(uint32) 15);
	}
	acc_add_units_at(acc, bybit[0], c0, 0);
	acc_add_units_at(acc, bybit[1], c1, 1);
	acc_add_units_at(acc, bybit[2], c2, 2);
	acc_add_units_at(acc, bybit[3], c3, 3);
}

/* Hash the batch and add its votes, to both halves of a 128-bit fingerprint. */
static void
given_flush(GivenBatch *b)
{
	simhash_hash_spans(b->base, b->start, b->end, 0, b->n, b->hash, &b->lists[0][0],
					   GIVEN_BATCH + 1);
	given_votes(b, b->acc, b->hash);
	if (b->low != NULL)
	{
		uint64		second[GIVEN_BATCH];
		int			i;

		for (i = 0; i < b->n; i++)
			second[i] = simhash_low_hash(b->hash[i]);
		given_votes(b, b->low, second);
	}
	b->n = 0;
	b->weights_or = 0;
}

/* one feature: the len bytes at s (inside b->base) of weight w */
static inline void
given_add(GivenBatch *b, const char *s, int len, uint32 w)
{
	if (!b->is_utf8)
	{
		uint64		h = hash_given_feature(s, len, false);

		simhash_acc_add_times(b->acc, h, w);
		if (b->low != NULL)
			simhash_acc_add_times(b->low, simhash_low_hash(h), w);
	}
	else
	{
		/* n in a local: the stores below could alias b->n */
		int			n = b->n;
		uint32		start = (uint32) ((const unsigned char *) s - b->base);

		b->start[n] = start;
		b->end[n] = start + (uint32) len;
		b->weight[n] = w;
		b->weights_or |= w;
		b->n = ++n;
		if (n == GIVEN_BATCH)
			given_flush(b);
	}
}

/* the votes of a tsvector's lexemes, in acc (and in low, when not NULL) */
static void
tsvector_votes(TSVector tsv, SimhashAcc *acc, SimhashAcc *low)
{
	WordEntry  *entries = ARRPTR(tsv);
	GivenBatch	batch;
	int			i;

	given_init(&batch, STRPTR(tsv), acc, low);
	for (i = 0; i < tsv->size; i++)
	{
		if ((i & 1023) == 0)
			CHECK_FOR_INTERRUPTS();
		given_add(&batch, STRPTR(tsv) + entries[i].pos, entries[i].len,
				  entries[i].haspos ? POSDATALEN(tsv, &entries[i]) : 1);
	}
	given_flush(&batch);
}

PG_FUNCTION_INFO_V1(simhash_tsvector);
Datum
simhash_tsvector(PG_FUNCTION_ARGS)
{
	SimhashAcc	acc;

	tsvector_votes(PG_GETARG_TSVECTOR(0), &acc, NULL);
	PG_RETURN_SIMHASH(simhash_acc_finish(&acc));
}

/* the 128-bit fingerprint of the votes in acc (high half) and low */
static Simhash128 *
acc_finish128(SimhashAcc *acc, SimhashAcc *low)
{
	uint64		high = simhash_acc_finish(acc);

	return simhash128_make(high, simhash_acc_finish(low));
}

PG_FUNCTION_INFO_V1(simhash128_tsvector);
Datum
simhash128_tsvector(PG_FUNCTION_ARGS)
{
	SimhashAcc	acc;
	SimhashAcc	low;

	tsvector_votes(PG_GETARG_TSVECTOR(0), &acc, &low);
	PG_RETURN_SIMHASH128_P(acc_finish128(&acc, &low));
}

/* the number (from 1) of the first NULL element of a one-dimensional arr, or 0 */
static int
first_null(ArrayType *arr, int n)
{
	bits8	   *nulls = ARR_NULLBITMAP(arr);
	int			i;

	if (nulls != NULL)
		for (i = 0; i < n; i++)
			if (!(nulls[i / 8] & (1 << (i % 8))))
				return i + 1;
	return 0;
}

/* a feature array: one dimension, no nulls */
static void
check_features(ArrayType *arr, int n)
{
	int			i;

	if (ARR_NDIM(arr) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("feature array must have one dimension, not %d", ARR_NDIM(arr))));
	if ((i = first_null(arr, n)) > 0)
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("feature array must not contain nulls"),
				 errdetail("Element %d is null.", i)));
}

static void
check_weight(double w)
{
	if (isnan(w) || isinf(w))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("feature weight must be a finite number, not %g", w)));
}

/* the votes of an array of features, in acc (and in low, when not NULL) */
static void
features_votes(ArrayType *arr, SimhashAcc *acc, SimhashAcc *low)
{
	int			n = ArrayGetNItems(ARR_NDIM(arr), ARR_DIMS(arr));
	const char *p = ARR_DATA_PTR(arr);
	GivenBatch	batch;
	int			i;

	check_features(arr, n);
	given_init(&batch, p, acc, low);
	/* the elements in place (text: varlena, int alignment) */
	for (i = 0; i < n; i++)
	{
		if ((i & 1023) == 0)
			CHECK_FOR_INTERRUPTS();
		given_add(&batch, VARDATA_ANY(p), VARSIZE_ANY_EXHDR(p), 1);
		p = att_addlength_pointer(p, -1, p);
		p = (const char *) att_align_nominal(p, TYPALIGN_INT);
	}
	given_flush(&batch);
}

PG_FUNCTION_INFO_V1(simhash_features);
Datum
simhash_features(PG_FUNCTION_ARGS)
{
	SimhashAcc	acc;

	features_votes(PG_GETARG_ARRAYTYPE_P(0), &acc, NULL);
	PG_RETURN_SIMHASH(simhash_acc_finish(&acc));
}

PG_FUNCTION_INFO_V1(simhash128_features);
Datum
simhash128_features(PG_FUNCTION_ARGS)
{
	SimhashAcc	acc;
	SimhashAcc	low;

	features_votes(PG_GETARG_ARRAYTYPE_P(0), &acc, &low);
	PG_RETURN_SIMHASH128_P(acc_finish128(&acc, &low));
}

/*
 * Both arrays are read in place (array_iter), element by element: the call
 * needs no memory beyond the arrays themselves, whatever their length.
 */
PG_FUNCTION_INFO_V1(simhash_weighted_features);
Datum
simhash_weighted_features(PG_FUNCTION_ARGS)
{
	ArrayType  *arr = PG_GETARG_ARRAYTYPE_P(0);
	ArrayType  *warr = PG_GETARG_ARRAYTYPE_P(1);
	bool		is_utf8 = GetDatabaseEncoding() == PG_UTF8;
	int			n = ArrayGetNItems(ARR_NDIM(arr), ARR_DIMS(arr));
	int			nw = ArrayGetNItems(ARR_NDIM(warr), ARR_DIMS(warr));
	array_iter	features,
				weights;
	int			i;
	SimhashAcc	acc;

	check_features(arr, n);
	if (ARR_NDIM(warr) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("weight array must have one dimension, not %d", ARR_NDIM(warr))));
	if (n != nw)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("feature and weight arrays must have the same length"),
				 errdetail("There are %d features and %d weights.", n, nw)));
	simhash_acc_init(&acc);
	array_iter_setup(&features, (AnyArrayType *) arr);
	array_iter_setup(&weights, (AnyArrayType *) warr);
	for (i = 0; i < n; i++)
	{
		bool		isnull;
		text	   *f = DatumGetTextPP(array_iter_next(&features, &isnull, i, -1, false, TYPALIGN_INT));
		Datum		wd = array_iter_next(&weights, &isnull, i, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE);
		double		w;

		CHECK_FOR_INTERRUPTS();
		if (isnull)
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("weight array must not contain nulls"),
					 errdetail("Element %d is null.", i + 1)));
		w = DatumGetFloat8(wd);
		check_weight(w);
		simhash_acc_add_weighted(&acc, hash_given_feature(VARDATA_ANY(f), VARSIZE_ANY_EXHDR(f), is_utf8), w);
	}
	PG_RETURN_SIMHASH(simhash_acc_finish(&acc));
}

/* ---- aggregate simhash_agg(feature text, weight float8) ---- */

PG_FUNCTION_INFO_V1(simhash_agg_transfn);
Datum
simhash_agg_transfn(PG_FUNCTION_ARGS)
{
	MemoryContext aggcontext;
	SimhashAcc *acc;

	if (!AggCheckCallContext(fcinfo, &aggcontext))
		elog(ERROR, "simhash_agg_transfn called in non-aggregate context");
	if (PG_ARGISNULL(0))
	{
		acc = MemoryContextAlloc(aggcontext, sizeof(SimhashAcc));
		simhash_acc_init(acc);
	}
	else
		acc = (SimhashAcc *) PG_GETARG_POINTER(0);

	if (!PG_ARGISNULL(1) && !PG_ARGISNULL(2))
	{
		text	   *f = PG_GETARG_TEXT_PP(1);
		double		w = PG_GETARG_FLOAT8(2);

		check_weight(w);
		simhash_acc_add_weighted(acc, hash_given_feature(VARDATA_ANY(f), VARSIZE_ANY_EXHDR(f),
														  GetDatabaseEncoding() == PG_UTF8), w);
	}
	PG_RETURN_POINTER(acc);
}

PG_FUNCTION_INFO_V1(simhash_agg_combinefn);
Datum
simhash_agg_combinefn(PG_FUNCTION_ARGS)
{
	MemoryContext aggcontext;
	SimhashAcc *a;
	SimhashAcc *b;
	int			bit;

	if (!AggCheckCallContext(fcinfo, &aggcontext))
		elog(ERROR, "simhash_agg_combinefn called in non-aggregate context");
	if (PG_ARGISNULL(1))
		PG_RETURN_DATUM(PG_GETARG_DATUM(0));
	b = (SimhashAcc *) PG_GETARG_POINTER(1);
	if (PG_ARGISNULL(0))
	{
		a = MemoryContextAlloc(aggcontext, sizeof(SimhashAcc));
		memcpy(a, b, sizeof(SimhashAcc));
		PG_RETURN_POINTER(a);
	}
	a = (SimhashAcc *) PG_GETARG_POINTER(0);
	if (b->has_weighted)
	{
		double	   *sums = acc_weighted(a);

		for (bit = 0; bit < 64; bit++)
			sums[bit] += b->weighted[bit];
	}
	PG_RETURN_POINTER(a);
}

PG_FUNCTION_INFO_V1(simhash_agg_serialfn);
Datum
simhash_agg_serialfn(PG_FUNCTION_ARGS)
{
	SimhashAcc *acc = (SimhashAcc *) PG_GETARG_POINTER(0);
	bytea	   *out = palloc(VARHDRSZ + sizeof(acc->weighted) + 1);

	SET_VARSIZE(out, VARHDRSZ + sizeof(acc->weighted) + 1);
	if (acc->has_weighted)
		memcpy(VARDATA(out), acc->weighted, sizeof(acc->weighted));
	else
		memset(VARDATA(out), 0, sizeof(acc->weighted));
	VARDATA(out)[sizeof(acc->weighted)] = acc->has_weighted ? 1 : 0;
	PG_RETURN_BYTEA_P(out);
}

PG_FUNCTION_INFO_V1(simhash_agg_deserialfn);
Datum
simhash_agg_deserialfn(PG_FUNCTION_ARGS)
{
	bytea	   *in = PG_GETARG_BYTEA_PP(0);
	SimhashAcc *acc = palloc(sizeof(SimhashAcc));

	if (VARSIZE_ANY_EXHDR(in) != sizeof(acc->weighted) + 1)
		elog(ERROR, "invalid simhash_agg state");
	simhash_acc_init(acc);
	memcpy(acc->weighted, VARDATA_ANY(in), sizeof(acc->weighted));
	acc->has_weighted = VARDATA_ANY(in)[sizeof(acc->weighted)] != 0;
	PG_RETURN_POINTER(acc);
}

PG_FUNCTION_INFO_V1(simhash_agg_finalfn);
Datum
simhash_agg_finalfn(PG_FUNCTION_ARGS)
{
	SimhashAcc	copy;

	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	/* the state may be finalized more than once: work on a copy */
	memcpy(&copy, PG_GETARG_POINTER(0), sizeof(SimhashAcc));
	PG_RETURN_SIMHASH(simhash_acc_finish(&copy));
}
