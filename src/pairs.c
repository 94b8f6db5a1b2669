/*
 * pairs.c
 *	  Batch near-duplicate detection over the rows of a query: simhash_pairs()
 *	  (every pair of rows within k bits), simhash_clusters() (the connected
 *	  components of those pairs) and simhash_dedup() (keep the smallest id,
 *	  drop later rows within k bits of a kept one).
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
 *
 * simhash_clusters() and simhash_dedup() first collapse identical
 * fingerprints: only one row per distinct fingerprint (its smallest id, the
 * "representative") goes through the tables, and every other row is kept
 * aside as a link to its representative, whose answer it shares.  n copies
 * of one fingerprint thus cost O(n), not n^2/2 comparisons.
 *
 * Memory: a row takes 16 bytes, and sorting takes 16 more.  When the rows do
 * not fit in work_mem that way, they are spilled to a temporary file while the
 * query is read.  Each table then splits the rows into P partitions by a hash
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
#include "radius.h"

#include <math.h>

#include "catalog/pg_operator_d.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "executor/tuptable.h"
#include "funcapi.h"
#include "lib/hyperloglog.h"
#include "parser/parse_coerce.h"
#include "miscadmin.h"
#include "storage/buffile.h"
#include "tcop/pquery.h"
#include "utils/builtins.h"
#include "utils/hsearch.h"
#include "utils/lsyscache.h"
#include "utils/portal.h"
#include "utils/resowner.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"
#include "utils/tuplesort.h"

/* rows fetched from the cursor at a time */
#define PAIRS_FETCH_ROWS		10000

/*
 * Cost model: a comparison costs 1; sorting and scanning a row for a table
 * costs PAIRS_ROW_COST, and reading or writing it in a temporary file
 * PAIRS_FILE_COST.
 */
#define PAIRS_ROW_COST			8.0
#define PAIRS_FILE_COST			2.0
#define PAIRS_MAX_TABLES		300

/* spill partitions are sized to fill this share of their memory on average */
#define PAIRS_PARTITION_FILL	0.8
/* partition files written in one pass over the spill file */
#define PAIRS_MAX_FANOUT		1024

/* least significant digit first radix sort, at most this many bits a pass */
#define PAIRS_RADIX_BITS		11

/* a table key is at most 32 runs of adjacent blocks (out of 64 blocks) */
#define PAIRS_MAX_SEGMENTS		(SIMHASH_BITS / 2)

#define PAIRS_NOTICE_INTERVAL_MS	10000
/* comparisons between two looks at the clock inside one run of equal keys */
#define PAIRS_COMPARISONS_PER_CLOCK (INT64CONST(1) << 24)

typedef struct PairsRow
{
	simhash		fp;
	int64		id;
} PairsRow;

/* the sort key of one table, or of the duplicate id check */
typedef struct PairsKey
{
	bool		by_id;			/* the key is the id, not blocks of fp */
	int			nsegs;			/* runs of adjacent blocks */
	int			shift[PAIRS_MAX_SEGMENTS];	/* right shift of fp for the run */
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

/* the collapse writes links over the rows it has read (same size) */
StaticAssertDecl(sizeof(PairsLink) == sizeof(PairsRow), "a link takes the place of a row");

/* bytes of a hash table entry (fingerprint -> smallest id), for sizing */
#define PAIRS_COLLAPSE_ENTRY_BYTES	64
/* registers of the distinct fingerprint estimate: 2^12, 1.6% standard error */
#define PAIRS_HLL_BWIDTH		12
/* partitions of the spilled collapse are sized for this many times the estimate */
#define PAIRS_HLL_MARGIN		1.25

typedef void (*PairsCallback) (int64 id_a, int64 id_b, int distance, void *arg);
typedef void (*PairsRowCallback) (int64 id, int64 rep, void *arg);

typedef struct PairsState
{
	const char *fname;			/* SQL name of the caller, for messages */
	Oid			fn_oid;
	MemoryContext cxt;			/* everything below, deleted at the end */
	ResourceOwner owner;		/* of the call, for the spill file */
	int			max_distance;

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
	MemoryContext map_cxt;		/* holds the per-id table (its own context) */
	Size		map_limit;		/* of the per-id table */

	/* the tables: blocks are numbered from the most significant */
	int			nblocks;
	int			keyblocks;
	int			ntables;
	int			table;			/* 1-based, while enumerating */
	int			block_shift[SIMHASH_BITS];
	uint64		block_mask[SIMHASH_BITS];

	PairsCallback emit;
	void	   *emit_arg;
	int64		npairs;

	int64		comparisons;	/* since the last look at the clock */
	TimestampTz next_notice;
} PairsState;

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

/* ---- progress ---- */

static void
pairs_progress(PairsState *st)
{
	TimestampTz now = GetCurrentTimestamp();

	if (now < st->next_notice)
		return;
	st->next_notice = TimestampTzPlusMilliseconds(now, PAIRS_NOTICE_INTERVAL_MS);
	if (st->checking_ids)
		ereport(NOTICE,
				(errmsg("%s: checking that the %lld ids are distinct",
						st->fname, (long long) st->ntotal)));
	else if (st->collapsing)
		ereport(NOTICE,
				(errmsg("%s: grouping the identical fingerprints of %lld rows",
						st->fname, (long long) st->ninput)));
	else if (st->table == 0)
		ereport(NOTICE,
				(errmsg("%s: %lld rows read so far", st->fname, (long long) st->ntotal)));
	else
		ereport(NOTICE,
				(errmsg("%s: table %d of %d, %lld pairs so far", st->fname,
						st->table, st->ntables, (long long) st->npairs)));
}

/* ---- memory ---- */

static PairsRow *
pairs_resize(PairsState *st, PairsRow *array, int64 len)
{
	if (array == NULL)
		return MemoryContextAllocHuge(st->cxt, len * sizeof(PairsRow));
	return repalloc_huge(array, len * sizeof(PairsRow));
}

/* a temporary file of the call (not of the cursor, which is closed first) */
static BufFile *
pairs_file_create(PairsState *st)
{
	MemoryContext old_cxt = MemoryContextSwitchTo(st->cxt);
	ResourceOwner old_owner = CurrentResourceOwner;
	BufFile    *file;

	CurrentResourceOwner = st->owner;
	file = BufFileCreateTemp(false);
	CurrentResourceOwner = old_owner;
	MemoryContextSwitchTo(old_cxt);
	return file;
}

/* reads n rows (or links) */
static void
pairs_file_read(PairsState *st, BufFile *file, void *buf, int64 n)
{
	size_t		size = n * sizeof(PairsRow);

	if (BufFileRead(file, buf, size) != size)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not read from %s temporary file: %m", st->fname)));
}

static void
pairs_file_rewind(PairsState *st, BufFile *file)
{
	if (BufFileSeek(file, 0, 0, SEEK_SET) != 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not seek in %s temporary file: %m", st->fname)));
}

/*
 * Sizes the partitions of the ntotal spilled rows: the buffers of two levels
 * of partition files take a quarter of the budget, rows and their sort
 * scratch the rest.
 */
static void
pairs_spill_layout(PairsState *st)
{
	Size		buffers;
	int64		capacity;

	st->fanout = Min(Max(st->budget / 8 / BLCKSZ, 2), PAIRS_MAX_FANOUT);
	buffers = Min((Size) 2 * st->fanout * BLCKSZ, st->budget / 2);
	capacity = Max((st->budget - buffers) / (2 * sizeof(PairsRow)), 1024);
	st->npartitions = (int) ceil(st->ntotal / (capacity * PAIRS_PARTITION_FILL));
	st->rows_len = capacity;
	st->rows = pairs_resize(st, st->rows, st->rows_len);
	st->scratch_len = capacity;
	st->scratch = pairs_resize(st, st->scratch, st->scratch_len);
}

/* ---- reading the query ---- */

static void
pairs_check_columns(PairsState *st, TupleDesc desc)
{
	Oid			simhash_type = GetSysCacheOid2(TYPENAMENSP, Anum_pg_type_oid,
											   CStringGetDatum("simhash"),
											   ObjectIdGetDatum(get_func_namespace(st->fn_oid)));
	Oid			fp_type;

	if (desc->natts != 2)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("query must return two columns: a bigint id and a simhash"),
				 errdetail_plural("The query returns %d column.",
								  "The query returns %d columns.",
								  desc->natts, desc->natts),
				 errhint("Write the query as SELECT id, fingerprint FROM ...")));
	st->id_type = getBaseType(TupleDescAttr(desc, 0)->atttypid);
	if (st->id_type != INT8OID && st->id_type != INT4OID && st->id_type != INT2OID)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("query must return two columns: a bigint id and a simhash"),
				 errdetail("The first column has type %s.",
						   format_type_be(TupleDescAttr(desc, 0)->atttypid)),
				 errhint("The id may be bigint, integer or smallint. For another key, number the rows (row_number() OVER (ORDER BY key)) and join the numbers back to the keys.")));
	fp_type = getBaseType(TupleDescAttr(desc, 1)->atttypid);
	if (fp_type != simhash_type)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("query must return two columns: a bigint id and a simhash"),
				 errdetail("The second column has type %s.",
						   format_type_be(TupleDescAttr(desc, 1)->atttypid)),
				 TypeCategory(fp_type) == TYPCATEGORY_STRING ?
				 errhint("Fingerprint the text in the query: SELECT id, simhash(body) FROM ...") :
				 errhint("Cast the fingerprint to simhash, for example fp::simhash.")));
}

