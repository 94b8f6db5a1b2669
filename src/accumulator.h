/*
 * accumulator.h
 *	  The fingerprint builder (accumulator.c): 64 vote counters fed by
 *	  feature hashes.
 */
#ifndef SIMHASH_ACCUMULATOR_H
#define SIMHASH_ACCUMULATOR_H

#include "simhash.h"

/*
 * Fingerprint builder: 64 vote counters.  Features of integer weight go
 * through a carry-save bit-plane counter (bit i of planes[p] is bit p of
 * counter i); weighted features through float8 sums.  simhash_acc_finish()
 * takes the sign of each counter (bit i set when counter i > 0; ties give 0).
 */
#define SIMHASH_PLANES 20

typedef struct SimhashAcc
{
	uint64		planes[SIMHASH_PLANES]; /* bit-sliced counts of set bits */
	uint64		nunit;			/* total integer weight added */
	uint32		pending;		/* weight added to planes since their flush */
	bool		flushed;		/* counts[] in use (zeroed at the first flush) */
	bool		has_weighted;	/* weighted[] in use (zeroed at the first) */
	int64		counts[64];		/* flushed counts of set bits */
	double		weighted[64];	/* signed sums of weighted features */
} SimhashAcc;

extern void simhash_acc_init(SimhashAcc *acc);
extern void simhash_acc_add_units(SimhashAcc *acc, const uint64 *hashes, int n);
/* the second hashes of features of weight 1 (the low half's votes) */
extern void simhash_acc_add_low_units(SimhashAcc *acc, const uint64 *hashes, int n);
extern void simhash_acc_add_times(SimhashAcc *acc, uint64 hash, uint32 weight);
extern void simhash_acc_add_weighted(SimhashAcc *acc, uint64 hash, double weight);
extern simhash simhash_acc_finish(SimhashAcc *acc);
extern void simhash_acc_flush_planes(SimhashAcc *acc);

/*
 * Inline below: the additions of features of weight 2^p, for the callers
 * that add batches of small weights with a constant p (fingerprint.c), and
 * the weighted sums that the aggregate combines.
 */

/* the planes hold counts below 2^SIMHASH_PLANES: flush before they could not */
#define ACC_FLUSH_AT	(1U << (SIMHASH_PLANES - 1))

/*
 * Add 2^p to the counter of every bit set in hash: a binary increment of the
 * bit-sliced counters from plane p up (it touches two planes on average).
 */
static inline void
acc_add_at(SimhashAcc *acc, uint64 hash, int p)
{
	uint64		carry = hash;

	while (carry)
	{
		uint64		plane = acc->planes[p];

		acc->planes[p] = plane ^ carry;
		carry &= plane;
		p++;
	}
}

/* after adding weight w (at most ACC_FLUSH_AT) to the planes */
static inline void
acc_added(SimhashAcc *acc, uint32 w)
{
	acc->nunit += w;
	acc->pending += w;
	if (acc->pending >= ACC_FLUSH_AT)
		simhash_acc_flush_planes(acc);
}

/* a carry-save adder: h:l = a + b + c, bitwise */
#define CSA(h, l, a, b, c) \
	do { \
		uint64		u_ = (a) ^ (b); \
		uint64		c_ = (c); \
		(h) = ((a) & (b)) | (u_ & c_); \
		(l) = u_ ^ c_; \
	} while (0)

/*
 * Eight hashes into the adder tree's ones, twos and fours: returns the
 * eights they carry
 */
static pg_attribute_always_inline uint64
acc_add_eight(uint64 *ones, uint64 *twos, uint64 *fours, const uint64 *h)
{
	uint64		twosA,
				twosB,
				foursA,
				foursB,
				eights;

	CSA(twosA, *ones, *ones, h[0], h[1]);
	CSA(twosB, *ones, *ones, h[2], h[3]);
	CSA(foursA, *twos, *twos, twosA, twosB);
	CSA(twosA, *ones, *ones, h[4], h[5]);
	CSA(twosB, *ones, *ones, h[6], h[7]);
	CSA(foursB, *twos, *twos, twosA, twosB);
	CSA(eights, *fours, *fours, foursA, foursB);
	return eights;
}

/*
 * Add features of weight 2^p, sixteen at a time with the Harley-Seal adder
 * tree: planes p to p + 3 are its ones, twos, fours and eights, and only its
 * sixteens go through a (branchy) increment of the planes from p + 4 up.
 * The counts are the same as adding the hashes one by one.
 */
static pg_attribute_always_inline void
acc_add_units_at(SimhashAcc *acc, const uint64 *h, int n, int p)
{
	uint64		ones = acc->planes[p],
				twos = acc->planes[p + 1],
				fours = acc->planes[p + 2],
				eights = acc->planes[p + 3];

	for (; n >= 16; n -= 16, h += 16)
	{
		uint64		eightsA = acc_add_eight(&ones, &twos, &fours, h);
		uint64		eightsB = acc_add_eight(&ones, &twos, &fours, h + 8);
		uint64		sixteens;

		CSA(sixteens, eights, eights, eightsA, eightsB);
		acc_add_at(acc, sixteens, p + 4);
		acc->planes[p] = ones;
		acc->planes[p + 1] = twos;
		acc->planes[p + 2] = fours;
		acc->planes[p + 3] = eights;
		acc_added(acc, 16U << p);
		/* a flush empties the planes */
		ones = acc->planes[p];
		twos = acc->planes[p + 1];
		fours = acc->planes[p + 2];
		eights = acc->planes[p + 3];
	}
	for (; n > 0; n--, h++)
	{
		acc_add_at(acc, *h, p);
		acc_added(acc, 1U << p);
	}
}

/* the weighted sums, zeroed when first used */
static inline double *
acc_weighted(SimhashAcc *acc)
{
	if (!acc->has_weighted)
	{
		memset(acc->weighted, 0, sizeof(acc->weighted));
		acc->has_weighted = true;
	}
	return acc->weighted;
}

#endif							/* SIMHASH_ACCUMULATOR_H */
