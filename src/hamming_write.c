/*
 * hamming_write.c
 *	  Writing probe tables, for a build (hamming_build.c and its parallel
 *	  participants, hamming_build_parallel.c) and for a merge
 *	  (hamming_merge.c): table 0's entries and tables 1..3's sort keys, in
 *	  order, onto pages that a sink places, each table followed by its
 *	  directory, then the pages of NULL fingerprints; and how many pages
 *	  tables of n entries take.
 */
#include "hamming.h"

#include "commands/progress.h"
#include "miscadmin.h"
#include "pgstat.h"

/* dir_bits of the tables of n entries: a bucket of the directory holds about HAMMING_BUCKET_ROWS */
static int
dir_bits_for(Size n)
{
	int			dir_bits = 1;

	while (dir_bits < HAMMING_MAX_DIR_BITS && ((Size) HAMMING_BUCKET_ROWS << dir_bits) < n)
		dir_bits++;
	return dir_bits;
}

/* pages of the entries of probe table j of n entries */
static Size
entry_pages(Size n, int table)
{
	Size		capacity = table == 0 ? HAMMING_PAGE_CAPACITY : HAMMING_KEYS_CAPACITY;

	return (n + capacity - 1) / capacity;
}

/* pages of the directory of a probe table of n entries */
static Size
directory_pages(Size n)
{
	return (((Size) 1 << dir_bits_for(n)) + 1 + HAMMING_DIRECTORY_CAPACITY - 1) / HAMMING_DIRECTORY_CAPACITY;
}

/* pages of probe tables of n entries, with nnulls NULL TIDs after table 0 */
Size
hamming_table_pages(Size n, Size nnulls)
{
	Size		pages = (nnulls + HAMMING_PAGE_CAPACITY - 1) / HAMMING_PAGE_CAPACITY;
	int			j;

	for (j = 0; j < HAMMING_NTABLES; j++)
		pages += entry_pages(n, j) + directory_pages(n);
	return pages;
}

/*
 * Blocks that a merge's new tables of what `pages` pages of table 0, NULLs
 * and tail hold may need, with their map
 */
Size
hamming_merge_pages(Size pages)
{
	Size		n = pages * HAMMING_PAGE_CAPACITY;
	Size		need = hamming_table_pages(n, 0) + 1;	/* NULLs take pages fingerprints do not */

	return need + (need + HAMMING_MAP_CAPACITY - 1) / HAMMING_MAP_CAPACITY;
}

