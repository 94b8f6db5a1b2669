/*
 * accumulator.c
 *	  The vote accumulator of a fingerprint (accumulator.h): 64 vote
 *	  counters fed by feature hashes, of integer weight through bit planes
 *	  and of any weight through float8 sums; the fingerprint is the sign of
 *	  each counter.  Used by the fingerprint functions (fingerprint.c) and
 *	  by the fingerprints of shingle sets (shingle_set.c).
 */
#include "accumulator.h"
#include "feature_hash.h"

/* an empty accumulator: counts[] and weighted[] are zeroed when first used */
void
simhash_acc_init(SimhashAcc *acc)
{
	memset(acc->planes, 0, sizeof(acc->planes));
	acc->nunit = 0;
	acc->pending = 0;
	acc->flushed = false;
	acc->has_weighted = false;
}

/* move the bit-plane counts into counts[] */
void
simhash_acc_flush_planes(SimhashAcc *acc)
{
	int			p,
				bit;

	if (!acc->flushed)
	{
		memset(acc->counts, 0, sizeof(acc->counts));
		acc->flushed = true;
	}
	for (p = 0; p < SIMHASH_PLANES; p++)
	{
		uint64		plane = acc->planes[p];

		while (plane)
		{
			bit = pg_rightmost_one_pos64(plane);
			acc->counts[bit] += INT64CONST(1) << p;
			plane &= plane - 1;
		}
		acc->planes[p] = 0;
	}
	acc->pending = 0;
}

/* Add features of weight 1. */
void
simhash_acc_add_units(SimhashAcc *acc, const uint64 *h, int n)
{
	acc_add_units_at(acc, h, n, 0);
}

/* Add the second hashes of features of weight 2^p (the low half's votes). */
#define LOW_CHUNK 256

static void
acc_add_low_units_at(SimhashAcc *acc, const uint64 *h, int n, int p)
{
	uint64		second[LOW_CHUNK];

	while (n > 0)
	{
		int			m = Min(n, LOW_CHUNK);
		int			i;

		for (i = 0; i < m; i++)
			second[i] = simhash_low_hash(h[i]);
		acc_add_units_at(acc, second, m, p);
		h += m;
		n -= m;
	}
}

/* Add the second hashes of features of weight 1. */
void
simhash_acc_add_low_units(SimhashAcc *acc, const uint64 *h, int n)
{
	acc_add_low_units_at(acc, h, n, 0);
}

/* Add one feature of integer weight w: 2^p for each bit p set in w. */
void
simhash_acc_add_times(SimhashAcc *acc, uint64 hash, uint32 w)
{
	while (w > 0)
	{
		uint32		part = Min(w, ACC_FLUSH_AT);
		uint32		rest = part;

		while (rest)
		{
			acc_add_at(acc, hash, pg_rightmost_one_pos32(rest));
			rest &= rest - 1;
		}
		acc_added(acc, part);
		w -= part;
	}
}

void
simhash_acc_add_weighted(SimhashAcc *acc, uint64 hash, double weight)
{
	double	   *sums = acc_weighted(acc);
	int			bit;

	for (bit = 0; bit < 64; bit++)
		sums[bit] += ((hash >> bit) & 1) ? weight : -weight;
}

/*
 * The bits whose count in the planes alone exceeds half the weight added: a
 * comparison of the 64 bit-sliced counters with one number, from the top
 * plane down (the counters above it so far, and those equal to it so far).
 */
static uint64
acc_planes_majority(const SimhashAcc *acc)
{
	uint64		half = acc->nunit / 2;	/* count > nunit / 2 <=> count > half */
	uint64		above = 0,
				equal = ~UINT64CONST(0);
	int			p;

	for (p = SIMHASH_PLANES - 1; p >= 0; p--)
	{
		uint64		h = (half >> p) & 1 ? ~UINT64CONST(0) : 0;

		above |= equal & acc->planes[p] & ~h;
		equal &= ~(acc->planes[p] ^ h);
	}
	return above;
}

simhash
simhash_acc_finish(SimhashAcc *acc)
{
	simhash		result = 0;
	int			bit;

	/* the usual case: nothing flushed yet, no weighted features */
	if (!acc->has_weighted && acc->nunit == acc->pending)
		return acc_planes_majority(acc);
	simhash_acc_flush_planes(acc);
	for (bit = 0; bit < 64; bit++)
	{
		/* unit features vote +1 where set and -1 where clear */
		double		vote = (double) (2 * acc->counts[bit] - (int64) acc->nunit);

		if (acc->has_weighted)
			vote += acc->weighted[bit];
		if (vote > 0)
			result |= UINT64CONST(1) << bit;
	}
	return result;
}
