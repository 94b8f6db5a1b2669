/*
 * hamming_build.c
 *	  Building a "hamming" index.  One pass over the table collects the
 *	  entries in memory (24 bytes per row, within maintenance_work_mem); they
 *	  are sorted four ways and written as the probe tables with their
 *	  directories, then the pages of NULL fingerprints, and the whole index
 *	  is WAL-logged once at the end.  When the entries outgrow
 *	  maintenance_work_mem the build falls back to tail pages only (filled
 *	  one page of each kind at a time, as inserts fill them), with a notice:
 *	  that index answers every query by a pass.  So does an index built
 *	  WITH (probe_tables = off), 14 bytes a row.
 */
#include "hamming.h"

#include "access/tableam.h"
#include "access/xloginsert.h"
#include "commands/progress.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "utils/memutils.h"

#define HAMMING_PHASE_SCAN		2	/* subphases after PROGRESS_CREATEIDX_SUBPHASE_INITIALIZE */
#define HAMMING_PHASE_SORT		3
#define HAMMING_PHASE_WRITE		4

typedef struct HammingBuildState
{
	Relation	index;
	/* collecting: entries for the probe tables, TIDs of NULL fingerprints */
	bool		collecting;
	Size		budget;			/* bytes of maintenance_work_mem */
	HammingEntry *entries;
	Size		nentries;
	Size		maxentries;
	ItemPointerData *nulls;
	Size		nnulls;
	Size		maxnulls;
	/* streaming (over budget): the page being filled, per kind */
	PGAlignedBlock pages[2];
	BlockNumber last_written[2];
	double		indtuples;
} HammingBuildState;

/* append a copy of page behind the index's last page */
static BlockNumber
write_page(Relation index, Page page)
{
	Buffer		buffer = hamming_new_buffer(index);
	BlockNumber blkno = BufferGetBlockNumber(buffer);

	memcpy(BufferGetPage(buffer), page, BLCKSZ);
	MarkBufferDirty(buffer);
	UnlockReleaseBuffer(buffer);
	return blkno;
}

static void
flush_page(HammingBuildState *state, int target)
{
	Page		page = state->pages[target].data;

	if (HammingPageGetOpaque(page)->nentries == 0)
		return;
	state->last_written[target] = write_page(state->index, page);
	hamming_init_page(page, target == HAMMING_TARGET_DATA ? HAMMING_DATA : HAMMING_NULLS);
}

static void
stream_entry(HammingBuildState *state, int target, simhash fp, ItemPointer tid)
{
	Page		page = state->pages[target].data;
	HammingPageOpaque opaque = HammingPageGetOpaque(page);

	if (opaque->nentries >= HAMMING_PAGE_CAPACITY)
	{
		flush_page(state, target);
		opaque = HammingPageGetOpaque(page);
	}
	HammingPageFingerprints(page)[opaque->nentries] = fp;
	HammingPageTids(page)[opaque->nentries] = *tid;
	opaque->nentries++;
}

/* over budget: what was collected goes to tail pages, and so will the rest */
static void
stop_collecting(HammingBuildState *state)
{
	Size		i;

	ereport(NOTICE,
			(errmsg("hamming index \"%s\" is built without probe tables",
					RelationGetRelationName(state->index)),
			 errdetail("Its entries need more than maintenance_work_mem (%d kB) at %zu bytes per row.",
					   maintenance_work_mem, HAMMING_ROW_BYTES),
			 errhint("Every query will read the whole index. Increase maintenance_work_mem and REINDEX to build them.")));
	for (i = 0; i < state->nentries; i++)
		stream_entry(state, HAMMING_TARGET_DATA, state->entries[i].fp, &state->entries[i].tid);
	for (i = 0; i < state->nnulls; i++)
		stream_entry(state, HAMMING_TARGET_NULLS, 0, &state->nulls[i]);
	pfree(state->entries);
	pfree(state->nulls);
	state->entries = NULL;
	state->nulls = NULL;
	state->collecting = false;
}