static void
pairs_add_row(PairsState *st, int64 id, simhash fp)
{
	if (st->nrows == st->rows_len)
	{
		int64		capacity = st->budget / (2 * sizeof(PairsRow));

		if (st->rows_len < capacity)
		{
			st->rows_len = Min(st->rows_len * 2, capacity);
			st->rows = pairs_resize(st, st->rows, st->rows_len);
		}
		else
		{
			/* full: from now on rows[] is the write buffer of the spill file */
			if (st->file == NULL)
				st->file = pairs_file_create(st);
			BufFileWrite(st->file, st->rows, st->nrows * sizeof(PairsRow));
			st->nrows = 0;
		}
	}
	if (st->collapse)
		addHyperLogLog(&st->distinct, (uint32) pairs_mix(fp));
	if (st->ntotal > 0 && id <= st->last_id)
		st->ids_ascending = false;
	st->last_id = id;
	st->rows[st->nrows].fp = fp;
	st->rows[st->nrows].id = id;
	st->nrows++;
	st->ntotal++;
}

/* the DestReceiver of the cursor: rows go straight from the executor */
typedef struct PairsReceiver
{
	DestReceiver pub;
	PairsState *st;
} PairsReceiver;

static bool
pairs_receive(TupleTableSlot *slot, DestReceiver *self)
{
	PairsState *st = ((PairsReceiver *) self)->st;
	bool		isnull;
	Datum		id = slot_getattr(slot, 1, &isnull);
	Datum		fp;

	CHECK_FOR_INTERRUPTS();
	if (isnull)
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("query returned a NULL id"),
				 errhint("Every row needs an id; rows with a NULL fingerprint are skipped.")));
	fp = slot_getattr(slot, 2, &isnull);
	if (!isnull)
		pairs_add_row(st,
					  st->id_type == INT8OID ? DatumGetInt64(id) :
					  st->id_type == INT4OID ? DatumGetInt32(id) : DatumGetInt16(id),
					  DatumGetSimhash(fp));
	return true;
}

static void
pairs_receiver_startup(DestReceiver *self, int operation, TupleDesc typeinfo)
{
}

static void
pairs_receiver_nothing(DestReceiver *self)
{
}

/*
 * Runs the query in an SPI cursor, fetched in batches into a receiver of our
 * own: SPI_cursor_fetch() would copy every row into a tuple table first.
 */
