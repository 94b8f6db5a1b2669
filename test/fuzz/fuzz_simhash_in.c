/*
 * fuzz_simhash_in.c
 *	  libFuzzer target: simhash_in() on arbitrary strings, against an
 *	  independent statement of the rule (optional white space, exactly 16
 *	  hexadecimal digits, optional white space), and the out/in round trip.
 */
#include "simhash.h"

#include <ctype.h>
#include <stdlib.h>

#include "fuzz.h"
#include "utils/errcodes.h"

static bool
expected(const char *s, simhash *value)
{
	const char *ws = " \t\n\r\v\f";
	size_t		lead = strspn(s, ws);
	char		digits[17];
	int			i;

	for (i = 0; i < 16; i++)
		if (!isxdigit((unsigned char) s[lead + i]))
			return false;
	if (strspn(s + lead + 16, ws) != strlen(s + lead + 16))
		return false;
	memcpy(digits, s + lead, 16);
	digits[16] = '\0';
	*value = strtoull(digits, NULL, 16);
	return true;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char	   *s = malloc(size + 1);
	Datum		result;
	simhash		value = 0;
	bool		ok;

	memcpy(s, data, size);
	s[size] = '\0';				/* a cstring ends at its first NUL */
	ok = fuzz_call(simhash_in, &result, 1, CStringGetDatum(s), 0, 0);
	FUZZ_CHECK(ok == expected(s, &value));
	if (ok)
	{
		Datum		text;
		Datum		again;

		FUZZ_CHECK(DatumGetSimhash(result) == value);
		FUZZ_CHECK(fuzz_call(simhash_out, &text, 1, result, 0, 0));
		FUZZ_CHECK(strlen(DatumGetCString(text)) == 16);
		FUZZ_CHECK(fuzz_call(simhash_in, &again, 1, text, 0, 0));
		FUZZ_CHECK(DatumGetSimhash(again) == value);
	}
	else
		FUZZ_CHECK(fuzz_error_sqlstate == ERRCODE_INVALID_TEXT_REPRESENTATION);
	fuzz_reset_memory();
	free(s);
	return 0;
}
