/*
 * gist.c
 *	  The GiST operator class simhash_gist_ops: exact nearest-first order
 *	  (ORDER BY fp <~> q, planned as fp <-> q) and equality (=), nothing else.
 *	  It prunes only on the bits that a whole subtree shares, which for
 *	  fingerprints of unrelated documents is little more than a common
 *	  prefix, so on large tables it is about as fast as a sort; radius
 *	  searches belong to the GIN class simhash_ops and to the hamming method.
 *
 * A node's key summarizes the fingerprints below it by the AND and the OR of
 * their bits: the bits where the two agree are shared by the whole subtree,
 * so the distance from a query to any fingerprint below is at least the
 * number of shared bits where the query differs.  A leaf key is exact
 * (AND = OR = the fingerprint), so leaf distances are exact and nothing is
 * rechecked.  Builds sort by fingerprint, which groups shared prefixes; page
 * splits cut on the bit that best halves the page.
 */
#include "simhash.h"
#include "strategy.h"

#include "access/gist.h"
#include "access/stratnum.h"
#include "utils/sortsupport.h"

typedef struct SimhashGistKey
{
	uint64		and_bits;
	uint64		or_bits;
} SimhashGistKey;

#define DatumGetSimhashGistKeyP(X)	((SimhashGistKey *) DatumGetPointer(X))

/* distance from q to every fingerprint summarized by key, at least */
static inline int
key_lower_bound(const SimhashGistKey *key, simhash q)
{
	uint64		shared = ~(key->and_bits ^ key->or_bits);

	return pg_popcount64((q ^ key->and_bits) & shared);
}

/* widen acc to summarize key too */
static inline void
key_merge(SimhashGistKey *acc, const SimhashGistKey *key)
{
	acc->and_bits &= key->and_bits;
	acc->or_bits |= key->or_bits;
}

static inline void
key_init_empty(SimhashGistKey *key)
{
	key->and_bits = ~UINT64CONST(0);
	key->or_bits = 0;
}

static inline bool
key_is_exact(const SimhashGistKey *key)
{
	return key->and_bits == key->or_bits;
}

PG_FUNCTION_INFO_V1(simhash_gist_key_in);
Datum
simhash_gist_key_in(PG_FUNCTION_ARGS)
{
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("simhash_gist_key is an index-internal type and has no input form")));
	PG_RETURN_VOID();
}

PG_FUNCTION_INFO_V1(simhash_gist_key_out);
Datum
simhash_gist_key_out(PG_FUNCTION_ARGS)
{
	SimhashGistKey *key = DatumGetSimhashGistKeyP(PG_GETARG_DATUM(0));

	PG_RETURN_CSTRING(psprintf("(and %016llx, or %016llx)",
							   (unsigned long long) key->and_bits,
							   (unsigned long long) key->or_bits));
}

PG_FUNCTION_INFO_V1(simhash_gist_compress);
Datum
simhash_gist_compress(PG_FUNCTION_ARGS)
{
	GISTENTRY  *entry = (GISTENTRY *) PG_GETARG_POINTER(0);
	GISTENTRY  *result;
	SimhashGistKey *key;

	if (!entry->leafkey)
		PG_RETURN_POINTER(entry);
	key = palloc(sizeof(SimhashGistKey));
	key->and_bits = key->or_bits = DatumGetSimhash(entry->key);
	result = palloc(sizeof(GISTENTRY));
	gistentryinit(*result, PointerGetDatum(key), entry->rel, entry->page, entry->offset, false);
	PG_RETURN_POINTER(result);
}

/* index-only scans: a leaf key holds the fingerprint itself */
PG_FUNCTION_INFO_V1(simhash_gist_fetch);
Datum
simhash_gist_fetch(PG_FUNCTION_ARGS)
{
	GISTENTRY  *entry = (GISTENTRY *) PG_GETARG_POINTER(0);
	GISTENTRY  *result = palloc(sizeof(GISTENTRY));

	gistentryinit(*result, SimhashGetDatum(DatumGetSimhashGistKeyP(entry->key)->and_bits),
				  entry->rel, entry->page, entry->offset, false);
	PG_RETURN_POINTER(result);
}

PG_FUNCTION_INFO_V1(simhash_gist_union);
Datum
simhash_gist_union(PG_FUNCTION_ARGS)
{
	GistEntryVector *entries = (GistEntryVector *) PG_GETARG_POINTER(0);
	int		   *size = (int *) PG_GETARG_POINTER(1);
	SimhashGistKey *result = palloc(sizeof(SimhashGistKey));
	int			i;

	key_init_empty(result);
	for (i = 0; i < entries->n; i++)
		key_merge(result, DatumGetSimhashGistKeyP(entries->vector[i].key));
	*size = sizeof(SimhashGistKey);
	PG_RETURN_POINTER(result);
}

/* penalty: how many bits stop being shared if new joins orig */
PG_FUNCTION_INFO_V1(simhash_gist_penalty);
Datum
simhash_gist_penalty(PG_FUNCTION_ARGS)
{
	SimhashGistKey *orig = DatumGetSimhashGistKeyP(((GISTENTRY *) PG_GETARG_POINTER(0))->key);
	SimhashGistKey *add = DatumGetSimhashGistKeyP(((GISTENTRY *) PG_GETARG_POINTER(1))->key);
	float	   *penalty = (float *) PG_GETARG_POINTER(2);
	uint64		before = orig->and_bits ^ orig->or_bits;
	uint64		after = (orig->and_bits & add->and_bits) ^ (orig->or_bits | add->or_bits);

	*penalty = (float) (pg_popcount64(after) - pg_popcount64(before));
	PG_RETURN_POINTER(penalty);
}