static void
pairs_read_query(PairsState *st, const char *query)
{
	PairsReceiver receiver;
	SPIPlanPtr	plan;
	Portal		portal;

	st->rows_len = 1024;
	st->rows = pairs_resize(st, NULL, st->rows_len);
	st->ids_ascending = true;
	if (st->collapse)
	{
		MemoryContext old = MemoryContextSwitchTo(st->cxt);

		initHyperLogLog(&st->distinct, PAIRS_HLL_BWIDTH);
		MemoryContextSwitchTo(old);
	}

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	plan = SPI_prepare_cursor(query, 0, NULL, CURSOR_OPT_NO_SCROLL);
	if (plan == NULL)
		elog(ERROR, "SPI_prepare_cursor failed: %s", SPI_result_code_string(SPI_result));
	if (!SPI_is_cursor_plan(plan))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("query must return two columns: a bigint id and a simhash"),
				 errdetail("The query does not return rows."),
				 errhint("Write the query as SELECT id, fingerprint FROM ...")));
	portal = SPI_cursor_open(NULL, plan, NULL, NULL, false);
	pairs_check_columns(st, portal->tupDesc);

	receiver.pub.receiveSlot = pairs_receive;
	receiver.pub.rStartup = pairs_receiver_startup;
	receiver.pub.rShutdown = pairs_receiver_nothing;
	receiver.pub.rDestroy = pairs_receiver_nothing;
	receiver.pub.mydest = DestNone;
	receiver.st = st;
	while (PortalRunFetch(portal, FETCH_FORWARD, PAIRS_FETCH_ROWS, &receiver.pub) > 0)
		pairs_progress(st);

	SPI_cursor_close(portal);
	SPI_finish();

	st->ninput = st->ntotal;
	if (st->file != NULL)
	{
		BufFileWrite(st->file, st->rows, st->nrows * sizeof(PairsRow));
		st->nrows = 0;
		pairs_spill_layout(st);
	}
}

/* ---- sorting and grouping by a key ---- */

static inline uint64
pairs_key(const PairsKey *key, const PairsRow *row)
{
	uint64		fp = row->fp;
	uint64		k;
	int			s;

	if (key->by_id)
		return (uint64) row->id;
	/* unused segments have a zero mask */
	k = ((fp >> key->shift[0]) & key->mask[0]) << key->outshift[0] |
		((fp >> key->shift[1]) & key->mask[1]) << key->outshift[1] |
		((fp >> key->shift[2]) & key->mask[2]) << key->outshift[2];
	for (s = 3; s < key->nsegs; s++)
		k |= ((fp >> key->shift[s]) & key->mask[s]) << key->outshift[s];
	return k;
}

/* a second split of a partition that came out too large hashes differently */
#define PAIRS_RESPLIT_SEED		UINT64CONST(0x9e3779b97f4a7c15)

/* spreads the keys over nparts partitions */
static inline int
pairs_partition(const PairsKey *key, const PairsRow *row, int nparts, uint64 seed)
{
	uint64		h = pairs_mix(pairs_key(key, row) ^ seed);

	return (int) (((h >> 32) * (uint64) nparts) >> 32);
}

/*
 * Sorts rows[0..n) by key, least significant digit first, with tmp[0..n) as
 * the other buffer; returns the one that holds the result.  Hot loops read a
 * local copy of the key, which no store can alias (fp and id are int64s).
 */
static PairsRow *
pairs_sort(PairsState *st, const PairsKey *keyp, PairsRow *rows, PairsRow *tmp, int64 n)
{
	const PairsKey key_copy = *keyp;
	const PairsKey *key = &key_copy;
	int			npasses = (key->bits + PAIRS_RADIX_BITS - 1) / PAIRS_RADIX_BITS;
	int			width;
	uint64		digit_mask;
	int64	   *counts;
	int64		i;
	int			p;

	if (npasses == 0 || n < 2)
		return rows;
	width = (key->bits + npasses - 1) / npasses;
	digit_mask = (UINT64CONST(1) << width) - 1;
	counts = MemoryContextAllocZero(st->cxt, (sizeof(int64) * npasses) << width);

	/* the histograms of all digits in one read */
	for (i = 0; i < n; i++)
	{
		uint64		k = pairs_key(key, &rows[i]);

		CHECK_FOR_INTERRUPTS();
		for (p = 0; p < npasses; p++)
			counts[((int64) p << width) + ((k >> (p * width)) & digit_mask)]++;
	}

	for (p = 0; p < npasses; p++)
	{
		int64	   *offset = counts + ((int64) p << width);
		int			shift = p * width;
		int64		sum = 0;
		int64		d;
		PairsRow   *swap;

		/* every row has the same digit: nothing would move */
		if (offset[(pairs_key(key, &rows[0]) >> shift) & digit_mask] == n)
			continue;
		for (d = 0; d <= digit_mask; d++)
		{
			int64		c = offset[d];

			offset[d] = sum;
			sum += c;
		}
		for (i = 0; i < n; i++)
		{
			CHECK_FOR_INTERRUPTS();
			tmp[offset[(pairs_key(key, &rows[i]) >> shift) & digit_mask]++] = rows[i];
		}
		swap = rows;
		rows = tmp;
		tmp = swap;
	}
	pfree(counts);
	return rows;
}

typedef void (*PairsGroupFn) (PairsState *st, const PairsKey *key, const PairsRow *rows, int64 n);

/* sorts rows[0..n) and hands them to fn */
static void
pairs_sort_and_call(PairsState *st, const PairsKey *key, int64 n, PairsGroupFn fn)
{
	PairsRow   *sorted = pairs_sort(st, key, st->rows, st->scratch, n);

	/* the buffer that holds the sorted rows becomes rows[] */
	if (sorted != st->rows)
	{
		int64		len = st->rows_len;

		st->scratch = st->rows;
		st->rows = sorted;
		st->rows_len = st->scratch_len;
		st->scratch_len = len;
	}
	fn(st, key, st->rows, n);
	pairs_progress(st);
}

/* ---- spilled rows: partitions ---- */

typedef void (*PairsPartFn) (PairsState *st, const PairsKey *key, BufFile *file, int64 n, void *arg);

/*
 * Splits the n rows of input into nparts partitions by a hash of key (with
 * seed) and hands each partition file, rewound, to fn; a pass over input
 * writes up to F of them.
 */
