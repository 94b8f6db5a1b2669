/*
 * mih.h
 *	  The block layout of a fingerprint and the arithmetic of multi-index
 *	  hashing (mih.c) that the GIN and hamming operator classes, the planner
 *	  support and the whole-table functions share: block widths and values,
 *	  probe counts, radii per block, the share of random fingerprints within
 *	  k bits.
 */
#ifndef SIMHASH_MIH_H
#define SIMHASH_MIH_H

#include "simhash.h"

/*
 * Block layout: the 64 bits are split into nblocks contiguous blocks, block 0
 * holding the most significant bits.  The first (64 % nblocks) blocks are one
 * bit wider than the others.
 */
#define SIMHASH_MIN_BLOCKS		1

static inline int
simhash_block_width(int i, int nblocks)
{
	return SIMHASH_BITS / nblocks + (i < SIMHASH_BITS % nblocks ? 1 : 0);
}

/* first bit of block i, counted from the most significant bit */
static inline int
simhash_block_start(int i, int nblocks)
{
	int			extra = SIMHASH_BITS % nblocks;

	return i * (SIMHASH_BITS / nblocks) + (i < extra ? i : extra);
}

static inline uint64
simhash_block_value(simhash fp, int i, int nblocks)
{
	int			width = simhash_block_width(i, nblocks);
	int			shift = SIMHASH_BITS - simhash_block_start(i, nblocks) - width;

	return (fp >> shift) & (width == 64 ? ~UINT64CONST(0) : ((UINT64CONST(1) << width) - 1));
}

extern double simhash_random_within_fraction(int k);
extern double simhash_random_within_fraction_of(int k, int bits);
extern int64 simhash_probe_count(int width, int r);
extern void simhash_spread_radii(int *radius, int nblocks, int total);

#endif							/* SIMHASH_MIH_H */