/*
 * picksplit: cut on the bit that divides the entries most evenly, so that
 * each side shares that bit; identical entries are halved.
 */
PG_FUNCTION_INFO_V1(simhash_gist_picksplit);
Datum
simhash_gist_picksplit(PG_FUNCTION_ARGS)
{
	GistEntryVector *entries = (GistEntryVector *) PG_GETARG_POINTER(0);
	GIST_SPLITVEC *v = (GIST_SPLITVEC *) PG_GETARG_POINTER(1);
	OffsetNumber maxoff = entries->n - 1;
	int			ones[64] = {0};
	int			best_bit = -1;
	int			best_balance = 0;
	SimhashGistKey *left = palloc(sizeof(SimhashGistKey));
	SimhashGistKey *right = palloc(sizeof(SimhashGistKey));
	OffsetNumber i;
	int			bit;
	int			n = maxoff - FirstOffsetNumber + 1;

	for (i = FirstOffsetNumber; i <= maxoff; i++)
	{
		SimhashGistKey *key = DatumGetSimhashGistKeyP(entries->vector[i].key);

		/* a bit counts as set when the whole subtree has it set */
		for (bit = 0; bit < 64; bit++)
			ones[bit] += (key->and_bits >> bit) & 1;
	}
	for (bit = 0; bit < 64; bit++)
	{
		int			balance = Min(ones[bit], n - ones[bit]);

		if (balance > best_balance)
		{
			best_balance = balance;
			best_bit = bit;
		}
	}

	v->spl_left = palloc(n * sizeof(OffsetNumber));
	v->spl_right = palloc(n * sizeof(OffsetNumber));
	v->spl_nleft = v->spl_nright = 0;
	key_init_empty(left);
	key_init_empty(right);
	for (i = FirstOffsetNumber; i <= maxoff; i++)
	{
		SimhashGistKey *key = DatumGetSimhashGistKeyP(entries->vector[i].key);
		bool		go_left;

		if (best_bit >= 0)
			go_left = ((key->and_bits >> best_bit) & 1) == 0;
		else
			go_left = (i - FirstOffsetNumber) < n / 2;
		if (go_left)
		{
			v->spl_left[v->spl_nleft++] = i;
			key_merge(left, key);
		}
		else
		{
			v->spl_right[v->spl_nright++] = i;
			key_merge(right, key);
		}
	}
	v->spl_ldatum = PointerGetDatum(left);
	v->spl_rdatum = PointerGetDatum(right);
	PG_RETURN_POINTER(v);
}

PG_FUNCTION_INFO_V1(simhash_gist_same);
Datum
simhash_gist_same(PG_FUNCTION_ARGS)
{
	SimhashGistKey *a = DatumGetSimhashGistKeyP(PG_GETARG_DATUM(0));
	SimhashGistKey *b = DatumGetSimhashGistKeyP(PG_GETARG_DATUM(1));
	bool	   *result = (bool *) PG_GETARG_POINTER(2);

	*result = a->and_bits == b->and_bits && a->or_bits == b->or_bits;
	PG_RETURN_POINTER(result);
}

PG_FUNCTION_INFO_V1(simhash_gist_consistent);
Datum
simhash_gist_consistent(PG_FUNCTION_ARGS)
{
	GISTENTRY  *entry = (GISTENTRY *) PG_GETARG_POINTER(0);
	StrategyNumber strategy = (StrategyNumber) PG_GETARG_UINT16(2);
	bool	   *recheck = (bool *) PG_GETARG_POINTER(4);
	SimhashGistKey *key = DatumGetSimhashGistKeyP(entry->key);

	if (strategy != SIMHASH_STRATEGY_EQUAL)
		elog(ERROR, "simhash_gist_ops: unrecognized strategy number %d", strategy);
	*recheck = false;			/* leaf keys are exact */
	PG_RETURN_BOOL(key_lower_bound(key, PG_GETARG_SIMHASH(1)) == 0);
}

PG_FUNCTION_INFO_V1(simhash_gist_distance);
Datum
simhash_gist_distance(PG_FUNCTION_ARGS)
{
	GISTENTRY  *entry = (GISTENTRY *) PG_GETARG_POINTER(0);
	simhash		query = PG_GETARG_SIMHASH(1);
	StrategyNumber strategy = (StrategyNumber) PG_GETARG_UINT16(2);
	bool	   *recheck = (bool *) PG_GETARG_POINTER(4);
	SimhashGistKey *key = DatumGetSimhashGistKeyP(entry->key);

	if (strategy != SIMHASH_STRATEGY_NEAREST)
		elog(ERROR, "simhash_gist_ops: unrecognized ordering strategy %d", strategy);
	Assert(!GIST_LEAF(entry) || key_is_exact(key));
	*recheck = false;
	PG_RETURN_FLOAT8((float8) key_lower_bound(key, query));
}

/* sorted builds: order leaf keys by fingerprint (unsigned) */
static int
simhash_gist_cmp(Datum x, Datum y, SortSupport ssup)
{
	uint64		a = DatumGetSimhashGistKeyP(x)->and_bits;
	uint64		b = DatumGetSimhashGistKeyP(y)->and_bits;

	return (a > b) - (a < b);
}

PG_FUNCTION_INFO_V1(simhash_gist_sortsupport);
Datum
simhash_gist_sortsupport(PG_FUNCTION_ARGS)
{
	SortSupport ssup = (SortSupport) PG_GETARG_POINTER(0);

	ssup->comparator = simhash_gist_cmp;
	PG_RETURN_VOID();
}