static void
pairs_split(PairsState *st, const PairsKey *key, BufFile *input, int64 n, int nparts,
			uint64 seed, PairsPartFn fn, void *arg)
{
	BufFile   **files = MemoryContextAlloc(st->cxt, sizeof(BufFile *) * st->fanout);
	int64	   *counts = MemoryContextAlloc(st->cxt, sizeof(int64) * st->fanout);
	int			first;

	for (first = 0; first < nparts; first += st->fanout)
	{
		int			batch = Min(st->fanout, nparts - first);
		int64		done;
		int64		chunk;
		int			p;

		for (p = 0; p < batch; p++)
		{
			files[p] = pairs_file_create(st);
			counts[p] = 0;
		}
		pairs_file_rewind(st, input);
		for (done = 0; done < n; done += chunk)
		{
			int64		i;

			chunk = Min(n - done, st->scratch_len);
			pairs_file_read(st, input, st->scratch, chunk);
			for (i = 0; i < chunk; i++)
			{
				int			part = pairs_partition(key, &st->scratch[i], nparts, seed) - first;

				CHECK_FOR_INTERRUPTS();
				if (part < 0 || part >= batch)
					continue;
				BufFileWrite(files[part], &st->scratch[i], sizeof(PairsRow));
				counts[part]++;
			}
		}
		for (p = 0; p < batch; p++)
		{
			pairs_file_rewind(st, files[p]);
			fn(st, key, files[p], counts[p], arg);
			BufFileClose(files[p]);
		}
	}
	pfree(files);
	pfree(counts);
}

/* ---- the duplicate id check ---- */

static void
pairs_check_unique(PairsState *st, const PairsKey *key, const PairsRow *rows, int64 n)
{
	int64		i;

	for (i = 1; i < n; i++)
	{
		CHECK_FOR_INTERRUPTS();
		if (rows[i].id == rows[i - 1].id)
			ereport(ERROR,
					(errcode(ERRCODE_CARDINALITY_VIOLATION),
					 errmsg("id %lld appears more than once in the query result",
							(long long) rows[i].id),
					 errdetail("%s reports rows by their id, and id %lld names more than one row.",
							   st->fname, (long long) rows[i].id),
					 errhint("The first column of the query must identify its rows, for example a primary key or row_number() OVER ().")));
	}
}

/* ---- spilled rows: sorting partitions ---- */

/* a work_mem whose pairs_spill_layout() holds n rows in memory */
static Size
pairs_budget_for(int64 n)
{
	Size		rows = (Size) n * 2 * sizeof(PairsRow);

	/* the buffers take a quarter, or at least two of each level */
	return Max(rows * 4 / 3, rows + 2 * 2 * BLCKSZ);
}

typedef struct PairsSortArg
{
	PairsGroupFn fn;
	uint64		seed;			/* of the split that made the partition */
} PairsSortArg;

static void pairs_sort_part(PairsState *st, const PairsKey *key, BufFile *file, int64 n, void *arg);

/*
 * A partition of n rows that do not fit in rows[]: split once more with
 * another hash, or fail when that did not help (rows of one key, which must
 * be compared in memory, exceed it).
 */
static void
pairs_part_overflow(PairsState *st, const PairsKey *key, BufFile *file, int64 n, PairsSortArg *arg)
{
	/*
	 * By the pigeonhole principle, the first rows_len rows of a partition
	 * with fewer distinct ids repeat one: name it.
	 */
	if (key->by_id)
	{
		pairs_file_read(st, file, st->rows, st->rows_len);
		pairs_sort_and_call(st, key, st->rows_len, pairs_check_unique);
		pairs_file_rewind(st, file);
	}
	/* as many parts as the file buffers allow: rows of other keys spread out */
	if (arg->seed == 0)
	{
		PairsSortArg sub = {arg->fn, PAIRS_RESPLIT_SEED};

		elog(DEBUG1, "%s: a partition of %lld rows is split again", st->fname, (long long) n);
		pairs_split(st, key, file, n, st->fanout, sub.seed, pairs_sort_part, &sub);
		return;
	}
	ereport(ERROR,
			(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
			 errmsg("%s needs more than work_mem to compare the rows of one key", st->fname),
			 key->by_id ?
			 errdetail("%lld ids fall into one partition of the id check, and work_mem holds %lld.",
					   (long long) n, (long long) st->rows_len) :
			 st->collapsed ?
			 errdetail("%lld of the %lld distinct fingerprints fall into one partition of table %d, agreeing on its blocks, and work_mem holds %lld.",
					   (long long) n, (long long) st->ntotal, st->table, (long long) st->rows_len) :
			 errdetail("%lld of the %lld rows fall into one partition of table %d, agreeing on its blocks, and work_mem holds %lld.",
					   (long long) n, (long long) st->ntotal, st->table, (long long) st->rows_len),
			 errhint("Raise work_mem to at least %lld kB for this query, or lower max_distance.",
					 (long long) pairs_budget_for(n) / 1024 + 1)));
}

/* loads a partition and hands it sorted to the PairsGroupFn of arg */
static void
pairs_sort_part(PairsState *st, const PairsKey *key, BufFile *file, int64 n, void *arg)
{
	PairsSortArg *sort_arg = (PairsSortArg *) arg;

	if (n > st->rows_len)
	{
		pairs_part_overflow(st, key, file, n, sort_arg);
		return;
	}
	pairs_file_read(st, file, st->rows, n);
	pairs_sort_and_call(st, key, n, sort_arg->fn);
}

/*
 * Hands the rows sorted by key to fn: all at once when they are in memory,
 * else one partition at a time.
 */
static void
pairs_group(PairsState *st, const PairsKey *key, PairsGroupFn fn)
{
	PairsSortArg arg = {fn, 0};

	if (st->file == NULL)
		pairs_sort_and_call(st, key, st->nrows, fn);
	else
		pairs_split(st, key, st->file, st->ntotal, st->npartitions, 0, pairs_sort_part, &arg);
}

static void
pairs_check_ids(PairsState *st)
{
	PairsKey	key = {.by_id = true,.bits = 64};

	if (st->ids_ascending)
		return;
	st->checking_ids = true;
	pairs_group(st, &key, pairs_check_unique);
	st->checking_ids = false;
}

/* ---- collapsing identical fingerprints ---- */

/* the whole fingerprint as the key */
static const PairsKey pairs_fp_key = {.nsegs = 1,.mask = {~UINT64CONST(0)},.bits = SIMHASH_BITS};

/*
 * In memory: sorts the rows by fingerprint, moves one row per fingerprint
 * (with its smallest id) to the other buffer and writes the links of the
 * others over the sorted rows (a link is written at an index no greater than
 * that of the row being read).
 */
