/*
 * pairs_band.h
 *	  Banded candidate generation of the whole-table functions (pairs_band.c):
 *	  the bands that simhash.pairs_recall (settings.h) asks for.
 */
#ifndef SIMHASH_PAIRS_BAND_H
#define SIMHASH_PAIRS_BAND_H

#include "postgres.h"

/* words of the widest fingerprint a band samples (128 bits) */
#define SIMHASH_BAND_MAX_WORDS	2
/* exact tables at most, of either width */
#define SIMHASH_MAX_TABLES		300
/* bits a band samples at most: its key is one 64-bit word of runs */
#define SIMHASH_BAND_MAX_BITS	32

/*
 * nbands bands of the same number of bits, each a fixed pseudo-random choice
 * of bits (the i-th band depends only on width, bits and i, so a plan with
 * more bands extends one with fewer).  Word 0 of a mask is the most
 * significant 64 bits.
 */
typedef struct SimhashBands
{
	int			width;			/* of the fingerprints */
	int			words;			/* width / 64 */
	int			bits;			/* sampled by each band (blocks of a table) */
	int			nbands;
	double		recall;			/* of a pair at max_distance, as planned */
	uint64	   *masks;			/* nbands x words */
} SimhashBands;

extern double simhash_band_hit(int width, int distance, int bits);
extern double simhash_binomial(int n, int k);
extern SimhashBands *simhash_bands_plan(int width, int max_distance, double nrows,
										double recall, double row_cost);
extern SimhashBands *simhash_bands_tables(int width, int max_distance, double nrows,
										  double row_cost);

/*
 * Is band the first band whose bits all agree, for a pair whose fingerprints
 * differ in the bits of x0 (the most significant word) and x1 (the second
 * one, 0 for 64 bits)?  Only the first one reports the pair.
 */
static inline bool
simhash_band_first(const SimhashBands *b, int band, uint64 x0, uint64 x1)
{
	const uint64 *m = b->masks;
	int			i;

	if (b->words == 1)
	{
		for (i = 0; i < band; i++)
			if ((x0 & m[i]) == 0)
				return false;
		return true;
	}
	for (i = 0; i < band; i++, m += b->words)
		if ((x0 & m[0]) == 0 && (x1 & m[1]) == 0)
			return false;
	return true;
}

#endif							/* SIMHASH_PAIRS_BAND_H */
