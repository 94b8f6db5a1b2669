/*
 * ball128.c
 *	  The simhash128_ball type (every 128-bit fingerprint within radius bits
 *	  of a center) and the radius predicates of simhash128: the ball's I/O,
 *	  constructor and accessors, <@ and @>, simhash128_within() and
 *	  simhash128_at_distance() (what the planner support turns
 *	  "a <~> b <= k" and "a <~> b = k" into).
 *
 * Text form: (center,radius), the center 32 hexadecimal digits, the radius a
 * decimal integer from -1 (the empty ball) to 128.  Binary form: the center
 * as 16 bytes and the radius as 4 bytes, big-endian.
 */
#include "ball.h"
#include "simhash128.h"

#include "libpq/pqformat.h"

static Simhash128Ball *
make_ball128(const Simhash128 *center, int32 radius)
{
	Simhash128Ball *ball = palloc0(sizeof(Simhash128Ball));

	ball->center = *center;
	ball->radius = radius;
	return ball;
}

PG_FUNCTION_INFO_V1(simhash128_ball_in);
Datum
simhash128_ball_in(PG_FUNCTION_ARGS)
{
	const char *digits;
	Simhash128	center;
	int32		radius;

	if (!simhash_read_ball_text(fcinfo, PG_GETARG_CSTRING(0), "simhash128_ball", SIMHASH128_BITS,
								"(0123456789abcdef0123456789abcdef,28)", &digits, &radius))
		PG_RETURN_NULL();
	simhash128_parse_hex(digits, &center);
	PG_RETURN_POINTER(make_ball128(&center, radius));
}

PG_FUNCTION_INFO_V1(simhash128_ball_out);
Datum
simhash128_ball_out(PG_FUNCTION_ARGS)
{
	Simhash128Ball *ball = PG_GETARG_SIMHASH128_BALL_P(0);
	char		center[SIMHASH128_HEX_DIGITS + 1];

	simhash128_format_hex(&ball->center, center);
	PG_RETURN_CSTRING(psprintf("(%s,%d)", center, ball->radius));
}

PG_FUNCTION_INFO_V1(simhash128_ball_recv);
Datum
simhash128_ball_recv(PG_FUNCTION_ARGS)
{
	StringInfo	buf = (StringInfo) PG_GETARG_POINTER(0);
	Simhash128	center;
	int32		radius;

	center.hi = (uint64) pq_getmsgint64(buf);
	center.lo = (uint64) pq_getmsgint64(buf);
	radius = (int32) pq_getmsgint(buf, 4);
	if (radius < BALL_MIN_RADIUS || radius > SIMHASH128_BITS)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
				 errmsg("invalid radius %d in external simhash128_ball value", radius),
				 errdetail("A radius is between 0 and 128 bits, or -1 for the empty ball.")));
	PG_RETURN_POINTER(make_ball128(&center, radius));
}

PG_FUNCTION_INFO_V1(simhash128_ball_send);
Datum
simhash128_ball_send(PG_FUNCTION_ARGS)
{
	Simhash128Ball *ball = PG_GETARG_SIMHASH128_BALL_P(0);
	StringInfoData buf;

	pq_begintypsend(&buf);
	pq_sendint64(&buf, (int64) ball->center.hi);
	pq_sendint64(&buf, (int64) ball->center.lo);
	pq_sendint32(&buf, ball->radius);
	PG_RETURN_BYTEA_P(pq_endtypsend(&buf));
}

/* simhash128_ball(center, radius): the radius is checked (0..128), as in simhash_ball */
PG_FUNCTION_INFO_V1(simhash128_ball);
Datum
simhash128_ball(PG_FUNCTION_ARGS)
{
	int32		radius = PG_GETARG_INT32(1);

	simhash_check_threshold("radius", radius, SIMHASH128_BITS);
	PG_RETURN_POINTER(make_ball128(PG_GETARG_SIMHASH128_P(0), radius));
}

PG_FUNCTION_INFO_V1(simhash128_ball_center);
Datum
simhash128_ball_center(PG_FUNCTION_ARGS)
{
	Simhash128Ball *ball = PG_GETARG_SIMHASH128_BALL_P(0);

	PG_RETURN_SIMHASH128_P(simhash128_make(ball->center.hi, ball->center.lo));
}

PG_FUNCTION_INFO_V1(simhash128_ball_radius);
Datum
simhash128_ball_radius(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT32(PG_GETARG_SIMHASH128_BALL_P(0)->radius);
}

/* ---- predicates ---- */

PG_FUNCTION_INFO_V1(simhash128_in_ball);
Datum
simhash128_in_ball(PG_FUNCTION_ARGS)
{
	Simhash128Ball *ball = PG_GETARG_SIMHASH128_BALL_P(1);

	PG_RETURN_BOOL(simhash128_distance_of(PG_GETARG_SIMHASH128_P(0), &ball->center) <= ball->radius);
}

PG_FUNCTION_INFO_V1(simhash128_ball_contains);
Datum
simhash128_ball_contains(PG_FUNCTION_ARGS)
{
	Simhash128Ball *ball = PG_GETARG_SIMHASH128_BALL_P(0);

	PG_RETURN_BOOL(simhash128_distance_of(PG_GETARG_SIMHASH128_P(1), &ball->center) <= ball->radius);
}

PG_FUNCTION_INFO_V1(simhash128_within);
Datum
simhash128_within(PG_FUNCTION_ARGS)
{
	simhash_check_threshold("max_distance", PG_GETARG_INT32(2), SIMHASH128_BITS);
	PG_RETURN_BOOL(simhash128_distance_of(PG_GETARG_SIMHASH128_P(0), PG_GETARG_SIMHASH128_P(1)) <=
				   PG_GETARG_INT32(2));
}

PG_FUNCTION_INFO_V1(simhash128_at_distance);
Datum
simhash128_at_distance(PG_FUNCTION_ARGS)
{
	simhash_check_threshold("distance", PG_GETARG_INT32(2), SIMHASH128_BITS);
	PG_RETURN_BOOL(simhash128_distance_of(PG_GETARG_SIMHASH128_P(0), PG_GETARG_SIMHASH128_P(1)) ==
				   PG_GETARG_INT32(2));
}