static void
pairs_collapse_memory(PairsState *st)
{
	int64		n = st->nrows;
	PairsRow   *sorted = pairs_sort(st, &pairs_fp_key, st->rows, st->scratch, n);
	PairsRow   *reps = sorted == st->rows ? st->scratch : st->rows;
	PairsLink  *links = (PairsLink *) sorted;
	int64		nreps = 0;
	int64		nlinks = 0;
	int64		start;
	int64		end;

	for (start = 0; start < n; start = end)
	{
		simhash		fp = sorted[start].fp;
		int64		rep = sorted[start].id;
		int64		i;

		CHECK_FOR_INTERRUPTS();
		for (end = start + 1; end < n && sorted[end].fp == fp; end++)
			rep = Min(rep, sorted[end].id);
		reps[nreps].fp = fp;
		reps[nreps].id = rep;
		nreps++;
		for (i = start; i < end; i++)
		{
			int64		id = sorted[i].id;

			if (id == rep)
				continue;
			links[nlinks].id = id;
			links[nlinks].rep = rep;
			nlinks++;
		}
	}

	/* give back what the links and the representatives do not use */
	if (nlinks > 0)
		st->links = repalloc_huge(links, nlinks * sizeof(PairsLink));
	else
		pfree(links);
	st->nlinks = nlinks;
	st->rows = pairs_resize(st, reps, Max(nreps, 1));
	st->rows_len = Max(nreps, 1);
	st->nrows = nreps;
	st->ntotal = nreps;
	st->scratch_len = Max(nreps, 1);
	st->scratch = pairs_resize(st, NULL, st->scratch_len);
}

typedef struct CollapseEntry
{
	simhash		fp;				/* hash key */
	int64		rep;			/* its smallest id */
} CollapseEntry;

typedef struct PairsCollapse
{
	MemoryContext cxt;			/* of the hash table of one partition */
	BufFile    *reps;			/* the representatives */
	int64		nreps;
} PairsCollapse;

/*
 * Spilled: the smallest id of each fingerprint of a partition in a hash
 * table (one entry per distinct fingerprint, however many rows share it),
 * then a second read writes the links.
 */
