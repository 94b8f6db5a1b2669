/*
 * verify.h
 *	  The verification step of verified near-duplicates (verify.c): candidate
 *	  pairs kept when the shingle sets of their bodies are similar enough.
 */
#ifndef SIMHASH_VERIFY_H
#define SIMHASH_VERIFY_H

#include "shingle_set.h"
#include "executor/spi.h"

typedef struct VerifyState VerifyState;

/* the types a body column may have: text, varchar, char, or bigint[]; the hint that says so */
extern bool verify_body_type_ok(Oid type);
#define VERIFY_BODY_TYPES_HINT \
	"The body is text, varchar or char (cast another type to text), or a shingle set of type bigint[]."
/*
 * The caller's query, prepared (refused if it changes data) with its columns
 * in *desc, and with parallel_safe, whether it calls no PARALLEL UNSAFE
 * function; then run once to completion, possibly by parallel workers, every
 * row to the receiveSlot of dest (the other callbacks are set here).
 */
extern SPIPlanPtr verify_prepare_query(const char *query, const char *shape, const char *hint,
									   TupleDesc *desc, bool *parallel_safe);
extern void verify_run_query(SPIPlanPtr plan, DestReceiver *dest);

/* a verified pair: a candidate and the Jaccard similarity of its two bodies */
typedef void (*VerifyPairFn) (int64 id_a, int64 id_b, int distance, double similarity, void *arg);

/* checks min_similarity (0..1) and the shingling (n, units) */
extern VerifyState *verify_begin(double min_similarity, int32 n, text *units);
extern void verify_add_pair(int64 id_a, int64 id_b, int distance, void *arg);
extern void verify_read_rows(VerifyState *vs, const char *query, int natts);
extern void verify_for_each(VerifyState *vs, VerifyPairFn fn, void *arg);
extern void verify_put_pair(int64 id_a, int64 id_b, int distance, double similarity, void *arg);
extern void verify_end(VerifyState *vs);

#endif							/* SIMHASH_VERIFY_H */