/* room for one more entry (or NULL) within the budget? grows the array */
static bool
make_room(HammingBuildState *state, bool null)
{
	Size		used = state->maxentries * HAMMING_ROW_BYTES + state->maxnulls * sizeof(ItemPointerData);
	Size	   *n = null ? &state->nnulls : &state->nentries;
	Size	   *max = null ? &state->maxnulls : &state->maxentries;
	Size		each = null ? sizeof(ItemPointerData) : HAMMING_ROW_BYTES;
	Size		grow;

	if (*n < *max)
		return true;
	grow = Min(*max, (state->budget - Min(used, state->budget)) / each);
	grow = Min(grow, MaxAllocHugeSize / each - *max);
	if (!null)
		grow = Min(grow, (Size) PG_UINT32_MAX - 1 - *max);	/* entry numbers are 32-bit */
	if (grow == 0)
		return false;
	*max += grow;
	if (null)
		state->nulls = repalloc_huge(state->nulls, *max * sizeof(ItemPointerData));
	else
		state->entries = repalloc_huge(state->entries, *max * sizeof(HammingEntry));
	return true;
}

static void
build_callback(Relation index, ItemPointer tid, Datum *values, bool *isnull,
			   bool tupleIsAlive, void *arg)
{
	HammingBuildState *state = (HammingBuildState *) arg;
	simhash		fp = isnull[0] ? 0 : DatumGetSimhash(values[0]);

	state->indtuples += 1;
	if (state->collecting && !make_room(state, isnull[0]))
		stop_collecting(state);
	if (!state->collecting)
		stream_entry(state, isnull[0] ? HAMMING_TARGET_NULLS : HAMMING_TARGET_DATA, fp, tid);
	else if (isnull[0])
		state->nulls[state->nnulls++] = *tid;
	else
	{
		state->entries[state->nentries].fp = fp;
		state->entries[state->nentries++].tid = *tid;
	}
}

/* sort_entries(): by fingerprint, then TID (the comparison inlined) */
#define ST_SORT sort_entries
#define ST_ELEMENT_TYPE HammingEntry
#define ST_COMPARE(a, b) hamming_entry_cmp(a, b)
#define ST_SCOPE static
#define ST_DEFINE
#include "lib/sort_template.h"

/* sort_keys(): 64-bit keys in ascending order */
#define ST_SORT sort_keys
#define ST_ELEMENT_TYPE uint64
#define ST_COMPARE(a, b) (*(a) < *(b) ? -1 : (*(a) > *(b) ? 1 : 0))
#define ST_SCOPE static
#define ST_DEFINE
#include "lib/sort_template.h"

/*
 * The n fingerprints of entries rotated left by rotation bits, sorted, into
 * keys: placed by their top 16 bits (counting each prefix once, then each
 * key straight to its prefix's range), then each range sorted; at n rows a
 * range holds n / 65536 keys, so this costs a fraction of a whole sort and
 * needs no memory beyond keys.
 */
static void
rotated_sorted_keys(const HammingEntry *entries, Size n, int rotation, uint64 *keys)
{
	const int	prefix_bits = 16;
	Size	   *start = palloc0(((Size) 1 << prefix_bits) * sizeof(Size));
	Size		i;
	Size		b;
	Size		sum = 0;

	for (i = 0; i < n; i++)
		start[hamming_rotate_left(entries[i].fp, rotation) >> (64 - prefix_bits)]++;
	for (b = 0; b < ((Size) 1 << prefix_bits); b++)
	{
		Size		count = start[b];

		start[b] = sum;
		sum += count;
	}
	for (i = 0; i < n; i++)
	{
		uint64		key = hamming_rotate_left(entries[i].fp, rotation);

		keys[start[key >> (64 - prefix_bits)]++] = key;
	}
	/* start[b] is now the end of range b, and the beginning of range b + 1 */
	for (b = 0; b < ((Size) 1 << prefix_bits); b++)
	{
		Size		begin = b == 0 ? 0 : start[b - 1];

		if (start[b] - begin > 1)
			sort_keys(keys + begin, start[b] - begin);
		if (b % 1024 == 0)
			CHECK_FOR_INTERRUPTS();
	}
	pfree(start);
}

