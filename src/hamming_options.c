/*
 * hamming_options.c
 *	  The options of a "hamming" index (probe_tables, max_distance,
 *	  tail_limit): their registration when the library loads, their parsing
 *	  and checks (the amoptions of hamming_handler.c), and the radius of
 *	  "fp % q" and the tail limit that an index's options give.
 */
#include "ball.h"
#include "settings.h"
#include "hamming.h"

#include "access/reloptions.h"
#include "utils/guc.h"

static relopt_kind hamming_relopt_kind;

/*
 * max_distance when unset; its bounds are checked by hamming_options, with
 * the message of every other threshold
 */
#define MAX_DISTANCE_UNSET PG_INT32_MIN

/*
 * The options probe_tables (on by default), max_distance (unset) and
 * tail_limit, registered when the library loads.  Changing max_distance does not check
 * the rows already indexed: REINDEX does, for an exclusion constraint.
 */
void
hamming_init_reloptions(void)
{
	hamming_relopt_kind = add_reloption_kind();
	add_bool_reloption(hamming_relopt_kind, "probe_tables",
					   "Whether CREATE INDEX and REINDEX write probe tables (multi-index hashing), or only packed pages that every scan reads in full",
					   true, AccessExclusiveLock);
	add_int_reloption(hamming_relopt_kind, "max_distance",
					  "The threshold of the % operator in this index, 0..64 (as in an exclusion constraint EXCLUDE USING hamming (fp WITH %)); unset: the setting simhash.max_distance of the session",
					  MAX_DISTANCE_UNSET, PG_INT32_MIN, PG_INT32_MAX, AccessExclusiveLock);
	add_int_reloption(hamming_relopt_kind, "tail_limit",
					  "Size in kB of the tail (rows inserted since the probe tables were written) at which an insert merges it into new probe tables; -1 (unset): over 1 MB and over 1/24 of the rows in the probe tables",
					  -1, -1, MAX_KILOBYTES, ShareUpdateExclusiveLock);
}

bytea *
hamming_options(Datum reloptions, bool validate)
{
	static const relopt_parse_elt options[] = {
		{"probe_tables", RELOPT_TYPE_BOOL, offsetof(HammingOptions, probe_tables)},
		{"max_distance", RELOPT_TYPE_INT, offsetof(HammingOptions, max_distance)},
		{"tail_limit", RELOPT_TYPE_INT, offsetof(HammingOptions, tail_limit)}
	};

	HammingOptions *parsed;

	parsed = (HammingOptions *) build_reloptions(reloptions, validate, hamming_relopt_kind,
												 sizeof(HammingOptions), options, lengthof(options));
	if (validate && parsed != NULL && parsed->max_distance != MAX_DISTANCE_UNSET)
		simhash_check_threshold("max_distance", parsed->max_distance, SIMHASH_BITS);
	if (validate && parsed != NULL && parsed->tail_limit != -1 && parsed->tail_limit < HAMMING_MIN_TAIL_LIMIT)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("value %d out of bounds for option \"tail_limit\"", parsed->tail_limit),
				 errdetail("Valid values are -1 (merge by the size of the index) and %d to %d kB.",
						   HAMMING_MIN_TAIL_LIMIT, MAX_KILOBYTES)));
	return (bytea *) parsed;
}

/*
 * The radius of "fp % q" in this index: its max_distance option when set,
 * so that an exclusion constraint behaves the same in every session and
 * after a restore, else simhash.max_distance.
 */
int
hamming_similar_radius(Relation index)
{
	HammingOptions *options = (HammingOptions *) index->rd_options;

	if (options != NULL && options->max_distance != MAX_DISTANCE_UNSET)
		return options->max_distance;
	return simhash_max_distance_guc;
}

/* the tail_limit option of this index, kB; -1 when unset */
int
hamming_tail_limit(Relation index)
{
	HammingOptions *options = (HammingOptions *) index->rd_options;

	return options != NULL ? options->tail_limit : -1;
}
