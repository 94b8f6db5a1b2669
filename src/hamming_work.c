/*
 * hamming_work.c
 *	  The work model of the "hamming" access method: what a pass over the
 *	  probe tables and what probes of "within k bits" cost, and whether
 *	  probing pays.  Each scan asks it (hamming_probe_pays) before it probes;
 *	  the planner's cost (hamming_cost.c) is built on the same numbers.
 *
 *	  Work, in microseconds of this machine (1M random fingerprints, all in
 *	  shared buffers, test/bench/bench_index.sh):
 *	  - a pass reads every page of table 0 and of the tail: per page a buffer
 *	    access, per entry an XOR and a popcount;
 *	  - probes of "within k bits" of a fingerprint read, in each table j, every directory
 *	    bucket within r_j bits of the query (hamming_table_radii), each a
 *	    directory read and a page access, and test every entry there; each
 *	    row found in tables 1..3 is looked up in table 0.
 *	  A radius scan that probes reads the tail too, so the tail does not
 *	  enter its choice; an ordered scan reads the tail once for all its
 *	  rings of probes, and each of its passes reads it again.
 *	  Also the most rows a scan keeps in memory at once (hamming_hits_limit),
 *	  which sizes an ordered scan's batches.
 */
#include "mih.h"
#include "hamming.h"

#include <math.h>

#include "miscadmin.h"
#include "utils/memutils.h"

/* work in microseconds */
#define WORK_PAGE			0.3		/* a buffer access */
#define WORK_PASS_ENTRY		0.002	/* XOR and popcount in a page loop */
#define WORK_BUCKET			0.6		/* a directory read and a page access */
#define WORK_PROBE_ENTRY	0.006	/* an entry of a probed bucket */
#define WORK_ROW			0.5		/* a row found, with its lookup in table 0 */

double
hamming_pass_work(double pages, double entries)
{
	return pages * WORK_PAGE + entries * WORK_PASS_ENTRY;
}

double
hamming_probe_work(const HammingTables *tables, int k, int nqueries)
{
	int			radius[HAMMING_NTABLES];
	int			dir_bits = tables->dir_bits;
	double		bucket_rows = ldexp((double) tables->nsorted, -dir_bits);
	double		work = 0;
	int			j;

	k = Min(k, SIMHASH_BITS);
	if (k < 0)
		return 0;
	hamming_table_radii(radius, k);
	for (j = 0; j < HAMMING_NTABLES; j++)
	{
		double		buckets;

		if (radius[j] < 0)
			continue;
		buckets = simhash_probe_count(dir_bits, Min(radius[j], dir_bits));
		work += buckets * (WORK_BUCKET + bucket_rows * WORK_PROBE_ENTRY);
	}
	return nqueries * (work + tables->nsorted * simhash_random_within_fraction(k) * WORK_ROW);
}

/*
 * Are probes of the tables for "within k bits" of nqueries fingerprints (4
 * for an index of text) cheaper than a pass?  A pass
 * reads table 0 and the tail; tail_pages and tail_entries are the part of
 * the tail that the probes' caller does not read again for them: none for a
 * radius scan (it reads the tail after its probes, as a pass would), all of
 * it for the rings of an ordered scan (it reads the tail once, each pass
 * reads it again).
 */
bool
hamming_probe_pays(const HammingTables *tables, int k, int nqueries, double tail_pages,
				   double tail_entries)
{
	return tables->ntables > 0 &&
		hamming_probe_work(tables, k, nqueries) <
		hamming_pass_work(tables->table0_pages + tail_pages, tables->nsorted + tail_entries);
}

/* the most rows a scan keeps in memory at once: work_mem, at least a page's */
int
hamming_hits_limit(void)
{
	return Max((int) HAMMING_PAGE_CAPACITY,
			   (int) Min((Size) work_mem * 1024 / sizeof(HammingHit), (Size) MaxAllocSize / sizeof(HammingHit)));
}