void
hamming_sort_keys(uint64 *keys, Size n)
{
	sort_keys(keys, n);
}

void
hamming_sort_entries(HammingEntry *entries, Size n)
{
	sort_entries(entries, n);
}

static int
dir_bits_for(Size n)
{
	int			dir_bits = 1;

	while (dir_bits < HAMMING_MAX_DIR_BITS && ((Size) HAMMING_BUCKET_ROWS << dir_bits) < n)
		dir_bits++;
	return dir_bits;
}

/* pages of probe tables of n entries, with nnulls NULL TIDs after table 0 */
Size
hamming_table_pages(Size n, Size nnulls)
{
	Size		dir_pages = (((Size) 1 << dir_bits_for(n)) + 1 + HAMMING_DIRECTORY_CAPACITY - 1) /
		HAMMING_DIRECTORY_CAPACITY;

	return (n + HAMMING_PAGE_CAPACITY - 1) / HAMMING_PAGE_CAPACITY +
		(nnulls + HAMMING_PAGE_CAPACITY - 1) / HAMMING_PAGE_CAPACITY +
		(HAMMING_NTABLES - 1) * ((n + HAMMING_KEYS_CAPACITY - 1) / HAMMING_KEYS_CAPACITY) +
		HAMMING_NTABLES * dir_pages;
}

/* hand a full page to the sink, and begin the next of its kind */
static BlockNumber
sink_page(HammingPageSink sink, void *arg, Page page, uint16 kind, uint16 gen)
{
	BlockNumber blkno;

	HammingPageGetOpaque(page)->gen = gen;
	blkno = sink(arg, page);
	CHECK_FOR_INTERRUPTS();
	hamming_init_page(page, kind);
	return blkno;
}

/*
 * A probe table written entry by entry, in order: its pages go to the sink
 * as they fill, and its directory (for each bucket of dir_bits prefix bits,
 * the number of the first entry whose prefix is that or more) is counted as
 * the entries come.
 */
typedef struct TableWriter
{
	HammingPageSink sink;
	void	   *arg;
	uint16		gen;
	uint16		kind;
	int			table;
	int			dir_bits;
	uint32	   *dir;			/* 2^dir_bits + 1 entries */
	uint32		next_bucket;	/* the buckets before it are counted */
	Size		n;				/* entries so far */
	uint64		last;			/* the last key */
	BlockNumber first;
	PGAlignedBlock block;
} TableWriter;

static void
writer_start(TableWriter *w, int table, uint16 kind)
{
	w->table = table;
	w->kind = kind;
	w->n = 0;
	w->next_bucket = 0;
	w->first = InvalidBlockNumber;
	hamming_init_page(w->block.data, kind);
}

/* key is the next in order: counted in the directory */
static inline void
writer_count(TableWriter *w, uint64 key)
{
	uint32		bucket = (uint32) (key >> (64 - w->dir_bits));

	if (w->n > 0 && key < w->last)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("probe table %d of a hamming index is not in order", w->table),
				 errhint("REINDEX the index.")));
	w->last = key;
	while (w->next_bucket <= bucket)
		w->dir[w->next_bucket++] = (uint32) w->n;
	w->n++;
}

/* the page in hand, if it has entries, to the sink */
static void
writer_flush(TableWriter *w)
{
	Page		page = w->block.data;
	BlockNumber blkno;

	if (HammingPageGetOpaque(page)->nentries == 0)
		return;
	blkno = sink_page(w->sink, w->arg, page, w->kind, w->gen);
	if (w->first == InvalidBlockNumber)
		w->first = blkno;
}

