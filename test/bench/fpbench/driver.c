/*
 * driver.c
 *	  test/bench/fpbench's driver: src/fingerprint.c and src/tokenize.c outside
 *	  the server, with the fuzz targets' stubs of the server functions
 *	  they call (test/fuzz/stubs.c) and PostgreSQL's libpgcommon (run.sh
 *	  compiles it with a revision's two files).  Runs simhash(text), simhash_ngram()
 *	  or simhash(text[]) on every text of a file, PASSES times, and prints
 *	  the texts, their MB, the fastest pass's CPU milliseconds and the XOR
 *	  of all fingerprints (each times its text's number), so that two
 *	  revisions can be compared for speed and for sameness.
 *
 *	  driver FILE PASSES MODE     FILE: texts, each ended by a NUL byte;
 *	                              MODE: text | ngram | array
 *
 * text is simhash(body) (3-shingles, sublinear); ngram is
 * simhash_ngram(body) (3, tf); array is simhash(text[]) over the text's
 * ASCII words, lower-cased (as regexp_split_to_array(lower(body), '\W+')
 * would give for ASCII text).  NFKC is PostgreSQL's own unicode_normalize()
 * (libpgcommon; the stubs' quick check normalizes too, so the few pieces
 * that need a look cost a little more than in the server).  PASSES = 0
 * reads the texts only (the baseline of an instruction count).
 */
#include "postgres.h"

#include <ctype.h>
#include <time.h>

#include "../../fuzz/fuzz.h"
#include "access/tupmacs.h"
#include "catalog/pg_type.h"
#include "utils/array.h"

#undef printf
#undef fprintf

/*
 * A server function only earlier revisions call: they read arrays so (a
 * one-dimensional text[] without NULLs here).
 */
void
deconstruct_array(ArrayType *array, Oid elmtype, int elmlen, bool elmbyval, char elmalign,
				  Datum **elemsp, bool **nullsp, int *nelemsp)
{
	int			n = ARR_NDIM(array) ? ARR_DIMS(array)[0] : 0;
	char	   *p = ARR_DATA_PTR(array);

	*elemsp = malloc(sizeof(Datum) * (n + 1));
	if (nullsp)
		*nullsp = calloc(n + 1, sizeof(bool));
	*nelemsp = n;
	for (int i = 0; i < n; i++)
	{
		(*elemsp)[i] = PointerGetDatum(p);
		p = att_addlength_pointer(p, -1, p);
		p = (char *) att_align_nominal(p, TYPALIGN_INT);
	}
}

extern Datum simhash_text(PG_FUNCTION_ARGS);
extern Datum simhash_ngram(PG_FUNCTION_ARGS);
extern Datum simhash_features(PG_FUNCTION_ARGS);

/* a one-dimensional text[] of the ASCII words of t, lower-cased */
static ArrayType *
words_array(const text *t)
{
	const char *s = VARDATA(t);
	int			len = VARSIZE(t) - VARHDRSZ,
				n = 0,
				i = 0;
	char	   *data = malloc(len * 8 + 64),
			   *q = data;
	ArrayType  *a;

	while (i < len)
	{
		int			j = i;

		while (j < len && isalnum((unsigned char) s[j]))
			j++;
		if (j > i && j - i < 127)
		{
			SET_VARSIZE_SHORT(q, j - i + 1);
			for (int k = 0; k < j - i; k++)
				q[1 + k] = tolower((unsigned char) s[i + k]);
			q += 1 + (j - i);
			while ((q - data) % 4)
				*q++ = 0;
			n++;
		}
		i = j + 1;
	}
	a = calloc(1, ARR_OVERHEAD_NONULLS(1) + (q - data));
	SET_VARSIZE(a, ARR_OVERHEAD_NONULLS(1) + (q - data));
	a->ndim = 1;
	a->elemtype = TEXTOID;
	ARR_DIMS(a)[0] = n;
	ARR_LBOUND(a)[0] = 1;
	memcpy(ARR_DATA_PTR(a), data, q - data);
	free(data);
	return a;
}

int
main(int argc, char **argv)
{
	FILE	   *f;
	char	   *buf;
	size_t		n,
				i,
				start = 0,
				total = 0;
	int			passes,
				ntexts = 0,
				p,
				k;
	const char *mode;
	void	  **args;
	text	   *weighting;
	PGFunction	fn;
	FmgrInfo	flinfo;
	double		best = 1e30;
	uint64		x = 0;

	if (argc != 4 || (f = fopen(argv[1], "rb")) == NULL)
	{
		fprintf(stderr, "usage: driver FILE PASSES text|ngram|array\n");
		return 2;
	}
	passes = atoi(argv[2]);
	mode = argv[3];
	fseek(f, 0, SEEK_END);
	n = (size_t) ftell(f);
	rewind(f);
	buf = malloc(n + 1);
	if (fread(buf, 1, n, f) != n)
		return 2;
	for (i = 0; i < n; i++)
		ntexts += buf[i] == '\0';
	args = malloc(sizeof(void *) * (ntexts + 1));
	ntexts = 0;
	for (i = 0; i < n; i++)
		if (buf[i] == '\0')
		{
			text	   *t = fuzz_text(buf + start, i - start);

			args[ntexts++] = strcmp(mode, "array") == 0 ? (void *) words_array(t) : (void *) t;
			total += i - start;
			start = i + 1;
		}
	weighting = strcmp(mode, "ngram") == 0 ? fuzz_text("tf", 2) : fuzz_text("sublinear", 9);
	fn = strcmp(mode, "text") == 0 ? simhash_text :
		strcmp(mode, "ngram") == 0 ? simhash_ngram : simhash_features;
	memset(&flinfo, 0, sizeof(flinfo));
	for (p = 0; p < passes; p++)
	{
		struct timespec a,
					b;
		double		s;

		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
		for (k = 0; k < ntexts; k++)
		{
			LOCAL_FCINFO(fcinfo, 3);
			Datum		fp;

			fcinfo->flinfo = &flinfo;
			fcinfo->nargs = 3;
			fcinfo->args[0].value = PointerGetDatum(args[k]);
			fcinfo->args[1].value = Int32GetDatum(3);
			fcinfo->args[2].value = PointerGetDatum(weighting);
			fcinfo->args[0].isnull = fcinfo->args[1].isnull = fcinfo->args[2].isnull = false;
			fp = fn(fcinfo);
			if (p == 0)
				x ^= (uint64) DatumGetInt64(fp) * (uint64) (k + 1);
		}
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
		s = (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9;
		if (s < best)
			best = s;
	}
	printf("%d %.3f %.2f %016llx\n", ntexts, total / 1e6, passes > 0 ? best * 1e3 : 0.0,
		   (unsigned long long) x);
	return 0;
}
