/*
 * init.c
 *	  The library's start: _PG_init() defines the extension's settings
 *	  (simhash.max_distance), installs the % operator's planner hook and
 *	  registers the hamming access method's reloptions.
 */
#include "settings.h"
#include "hamming.h"

#include "utils/guc.h"

int			simhash_max_distance_guc = SIMHASH_DEFAULT_MAX_DISTANCE;

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
	simhash_similar_init();
	hamming_init_reloptions();
	MarkGUCPrefixReserved("simhash");
}
