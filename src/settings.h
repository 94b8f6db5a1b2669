/*
 * settings.h
 *	  The extension's settings (defined in init.c with _PG_init()): the
 *	  simhash.max_distance threshold of the % operator, and the functions of
 *	  the % operator's planner hook (similar_hook.c) that it drives;
 *	  simhash.pairs_recall, the recall of the whole-table functions' bands
 *	  (pairs_band.c); simhash.similarity_threshold, the threshold of the
 *	  ~= operator on texts (neardup.c); simhash.tail_cache_size, the memory of the tail pages
 *	  a backend keeps for hamming index lookups (hamming_tail_cache.c).
 *	  The workers' settings are declared with their code:
 *	  simhash.verify_workers in verify_parallel.h, simhash.band_workers and
 *	  simhash.band_test_error in pairs.h.
 */
#ifndef SIMHASH_SETTINGS_H
#define SIMHASH_SETTINGS_H

#include "postgres.h"

/*
 * default of simhash.max_distance: the best threshold of the default
 * features (shingles of 3, sublinear) on the evaluation corpus
 */
#define SIMHASH_DEFAULT_MAX_DISTANCE 9

extern int	simhash_max_distance_guc;
/*
 * simhash.similarity_threshold: the threshold of text ~= text, 0.5 .. 1
 * (neardup.c)
 */
extern double simhash_similarity_threshold;

/* simhash.pairs_recall: 1 asks for the exact tables */
extern double simhash_pairs_recall;

/*
 * simhash.tail_cache_size: kB of full tail pages a backend keeps
 * (hamming_tail_cache.c), of block maps no scan holds (hamming_map.c), and
 * a sixteenth of it of the buffers that held probe table pages
 * (hamming_probe.c)
 */
extern int	simhash_tail_cache_kb;

/*
 * simhash.vacuum_test_lock, for tests: VACUUM of a hamming index waits for
 * the advisory lock of this number after each tail page (0: never)
 */
extern int	simhash_vacuum_test_lock;

/* the % operator and ~= of texts (similar_hook.c): their thresholds are fixed when a query is planned */
extern void simhash_similar_init(void);
extern void simhash_max_distance_assign(int newval, void *extra);
extern int	simhash_similar_threshold(void);
/* the same for ~= of two texts and simhash.similarity_threshold */
extern void simhash_similarity_threshold_assign(double newval, void *extra);
extern double simhash_text_threshold(void);

#endif							/* SIMHASH_SETTINGS_H */
