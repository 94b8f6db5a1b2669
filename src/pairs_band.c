/*
 * pairs_band.c
 *	  Banded candidate generation for simhash_pairs(), simhash_clusters() and
 *	  simhash_dedup() at radii where the exact tables of pairs.c compare
 *	  nearly every pair: locality-sensitive hashing by bit sampling (Indyk
 *	  and Motwani 1998), its number of bands chosen for a recall.
 *
 * A band is a fixed pseudo-random choice of r of the fingerprint's bits.  The
 * rows are grouped by the bits of one band at a time (the same sorting and
 * spilling as an exact table), and two rows whose band bits are equal are
 * compared: they are a pair when their whole fingerprints are within k bits,
 * and only the first band on which they agree reports them, so each pair
 * comes out once.  Two fingerprints at distance d agree on a band with
 * probability
 *
 *		p(d) = C(W - d, r) / C(W, r)
 *
 * when their d differing bits are anywhere among the W (SimHash's bits are
 * exchangeable: each is its own random hyperplane), hence on at least one of
 * L bands with probability 1 - (1 - p(d))^L.  simhash.pairs_recall asks for
 * that probability at d = k; nearer pairs are found more often still, and no
 * pair farther than k is ever reported.  For each r the smallest L that
 * reaches the recall is taken, and r minimizes the estimated cost: L times
 * (sorting every row once, plus comparing the pairs of unrelated rows whose r
 * bits agree by chance, 2^-r of all pairs).  About log2(rows) bits and a few
 * hundred bands result at the radii where the exact tables are quadratic.
 */
#include "pairs_band.h"

#include <math.h>

#include "utils/memutils.h"

/* more bands than this cost more than they find */
#define SIMHASH_BAND_MAX_BANDS	4096
/* the bands are drawn from this seed: fixed, so that answers are repeatable */
#define SIMHASH_BAND_SEED		UINT64CONST(0x5851f42d4c957f2d)

/* the probability that a band of bits bits misses none of distance differing bits */
double
simhash_band_hit(int width, int distance, int bits)
{
	double		p = 1.0;
	int			i;

	for (i = 0; i < bits; i++)
		p *= (double) (width - distance - i) / (width - i);
	return Max(p, 0.0);
}

/* splitmix64 */
static uint64
band_next(uint64 *state)
{
	uint64		z = (*state += UINT64CONST(0x9e3779b97f4a7c15));

	z = (z ^ (z >> 30)) * UINT64CONST(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64CONST(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

/* draws the masks of b: bits distinct bit positions per band */
static void
band_draw(SimhashBands *b)
{
	uint64		state = SIMHASH_BAND_SEED ^ ((uint64) b->width << 32) ^ (uint64) b->bits;
	int			positions[SIMHASH_BAND_MAX_WORDS * 64];
	int			i;
	int			j;

	b->masks = palloc0(sizeof(uint64) * b->words * b->nbands);
	for (i = 0; i < b->width; i++)
		positions[i] = i;
	for (i = 0; i < b->nbands; i++)
	{
		uint64	   *mask = b->masks + (Size) i * b->words;

		/* the first bits positions of a partial Fisher-Yates shuffle */
		for (j = 0; j < b->bits; j++)
		{
			int			pick = j + (int) (band_next(&state) % (uint64) (b->width - j));
			int			swap = positions[j];

			positions[j] = positions[pick];
			positions[pick] = swap;
			/* position 0 is the most significant bit of word 0 */
			mask[positions[j] / 64] |= UINT64CONST(1) << (63 - positions[j] % 64);
		}
	}
}

/*
 * The bands for nrows distinct fingerprints of width bits at max_distance,
 * found with probability recall (< 1); row_cost is the cost of sorting one
 * row for one band, in comparisons.
 */
SimhashBands *
simhash_bands_plan(int width, int max_distance, double nrows, double recall, double row_cost)
{
	SimhashBands *b = palloc0(sizeof(SimhashBands));
	double		best = -1.0;
	int			r;

	Assert(recall < 1.0 && width <= SIMHASH_BAND_MAX_WORDS * 64);
	b->width = width;
	b->words = width / 64;
	for (r = 0; r <= Min(SIMHASH_BAND_MAX_BITS, width - max_distance); r++)
	{
		double		p = simhash_band_hit(width, max_distance, r);
		double		bands;
		double		cost;

		bands = p >= 1.0 ? 1.0 : ceil(log(1.0 - recall) / log1p(-p));
		if (bands > SIMHASH_BAND_MAX_BANDS)
			continue;
		cost = bands * (nrows * row_cost + nrows * nrows / 2.0 * exp2(-r));
		if (best < 0 || cost < best)
		{
			best = cost;
			b->bits = r;
			b->nbands = (int) bands;
			b->recall = 1.0 - pow(1.0 - p, bands);
		}
	}
	band_draw(b);
	return b;
}
