/*
 * harness.c
 *	  Standalone driver for src/tokenize.c, outside the server: the
 *	  big-endian check of test/be/run.sh.  Built once natively and once for
 *	  s390x (big-endian, run under qemu-user); both must print the same.
 *
 * Reads texts, one per line, from argv[1] (backslash escapes \\ \n \t \r
 * \xHH, as test/be/texts.py writes them); for every text and every
 * configuration prints one line: the text's number, the configuration, the
 * count, XOR and sum (mod 2^64) of all feature hashes emitted, and the
 * first four of them.  On stderr: the byte order seen at run time and at
 * compile time (it exits 2 when they disagree, unless built with
 * -DHARNESS_NO_ORDER_CHECK, as run.sh's negative control is).
 *
 * The server functions tokenize.c calls are stubbed below.  The texts must
 * never need PostgreSQL's NFKC normalization (unicode_normalize() and
 * unicode_is_normalized_quickcheck() abort): every line is checked against
 * the list of allowed code points, allowed_cp().
 */
#include "../../src/tokenize.c"

#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* port.h maps these to libpgport's; the harness prints with libc's */
#undef printf
#undef fprintf
#undef vfprintf

/* ---- server stubs ---- */

void *
palloc(Size size)
{
	void	   *p = malloc(size ? size : 1);

	if (p == NULL)
		abort();
	return p;
}

void *
repalloc(void *pointer, Size size)
{
	void	   *p = realloc(pointer, size ? size : 1);

	if (p == NULL)
		abort();
	return p;
}

void
pfree(void *pointer)
{
	free(pointer);
}

bool
errstart(int elevel, const char *domain)
{
	return true;
}

bool
errstart_cold(int elevel, const char *domain)
{
	return true;
}

/* the message of an error report, on stderr */
static int
report(const char *what, const char *fmt, va_list ap)
{
	fprintf(stderr, "harness: %s: ", what);
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	return 0;
}

int
errmsg_internal(const char *fmt,...)
{
	va_list		ap;

	va_start(ap, fmt);
	report("elog", fmt, ap);
	va_end(ap);
	return 0;
}

int
errmsg(const char *fmt,...)
{
	va_list		ap;

	va_start(ap, fmt);
	report("ereport", fmt, ap);
	va_end(ap);
	return 0;
}

void
errfinish(const char *filename, int lineno, const char *funcname)
{
	fprintf(stderr, "harness: error raised at %s:%d (%s)\n", filename, lineno,
			funcname ? funcname : "?");
	abort();
}

volatile sig_atomic_t InterruptPending = false;

void
ProcessInterrupts(void)
{
}

/* simhash_as_utf8(), the tokenizer's input in UTF-8, is not called here */
int
GetDatabaseEncoding(void)
{
	return PG_UTF8;
}

char *
pg_server_to_any(const char *s, int len, int encoding)
{
	fprintf(stderr, "harness: pg_server_to_any() called\n");
	abort();
}

pg_wchar *
unicode_normalize(UnicodeNormalizationForm form, const pg_wchar *input)
{
	fprintf(stderr, "harness: unicode_normalize() called (U+%04X...): the input needs normalization\n",
			input[0]);
	abort();
}

UnicodeNormalizationQC
unicode_is_normalized_quickcheck(UnicodeNormalizationForm form, const pg_wchar *input)
{
	fprintf(stderr, "harness: unicode_is_normalized_quickcheck() called (U+%04X...): "
			"the input needs normalization\n", input[0]);
	abort();
}

/* ---- the inputs ---- */

/* the characters the texts may hold: none of them is ever normalized */
static const struct
{
	uint32		first,
				last;
	const char *what;
}			allowed[] =
{
	{0x0001, 0x007F, "ASCII (no NUL)"},
	{0x2500, 0x257F, "box drawing"},
	{0x3000, 0x3029, "CJK symbols and punctuation (before the combining marks)"},
	{0x3030, 0x303F, "CJK symbols and punctuation (after the combining marks)"},
	{0x3041, 0x3096, "hiragana"},
	{0x309D, 0x309E, "hiragana iteration marks"},
	{0x30A1, 0x30FE, "katakana"},
	{0x4E00, 0x9FFF, "CJK Unified Ideographs"},
	{0xFF01, 0xFF5E, "full-width forms of ASCII"},
};

static bool
allowed_cp(uint32 cp)
{
	int			i;

	for (i = 0; i < (int) lengthof(allowed); i++)
		if (cp >= allowed[i].first && cp <= allowed[i].last)
			return true;
	return false;
}