static void
writer_entry(TableWriter *w, const HammingEntry *entry)
{
	Page		page = w->block.data;
	HammingPageOpaque opaque = HammingPageGetOpaque(page);

	writer_count(w, entry->fp);
	HammingPageFingerprints(page)[opaque->nentries] = entry->fp;
	HammingPageTids(page)[opaque->nentries++] = entry->tid;
	if (opaque->nentries == HAMMING_PAGE_CAPACITY)
		writer_flush(w);
}

static void
writer_key(TableWriter *w, uint64 key)
{
	Page		page = w->block.data;
	HammingPageOpaque opaque = HammingPageGetOpaque(page);

	writer_count(w, key);
	HammingPageKeys(page)[opaque->nentries++] = key;
	if (opaque->nentries == HAMMING_KEYS_CAPACITY)
		writer_flush(w);
}

/* the table's last page, once it has its n entries; returns its first page */
static BlockNumber
writer_finish(TableWriter *w, Size n)
{
	if (w->n != n)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("probe table %d of a hamming index has %zu entries, not %zu", w->table, w->n, n),
				 errhint("REINDEX the index.")));
	writer_flush(w);
	while (w->next_bucket <= ((uint32) 1 << w->dir_bits))
		w->dir[w->next_bucket++] = (uint32) w->n;
	return w->first;
}

/* the directory counted, as pages; returns the first */
static BlockNumber
writer_directory(TableWriter *w)
{
	PGAlignedBlock block;
	Page		page = block.data;
	uint32		nentries = ((uint32) 1 << w->dir_bits) + 1;
	uint32		i;
	BlockNumber first = InvalidBlockNumber;

	hamming_init_page(page, HAMMING_DIRECTORY);
	for (i = 0; i < nentries; i++)
	{
		HammingPageOpaque opaque = HammingPageGetOpaque(page);

		HammingPageDirectory(page)[opaque->nentries++] = w->dir[i];
		if (opaque->nentries == HAMMING_DIRECTORY_CAPACITY || i == nentries - 1)
		{
			BlockNumber blkno = sink_page(w->sink, w->arg, page, HAMMING_DIRECTORY, w->gen);

			if (first == InvalidBlockNumber)
				first = blkno;
		}
	}
	return first;
}

/*
 * Write the probe tables of n entries that source gives in order, through
 * sink, in this order: table 0, the pages of nnulls NULL TIDs (a merge's;
 * a build puts them in the tail), then each table's directory and tables
 * 1..3, every page stamped with gen.  meta gets their description.  A
 * source that gives entries or keys out of order, or not n of them, is an
 * error (a damaged index a merge reads).
 */
void
hamming_write_streams(Size n, const HammingTableSource *source, const ItemPointerData *nulls, Size nnulls,
					  uint16 gen, HammingPageSink sink, void *arg, HammingMetaPageData *meta)
{
	TableWriter *w = palloc(sizeof(TableWriter));
	PGAlignedBlock block;
	Page		page = block.data;
	HammingEntry entry;
	uint64		key;
	Size		i;
	int			j;

	w->sink = sink;
	w->arg = arg;
	w->gen = gen;
	w->dir_bits = dir_bits_for(n);
	w->dir = palloc((((Size) 1 << w->dir_bits) + 1) * sizeof(uint32));
	meta->ntables = HAMMING_NTABLES;
	meta->dir_bits = w->dir_bits;
	meta->nsorted = (uint32) n;

	/* table 0: fingerprints and TIDs */
	writer_start(w, 0, HAMMING_DATA | HAMMING_SORTED);
	while (source->next_entry(source->arg, &entry))
		writer_entry(w, &entry);
	meta->table_start[0] = writer_finish(w, n);

	/* the NULL TIDs */
	hamming_init_page(page, HAMMING_NULLS | HAMMING_SORTED);
	meta->null_pages = 0;
	for (i = 0; i < nnulls; i++)
	{
		HammingPageOpaque opaque = HammingPageGetOpaque(page);

		HammingPageFingerprints(page)[opaque->nentries] = 0;
		HammingPageTids(page)[opaque->nentries++] = nulls[i];
		if (opaque->nentries == HAMMING_PAGE_CAPACITY || i == nnulls - 1)
		{
			BlockNumber blkno = sink_page(sink, arg, page, HAMMING_NULLS | HAMMING_SORTED, gen);

			if (meta->table_start[0] == InvalidBlockNumber)
				meta->table_start[0] = blkno;	/* a table 0 of no entries */
			meta->null_pages++;
		}
	}
	meta->dir_start[0] = writer_directory(w);

	/* tables 1..3: the fingerprints rotated left by 16 j bits, sorted */
	for (j = 1; j < HAMMING_NTABLES; j++)
	{
		writer_start(w, j, HAMMING_KEYS);
		while (source->next_key(source->arg, j, &key))
			writer_key(w, key);
		meta->table_start[j] = writer_finish(w, n);
		meta->dir_start[j] = writer_directory(w);
	}
	pfree(w->dir);
	pfree(w);
}

