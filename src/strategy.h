/*
 * strategy.h
 *	  The operator strategy numbers shared by the GIN (simhash_ops), GiST
 *	  (simhash_gist_ops) and hamming (simhash_hamming_ops) operator classes.
 */
#ifndef SIMHASH_STRATEGY_H
#define SIMHASH_STRATEGY_H

#include "postgres.h"

/* strategies of simhash_ops (GIN), simhash_gist_ops and simhash_hamming_ops */
#define SIMHASH_STRATEGY_IN_BALL	1	/* simhash <@ simhash_ball */
#define SIMHASH_STRATEGY_SIMILAR	2	/* simhash % simhash (GUC threshold) */
#define SIMHASH_STRATEGY_EQUAL		3	/* simhash = simhash */
#define SIMHASH_STRATEGY_NEAREST	4	/* ORDER BY simhash <-> simhash (GiST, hamming) */

#endif							/* SIMHASH_STRATEGY_H */