static void
pairs_collapse_part(PairsState *st, const PairsKey *key, BufFile *file, int64 n, void *arg)
{
	PairsCollapse *pc = (PairsCollapse *) arg;
	HASHCTL		ctl;
	HTAB	   *groups;
	HASH_SEQ_STATUS seq;
	CollapseEntry *entry;
	int			pass;

	ctl.keysize = sizeof(simhash);
	ctl.entrysize = sizeof(CollapseEntry);
	ctl.hcxt = pc->cxt;
	groups = hash_create("simhash identical fingerprints", 1024, &ctl,
						 HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	for (pass = 0; pass < 2; pass++)
	{
		int64		done;
		int64		chunk;

		pairs_file_rewind(st, file);
		for (done = 0; done < n; done += chunk)
		{
			int64		i;

			chunk = Min(n - done, st->scratch_len);
			pairs_file_read(st, file, st->scratch, chunk);
			for (i = 0; i < chunk; i++)
			{
				const PairsRow *row = &st->scratch[i];
				bool		found;

				CHECK_FOR_INTERRUPTS();
				if (pass == 0)
				{
					entry = hash_search(groups, &row->fp, HASH_ENTER, &found);
					if (!found || row->id < entry->rep)
						entry->rep = row->id;
				}
				else
				{
					entry = hash_search(groups, &row->fp, HASH_FIND, NULL);
					if (row->id != entry->rep)
					{
						PairsLink	link = {row->id, entry->rep};

						BufFileWrite(st->links_file, &link, sizeof(PairsLink));
						st->nlinks++;
					}
				}
			}
		}
	}
	hash_seq_init(&seq, groups);
	while ((entry = hash_seq_search(&seq)) != NULL)
	{
		PairsRow	row = {entry->fp, entry->rep};

		BufFileWrite(pc->reps, &row, sizeof(PairsRow));
		pc->nreps++;
	}
	MemoryContextReset(pc->cxt);
	pairs_progress(st);
}

/*
 * Spilled: partitions by a hash of the fingerprint, sized by the estimated
 * number of distinct fingerprints so that the hash table of one takes the
 * memory of rows[], which is freed meanwhile.  The representatives go to a
 * new spill file, or to memory when they fit.
 */
static void
pairs_collapse_spilled(PairsState *st)
{
	PairsCollapse pc;
	double		per_partition = (double) st->rows_len * sizeof(PairsRow) / PAIRS_COLLAPSE_ENTRY_BYTES;
	double		distinct = Min(estimateHyperLogLog(&st->distinct) * PAIRS_HLL_MARGIN,
							   (double) st->ntotal);

	pfree(st->rows);
	st->rows = NULL;
	pc.cxt = AllocSetContextCreate(st->cxt, "simhash identical fingerprints", ALLOCSET_DEFAULT_SIZES);
	pc.reps = pairs_file_create(st);
	pc.nreps = 0;
	st->links_file = pairs_file_create(st);
	elog(DEBUG1, "%s: about %.0f distinct fingerprints in %lld rows",
		 st->fname, distinct / PAIRS_HLL_MARGIN, (long long) st->ntotal);
	pairs_split(st, &pairs_fp_key, st->file, st->ntotal,
				(int) Max(ceil(distinct / per_partition), 1), 0, pairs_collapse_part, &pc);
	MemoryContextDelete(pc.cxt);
	BufFileClose(st->file);
	st->ntotal = pc.nreps;
	pairs_file_rewind(st, pc.reps);
	if (pc.nreps <= (int64) (st->budget / (2 * sizeof(PairsRow))))
	{
		/* few distinct fingerprints: in memory from now on */
		st->file = NULL;
		st->rows_len = Max(pc.nreps, 1);
		st->rows = pairs_resize(st, NULL, st->rows_len);
		st->nrows = pc.nreps;
		pairs_file_read(st, pc.reps, st->rows, pc.nreps);
		BufFileClose(pc.reps);
		st->scratch_len = st->rows_len;
		st->scratch = pairs_resize(st, st->scratch, st->scratch_len);
	}
	else
	{
		st->file = pc.reps;
		pairs_spill_layout(st);
	}
}

/* keeps one row per distinct fingerprint, the others as links */
static void
pairs_collapse(PairsState *st)
{
	st->collapsing = true;
	if (st->file == NULL)
		pairs_collapse_memory(st);
	else
		pairs_collapse_spilled(st);
	st->collapsing = false;
	st->collapsed = true;
}

/* ---- the tables ---- */

static double
binomial(int n, int k)
{
	double		r = 1.0;
	int			i;

	for (i = 1; i <= k; i++)
		r = r * (n - k + i) / i;
	return r;
}

/* chooses the number of blocks b, minimizing the estimated cost */
static void
pairs_plan(PairsState *st)
{
	double		n = (double) st->ntotal;
	double		passes = ceil((double) st->npartitions / Max(st->fanout, 1));
	double		row_cost = PAIRS_ROW_COST +
		(st->file != NULL ? (passes + 2) * PAIRS_FILE_COST : 0.0);
	double		best = -1.0;
	int			k = st->max_distance;
	int			b;
	int			i;

	for (b = Max(k, 1); b <= SIMHASH_BITS; b++)
	{
		int			m = b - k;
		double		tables = binomial(b, m);
		double		keybits = (double) SIMHASH_BITS * m / b;
		double		cost;

		if (tables > PAIRS_MAX_TABLES)
			break;
		cost = tables * (n * row_cost + n * n / 2.0 * exp2(-keybits));
		if (best < 0 || cost < best)
		{
			best = cost;
			st->nblocks = b;
			st->keyblocks = m;
			st->ntables = (int) tables;
		}
	}
	for (i = 0; i < st->nblocks; i++)
	{
		int			width = simhash_block_width(i, st->nblocks);

		st->block_shift[i] = SIMHASH_BITS - simhash_block_start(i, st->nblocks) - width;
		st->block_mask[i] = width == SIMHASH_BITS ? ~UINT64CONST(0) : (UINT64CONST(1) << width) - 1;
	}
	elog(DEBUG1, "%s: %lld rows, %d blocks, %d tables of %d blocks, %s",
		 st->fname, (long long) st->ntotal, st->nblocks, st->ntables, st->keyblocks,
		 st->file == NULL ? "in memory" :
		 psprintf("%d partitions, %d at a time", st->npartitions, st->fanout));
}

/* the key of the table made of blocks[0..keyblocks), in ascending order */
static void
pairs_table_key(PairsState *st, const int *blocks, PairsKey *key)
{
	int			m = st->keyblocks;
	uint64		chosen = 0;
	int			out;
	int			i;
	int			s;

	memset(key, 0, sizeof(PairsKey));
	for (i = 0; i < m;)
	{
		int			first = blocks[i];
		int			last = first;
		int			start = simhash_block_start(first, st->nblocks);
		int			width;

		/* merge a run of adjacent blocks into one segment */
		while (i + 1 < m && blocks[i + 1] == last + 1)
		{
			i++;
			last++;
		}
		i++;
		width = simhash_block_start(last, st->nblocks) +
			simhash_block_width(last, st->nblocks) - start;
		key->shift[key->nsegs] = SIMHASH_BITS - start - width;
		key->mask[key->nsegs] = width == SIMHASH_BITS ? ~UINT64CONST(0) : (UINT64CONST(1) << width) - 1;
		key->outshift[key->nsegs] = width;	/* width, for now */
		key->nsegs++;
		key->bits += width;
	}
	/* the first segment is the most significant */
	out = key->bits;
	for (s = 0; s < key->nsegs; s++)
	{
		out -= key->outshift[s];
		key->outshift[s] = out;
	}
	for (i = 0; i < m; i++)
		chosen |= UINT64CONST(1) << blocks[i];
	key->earlier = m > 0 ? ((UINT64CONST(1) << blocks[m - 1]) - 1) & ~chosen : 0;
}

/* is this table the first one whose blocks all agree, for a pair at xor x? */
static inline bool
pairs_first_table(const PairsState *st, const PairsKey *key, uint64 x)
{
	uint64		e;

	for (e = key->earlier; e != 0; e &= e - 1)
	{
		int			blk = pg_rightmost_one_pos64(e);

		if (((x >> st->block_shift[blk]) & st->block_mask[blk]) == 0)
			return false;
	}
	return true;
}

/* compares every pair in a run of n rows of equal key */
static void
pairs_compare_run(PairsState *st, const PairsKey *key, const PairsRow *run, int64 n)
{
	int64		i;
	int64		j;

	for (i = 0; i < n - 1; i++)
	{
		CHECK_FOR_INTERRUPTS();
		for (j = i + 1; j < n; j++)
		{
			uint64		x = run[i].fp ^ run[j].fp;
			int			d = pg_popcount64(x);

			if (d > st->max_distance || !pairs_first_table(st, key, x))
				continue;
			if (run[i].id < run[j].id)
				st->emit(run[i].id, run[j].id, d, st->emit_arg);
			else
				st->emit(run[j].id, run[i].id, d, st->emit_arg);
			st->npairs++;
		}
		st->comparisons += n - 1 - i;
		if (st->comparisons >= PAIRS_COMPARISONS_PER_CLOCK)
		{
			st->comparisons = 0;
			pairs_progress(st);
		}
	}
}

static void
pairs_scan_runs(PairsState *st, const PairsKey *keyp, const PairsRow *rows, int64 n)
{
	const PairsKey key_copy = *keyp;
	const PairsKey *key = &key_copy;
	int64		start;
	int64		end;

	for (start = 0; start < n; start = end)
	{
		uint64		k = pairs_key(key, &rows[start]);

		CHECK_FOR_INTERRUPTS();
		for (end = start + 1; end < n && pairs_key(key, &rows[end]) == k; end++)
			;
		if (end - start > 1)
			pairs_compare_run(st, key, rows + start, end - start);
	}
}

/* calls emit(id_a, id_b, distance, arg) once for every pair within k bits */
static void
pairs_enumerate(PairsState *st, PairsCallback emit, void *arg)
{
	int			blocks[SIMHASH_BITS];
	int			m = st->keyblocks;
	int			i;

	st->emit = emit;
	st->emit_arg = arg;
	if (st->ntotal < 2)
		return;

	/* the m-subsets of the blocks, in lexicographic order */
	for (i = 0; i < m; i++)
		blocks[i] = i;
	for (st->table = 1;; st->table++)
	{
		PairsKey	key;

		pairs_table_key(st, blocks, &key);
		pairs_group(st, &key, pairs_scan_runs);

		for (i = m - 1; i >= 0 && blocks[i] == st->nblocks - m + i; i--)
			;
		if (i < 0)
			break;
		blocks[i]++;
		for (i++; i < m; i++)
			blocks[i] = blocks[i - 1] + 1;
	}
}

/*
 * calls fn(id, rep, arg) for every row read from the query: for the
 * representatives (rep = id), then for the links
 */
static void
pairs_for_each_row(PairsState *st, PairsRowCallback fn, void *arg)
{
	int64		done;
	int64		chunk;
	int64		i;

	if (st->file == NULL)
	{
		for (i = 0; i < st->nrows; i++)
		{
			CHECK_FOR_INTERRUPTS();
			fn(st->rows[i].id, st->rows[i].id, arg);
		}
	}
	else
	{
		pairs_file_rewind(st, st->file);
		for (done = 0; done < st->ntotal; done += chunk)
		{
			chunk = Min(st->ntotal - done, st->scratch_len);
			pairs_file_read(st, st->file, st->scratch, chunk);
			for (i = 0; i < chunk; i++)
			{
				CHECK_FOR_INTERRUPTS();
				fn(st->scratch[i].id, st->scratch[i].id, arg);
			}
		}
	}

	if (st->links_file == NULL)
	{
		for (i = 0; i < st->nlinks; i++)
		{
			CHECK_FOR_INTERRUPTS();
			fn(st->links[i].id, st->links[i].rep, arg);
		}
		return;
	}
	pairs_file_rewind(st, st->links_file);
	for (done = 0; done < st->nlinks; done += chunk)
	{
		PairsLink  *links = (PairsLink *) st->scratch;

		chunk = Min(st->nlinks - done, st->scratch_len);
		pairs_file_read(st, st->links_file, links, chunk);
		for (i = 0; i < chunk; i++)
		{
			CHECK_FOR_INTERRUPTS();
			fn(links[i].id, links[i].rep, arg);
		}
	}
}

/*
 * Enters id in a per-id table of simhash_clusters or simhash_dedup, within
 * work_mem * hash_mem_multiplier.
 */
static void *
pairs_map_enter(PairsState *st, HTAB *map, int64 id, bool *found)
{
	void	   *entry = hash_search(map, &id, HASH_ENTER, found);

	if (!*found && MemoryContextMemAllocated(st->map_cxt, true) > st->map_limit)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("%s needs more than work_mem * hash_mem_multiplier for its table of fingerprints with near-duplicates",
						st->fname),
				 errdetail("The table holds %ld of the %lld distinct fingerprints in %zu kB.",
						   hash_get_num_entries(map), (long long) st->ntotal,
						   st->map_limit / 1024),
				 errhint("Raise work_mem or hash_mem_multiplier for this query.")));
	return entry;
}

