/*
 * init.c
 *	  The library's start: _PG_init() defines the extension's settings
 *	  (simhash.max_distance, simhash.similarity_threshold,
 *	  simhash.pairs_recall, simhash.verify_workers, simhash.band_workers,
 *	  simhash.tail_cache_size, and simhash.vacuum_test_lock and
 *	  simhash.band_test_error for tests),
 *	  installs the % operator's planner hook and registers the hamming
 *	  access method's reloptions.
 */
#include "settings.h"
#include "hamming.h"
#include "pairs.h"
#include "verify_parallel.h"

#include "postmaster/bgworker_internals.h"
#include "utils/guc.h"

int			simhash_max_distance_guc = SIMHASH_DEFAULT_MAX_DISTANCE;
double		simhash_pairs_recall = 1.0;
double		simhash_similarity_threshold = 0.8;
int			simhash_vacuum_test_lock = 0;

void		_PG_init(void);

void
_PG_init(void)
{
	DefineCustomIntVariable("simhash.max_distance",
							"Largest Hamming distance at which the % operator considers two fingerprints near-duplicates.",
							NULL,
							&simhash_max_distance_guc,
							SIMHASH_DEFAULT_MAX_DISTANCE, 0, SIMHASH_BITS,
							PGC_USERSET, 0,
							NULL, simhash_max_distance_assign, NULL);
	DefineCustomRealVariable("simhash.similarity_threshold",
							 "Least shingle similarity at which the ~= operator takes two texts for near-duplicates.",
							 "simhash_similar(a, b, min_similarity) and simhash_doc(body, min_similarity) take theirs as an argument.",
							 &simhash_similarity_threshold,
							 0.8, 0.5, 1.0,
							 PGC_USERSET, 0,
							 NULL, simhash_similarity_threshold_assign, NULL);
	DefineCustomRealVariable("simhash.pairs_recall",
							 "Least share of the pairs at the largest distance that simhash_pairs, simhash_clusters and simhash_dedup find.",
							 "1 (the default) compares every pair within the distance (exact tables); "
							 "below 1, bands of sampled bits find a pair at the largest distance with at least this probability, nearer pairs more often.",
							 &simhash_pairs_recall,
							 1.0, 0.5, 1.0,
							 PGC_USERSET, 0,
							 NULL, NULL, NULL);
	DefineCustomIntVariable("simhash.verify_workers",
							"Parallel workers that tokenize the texts of the verified whole-table functions.",
							"-1 (the default) starts up to max_parallel_workers_per_gather workers when there are at least 10000 texts to tokenize; "
							"0 starts none; a positive number starts that many whatever the number of texts.",
							&simhash_verify_workers,
							-1, -1, MAX_PARALLEL_WORKER_LIMIT,
							PGC_USERSET, 0,
							NULL, NULL, NULL);
	DefineCustomIntVariable("simhash.band_workers",
							"Parallel workers that share the tables or bands of the whole-table functions.",
							"-1 (the default) starts up to max_parallel_workers_per_gather workers when the rows times the tables reach 10 million; "
							"0 starts none; a positive number starts that many whatever the number of rows (never more than the tables).",
							&simhash_band_workers,
							-1, -1, MAX_PARALLEL_WORKER_LIMIT,
							PGC_USERSET, 0,
							NULL, NULL, NULL);
	DefineCustomIntVariable("simhash.tail_cache_size",
							"Memory in which a backend keeps the full tail pages and the block maps of hamming indexes for its lookups.",
							"A sixteenth of it, on its own, holds the buffers that last held the pages of the probe tables. "
							"0 keeps none: every lookup that probes an index reads its whole tail, and each scan of a merged index its block map.",
							&simhash_tail_cache_kb,
							16384, 0, MAX_KILOBYTES,
							PGC_USERSET, GUC_UNIT_KB,
							NULL, NULL, NULL);
	DefineCustomIntVariable("simhash.vacuum_test_lock",
							"For tests: VACUUM of a hamming index waits for the advisory lock of this number after the removals of each tail page, before it counts them.",
							"0 (the default) never waits.",
							&simhash_vacuum_test_lock,
							0, 0, INT_MAX,
							PGC_SUSET, GUC_NOT_IN_SAMPLE | GUC_NO_SHOW_ALL,
							NULL, NULL, NULL);
	DefineCustomIntVariable("simhash.band_test_error",
							"For tests: a parallel worker of the whole-table functions raises an error after it enumerates the table of this number.",
							"0 (the default) never does.",
							&simhash_band_test_error,
							0, 0, INT_MAX,
							PGC_SUSET, GUC_NOT_IN_SAMPLE | GUC_NO_SHOW_ALL,
							NULL, NULL, NULL);
	simhash_similar_init();
	hamming_init_reloptions();
	MarkGUCPrefixReserved("simhash");
}
