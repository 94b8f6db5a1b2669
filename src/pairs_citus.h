/*
 * pairs_citus.h
 *	  The whole-table functions on a query of a Citus distributed table
 *	  (pairs_citus.c): the pairs found and verified on the workers, and the
 *	  rows and pairs of a query linked as the engine's (pairs.h) are.
 */
#ifndef SIMHASH_PAIRS_CITUS_H
#define SIMHASH_PAIRS_CITUS_H

#include "pairs.h"
#include "verify.h"

extern void pairs_read_linked(PairsState *st, SPIPlanPtr plan, ParamListInfo params, VerifyState *vs,
							  PairsCallback emit, VerifyPairFn vemit, void *arg);
extern void pairs_citus_run(PairsState *st, FunctionCallInfo fcinfo, VerifyState *vs, const char *rows,
							PairsCallback emit, VerifyPairFn vemit, void *arg);

#endif							/* SIMHASH_PAIRS_CITUS_H */
