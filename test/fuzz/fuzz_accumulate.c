/*
 * fuzz_accumulate.c
 *	  libFuzzer target: the vote accumulator behind simhash(text),
 *	  simhash(text[]), simhash(text[], float8[]) and simhash_agg():
 *	  arbitrary sequences of integer-weight features (the bit-plane counter:
 *	  runs of one feature added as a batch of copies, through the
 *	  Harley-Seal adder, or as one feature of that weight) and finite
 *	  weighted features, against plain per-bit sums.  Records: a flag byte
 *	  (bit 0: weighted; else bit 1 chooses a batch or a weight and bits 2..7
 *	  give the run length - 1), 8 bytes of weight if weighted, then a length
 *	  byte and the feature's bytes, hashed as the server hashes a given
 *	  feature.  The counter's flush, every 2^19 units of weight, is too slow
 *	  to reach on every input: it is checked once at start-up.
 */
#include "accumulator.h"

#include <math.h>

#include "feature_hash.h"
#include "fuzz.h"

/* 2^19 + 5 unit features: the counter flushes its planes once on the way */
int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	SimhashAcc *acc = malloc(sizeof(SimhashAcc));
	int64		units[64] = {0};
	simhash		want = 0;
	int64		i;
	int			bit;

	simhash_acc_init(acc);
	for (i = 0; i < (INT64CONST(1) << 19) + 5; i++)
	{
		/* few distinct hashes, so that the counts are far from 0 */
		uint64		hash = simhash_feature_hash((const char *) &i, 1);

		simhash_acc_add_units(acc, &hash, 1);
		for (bit = 0; bit < 64; bit++)
			units[bit] += ((hash >> bit) & 1) ? 1 : -1;
	}
	for (bit = 0; bit < 64; bit++)
		if (units[bit] > 0)
			want |= UINT64CONST(1) << bit;
	FUZZ_CHECK(simhash_acc_finish(acc) == want);
	free(acc);
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	SimhashAcc *acc = malloc(sizeof(SimhashAcc));
	int64		units[64] = {0};
	double		weighted[64] = {0};
	bool		any_weighted = false;
	simhash		want = 0;
	size_t		pos = 0;
	int			bit;

	simhash_acc_init(acc);
	while (pos < size)
	{
		uint8		flag = data[pos++];
		double		weight = 0.0;
		uint64		hash;
		size_t		flen;

		if (flag & 1)
		{
			if (size - pos < 8)
				break;
			memcpy(&weight, data + pos, 8);
			pos += 8;
			if (!isfinite(weight))
				continue;		/* the SQL functions reject these */
		}
		if (pos >= size)
			break;
		flen = Min((size_t) data[pos], size - pos - 1);
		hash = simhash_feature_hash((const char *) data + pos + 1, flen);
		pos += 1 + flen;
		if (flag & 1)
		{
			simhash_acc_add_weighted(acc, hash, weight);
			for (bit = 0; bit < 64; bit++)
				weighted[bit] += ((hash >> bit) & 1) ? weight : -weight;
			any_weighted = true;
		}
		else
		{
			int			run = (flag >> 2) + 1;

			if (flag & 2)
				simhash_acc_add_times(acc, hash, (uint32) run);
			else
			{
				uint64		copies[64];
				int			i;

				for (i = 0; i < run; i++)
					copies[i] = hash;
				simhash_acc_add_units(acc, copies, run);
			}
			for (bit = 0; bit < 64; bit++)
				units[bit] += ((hash >> bit) & 1) ? run : -run;
		}
	}
	for (bit = 0; bit < 64; bit++)
	{
		double		vote = (double) units[bit];

		if (any_weighted)
			vote += weighted[bit];
		if (vote > 0)
			want |= UINT64CONST(1) << bit;
	}
	FUZZ_CHECK(simhash_acc_finish(acc) == want);
	free(acc);
	fuzz_reset_memory();
	return 0;
}