/* the source of entries held in memory: sorted, and their keys sorted a table at a time */
typedef struct ArraySource
{
	HammingEntry *entries;
	Size		n;
	Size		next;			/* table 0's next entry */
	uint64	   *keys;			/* the keys of table key_table */
	int			key_table;
	Size		next_key;
} ArraySource;

static bool
array_next_entry(void *arg, HammingEntry *entry)
{
	ArraySource *src = (ArraySource *) arg;

	if (src->next >= src->n)
		return false;
	*entry = src->entries[src->next++];
	return true;
}

static bool
array_next_key(void *arg, int table, uint64 *key)
{
	ArraySource *src = (ArraySource *) arg;

	if (src->key_table != table)
	{
		pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE, HAMMING_PHASE_SORT);
		rotated_sorted_keys(src->entries, src->n, table * HAMMING_BLOCK_BITS, src->keys);
		pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE, HAMMING_PHASE_WRITE);
		src->key_table = table;
		src->next_key = 0;
	}
	if (src->next_key >= src->n)
		return false;
	*key = src->keys[src->next_key++];
	return true;
}

/* Sort n entries four ways and write them as the probe tables (hamming_write_streams) */
void
hamming_write_tables(HammingEntry *entries, Size n, const ItemPointerData *nulls, Size nnulls,
					 uint16 gen, HammingPageSink sink, void *arg, HammingMetaPageData *meta)
{
	ArraySource src;
	HammingTableSource source = {array_next_entry, array_next_key, &src};

	src.entries = entries;
	src.n = n;
	src.next = 0;
	src.keys = palloc_extended(Max(n, 1) * sizeof(uint64), MCXT_ALLOC_HUGE);
	src.key_table = 0;
	pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE, HAMMING_PHASE_SORT);
	sort_entries(entries, n);
	pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE, HAMMING_PHASE_WRITE);
	hamming_write_streams(n, &source, nulls, nnulls, gen, sink, arg, meta);
	pfree(src.keys);
}

/* the build's sink: behind the index's last page */
static BlockNumber
build_sink(void *arg, Page page)
{
	return write_page((Relation) arg, page);
}

