/*
 * fuzz_ball_in.c
 *	  libFuzzer target: simhash_ball_in() on arbitrary strings, against an
 *	  independent statement of the rule written with the C library
 *	  ("(center,radius)", white space around each part, radius -1..64 by
 *	  strtoll, syntax errors 22P02 before range errors 22003), and the
 *	  out/in round trip.
 */
#include "ball.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>

#include "fuzz.h"
#include "utils/errcodes.h"

extern Datum simhash_ball_in(PG_FUNCTION_ARGS);
extern Datum simhash_ball_out(PG_FUNCTION_ARGS);

static const char *
skip(const char *p)
{
	return p + strspn(p, " \t\n\r\v\f");
}

/* 0 if valid (center and radius set), else the SQLSTATE expected */
static int
expected(const char *s, simhash *center, int *radius)
{
	const char *p = skip(s);
	char		digits[17];
	char	   *end;
	long long	r;
	int			i;

	if (*p++ != '(')
		return ERRCODE_INVALID_TEXT_REPRESENTATION;
	p = skip(p);
	for (i = 0; i < 16; i++)
		if (!isxdigit((unsigned char) p[i]))
			return ERRCODE_INVALID_TEXT_REPRESENTATION;
	if (isxdigit((unsigned char) p[16]))
		return ERRCODE_INVALID_TEXT_REPRESENTATION;
	memcpy(digits, p, 16);
	digits[16] = '\0';
	*center = strtoull(digits, NULL, 16);
	p = skip(p + 16);
	if (*p++ != ',')
		return ERRCODE_INVALID_TEXT_REPRESENTATION;
	p = skip(p);
	if (!(isdigit((unsigned char) p[0]) ||
		  ((p[0] == '+' || p[0] == '-') && isdigit((unsigned char) p[1]))))
		return ERRCODE_INVALID_TEXT_REPRESENTATION;
	errno = 0;
	r = strtoll(p, &end, 10);
	p = skip(end);
	if (*p++ != ')' || *skip(p) != '\0')
		return ERRCODE_INVALID_TEXT_REPRESENTATION;
	if (errno == ERANGE || r < -1 || r > 64)
		return ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE;
	*radius = (int) r;
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char	   *s = malloc(size + 1);
	Datum		result;
	simhash		center = 0;
	int			radius = 0;
	int			want;
	bool		ok;

	memcpy(s, data, size);
	s[size] = '\0';
	ok = fuzz_call(simhash_ball_in, &result, 1, CStringGetDatum(s), 0, 0);
	want = expected(s, &center, &radius);
	FUZZ_CHECK(ok == (want == 0));
	if (ok)
	{
		SimhashBall *ball = DatumGetSimhashBallP(result);
		Datum		text;
		Datum		again;

		FUZZ_CHECK(ball->center == center && ball->radius == radius);
		FUZZ_CHECK(fuzz_call(simhash_ball_out, &text, 1, result, 0, 0));
		FUZZ_CHECK(fuzz_call(simhash_ball_in, &again, 1, text, 0, 0));
		FUZZ_CHECK(DatumGetSimhashBallP(again)->center == center &&
				   DatumGetSimhashBallP(again)->radius == radius);
	}
	else
		FUZZ_CHECK(fuzz_error_sqlstate == want);
	fuzz_reset_memory();
	free(s);
	return 0;
}
