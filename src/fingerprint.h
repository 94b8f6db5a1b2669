/*
 * fingerprint.h
 *	  The fingerprint builder (fingerprint.c): 64 vote counters fed by
 *	  feature hashes, and the conversion of a text to UTF-8.
 */
#ifndef SIMHASH_FINGERPRINT_H
#define SIMHASH_FINGERPRINT_H

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
extern void simhash_acc_add_times(SimhashAcc *acc, uint64 hash, uint32 weight);
extern void simhash_acc_add_weighted(SimhashAcc *acc, uint64 hash, double weight);
extern simhash simhash_acc_finish(SimhashAcc *acc);

/* s (*len bytes) in UTF-8: s itself, or a palloc'd conversion (fingerprint.c) */
extern char *simhash_as_utf8(const char *s, int *len);

#endif							/* SIMHASH_FINGERPRINT_H */