/* can a merge's block map list the tables of what `pages` pages hold? */
bool
hamming_tables_mappable(Size pages)
{
	return hamming_merge_pages(pages) <= (Size) HAMMING_MAX_MAP_PAGES * HAMMING_MAP_CAPACITY;
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
 * Write probe table j of n entries that source gives in order, through
 * sink, then its directory: table 0's fingerprints and TIDs (and after them
 * the pages of the NULL TIDs, a merge's), or the fingerprints rotated left
 * by 16 j bits; every page stamped with gen.  meta gets where they begin.
 */
static void
write_table(int table, Size n, const HammingTableSource *source, HammingTids *nulls,
			uint16 gen, HammingPageSink sink, void *arg, HammingMetaPageData *meta)
{
	TableWriter *w = palloc(sizeof(TableWriter));
	HammingEntry entry;
	uint64		key;

	w->sink = sink;
	w->arg = arg;
	w->gen = gen;
	w->dir_bits = dir_bits_for(n);
	w->dir = palloc((((Size) 1 << w->dir_bits) + 1) * sizeof(uint32));
	if (table == 0)
	{
		PGAlignedBlock block;
		Page		page = block.data;
		Size		nnulls = nulls ? hamming_tids_count(nulls) : 0;
		Size		i;

		writer_start(w, 0, HAMMING_DATA | HAMMING_SORTED);
		while (source->next_entry(source->arg, &entry))
			writer_entry(w, &entry);
		meta->table_start[0] = writer_finish(w, n);

		hamming_init_page(page, HAMMING_NULLS | HAMMING_SORTED);
		meta->null_pages = 0;
		for (i = 0; i < nnulls; i++)
		{
			HammingPageOpaque opaque = HammingPageGetOpaque(page);

			HammingPageFingerprints(page)[opaque->nentries] = 0;
			if (!hamming_tids_next(nulls, &HammingPageTids(page)[opaque->nentries++]))
				elog(ERROR, "hamming index sort lost NULL TIDs");
			if (opaque->nentries == HAMMING_PAGE_CAPACITY || i == nnulls - 1)
			{
				BlockNumber blkno = sink_page(sink, arg, page, HAMMING_NULLS | HAMMING_SORTED, gen);

				if (meta->table_start[0] == InvalidBlockNumber)
					meta->table_start[0] = blkno;	/* a table 0 of no entries */
				meta->null_pages++;
			}
		}
	}
	else
	{
		writer_start(w, table, HAMMING_KEYS);
		while (source->next_key(source->arg, table, &key))
			writer_key(w, key);
		meta->table_start[table] = writer_finish(w, n);
	}
	meta->dir_start[table] = writer_directory(w);
	pfree(w->dir);
	pfree(w);
}

/* what meta says of probe tables of n entries, but where they are */
static void
describe_tables(Size n, HammingMetaPageData *meta)
{
	meta->ntables = HAMMING_NTABLES;
	meta->dir_bits = dir_bits_for(n);
	meta->nsorted = (uint32) n;
}

/*
 * Write the probe tables of n entries that source gives in order, through
 * sink, in this order: table 0, the pages of the NULL TIDs (a merge's;
 * a build puts them in the tail), then each table's directory and tables
 * 1..3, every page stamped with gen.  meta gets their description.  A
 * source that gives entries or keys out of order, or not n of them, is an
 * error (a damaged index a merge reads).
 */
void
hamming_write_streams(Size n, const HammingTableSource *source, HammingTids *nulls,
					  uint16 gen, HammingPageSink sink, void *arg, HammingMetaPageData *meta)
{
	int			j;

	describe_tables(n, meta);
	for (j = 0; j < HAMMING_NTABLES; j++)
		write_table(j, n, source, nulls, gen, sink, arg, meta);
}

/*
 * The probe tables of a build of n entries on the blocks after the
 * metapage, table after table, each with its directory after it: where
 * they begin, into meta; returns the first block after them
 */
BlockNumber
hamming_build_layout(Size n, HammingMetaPageData *meta)
{
	BlockNumber next = HAMMING_METAPAGE_BLKNO + 1;
	int			j;

	describe_tables(n, meta);
	meta->null_pages = 0;
	for (j = 0; j < HAMMING_NTABLES; j++)
	{
		meta->table_start[j] = next;
		meta->dir_start[j] = next + entry_pages(n, j);
		next = meta->dir_start[j] + directory_pages(n);
	}
	return next;
}

/* the source of a sort's entries, reporting a build's progress */
typedef struct SortSource
{
	HammingSort *sort;
	bool		progress;
	int			key_table;
} SortSource;

static bool
sort_next_entry(void *arg, HammingEntry *entry)
{
	return hamming_sort_next_entry(((SortSource *) arg)->sort, entry);
}

static bool
sort_next_key(void *arg, int table, uint64 *key)
{
	SortSource *src = (SortSource *) arg;
	bool		more;

	if (src->key_table == table || !src->progress)
		return hamming_sort_next_key(src->sort, table, key);
	/* the first key of a table: its keys are sorted (in memory) or their runs opened */
	pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE, HAMMING_PHASE_SORT);
	more = hamming_sort_next_key(src->sort, table, key);
	pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE, HAMMING_PHASE_WRITE);
	src->key_table = table;
	return more;
}

/*
 * Write the entries of sort as the probe tables (hamming_write_streams);
 * progress: a build's, reported in pg_stat_progress_create_index
 */
void
hamming_write_sorted(HammingSort *sort, HammingTids *nulls, bool progress,
					 uint16 gen, HammingPageSink sink, void *arg, HammingMetaPageData *meta)
{
	SortSource	src = {sort, progress, 0};
	HammingTableSource source = {sort_next_entry, sort_next_key, &src};

	if (progress)
		pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE, HAMMING_PHASE_SORT);
	hamming_sort_done(sort);
	if (progress)
		pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE, HAMMING_PHASE_WRITE);
	hamming_write_streams(hamming_sort_count(sort), &source, nulls, gen, sink, arg, meta);
}

/*
 * Write probe table j of the entries of sort (a build's: its pages without
 * generation), with its directory, through sink; meta gets where they begin
 */
void
hamming_write_sorted_table(HammingSort *sort, int table, HammingPageSink sink, void *arg,
						   HammingMetaPageData *meta)
{
	SortSource	src = {sort, false, table};
	HammingTableSource source = {sort_next_entry, sort_next_key, &src};

	write_table(table, hamming_sort_count(sort), &source, NULL, 0, sink, arg, meta);
}

/* the build's sink: behind the index's last page */