static HTAB *
pairs_id_map(PairsState *st, const char *name, Size entrysize)
{
	HASHCTL		ctl;

	st->map_cxt = AllocSetContextCreate(st->cxt, "simhash per-id table", ALLOCSET_DEFAULT_SIZES);
	st->map_limit = get_hash_memory_limit();
	ctl.keysize = sizeof(int64);
	ctl.entrysize = entrysize;
	ctl.hcxt = st->map_cxt;
	return hash_create(name, 1024, &ctl, HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
}

/* ---- entry and exit ---- */

/*
 * runs the query, checks the ids, collapses identical fingerprints when asked
 * and plans the tables
 */
static void
pairs_begin(PairsState *st, FunctionCallInfo fcinfo, const char *fname, bool collapse)
{
	char	   *query = text_to_cstring(PG_GETARG_TEXT_PP(0));
	int32		k = PG_GETARG_INT32(1);

	simhash_check_distance(k);
	InitMaterializedSRF(fcinfo, 0);

	memset(st, 0, sizeof(PairsState));
	st->fname = fname;
	st->collapse = collapse;
	st->fn_oid = fcinfo->flinfo->fn_oid;
	st->max_distance = k;
	st->owner = CurrentResourceOwner;
	st->cxt = AllocSetContextCreate(CurrentMemoryContext, "simhash pairs", ALLOCSET_DEFAULT_SIZES);
	st->budget = (Size) work_mem * 1024;
	st->next_notice = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), PAIRS_NOTICE_INTERVAL_MS);

	pairs_read_query(st, query);
	if (st->file == NULL)
	{
		st->scratch_len = st->nrows;
		st->scratch = pairs_resize(st, NULL, Max(st->scratch_len, 1));
	}
	pairs_check_ids(st);
	if (collapse)
		pairs_collapse(st);
	pairs_plan(st);
}

static void
pairs_end(PairsState *st)
{
	if (st->file != NULL)
		BufFileClose(st->file);
	if (st->links_file != NULL)
		BufFileClose(st->links_file);
	MemoryContextDelete(st->cxt);
}

/* ---- simhash_pairs ---- */

static void
pairs_put_pair(int64 id_a, int64 id_b, int distance, void *arg)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) arg;
	Datum		values[3];
	bool		nulls[3] = {false, false, false};

	values[0] = Int64GetDatum(id_a);
	values[1] = Int64GetDatum(id_b);
	values[2] = Int32GetDatum(distance);
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
}

PG_FUNCTION_INFO_V1(simhash_pairs);
Datum
simhash_pairs(PG_FUNCTION_ARGS)
{
	PairsState	st;

	pairs_begin(&st, fcinfo, "simhash_pairs", false);
	pairs_enumerate(&st, pairs_put_pair, fcinfo->resultinfo);
	pairs_end(&st);
	return (Datum) 0;
}

/*
 * ---- simhash_clusters: union-find over the representatives found in pairs;
 * a link belongs to the cluster of its representative ----
 */

typedef struct ClusterNode
{
	int64		id;				/* hash key */
	int64		parent;			/* the root is the smallest id of its set */
} ClusterNode;

typedef struct ClustersState
{
	PairsState *st;
	HTAB	   *nodes;
	ReturnSetInfo *rsinfo;
} ClustersState;

static int64
cluster_root(HTAB *nodes, int64 id)
{
	int64		root = id;
	ClusterNode *node;

	while ((node = hash_search(nodes, &root, HASH_FIND, NULL)) != NULL &&
		   node->parent != root)
		root = node->parent;
	/* path compression */
	while (id != root)
	{
		node = hash_search(nodes, &id, HASH_FIND, NULL);
		id = node->parent;
		node->parent = root;
	}
	return root;
}

