/*
 * mih.c
 *	  The arithmetic of multi-index hashing that the GIN and hamming operator
 *	  classes, their cost models and the planner support share: how many
 *	  values lie within r bits of one, how to spread a radius over blocks, and
 *	  the share of random fingerprints within k bits of a given one.
 */
#include "mih.h"

#include <math.h>

/* the share of uniformly random fingerprints of "bits" bits within k bits of a given one */
double
simhash_random_within_fraction_of(int k, int bits)
{
	double		term = 1.0;		/* C(bits, i) */
	double		sum = 0.0;
	int			i;

	if (k < 0)
		return 0.0;
	if (k >= bits)
		return 1.0;
	for (i = 0; i <= k; i++)
	{
		sum += term;
		term = term * (bits - i) / (i + 1);
	}
	return sum / ldexp(1.0, bits);
}

/* the same for 64-bit fingerprints */
double
simhash_random_within_fraction(int k)
{
	return simhash_random_within_fraction_of(k, SIMHASH_BITS);
}

/* values of width bits within r bits of a given one: sum of C(width, i), i <= r */
int64
simhash_probe_count(int width, int r)
{
	int64		term = 1;
	int64		sum = 0;
	int			i;

	for (i = 0; i <= r && i <= width; i++)
	{
		sum += term;
		term = term * (width - i) / (i + 1);
	}
	return sum;
}

/*
 * Radii per block whose sum(radius + 1) is total: a row within total - 1 bits
 * of the query is then within radius[i] bits of it in some block i (a radius
 * of -1 probes nothing).  Spread evenly, the remainder to the last blocks
 * (the narrowest, when widths differ).
 */
void
simhash_spread_radii(int *radius, int nblocks, int total)
{
	int			base = total / nblocks;
	int			extra = total % nblocks;
	int			i;

	for (i = 0; i < nblocks; i++)
		radius[i] = base - 1 + (i >= nblocks - extra ? 1 : 0);
}
