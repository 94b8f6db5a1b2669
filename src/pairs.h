/*
 * pairs.h
 *	  The engine behind simhash_pairs(), simhash_clusters() and simhash_dedup()
 *	  (private to the pairs_*.c files): the rows, the sort keys, the state of
 *	  one call, and the functions of each layer, bottom first:
 *
 *	  pairs_sort.c      progress notices, memory and temporary files (a row
 *	                    into memory or the spill file), the radix sort of rows
 *	                    by a key
 *	  pairs_spill.c     rows that do not fit in work_mem: partitions by a hash
 *	                    of the key, sorted one at a time; the duplicate id check
 *	  pairs_query.c     reading "SELECT id, fingerprint" into rows (spilling),
 *	                    or finding that it reads a Citus distributed table
 *	  pairs_collapse.c  one row per distinct fingerprint, the others as links
 *	  pairs_band.c      bands of sampled bits instead of the tables, planned
 *	                    for the recall that simhash.pairs_recall asks
 *	  pairs_engine.c    the permuted tables: plan, enumerate every pair within
 *	                    k bits once; per-id tables
 *	  pairs_parallel.c  the tables shared among parallel workers, or not
 *	                    (pairs_enumerate)
 *	  pairs_citus.c     a query of a Citus distributed table: the pairs found
 *	                    and verified on the workers, instead of all the above
 *	                    (pairs_citus.h)
 *	  pairs_sql.c       the SQL functions, on top of the engine: a call's
 *	                    beginning and end
 *
 * All three read "SELECT id, fingerprint" through an SPI cursor and enumerate
 * the pairs with the permuted tables of Manku, Jain and Das Sarma (2007): the
 * 64 bits are split into b blocks, and two fingerprints within k bits agree
 * exactly on at least m = b - k blocks.  For each of the C(b, m) choices of m
 * blocks (a "table") the rows are radix-sorted by the concatenation of those
 * blocks, and only rows with equal keys are compared.  A pair is emitted only
 * by the table made of the first m blocks on which it agrees, so every pair
 * comes out exactly once without remembering the pairs already seen.  A cost
 * model picks b for the number of rows and k (m = 0 is the all-pairs loop).
 * With simhash.pairs_recall below 1, bands of sampled bits (pairs_band.c)
 * take the place of the tables: approximate, and not quadratic at the radii
 * where every table's keys are a few bits long.
 *
 * simhash_clusters() and simhash_dedup() first collapse identical
 * fingerprints: only one row per distinct fingerprint (its smallest id, the
 * "representative") goes through the tables, and every other row is kept
 * aside as a link to its representative, whose answer it shares.  n copies
 * of one fingerprint thus cost O(n), not n^2/2 comparisons.
 *
 * Memory: a row takes 16 bytes (24 with a simhash128, 40 with two), and sorting takes as
 * many more.  When the rows do not fit in work_mem that way, they are spilled
 * to a temporary file while the query is read.  Each table then splits the rows into P partitions by a hash
 * of its key, so that rows with equal keys meet in the same partition, and
 * sorts one partition at a time in memory.  A pass over the spill file writes
 * up to F partitions to files of their own (F file buffers take an eighth of
 * work_mem), so a table reads the spill file ceil(P / F) times.  A partition
 * that comes out larger than its memory is split once more with another hash
 * (another eighth for those files); when rows of one key alone exceed the
 * memory, the call fails with a hint rather than grow past work_mem.  The
 * spilled collapse aggregates each partition of a hash of the fingerprint in
 * a hash table, the partitions sized by a HyperLogLog estimate of the distinct
 * fingerprints.  The per-id tables of simhash_clusters() and simhash_dedup()
 * (the representatives that have near-duplicates) are bounded by
 * work_mem * hash_mem_multiplier, and fail beyond it.
 */
#ifndef SIMHASH_PAIRS_H
#define SIMHASH_PAIRS_H

#include "simhash.h"

#include "executor/spi.h"
#include "lib/hyperloglog.h"
#include "port/atomics.h"
#include "storage/buffile.h"
#include "utils/hsearch.h"
#include "utils/timestamp.h"

/* a table key is at most 32 runs of adjacent blocks (out of 64 blocks) */
#define PAIRS_MAX_SEGMENTS		(SIMHASH_BITS / 2)

/* 64-bit words of the widest fingerprint: two simhash128 values, 256 bits */
#define PAIRS_MAX_WORDS			4

#define PAIRS_NOTICE_INTERVAL_MS	10000

/*
 * A row: the id and the fingerprint, 16 bytes; a simhash128's low 64 bits
 * follow (24 bytes), or the three other words of a 256-bit fingerprint (40
 * bytes: two simhash128 values, the first one's high half in fp).  Rows are
 * st->row_size bytes apart: PAIRS_ROW() finds one, pairs_row_copy() copies
 * one, PAIRS_WORDS() reads its fingerprint as st->words words.
 */
