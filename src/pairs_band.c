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
 *
 * The exact tables of 128-bit fingerprints are masks too: Manku's tables
 * (every choice of m = b - k of b blocks of bits) drawn as the bits of their
 * blocks, and a pair is reported by the first mask on which it agrees.
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

/* C(n, k), as a double: the number of exact tables */
double
simhash_binomial(int n, int k)
{
	double		r = 1.0;
	int			i;

	for (i = 1; i <= k; i++)
		r = r * (n - k + i) / i;
	return r;
}

/* sets bits [start, start + len) of a mask of words, bit 0 the most significant */
static void
band_set_bits(uint64 *mask, int start, int len)
{
	int			i;

	for (i = start; i < start + len; i++)
		mask[i / 64] |= UINT64CONST(1) << (63 - i % 64);
}

/*
 * The exact tables of nrows fingerprints of width bits at max_distance, as
 * masks: b blocks (b chosen by the cost of row_cost a row and a table, and a
 * comparison per pair of equal keys), one table per choice of b - k of them,
 * in lexicographic order.  Every pair within max_distance agrees on the
 * blocks of at least one table.
 */
SimhashBands *
simhash_bands_tables(int width, int max_distance, double nrows, double row_cost)
{
	SimhashBands *t = palloc0(sizeof(SimhashBands));
	double		best = -1.0;
	int			nblocks = 0;
	int			keyblocks = 0;
	int			blocks[SIMHASH_BAND_MAX_WORDS * 64];
	int			b;
	int			i;
	int			n;

	t->width = width;
	t->words = width / 64;
	t->recall = 1.0;
	for (b = max_distance + 1; b <= width; b++)
	{
		int			m = b - max_distance;
		double		tables = simhash_binomial(b, m);
		int			keybits = m * ((width + b - 1) / b);
		double		cost;

		/* a key is one word of at most 32 runs */
		if (tables > SIMHASH_MAX_TABLES || keybits > 64 || m + 1 > SIMHASH_BAND_MAX_BITS)
			break;
		cost = tables * (nrows * row_cost + nrows * nrows / 2.0 * exp2(-(double) width * m / b));
		if (best < 0 || cost < best)
		{
			best = cost;
			nblocks = b;
			keyblocks = m;
			t->nbands = (int) tables;
		}
	}
	if (nblocks == 0)
	{
		/* every pair is within max_distance: one table of no bits */
		t->nbands = 1;
		t->masks = palloc0(sizeof(uint64) * t->words);
		return t;
	}
	t->bits = keyblocks;
	t->masks = palloc0(sizeof(uint64) * t->words * t->nbands);
	for (i = 0; i < keyblocks; i++)
		blocks[i] = i;
	for (n = 0; n < t->nbands; n++)
	{
		uint64		mask[SIMHASH_BAND_MAX_WORDS] = {0};

		for (i = 0; i < keyblocks; i++)
		{
			int			blk = blocks[i];
			int			extra = width % nblocks;

			band_set_bits(mask, blk * (width / nblocks) + Min(blk, extra),
						  width / nblocks + (blk < extra ? 1 : 0));
		}
		memcpy(t->masks + (Size) n * t->words, mask, sizeof(uint64) * t->words);
		/* the next choice of keyblocks blocks */
		for (i = keyblocks - 1; i >= 0 && blocks[i] == nblocks - keyblocks + i; i--)
			;
		if (i < 0)
			break;
		blocks[i]++;
		for (i++; i < keyblocks; i++)
			blocks[i] = blocks[i - 1] + 1;
	}
	return t;
}