/* strict UTF-8 decoding of s[0 .. len) with the list applied; -1 if bad */
static long
check_text(const unsigned char *s, size_t len)
{
	size_t		i = 0;

	while (i < len)
	{
		uint32		cp;
		int			l;

		if (s[i] < 0x80)
			l = 1;
		else if ((s[i] & 0xE0) == 0xC0)
			l = 2;
		else if ((s[i] & 0xF0) == 0xE0)
			l = 3;
		else if ((s[i] & 0xF8) == 0xF0)
			l = 4;
		else
			return (long) i;
		if (i + l > len)
			return (long) i;
		for (int k = 1; k < l; k++)
			if ((s[i + k] & 0xC0) != 0x80)
				return (long) i;
		cp = l == 1 ? s[i] : utf8_decode(s + i, l);
		if ((l == 2 && cp < 0x80) || (l == 3 && cp < 0x800) || (l == 4 && cp < 0x10000) ||
			cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF) || !allowed_cp(cp))
			return (long) i;
		i += l;
	}
	return -1;
}

/* ---- the features ---- */

typedef struct Summary
{
	uint64		count;
	uint64		xor;
	uint64		sum;
	uint64		first[4];
} Summary;

static void
collect(const uint64 *hashes, int n, void *arg)
{
	Summary    *s = (Summary *) arg;
	int			i;

	if (n <= 0)
	{
		fprintf(stderr, "harness: a batch of %d features\n", n);
		exit(3);
	}
	for (i = 0; i < n; i++)
	{
		if (s->count < 4)
			s->first[s->count] = hashes[i];
		s->count++;
		s->xor ^= hashes[i];
		s->sum += hashes[i];
	}
}

static const struct
{
	SimhashFeatureKind kind;
	int			n;
	const char *name;
}			configs[] =
{
	{SIMHASH_FEATURE_WORDS, 1, "words"},
	{SIMHASH_FEATURE_WORDS, 2, "words"},
	{SIMHASH_FEATURE_WORDS, 3, "words"},
	{SIMHASH_FEATURE_WORDS, 5, "words"},
	{SIMHASH_FEATURE_WORDS, 16, "words"},
	{SIMHASH_FEATURE_CHARS, 1, "chars"},
	{SIMHASH_FEATURE_CHARS, 3, "chars"},
};

int
main(int argc, char **argv)
{
	union
	{
		uint32		i;
		unsigned char c[4];
	}			probe = {0x01020304};
	bool		runtime_big = probe.c[0] == 0x01;
	bool		compiled_big;
	FILE	   *f;
	char	   *line = NULL;
	size_t		cap = 0;
	ssize_t		got;
	long		lineno = 0,
				outlines = 0;

#ifdef WORDS_BIGENDIAN
	compiled_big = true;
#else
	compiled_big = false;
#endif
	fprintf(stderr, "harness: byte order at run time: %s; WORDS_BIGENDIAN %s; "
			"SSE2 path %s; char is %s; sizeof(long) %d, sizeof(void *) %d; xxHash %d\n",
			runtime_big ? "big-endian" : "little-endian",
			compiled_big ? "defined" : "not defined",
#ifdef __SSE2__
			"compiled",
#else
			"not compiled",
#endif
			((char) -1) < 0 ? "signed" : "unsigned",
			(int) sizeof(long), (int) sizeof(void *), XXH_VERSION_NUMBER);
#ifndef HARNESS_NO_ORDER_CHECK	/* run.sh's negative control defines it */
	if (runtime_big != compiled_big)
	{
		fprintf(stderr, "harness: WORDS_BIGENDIAN does not match the machine's byte order\n");
		return 2;
	}
#endif
	if (argc != 2)
	{
		fprintf(stderr, "usage: %s TEXTS\n", argv[0]);
		return 2;
	}
	f = fopen(argv[1], "rb");
	if (f == NULL)
	{
		perror(argv[1]);
		return 2;
	}
	while ((got = getdelim(&line, &cap, '\0', f)) >= 0)
	{
		long		len,
					bad;
		int			c;

		lineno++;
		if (got == 0 || line[got - 1] != '\0')
		{
			fprintf(stderr, "harness: text %ld: not ended by a NUL byte\n", lineno);
			return 2;
		}
		len = got - 1;
		bad = check_text((const unsigned char *) line, (size_t) len);
		if (bad >= 0)
		{
			fprintf(stderr, "harness: line %ld, byte %ld: not UTF-8 or not in the list of "
					"characters that need no normalization\n", lineno, bad);
			return 2;
		}
		for (c = 0; c < (int) lengthof(configs); c++)
		{
			Summary		s;
			int			k;

			memset(&s, 0, sizeof(s));
			simhash_tokenize_batch(line, (size_t) len, configs[c].kind, configs[c].n,
								   collect, &s);
			printf("%ld %s%d count=%llu xor=%016llx sum=%016llx first=", lineno,
				   configs[c].name, configs[c].n, (unsigned long long) s.count,
				   (unsigned long long) s.xor, (unsigned long long) s.sum);
			for (k = 0; k < 4; k++)
				printf("%s%016llx", k ? "," : "", (unsigned long long) s.first[k]);
			printf("\n");
			outlines++;
		}
	}
	free(line);
	fclose(f);
	fprintf(stderr, "harness: %ld texts, %ld lines\n", lineno, outlines);
	return 0;
}