typedef struct PairsRow
{
	int64		id;
	simhash		fp;				/* the most significant 64 bits */
	uint64		lo[FLEXIBLE_ARRAY_MEMBER];	/* the other words, if any */
} PairsRow;

/* the words of a fingerprint are adjacent in a row, fp first */
StaticAssertDecl(offsetof(PairsRow, lo) == offsetof(PairsRow, fp) + sizeof(simhash),
				 "a fingerprint's words are adjacent in a row");

#define PAIRS_WORDS(row)	(&(row)->fp)

#define PAIRS_ROW(st, base, i) \
	((PairsRow *) ((char *) (base) + (Size) (i) * (st)->row_size))

/* the sort key of one table, or of the duplicate id check */
typedef struct PairsKey
{
	bool		by_id;			/* the key is the id, not blocks of fp */
	bool		wide;			/* some run is in a word after fp */
	int			nsegs;			/* runs of adjacent blocks */
	int			word[PAIRS_MAX_SEGMENTS];	/* the word of the run (0: fp) */
	int			shift[PAIRS_MAX_SEGMENTS];	/* right shift of the word */
	uint64		mask[PAIRS_MAX_SEGMENTS];	/* its bits once shifted */
	int			outshift[PAIRS_MAX_SEGMENTS];	/* its place in the key */
	int			bits;			/* width of the key */
	uint64		earlier;		/* blocks not in the table that come before
								 * its last block: a pair equal on one of them
								 * belongs to an earlier table */
} PairsKey;

/* a row whose fingerprint another row with a smaller id also has */
typedef struct PairsLink
{
	int64		id;
	int64		rep;			/* the smallest id of its fingerprint */
} PairsLink;

/* the collapse writes links over the rows it has read (no larger) */
StaticAssertDecl(sizeof(PairsLink) == sizeof(PairsRow), "a link takes the place of a row");

typedef struct PairsState PairsState;
typedef void (*PairsCallback) (int64 id_a, int64 id_b, int distance, void *arg);
typedef void (*PairsRowCallback) (int64 id, int64 rep, void *arg);

struct PairsState
{
	const char *fname;			/* SQL name of the caller, for messages */
	Oid			fn_oid;
	MemoryContext cxt;			/* everything below, deleted at the end */
	int			max_distance;
	int			width;			/* of the fingerprints: 64, 128 or 256 */
	int			words;			/* width / 64 */
	Size		row_size;		/* 16, 24 or 40 */

	/* the rows: all of them, or one partition when spilled */
	PairsRow   *rows;
	int64		rows_len;		/* allocated */
	int64		nrows;			/* used */
	PairsRow   *scratch;		/* sort output, and spill file read buffer */
	int64		scratch_len;
	Size		budget;			/* work_mem, in bytes */
	int64		ntotal;			/* rows (representatives once collapsed) */
	int64		ninput;			/* rows read from the query */
	Oid			id_type;
	int64		last_id;
	bool		ids_ascending;	/* so far, hence distinct */
	bool		checking_ids;
	bool		collapse;		/* identical fingerprints are to be collapsed */
	bool		with_body;		/* the query has a third column, the body */
	Oid			body_type;		/* its base type, when with_body */
	bool		may_distribute; /* a query of Citus tables may run on the workers */
	Datum		citus_tables;	/* an oid[] of the query's distributed tables
								 * when it runs on the workers, else 0 */
	bool		collapsing;
	bool		collapsed;		/* rows are distinct fingerprints */
	hyperLogLogState distinct;	/* of the fingerprints, when collapsing */
	BufFile    *file;			/* all rows, when they did not fit */
	int			npartitions;	/* P */
	int			fanout;			/* F */

	/* the rows that share the fingerprint of a representative */
	PairsLink  *links;
	BufFile    *links_file;		/* instead, when spilled */
	int64		nlinks;
	int64		links_len;		/* allocated, when added one by one */
	MemoryContext map_cxt;		/* holds the per-id table (its own context) */
	Size		map_limit;		/* of the per-id table */

	/* the tables: blocks are numbered from the most significant */
	struct SimhashBands *bands; /* instead of blocks, when approximate */
	int			nblocks;
	int			keyblocks;
	int			ntables;
	int			table;			/* 1-based, while enumerating */
	int			share;			/* with shares > 1, only the tables t with */
	int			shares;			/* (t - 1) % shares = share are enumerated */
	/* with parallel workers (pairs_parallel.c), of those only the tables */
	pg_atomic_uint32 *next_table;	/* this process claims from this counter */
	int			claimed;		/* the last table it claimed, numbered
								 * among the tables of the share */
	void		(*table_done) (PairsState *st); /* after each of its tables */
	void	   *table_done_arg;
	int			workers;		/* the parallel workers that share them */
	int			block_shift[SIMHASH_BITS];
	uint64		block_mask[SIMHASH_BITS];

