/*
 * hamming_sort.c
 *	  The entries of a build or a merge in the orders of the probe tables:
 *	  table 0's (fingerprint, then TID) and the rotated keys of tables 1..3.
 *	  Entries are held in memory within a budget, HAMMING_ROW_BYTES each.
 *	  When they outgrow it, each full load is sorted and written to
 *	  temporary files as a run (its entries, and its keys for each of
 *	  tables 1..3), and the runs are merged as they are read back, so that a
 *	  build or a merge of any size takes no more than its memory setting and
 *	  temporary files (within temp_file_limit), as a btree build does.  A
 *	  sort of keys only (a merge's tombstones) keeps no order of table 0.
 *	  A participant of a parallel build exports its sorted entries and keys
 *	  to a file of a shared file set, and a sort imports the participants'
 *	  files as its runs, to read one table of them back merged.  And the TIDs of NULL fingerprints that a build or a merge carries
 *	  over, within a budget and in a temporary file beyond it.
 */
#include "hamming.h"

#include "miscadmin.h"
#include "storage/buffile.h"

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

/* where a run of one table begins: its file, and the place in it */
typedef struct RunStart
{
	BufFile    *file;
	int			fileno;
	off_t		offset;
} RunStart;

/* a run being read back: its next elements, a buffer at a time */
typedef struct RunReader
{
	HammingEntry head;			/* the next element (a key: head.fp) */
	Size		left;			/* elements not yet read from the file */
	RunStart	pos;			/* where they are */
	char	   *buffer;
	int			nbuffer;		/* elements in buffer */
	int			ibuffer;		/* the next of them */
} RunReader;

struct HammingSort
{
	bool		keys_only;		/* no entries in table 0's order wanted */
	Size		budget;
	Size		capacity;		/* entries of a load */
	Size		total;			/* entries added */
	/* the load in memory */
	HammingEntry *entries;
	Size		n;
	Size		max;
	uint64	   *keys;			/* the sorted keys of table key_table */
	int			key_table;
	Size		next;			/* the next entry (table 0) or key */
	bool		done;
	/* the runs written (none: everything is in memory) */
	int			nruns;
	int			maxruns;
	Size	   *run_count;
	RunStart   *run_start[HAMMING_NTABLES];
	/* the files they are in: one per table, or one per imported run */
	BufFile   **files;
	int			nfiles;
	/* reading them back, merged: table being read, a reader per run */
	int			table;
	RunReader  *readers;
	int			buffer_elements;
	int		   *heap;			/* the runs not yet read, least head first */
	int			nheap;
};

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

/*
 * A sort of entries that holds budget bytes (at least a load of 1024
 * entries); keys_only: read by hamming_sort_next_key only
 */
HammingSort *
hamming_sort_begin(Size budget, bool keys_only)
{
	HammingSort *s = palloc0(sizeof(HammingSort));

	s->keys_only = keys_only;
	s->budget = budget;
	s->capacity = Max(budget / HAMMING_ROW_BYTES, 1024);
	s->max = Min(s->capacity, 1024);
	s->entries = palloc(s->max * sizeof(HammingEntry));
	s->key_table = -1;
	s->table = -1;
	return s;
}

static void
write_file(BufFile *file, const void *data, Size bytes)
{
	/* 15 takes a non-const pointer */
	BufFileWrite(file, unconstify(void *, data), bytes);
}

/* the load in memory, sorted, as a run in the files */
static void
write_run(HammingSort *s)
{
	int			j;

	if (s->nruns == 0)
	{
		s->nfiles = HAMMING_NTABLES;
		s->files = palloc0(s->nfiles * sizeof(BufFile *));
		for (j = s->keys_only ? 1 : 0; j < HAMMING_NTABLES; j++)
			s->files[j] = BufFileCreateTemp(false);
		s->maxruns = 8;
		s->run_count = palloc(s->maxruns * sizeof(Size));
		for (j = 0; j < HAMMING_NTABLES; j++)
			s->run_start[j] = palloc(s->maxruns * sizeof(RunStart));
		/* the load is full: its keys take the rest of the budget */
		s->keys = palloc_extended(s->capacity * sizeof(uint64), MCXT_ALLOC_HUGE);
	}
	else if (s->nruns == s->maxruns)
	{
		s->maxruns *= 2;
		s->run_count = repalloc(s->run_count, s->maxruns * sizeof(Size));
		for (j = 0; j < HAMMING_NTABLES; j++)
			s->run_start[j] = repalloc(s->run_start[j], s->maxruns * sizeof(RunStart));
	}
	if (!s->keys_only)
		sort_entries(s->entries, s->n);
	for (j = s->keys_only ? 1 : 0; j < HAMMING_NTABLES; j++)
	{
		RunStart   *start = &s->run_start[j][s->nruns];

		CHECK_FOR_INTERRUPTS();
		start->file = s->files[j];
		BufFileTell(start->file, &start->fileno, &start->offset);
		if (j == 0)
			write_file(s->files[j], s->entries, s->n * sizeof(HammingEntry));
		else
		{
			rotated_sorted_keys(s->entries, s->n, j * HAMMING_BLOCK_BITS, s->keys);
			write_file(s->files[j], s->keys, s->n * sizeof(uint64));
		}
	}
	s->run_count[s->nruns++] = s->n;
	s->n = 0;
}