static void
cluster_union(int64 id_a, int64 id_b, int distance, void *arg)
{
	ClustersState *cs = (ClustersState *) arg;
	int64		ids[2] = {id_a, id_b};
	int64		root_a;
	int64		root_b;
	int			i;

	for (i = 0; i < 2; i++)
	{
		bool		found;
		ClusterNode *node = pairs_map_enter(cs->st, cs->nodes, ids[i], &found);

		if (!found)
			node->parent = ids[i];
	}
	root_a = cluster_root(cs->nodes, id_a);
	root_b = cluster_root(cs->nodes, id_b);
	if (root_a != root_b)
	{
		int64		child = Max(root_a, root_b);
		ClusterNode *node = hash_search(cs->nodes, &child, HASH_FIND, NULL);

		node->parent = Min(root_a, root_b);
	}
}

static void
cluster_put_row(int64 id, int64 rep, void *arg)
{
	ClustersState *cs = (ClustersState *) arg;
	Datum		values[2];
	bool		nulls[2] = {false, false};

	values[0] = Int64GetDatum(id);
	values[1] = Int64GetDatum(cluster_root(cs->nodes, rep));
	tuplestore_putvalues(cs->rsinfo->setResult, cs->rsinfo->setDesc, values, nulls);
}

PG_FUNCTION_INFO_V1(simhash_clusters);
Datum
simhash_clusters(PG_FUNCTION_ARGS)
{
	PairsState	st;
	ClustersState cs;

	pairs_begin(&st, fcinfo, "simhash_clusters", true);
	cs.st = &st;
	cs.nodes = pairs_id_map(&st, "simhash_clusters nodes", sizeof(ClusterNode));
	cs.rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	pairs_enumerate(&st, cluster_union, &cs);
	pairs_for_each_row(&st, cluster_put_row, &cs);
	pairs_end(&st);
	return (Datum) 0;
}

/*
 * ---- simhash_dedup: greedy over the pairs of representatives sorted by
 * (id_b, id_a) ----
 *
 * A link has the fingerprint of its representative, a smaller id: it is
 * dropped as a duplicate of the representative when that is kept, else of
 * the same kept id as the representative (that is the smallest kept id within
 * k bits of their fingerprint: a smaller one would have dropped the
 * representative, and kept ids between the two are larger).
 */

typedef struct DedupEntry
{
	int64		id;				/* hash key: a dropped representative */
	int64		duplicate_of;	/* the smallest kept id within k bits */
} DedupEntry;

typedef struct DedupState
{
	PairsState *st;
	Tuplesortstate *sort;
	TupleTableSlot *slot;
	HTAB	   *dropped;
	ReturnSetInfo *rsinfo;
} DedupState;

static void
dedup_put_pair(int64 id_a, int64 id_b, int distance, void *arg)
{
	DedupState *ds = (DedupState *) arg;
	TupleTableSlot *slot = ds->slot;

	ExecClearTuple(slot);
	slot->tts_values[0] = Int64GetDatum(id_b);
	slot->tts_values[1] = Int64GetDatum(id_a);
	slot->tts_isnull[0] = false;
	slot->tts_isnull[1] = false;
	ExecStoreVirtualTuple(slot);
	tuplesort_puttupleslot(ds->sort, slot);
}

/*
 * Ids are decided in ascending order: id_b is dropped as a duplicate of the
 * smallest id_a that is kept.  An id_a < id_b was decided before id_b, since
 * its own pairs (where it is id_b) sort first.
 */
static void
dedup_decide(DedupState *ds)
{
	bool		isnull;

	tuplesort_performsort(ds->sort);
	while (tuplesort_gettupleslot(ds->sort, true, false, ds->slot, NULL))
	{
		int64		id_b = DatumGetInt64(slot_getattr(ds->slot, 1, &isnull));
		int64		id_a = DatumGetInt64(slot_getattr(ds->slot, 2, &isnull));
		DedupEntry *entry;
		bool		found;

		CHECK_FOR_INTERRUPTS();
		if (hash_search(ds->dropped, &id_b, HASH_FIND, NULL) != NULL ||
			hash_search(ds->dropped, &id_a, HASH_FIND, NULL) != NULL)
			continue;
		entry = pairs_map_enter(ds->st, ds->dropped, id_b, &found);
		entry->duplicate_of = id_a;
	}
	tuplesort_end(ds->sort);
}

static void
dedup_put_row(int64 id, int64 rep, void *arg)
{
	DedupState *ds = (DedupState *) arg;
	DedupEntry *entry = hash_search(ds->dropped, &rep, HASH_FIND, NULL);
	Datum		values[2];
	bool		nulls[2] = {false, entry == NULL && id == rep};

	values[0] = Int64GetDatum(id);
	values[1] = Int64GetDatum(entry != NULL ? entry->duplicate_of : rep);
	tuplestore_putvalues(ds->rsinfo->setResult, ds->rsinfo->setDesc, values, nulls);
}

PG_FUNCTION_INFO_V1(simhash_dedup);
Datum
simhash_dedup(PG_FUNCTION_ARGS)
{
	PairsState	st;
	DedupState	ds;
	TupleDesc	desc;
	AttrNumber	columns[2] = {1, 2};
	Oid			operators[2] = {Int8LessOperator, Int8LessOperator};
	Oid			collations[2] = {InvalidOid, InvalidOid};
	bool		nulls_first[2] = {false, false};
	MemoryContext old;

	pairs_begin(&st, fcinfo, "simhash_dedup", true);

	old = MemoryContextSwitchTo(st.cxt);
	desc = CreateTemplateTupleDesc(2);
	TupleDescInitEntry(desc, 1, "id_b", INT8OID, -1, 0);
	TupleDescInitEntry(desc, 2, "id_a", INT8OID, -1, 0);
	ds.slot = MakeSingleTupleTableSlot(desc, &TTSOpsMinimalTuple);
	ds.sort = tuplesort_begin_heap(desc, 2, columns, operators, collations, nulls_first,
								   work_mem, NULL, TUPLESORT_NONE);
	MemoryContextSwitchTo(old);
	ds.st = &st;
	ds.dropped = pairs_id_map(&st, "simhash_dedup dropped ids", sizeof(DedupEntry));
	ds.rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;

	pairs_enumerate(&st, dedup_put_pair, &ds);
	dedup_decide(&ds);
	pairs_for_each_row(&st, dedup_put_row, &ds);
	ExecDropSingleTupleTableSlot(ds.slot);
	pairs_end(&st);
	return (Datum) 0;
}
