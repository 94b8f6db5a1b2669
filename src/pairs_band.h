/*
 * pairs_band.h
 *	  Banded candidate generation of the whole-table functions (pairs_band.c):
 *	  the bands that simhash.pairs_recall (settings.h) asks for.
 */
#ifndef SIMHASH_PAIRS_BAND_H
#define SIMHASH_PAIRS_BAND_H

#include "postgres.h"

/* words of the widest fingerprint a band samples (256 bits) */
#define SIMHASH_BAND_MAX_WORDS	4
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
 * differ in the bits of x[0..words) (x[0] the most significant word)?  Only
 * the first one reports the pair.
 */
static inline bool
simhash_band_first(const SimhashBands *b, int band, const uint64 *x)
{
	const uint64 *m = b->masks;
	int			i;
	int			w;

	if (b->words == 1)
	{
		for (i = 0; i < band; i++)
			if ((x[0] & m[i]) == 0)
				return false;
		return true;
	}
	if (b->words == 2)
	{
		for (i = 0; i < band; i++, m += 2)
			if ((x[0] & m[0]) == 0 && (x[1] & m[1]) == 0)
				return false;
		return true;
	}
	for (i = 0; i < band; i++, m += b->words)
	{
		uint64		differ = 0;

		for (w = 0; w < b->words; w++)
			differ |= x[w] & m[w];
		if (differ == 0)
			return false;
	}
	return true;
}

#endif							/* SIMHASH_PAIRS_BAND_H */