void
hamming_sort_add(HammingSort *s, uint64 fp, ItemPointer tid)
{
	Assert(!s->done);
	if (s->n == s->max)
	{
		if (s->max == s->capacity)
			write_run(s);
		else
		{
			s->max = Min(s->max * 2, s->capacity);
			s->entries = repalloc_huge(s->entries, s->max * sizeof(HammingEntry));
		}
	}
	s->entries[s->n].fp = fp;
	s->entries[s->n++].tid = *tid;
	s->total++;
}

Size
hamming_sort_count(const HammingSort *s)
{
	return s->total;
}

/* how many runs went to temporary files (0: all in memory) */
int
hamming_sort_runs(const HammingSort *s)
{
	return s->nruns;
}

/* the runs' readers: half of the budget goes to their buffers (8 kB to 16 MB each) */
static void
start_reading(HammingSort *s)
{
	int			r;

	s->buffer_elements = (int) Max(Min(s->budget / 2 / s->nruns, (Size) 16 * 1024 * 1024),
								   BLCKSZ) / sizeof(HammingEntry);
	s->readers = palloc0(s->nruns * sizeof(RunReader));
	for (r = 0; r < s->nruns; r++)
		s->readers[r].buffer = palloc_extended(s->buffer_elements * sizeof(HammingEntry), MCXT_ALLOC_HUGE);
}

/* every entry added: the reading may begin (an imported sort is ready already) */
void
hamming_sort_done(HammingSort *s)
{
	if (s->done)
		return;
	s->done = true;
	if (s->nruns == 0)
	{
		if (!s->keys_only)
			sort_entries(s->entries, s->n);
		s->keys = palloc_extended(Max(s->n, 1) * sizeof(uint64), MCXT_ALLOC_HUGE);
		return;
	}
	if (s->n > 0)
		write_run(s);
	pfree(s->entries);
	pfree(s->keys);
	s->entries = NULL;
	s->keys = NULL;
	start_reading(s);
}

/* does run a's head come before run b's? */
static inline bool
run_before(const HammingSort *s, int a, int b)
{
	const HammingEntry *x = &s->readers[a].head;
	const HammingEntry *y = &s->readers[b].head;

	if (s->table == 0)
		return hamming_entry_cmp(x, y) < 0;
	return x->fp < y->fp;
}

/* the heap put right below position i */
static void
sift_down(HammingSort *s, int i)
{
	int			r = s->heap[i];

	for (;;)
	{
		int			child = 2 * i + 1;

		if (child >= s->nheap)
			break;
		if (child + 1 < s->nheap && run_before(s, s->heap[child + 1], s->heap[child]))
			child++;
		if (!run_before(s, s->heap[child], r))
			break;
		s->heap[i] = s->heap[child];
		i = child;
	}
	s->heap[i] = r;
}

/* a reader's next element to its head; false when its run is read */
static bool
next_head(HammingSort *s, RunReader *reader)
{
	Size		size = s->table == 0 ? sizeof(HammingEntry) : sizeof(uint64);

	if (reader->ibuffer == reader->nbuffer)
	{
		Size		n = Min(reader->left, (Size) s->buffer_elements * sizeof(HammingEntry) / size);
		BufFile    *file = reader->pos.file;

		CHECK_FOR_INTERRUPTS();
		if (n == 0)
			return false;
		if (BufFileSeek(file, reader->pos.fileno, reader->pos.offset, SEEK_SET) != 0 ||
			BufFileRead(file, reader->buffer, n * size) != n * size)
			ereport(ERROR,
					(errcode_for_file_access(),
					 errmsg("could not read from hamming index sort temporary file: %m")));
		BufFileTell(file, &reader->pos.fileno, &reader->pos.offset);
		reader->left -= n;
		reader->nbuffer = (int) n;
		reader->ibuffer = 0;
	}
	if (s->table == 0)
		reader->head = ((const HammingEntry *) reader->buffer)[reader->ibuffer++];
	else
		reader->head.fp = ((const uint64 *) reader->buffer)[reader->ibuffer++];
	return true;
}