	PairsCallback emit;
	void	   *emit_arg;
	int64		npairs;

	int64		comparisons;	/* since the last look at the clock */
	TimestampTz next_notice;
};

/* murmur3's 64-bit finalizer: a hash of keys and fingerprints */
static inline uint64
pairs_mix(uint64 h)
{
	h ^= h >> 33;
	h *= UINT64CONST(0xff51afd7ed558ccd);
	h ^= h >> 33;
	h *= UINT64CONST(0xc4ceb9fe1a85ec53);
	h ^= h >> 33;
	return h;
}

static inline uint64
pairs_key(const PairsKey *key, const PairsRow *row)
{
	uint64		fp = row->fp;
	uint64		k;
	int			s;

	if (key->by_id)
		return (uint64) row->id;
	if (key->wide)
	{
		const uint64 *w = PAIRS_WORDS(row);

		k = 0;
		for (s = 0; s < key->nsegs; s++)
			k |= ((w[key->word[s]] >> key->shift[s]) & key->mask[s]) << key->outshift[s];
		return k;
	}
	/* unused segments have a zero mask */
	k = ((fp >> key->shift[0]) & key->mask[0]) << key->outshift[0] |
		((fp >> key->shift[1]) & key->mask[1]) << key->outshift[1] |
		((fp >> key->shift[2]) & key->mask[2]) << key->outshift[2];
	for (s = 3; s < key->nsegs; s++)
		k |= ((fp >> key->shift[s]) & key->mask[s]) << key->outshift[s];
	return k;
}

static inline void
pairs_row_copy(const PairsState *st, PairsRow *dst, const PairsRow *src)
{
	int			i;

	dst->id = src->id;
	dst->fp = src->fp;
	for (i = 0; i < st->words - 1; i++)
		dst->lo[i] = src->lo[i];
}

/* do two rows have the same fingerprint? */
static inline bool
pairs_same_fp(const PairsState *st, const PairsRow *a, const PairsRow *b)
{
	int			i;

	if (a->fp != b->fp)
		return false;
	for (i = 0; i < st->words - 1; i++)
		if (a->lo[i] != b->lo[i])
			return false;
	return true;
}


/* a consumer of rows sorted by key (one run of the sort, or one partition) */
typedef void (*PairsGroupFn) (PairsState *st, const PairsKey *key, const PairsRow *rows, int64 n);
/* a consumer of one partition file of n rows, rewound */
typedef void (*PairsPartFn) (PairsState *st, const PairsKey *key, BufFile *file, int64 n, void *arg);

/* pairs_sort.c */
extern void pairs_progress(PairsState *st);
extern PairsRow *pairs_resize(PairsState *st, PairsRow *array, int64 len);
extern void pairs_add_row(PairsState *st, int64 id, const uint64 *fp);
extern BufFile *pairs_file_create(PairsState *st);
extern void pairs_file_read(PairsState *st, BufFile *file, void *buf, Size bytes);
extern void pairs_file_rewind(PairsState *st, BufFile *file);
extern PairsRow *pairs_sort(PairsState *st, const PairsKey *keyp, PairsRow *rows, PairsRow *tmp, int64 n);
extern void pairs_mask_key(const uint64 *mask, int words, PairsKey *key);
extern void pairs_sort_and_call(PairsState *st, const PairsKey *key, int64 n, PairsGroupFn fn);

/* pairs_spill.c */
extern void pairs_spill_layout(PairsState *st);
extern void pairs_split(PairsState *st, const PairsKey *key, BufFile *input, int64 n, int nparts,
						uint64 seed, PairsPartFn fn, void *arg);
extern void pairs_group(PairsState *st, const PairsKey *key, PairsGroupFn fn);
extern void pairs_check_ids(PairsState *st);
extern void pairs_duplicate_id(PairsState *st, int64 id);

/* pairs_query.c */
extern void pairs_read_query(PairsState *st, const char *query);
extern Datum pairs_citus_tables(SPIPlanPtr plan, MemoryContext cxt);

/* pairs_collapse.c */
extern void pairs_collapse(PairsState *st);

/* pairs_engine.c */
extern void pairs_plan(PairsState *st);
extern void pairs_tables(PairsState *st);
extern void pairs_for_each_row(PairsState *st, PairsRowCallback fn, void *arg);
extern HTAB *pairs_id_map(PairsState *st, const char *name, Size entrysize);
extern void *pairs_map_enter(PairsState *st, HTAB *map, int64 id, bool *found);


/* pairs_parallel.c */
extern int	simhash_band_workers;
extern int	simhash_band_test_error;
extern void pairs_enumerate(PairsState *st, PairsCallback emit, void *arg);

#endif							/* SIMHASH_PAIRS_H */