IndexBuildResult *
hamming_build(Relation heap, Relation index, IndexInfo *indexInfo)
{
	HammingBuildState *state;
	IndexBuildResult *result;
	double		reltuples;
	Buffer		metabuf;
	HammingMetaPageData *meta;
	int			target;

	if (RelationGetNumberOfBlocks(index) != 0)
		elog(ERROR, "index \"%s\" already contains data", RelationGetRelationName(index));

	/* the metapage first, so that it is block 0 */
	metabuf = hamming_new_buffer(index);
	Assert(BufferGetBlockNumber(metabuf) == HAMMING_METAPAGE_BLKNO);
	hamming_init_metapage(BufferGetPage(metabuf));
	MarkBufferDirty(metabuf);
	UnlockReleaseBuffer(metabuf);

	state = palloc0(sizeof(HammingBuildState));
	state->index = index;
	state->collecting = index->rd_options == NULL ||
		((HammingOptions *) index->rd_options)->probe_tables;
	state->budget = (Size) maintenance_work_mem * 1024;
	state->maxentries = 1024;
	state->entries = palloc(state->maxentries * sizeof(HammingEntry));
	state->maxnulls = 64;
	state->nulls = palloc(state->maxnulls * sizeof(ItemPointerData));
	hamming_init_page(state->pages[HAMMING_TARGET_DATA].data, HAMMING_DATA);
	hamming_init_page(state->pages[HAMMING_TARGET_NULLS].data, HAMMING_NULLS);
	state->last_written[HAMMING_TARGET_DATA] = InvalidBlockNumber;
	state->last_written[HAMMING_TARGET_NULLS] = InvalidBlockNumber;

	pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE, HAMMING_PHASE_SCAN);
	reltuples = table_index_build_scan(heap, index, indexInfo, true, true,
									   build_callback, (void *) state, NULL);

	meta = palloc0(sizeof(HammingMetaPageData));
	if (state->collecting)
	{
		Size		i;

		if (state->nentries > 0)
		{
			hamming_write_tables(state->entries, state->nentries, NULL, 0, 0, build_sink, index, meta);
			meta->tail_start = RelationGetNumberOfBlocks(index);
		}
		for (i = 0; i < state->nnulls; i++)
			stream_entry(state, HAMMING_TARGET_NULLS, 0, &state->nulls[i]);
	}
	for (target = 0; target < 2; target++)
		flush_page(state, target);

	/* new rows go to the last tail page of each kind */
	metabuf = ReadBuffer(index, HAMMING_METAPAGE_BLKNO);
	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	{
		HammingMetaPageData *m = HammingPageGetMeta(BufferGetPage(metabuf));

		for (target = 0; target < 2; target++)
			m->insert_page[target] = state->last_written[target];
		if (meta->ntables > 0)
		{
			m->ntables = meta->ntables;
			m->dir_bits = meta->dir_bits;
			m->nsorted = meta->nsorted;
			memcpy(m->table_start, meta->table_start, sizeof(m->table_start));
			memcpy(m->dir_start, meta->dir_start, sizeof(m->dir_start));
			m->tail_start = meta->tail_start;
		}
	}
	MarkBufferDirty(metabuf);
	UnlockReleaseBuffer(metabuf);

	if (RelationNeedsWAL(index))
		log_newpage_range(index, MAIN_FORKNUM, 0, RelationGetNumberOfBlocks(index), true);

	result = palloc(sizeof(IndexBuildResult));
	result->heap_tuples = reltuples;
	result->index_tuples = state->indtuples;
	return result;
}

/*
 * The init fork of an unlogged index: an empty metapage, WAL-logged whole
 * (generic WAL writes nothing for an unlogged relation), so that recovery
 * and a standby have it: at the end of recovery the init fork becomes the
 * index.
 */
void
hamming_build_empty(Relation index)
{
	Buffer		metabuf;

	metabuf = ReadBufferExtended(index, INIT_FORKNUM, P_NEW, RBM_NORMAL, NULL);
	Assert(BufferGetBlockNumber(metabuf) == HAMMING_METAPAGE_BLKNO);
	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	START_CRIT_SECTION();
	hamming_init_metapage(BufferGetPage(metabuf));
	MarkBufferDirty(metabuf);
	log_newpage_buffer(metabuf, true);
	END_CRIT_SECTION();
	UnlockReleaseBuffer(metabuf);
}

char *
hamming_build_phase_name(int64 phase)
{
	switch (phase)
	{
		case PROGRESS_CREATEIDX_SUBPHASE_INITIALIZE:
			return "initializing";
		case HAMMING_PHASE_SCAN:
			return "loading tuples";
		case HAMMING_PHASE_SORT:
			return "sorting";
		case HAMMING_PHASE_WRITE:
			return "writing probe tables";
		default:
			return NULL;
	}
}