/* begin reading table's runs back, merged */
static void
start_table(HammingSort *s, int table)
{
	int			r;

	s->table = table;
	if (s->heap == NULL)
		s->heap = palloc(s->nruns * sizeof(int));
	s->nheap = 0;
	for (r = 0; r < s->nruns; r++)
	{
		RunReader  *reader = &s->readers[r];

		reader->left = s->run_count[r];
		reader->pos = s->run_start[table][r];
		reader->nbuffer = reader->ibuffer = 0;
		if (next_head(s, reader))
			s->heap[s->nheap++] = r;
	}
	for (r = s->nheap / 2 - 1; r >= 0; r--)
		sift_down(s, r);
}

/* the least head of the runs, and the next of its run in its place; false when all are read */
static inline bool
take_least(HammingSort *s, HammingEntry *least)
{
	int			r;

	if (s->nheap == 0)
		return false;
	r = s->heap[0];
	*least = s->readers[r].head;
	if (!next_head(s, &s->readers[r]))
		s->heap[0] = s->heap[--s->nheap];
	if (s->nheap > 1)
		sift_down(s, 0);
	return true;
}

/* the next entry in table 0's order; false after the last */
bool
hamming_sort_next_entry(HammingSort *s, HammingEntry *entry)
{
	Assert(s->done && !s->keys_only);
	if (s->nruns == 0)
	{
		if (s->next >= s->n)
			return false;
		*entry = s->entries[s->next++];
		return true;
	}
	if (s->table != 0)
		start_table(s, 0);
	return take_least(s, entry);
}

/*
 * The next key of table (1..3) in its order: the fingerprints rotated left
 * by 16 table bits; false after the last.  Tables are read in turn.
 */
bool
hamming_sort_next_key(HammingSort *s, int table, uint64 *key)
{
	HammingEntry head;

	Assert(s->done && table > 0 && table < HAMMING_NTABLES);
	if (s->nruns == 0)
	{
		if (s->key_table != table)
		{
			rotated_sorted_keys(s->entries, s->n, table * HAMMING_BLOCK_BITS, s->keys);
			s->key_table = table;
			s->next = 0;
		}
		if (s->next >= s->n)
			return false;
		*key = s->keys[s->next++];
		return true;
	}
	if (s->table != table)
		start_table(s, table);
	if (!take_least(s, &head))
		return false;
	*key = head.fp;
	return true;
}

/* the memory and the temporary files released */
void
hamming_sort_end(HammingSort *s)
{
	int			j;

	if (s->entries)
		pfree(s->entries);
	if (s->keys)
		pfree(s->keys);
	if (s->nruns > 0 && s->readers != NULL)
	{
		for (j = 0; j < s->nruns; j++)
			pfree(s->readers[j].buffer);
		pfree(s->readers);
	}
	if (s->nruns > 0)
	{
		for (j = 0; j < s->nfiles; j++)
		{
			if (s->files[j])
				BufFileClose(s->files[j]);
		}
		pfree(s->files);
		for (j = 0; j < HAMMING_NTABLES; j++)
			pfree(s->run_start[j]);
		pfree(s->run_count);
		if (s->heap)
			pfree(s->heap);
	}
	pfree(s);
}

/*
 * A participant of a parallel build: the sort's entries in table 0's order,
 * then the keys of tables 1..3 each in its order, written to file (merged
 * from the sort's runs if it spilled); run says where each begins
 */
void
hamming_sort_export(HammingSort *s, BufFile *file, HammingSortRun *run)
{
	HammingEntry *entries;
	uint64	   *keys;
	int			per_block = BLCKSZ / sizeof(HammingEntry);
	int			n = 0;
	int			j;

	hamming_sort_done(s);
	run->count = s->total;
	if (s->nruns == 0)
	{
		/* all in memory: the sorted entries, then each table's keys, as arrays */
		BufFileTell(file, &run->fileno[0], &run->offset[0]);
		write_file(file, s->entries, s->n * sizeof(HammingEntry));
		for (j = 1; j < HAMMING_NTABLES; j++)
		{
			BufFileTell(file, &run->fileno[j], &run->offset[j]);
			rotated_sorted_keys(s->entries, s->n, j * HAMMING_BLOCK_BITS, s->keys);
			write_file(file, s->keys, s->n * sizeof(uint64));
		}
		return;
	}
	/* spilled: read back merged, a block at a time */
	entries = palloc(BLCKSZ);
	keys = (uint64 *) entries;
	BufFileTell(file, &run->fileno[0], &run->offset[0]);
	while (hamming_sort_next_entry(s, &entries[n]))
	{
		if (++n == per_block)
		{
			write_file(file, entries, n * sizeof(HammingEntry));
			n = 0;
		}
	}
	write_file(file, entries, n * sizeof(HammingEntry));
	for (j = 1; j < HAMMING_NTABLES; j++)
	{
		BufFileTell(file, &run->fileno[j], &run->offset[j]);
		n = 0;
		while (hamming_sort_next_key(s, j, &keys[n]))
		{
			if (++n == 2 * per_block)
			{
				write_file(file, keys, n * sizeof(uint64));
				n = 0;
			}
		}
		write_file(file, keys, n * sizeof(uint64));
	}
	pfree(entries);
}

/*
 * The leader of a parallel build: a sort, ready to be read, of the runs
 * that its participants exported, runs[i] in files[i] (the sort closes
 * them at its end), within budget
 */
HammingSort *
hamming_sort_import(Size budget, int nruns, const HammingSortRun *runs, BufFile **files)
{
	HammingSort *s = palloc0(sizeof(HammingSort));
	int			r;
	int			j;

	Assert(nruns > 0);
	s->budget = budget;
	s->key_table = -1;
	s->table = -1;
	s->done = true;
	s->nruns = s->maxruns = s->nfiles = nruns;
	s->files = palloc(nruns * sizeof(BufFile *));
	memcpy(s->files, files, nruns * sizeof(BufFile *));
	s->run_count = palloc(nruns * sizeof(Size));
	for (j = 0; j < HAMMING_NTABLES; j++)
		s->run_start[j] = palloc(nruns * sizeof(RunStart));
	for (r = 0; r < nruns; r++)
	{
		s->run_count[r] = runs[r].count;
		s->total += runs[r].count;
		for (j = 0; j < HAMMING_NTABLES; j++)
		{
			s->run_start[j][r].file = files[r];
			s->run_start[j][r].fileno = runs[r].fileno[j];
			s->run_start[j][r].offset = runs[r].offset[j];
		}
	}
	start_reading(s);
	return s;
}

struct HammingTids
{
	ItemPointerData *held;		/* the first ones, within the budget */
	Size		nheld;
	Size		maxheld;
	Size		capacity;
	BufFile    *file;			/* the rest */
	Size		n;
	Size		read;
};

/* TIDs held in budget bytes (6 each), and in a temporary file beyond */
HammingTids *
hamming_tids_begin(Size budget)
{
	HammingTids *t = palloc0(sizeof(HammingTids));

	t->capacity = budget / sizeof(ItemPointerData);
	t->maxheld = Min(t->capacity, 64);
	if (t->maxheld > 0)
		t->held = palloc(t->maxheld * sizeof(ItemPointerData));
	return t;
}

void
hamming_tids_add(HammingTids *t, ItemPointer tid)
{
	if (t->nheld == t->maxheld && t->maxheld < t->capacity)
	{
		t->maxheld = Min(t->maxheld * 2, t->capacity);
		t->held = repalloc_huge(t->held, t->maxheld * sizeof(ItemPointerData));
	}
	if (t->nheld < t->maxheld)
		t->held[t->nheld++] = *tid;
	else
	{
		if (t->file == NULL)
			t->file = BufFileCreateTemp(false);
		BufFileWrite(t->file, tid, sizeof(ItemPointerData));
	}
	t->n++;
}

Size
hamming_tids_count(const HammingTids *t)
{
	return t->n;
}

/* the TIDs in the order they came, once; false after the last */
bool
hamming_tids_next(HammingTids *t, ItemPointer tid)
{
	if (t->read == t->n)
		return false;
	if (t->read < t->nheld)
	{
		*tid = t->held[t->read++];
		return true;
	}
	if (t->read == t->nheld && BufFileSeek(t->file, 0, 0, SEEK_SET) != 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not seek in hamming index temporary file: %m")));
	if (BufFileRead(t->file, tid, sizeof(ItemPointerData)) != sizeof(ItemPointerData))
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not read from hamming index temporary file: %m")));
	t->read++;
	if (t->read % 1024 == 0)
		CHECK_FOR_INTERRUPTS();
	return true;
}

void
hamming_tids_end(HammingTids *t)
{
	if (t->file)
		BufFileClose(t->file);
	if (t->held)
		pfree(t->held);
	pfree(t);
}
