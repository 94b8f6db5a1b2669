/*
 * support.c
 *	  Planner support: how "fp <~> q <= k" becomes an index scan.
 *
 * 1. The comparison operators between simhash_distance (what <~> returns)
 *	  and integer carry simhash_distance_support.  At simplification it
 *	  rewrites "a <~> b <= k" (also <, =, and the commuted forms) into the
 *	  boolean function simhash_within(a, b, k) (simhash_at_distance for =),
 *	  with an exact integer comparison beside it when k may be outside
 *	  0..64.
 * 2. Those functions carry simhash_within_support.  When either fingerprint
 *	  argument is an indexed column, it offers the index condition
 *	  "column <@ simhash_ball(other, k)", which the GIN and hamming classes
 *	  serve (a GIN index declines when a sequential scan, or a hamming
 *	  index on the same key, would be faster: see gin_cost.c).  The index condition is exact for
 *	  simhash_within and lossy for simhash_at_distance.  It also estimates
 *	  their selectivity.
 * 3. Restriction and join estimators of the <@, @> and % operators.
 *
 * 4. simhash_hamming_support plans "a <~> b" as "a <-> b" for nearest-first
 *	  GiST and hamming scans.
 *
 * The same holds for simhash128: "a <~> b <= k" (simhash128_distance)
 * becomes simhash128_within(a, b, k), whose index condition is
 * "column <@ simhash128_ball(other, k)".
 *
 * Selectivity is the share of uniformly random fingerprints within k bits,
 * a fair model for fingerprints of unrelated documents.
 */
#include "strategy.h"
#include "mih.h"
#include "ball.h"
#include "settings.h"
#include "gin_plan.h"
#include "support.h"
#include "simhash128.h"

#include "access/htup_details.h"
#include "catalog/pg_am.h"
#include "commands/defrem.h"
#include "catalog/namespace.h"
#include "catalog/pg_operator.h"
#include "catalog/pg_type.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "nodes/supportnodes.h"
#include "optimizer/optimizer.h"
#include "parser/parse_func.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/selfuncs.h"
#include "utils/syscache.h"

#define DEFAULT_ESTIMATE_DISTANCE 3

/* an object of the extension, found in the schema of one of its functions */
static Oid
extension_function(Oid sibling, const char *name, int nargs, Oid *argtypes)
{
	char	   *nsp = get_namespace_name(get_func_namespace(sibling));

	return LookupFuncName(list_make2(makeString(nsp), makeString(pstrdup(name))),
						  nargs, argtypes, true);
}

static Oid
extension_type(Oid sibling, const char *name)
{
	return GetSysCacheOid2(TYPENAMENSP, Anum_pg_type_oid, CStringGetDatum(name),
						   ObjectIdGetDatum(get_func_namespace(sibling)));
}

/*
 * Is node a distance of the same schema: hamming_distance or
 * simhash128_distance (the <~> operators), possibly already planned as
 * hamming_distance_integer or simhash128_distance_integer (<->) seen as a
 * simhash_distance?
 */
static bool
is_distance_call(Node *node, Oid sibling, Node **a, Node **b)
{
	Oid			funcid;
	List	   *args;
	char	   *name;

	if (IsA(node, RelabelType))
		node = (Node *) ((RelabelType *) node)->arg;
	if (IsA(node, OpExpr))
	{
		funcid = get_opcode(((OpExpr *) node)->opno);
		args = ((OpExpr *) node)->args;
	}
	else if (IsA(node, FuncExpr))
	{
		funcid = ((FuncExpr *) node)->funcid;
		args = ((FuncExpr *) node)->args;
	}
	else
		return false;
	if (list_length(args) != 2 || get_func_namespace(funcid) != get_func_namespace(sibling))
		return false;
	name = get_func_name(funcid);
	if (name == NULL || (strcmp(name, "hamming_distance") != 0 &&
						 strcmp(name, "hamming_distance_integer") != 0 &&
						 strcmp(name, "simhash128_distance") != 0 &&
						 strcmp(name, "simhash128_distance_integer") != 0))
		return false;
	*a = linitial(args);
	*b = lsecond(args);
	return true;
}

/* is this type the extension's simhash128 (else it is simhash)? */
static bool
is_wide(Oid type, Oid sibling)
{
	return type == extension_type(sibling, "simhash128");
}

/* simhash_at_distance or simhash128_at_distance, rather than ..._within? */
static bool
is_at_distance(Oid funcid)
{
	char	   *name = get_func_name(funcid);

	return strcmp(name, "simhash_at_distance") == 0 || strcmp(name, "simhash128_at_distance") == 0;
}

/* the call of a SupportRequestSimplify on a two-argument function, or NULL */
static FuncExpr *
binary_simplify_call(Node *rawreq)
{
	FuncExpr   *call;

	if (!IsA(rawreq, SupportRequestSimplify))
		return NULL;
	call = ((SupportRequestSimplify *) rawreq)->fcall;
	return list_length(call->args) == 2 ? call : NULL;
}

static Node *
int4_const(int32 value)
{
	return (Node *) makeConst(INT4OID, -1, InvalidOid, sizeof(int32), Int32GetDatum(value), false, true);
}

/* LEAST(GREATEST(k, 0), bits): k brought into the range of a threshold */
static Node *
clamp_distance(Node *k, int bits)
{
	MinMaxExpr *greatest = makeNode(MinMaxExpr);
	MinMaxExpr *least = makeNode(MinMaxExpr);

	greatest->minmaxtype = least->minmaxtype = INT4OID;
	greatest->op = IS_GREATEST;
	greatest->args = list_make2(k, int4_const(0));
	greatest->location = -1;
	least->op = IS_LEAST;
	least->args = list_make2(greatest, int4_const(bits));
	least->location = -1;
	return (Node *) least;
}

/*
 * "(a <-> b) op k" with the extension's integer distance and core's integer
 * operator op: the exact comparison, which no support function rewrites
 */
static Expr *
integer_comparison(Oid sibling, const char *op, Node *a, Node *b, Node *k)
{
	Oid			distance_op;
	Oid			compare_op;
	Expr	   *distance;
	OpExpr	   *result;

	distance_op = OpernameGetOprid(list_make2(makeString(get_namespace_name(get_func_namespace(sibling))),
											  makeString("<->")),
								   exprType(a), exprType(b));
	compare_op = OpernameGetOprid(list_make2(makeString("pg_catalog"), makeString(pstrdup(op))),
								  INT4OID, exprType(k));
	if (!OidIsValid(distance_op) || !OidIsValid(compare_op))
		return NULL;
	distance = make_opclause(distance_op, INT4OID, false, (Expr *) copyObject(a),
							 (Expr *) copyObject(b), InvalidOid, InvalidOid);
	set_opfuncid((OpExpr *) distance);
	result = (OpExpr *) make_opclause(compare_op, BOOLOID, false, distance, (Expr *) copyObject(k),
									  InvalidOid, InvalidOid);
	set_opfuncid(result);
	return (Expr *) result;
}

/*
 * "d <= k" (and <, =, the commuted forms) with d = a <~> b becomes
 * simhash_within(a, b, k) (simhash_at_distance for =), which an index can
 * answer.  Those functions take a threshold of 0..64 (0..128 for
 * simhash128) and reject any other, but the comparison is core's integer
 * comparison and takes any k.  So when k is a constant within the range the
 * call is simhash_within(a, b, k); otherwise (a constant outside it, a
 * parameter, a column of another table) it is
 *   simhash_within(a, b, LEAST(GREATEST(k, 0), 64)) AND (a <-> b) <= k
 * whose first half an index answers and whose second keeps the answer the
 * comparison's, row for row, whatever k is.
 */
PG_FUNCTION_INFO_V1(simhash_distance_support);
Datum
simhash_distance_support(PG_FUNCTION_ARGS)
{
	FuncExpr   *call = binary_simplify_call((Node *) PG_GETARG_POINTER(0));
	char	   *name;
	Node	   *left;
	Node	   *right;
	Node	   *a;
	Node	   *b;
	Node	   *k;
	Node	   *given_k;
	bool		strict_less;	/* "<": the radius is k - 1 */
	bool		equal;
	bool		wide;
	int			bits;
	Oid			argtypes[3];
	Oid			target;
	Expr	   *exact;

	if (call == NULL)
		PG_RETURN_POINTER(NULL);
	name = get_func_name(call->funcid);
	left = linitial(call->args);
	right = lsecond(call->args);

	equal = strcmp(name, "simhash_distance_eq") == 0;
	if (strcmp(name, "simhash_distance_le") == 0 || strcmp(name, "simhash_distance_lt") == 0 ||
		(equal && is_distance_call(left, call->funcid, &a, &b)))
	{
		/* d <= k, d < k, d = k */
		if (!is_distance_call(left, call->funcid, &a, &b))
			PG_RETURN_POINTER(NULL);
		k = right;
		strict_less = strcmp(name, "simhash_distance_lt") == 0;
	}
	else if (strcmp(name, "simhash_distance_ge") == 0 || strcmp(name, "simhash_distance_gt") == 0 || equal)
	{
		/* k >= d, k > d, k = d */
		if (!is_distance_call(right, call->funcid, &a, &b))
			PG_RETURN_POINTER(NULL);
		k = left;
		strict_less = strcmp(name, "simhash_distance_gt") == 0;
	}
	else
		PG_RETURN_POINTER(NULL);

	given_k = k;
	if (strict_less)
	{
		if (IsA(k, Const))
		{
			Const	   *c = (Const *) k;

			if (c->constisnull || DatumGetInt32(c->constvalue) == PG_INT32_MIN)
				PG_RETURN_POINTER(NULL);
			k = int4_const(DatumGetInt32(c->constvalue) - 1);
		}
		else
		{
			/* k - 1, with k raised to INT_MIN + 1 first: "d < INT_MIN" stays false */
			k = (Node *) makeFuncExpr(F_INT4LARGER, INT4OID, list_make2(k, int4_const(PG_INT32_MIN + 1)),
									  InvalidOid, InvalidOid, COERCE_EXPLICIT_CALL);
			k = (Node *) makeFuncExpr(F_INT4MI, INT4OID, list_make2(k, int4_const(1)),
									  InvalidOid, InvalidOid, COERCE_EXPLICIT_CALL);
		}
	}

	argtypes[0] = exprType(a);
	argtypes[1] = exprType(b);
	argtypes[2] = INT4OID;
	wide = is_wide(argtypes[0], call->funcid);
	bits = wide ? SIMHASH128_BITS : SIMHASH_BITS;
	target = extension_function(call->funcid,
								psprintf("%s_%s", wide ? "simhash128" : "simhash",
										 equal ? "at_distance" : "within"),
								3, argtypes);
	if (!OidIsValid(target))
		PG_RETURN_POINTER(NULL);

	/* a constant threshold within the range (or NULL): the function alone */
	if (IsA(k, Const) && (((Const *) k)->constisnull ||
						  (DatumGetInt32(((Const *) k)->constvalue) >= 0 &&
						   DatumGetInt32(((Const *) k)->constvalue) <= bits)))
		PG_RETURN_POINTER(makeFuncExpr(target, BOOLOID, list_make3(a, b, k),
									   InvalidOid, InvalidOid, COERCE_EXPLICIT_CALL));

	exact = integer_comparison(call->funcid, equal ? "=" : strict_less ? "<" : "<=", a, b, given_k);
	if (exact == NULL)
		PG_RETURN_POINTER(NULL);
	if (IsA(k, Const))
		k = int4_const(Max(0, Min(DatumGetInt32(((Const *) k)->constvalue), bits)));
	else
		k = clamp_distance(k, bits);
	PG_RETURN_POINTER(make_andclause(list_make2(makeFuncExpr(target, BOOLOID, list_make3(a, b, k),
															 InvalidOid, InvalidOid,
															 COERCE_EXPLICIT_CALL),
												exact)));
}

/*
 * hamming_distance(a, b), the <~> operator, is planned as the <-> operator
 * (same function, integer result) relabeled as simhash_distance: the value
 * and type are unchanged, and "ORDER BY a <~> b" now matches the ordering
 * operator <-> of the GiST opclass (pathkeys look through the relabeling).
 */
PG_FUNCTION_INFO_V1(simhash_hamming_support);
Datum
simhash_hamming_support(PG_FUNCTION_ARGS)
{
	FuncExpr   *call = binary_simplify_call((Node *) PG_GETARG_POINTER(0));
	Node	   *a;
	Node	   *b;
	Oid			integer_op;
	OpExpr	   *op;

	if (call == NULL)
		PG_RETURN_POINTER(NULL);
	a = linitial(call->args);
	b = lsecond(call->args);
	if (IsA(a, Const) && IsA(b, Const))
		PG_RETURN_POINTER(NULL);	/* let it be folded */

	integer_op = OpernameGetOprid(list_make2(makeString(get_namespace_name(get_func_namespace(call->funcid))),
											 makeString("<->")),
								  exprType(a), exprType(b));
	if (!OidIsValid(integer_op))
		PG_RETURN_POINTER(NULL);
	op = (OpExpr *) make_opclause(integer_op, INT4OID, false, (Expr *) a, (Expr *) b,
								  InvalidOid, InvalidOid);
	op->location = call->location;
	set_opfuncid(op);
	PG_RETURN_POINTER(makeRelabelType((Expr *) op, call->funcresulttype, -1, InvalidOid,
									  COERCE_IMPLICIT_CAST));
}

/* the extension's simhash_ball(simhash, integer) function, or simhash128_ball's */
static Oid
ball_function(Oid sibling, const char *type)
{
	Oid			argtypes[2];

	argtypes[0] = extension_type(sibling, type);
	argtypes[1] = INT4OID;
	return extension_function(sibling, psprintf("%s_ball", type), 2, argtypes);
}

/*
 * The distance that an integer operand, or a simhash_ball, stands for: known
 * for constants and for simhash_ball(center, constant), else a default.
 * sibling is a function of the extension, to find its objects by.
 */
int
simhash_estimated_distance(PlannerInfo *root, Node *node, Oid sibling)
{
	/* simhash_ball(center, k): only k matters, the ball is not evaluated */
	if (IsA(node, FuncExpr) && (((FuncExpr *) node)->funcid == ball_function(sibling, "simhash") ||
								((FuncExpr *) node)->funcid == ball_function(sibling, "simhash128")))
		return simhash_estimated_distance(root, lsecond(((FuncExpr *) node)->args), sibling);
	node = estimate_expression_value(root, node);
	if (IsA(node, Const))
	{
		Const	   *c = (Const *) node;

		if (c->constisnull)
			return DEFAULT_ESTIMATE_DISTANCE;
		if (c->consttype == INT4OID)
			return DatumGetInt32(c->constvalue);
		if (c->consttype == extension_type(sibling, "simhash_ball"))
			return DatumGetSimhashBallP(c->constvalue)->radius;
		if (c->consttype == extension_type(sibling, "simhash128_ball"))
			return DatumGetSimhash128BallP(c->constvalue)->radius;
		return DEFAULT_ESTIMATE_DISTANCE;
	}
	return DEFAULT_ESTIMATE_DISTANCE;
}

/* do two indexes of a relation have the same key (column or expression)? */
static bool
same_key(const IndexOptInfo *a, int acol, const IndexOptInfo *b)
{
	int			ai = 0;
	int			i;

	if (a->indexkeys[acol] != 0 || b->indexkeys[0] != 0)
		return a->indexkeys[acol] == b->indexkeys[0];
	/* expressions: the n-th expression belongs to the n-th zero key */
	for (i = 0; i < acol; i++)
		ai += a->indexkeys[i] == 0;
	return list_length(a->indexprs) > ai && b->indexprs != NIL &&
		equal(list_nth(a->indexprs, ai), linitial(b->indexprs));
}

/*
 * Should a GIN simhash_ops index decline "within k bits"?  GIN's own cost
 * estimate counts posting lists, not the consistent checks and heap fetches
 * that grow with k, so it would win comparisons it loses in time.  It
 * declines when its probes are modeled slower than a sequential scan (k >= 11
 * with 5 blocks), or slower than a full pass over a hamming index on the same
 * key (k >= 7 with 5 blocks) when there is one.
 */
static bool
gin_declines(SupportRequestIndexCondition *req, int k)
{
	IndexOptInfo *gin = req->index;
	int			nblocks = SIMHASH_GIN_DEFAULT_BLOCKS;
	ListCell   *lc;

	if (gin->relam != GIN_AM_OID)
		return false;
	if (gin->opclassoptions && gin->opclassoptions[req->indexcol])
		nblocks = ((SimhashGinOptions *) gin->opclassoptions[req->indexcol])->blocks;
	if (simhash_gin_slower_than_heap_scan(k, nblocks))
		return true;
	if (!simhash_gin_slower_than_packed_scan(k, nblocks))
		return false;
	foreach(lc, gin->rel->indexlist)
	{
		IndexOptInfo *other = (IndexOptInfo *) lfirst(lc);
		char	   *amname;

		if (other == gin || (other->indpred != NIL && !other->predOK))
			continue;
		amname = get_am_name(other->relam);
		if (amname != NULL && strcmp(amname, "hamming") == 0 && same_key(gin, req->indexcol, other))
			return true;
	}
	return false;
}

static Selectivity
within_selectivity_of(int k, int bits)
{
	Selectivity s = simhash_random_within_fraction_of(k, bits);

	CLAMP_PROBABILITY(s);
	return s;
}

static Selectivity
within_selectivity(int k)
{
	Selectivity s = simhash_random_within_fraction(k);

	CLAMP_PROBABILITY(s);
	return s;
}

/*
 * The operands of a call f(a, b, x) of a symmetric f whose a or b is the
 * index key: the key, the other one and x, when the last two can be
 * computed before the scan of the indexed table
 */
static bool
call_operands(SupportRequestIndexCondition *req, Node **indexed, Node **other, Node **extra)
{
	FuncExpr   *call = (FuncExpr *) req->node;
	Relids		outside;

	if (!IsA(call, FuncExpr) || list_length(call->args) != 3 || req->indexarg > 1)
		return false;
	*indexed = list_nth(call->args, req->indexarg);
	*other = list_nth(call->args, 1 - req->indexarg);
	*extra = lthird(call->args);
	if (contain_volatile_functions(*other) || contain_volatile_functions(*extra))
		return false;
	outside = bms_union(pull_varnos(req->root, *other), pull_varnos(req->root, *extra));
	return !bms_is_member(req->index->rel->relid, outside);
}

/*
 * simhash_similar(a text, b text, min_similarity): "a ~= simhash_doc(b,
 * min_similarity)" for an index of a's text (lossy: the call is checked on
 * each row the index returns), and the selectivity of the ~= operators
 */
PG_FUNCTION_INFO_V1(simhash_similar_support);
Datum
simhash_similar_support(PG_FUNCTION_ARGS)
{
	Node	   *rawreq = (Node *) PG_GETARG_POINTER(0);
	SupportRequestIndexCondition *req;
	Node	   *indexed;
	Node	   *other;
	Node	   *threshold;
	Oid			doc_type;
	Oid			near_op;
	Oid			doc_fn;
	Oid			argtypes[2] = {TEXTOID, FLOAT8OID};
	Expr	   *doc;

	if (IsA(rawreq, SupportRequestSelectivity))
	{
		/* as the ~= operators' estimator (contsel): near-duplicates are few */
		((SupportRequestSelectivity *) rawreq)->selectivity = 0.001;
		PG_RETURN_POINTER(rawreq);
	}
	if (!IsA(rawreq, SupportRequestIndexCondition))
		PG_RETURN_POINTER(NULL);
	req = (SupportRequestIndexCondition *) rawreq;
	if (!call_operands(req, &indexed, &other, &threshold))
		PG_RETURN_POINTER(NULL);
	doc_type = extension_type(req->funcid, "simhash_doc");
	doc_fn = extension_function(req->funcid, "simhash_doc", 2, argtypes);
	if (!OidIsValid(doc_type) || !OidIsValid(doc_fn))
		PG_RETURN_POINTER(NULL);
	near_op = get_opfamily_member(req->opfamily, TEXTOID, doc_type, SIMHASH_STRATEGY_IN_BALL);
	if (!OidIsValid(near_op))
		PG_RETURN_POINTER(NULL);
	doc = (Expr *) makeFuncExpr(doc_fn, doc_type, list_make2(other, threshold),
								InvalidOid, exprCollation(other), COERCE_EXPLICIT_CALL);
	req->lossy = true;
	PG_RETURN_POINTER(list_make1(make_opclause(near_op, BOOLOID, false, (Expr *) indexed, doc,
											   InvalidOid, exprCollation(indexed))));
}

PG_FUNCTION_INFO_V1(simhash_within_support);
Datum
simhash_within_support(PG_FUNCTION_ARGS)
{
	Node	   *rawreq = (Node *) PG_GETARG_POINTER(0);

	if (IsA(rawreq, SupportRequestSelectivity))
	{
		SupportRequestSelectivity *req = (SupportRequestSelectivity *) rawreq;
		int			k;
		int			bits;

		if (list_length(req->args) != 3)
			PG_RETURN_POINTER(NULL);
		k = simhash_estimated_distance(req->root, lthird(req->args), req->funcid);
		bits = is_wide(exprType(linitial(req->args)), req->funcid) ? 128 : SIMHASH_BITS;
		if (is_at_distance(req->funcid))
			req->selectivity = within_selectivity_of(k, bits) -
				(k > PG_INT32_MIN ? within_selectivity_of(k - 1, bits) : 0.0);
		else
			req->selectivity = within_selectivity_of(k, bits);
		CLAMP_PROBABILITY(req->selectivity);
		PG_RETURN_POINTER(req);
	}

	if (IsA(rawreq, SupportRequestIndexCondition))
	{
		SupportRequestIndexCondition *req = (SupportRequestIndexCondition *) rawreq;
		Node	   *indexed;
		Node	   *other;
		Node	   *k;
		Oid			simhash_type;
		const char *ball_name;
		Oid			ball_type;
		Oid			in_ball_op;
		Oid			ball_fn;
		Oid			argtypes[2];
		Expr	   *ball;

		if (!call_operands(req, &indexed, &other, &k))
			PG_RETURN_POINTER(NULL);
		if (gin_declines(req, simhash_estimated_distance(req->root, k, req->funcid)))
			PG_RETURN_POINTER(NULL);

		simhash_type = exprType(indexed);
		ball_name = is_wide(simhash_type, req->funcid) ? "simhash128_ball" : "simhash_ball";
		ball_type = extension_type(req->funcid, ball_name);
		if (!OidIsValid(ball_type))
			PG_RETURN_POINTER(NULL);
		in_ball_op = get_opfamily_member(req->opfamily, simhash_type, ball_type,
										 SIMHASH_STRATEGY_IN_BALL);
		argtypes[0] = simhash_type;
		argtypes[1] = INT4OID;
		ball_fn = extension_function(req->funcid, ball_name, 2, argtypes);
		if (!OidIsValid(in_ball_op) || !OidIsValid(ball_fn))
			PG_RETURN_POINTER(NULL);

		ball = (Expr *) makeFuncExpr(ball_fn, ball_type, list_make2(other, k),
							InvalidOid, InvalidOid, COERCE_EXPLICIT_CALL);
		req->lossy = is_at_distance(req->funcid);
		PG_RETURN_POINTER(list_make1(make_opclause(in_ball_op, BOOLOID, false,
												   (Expr *) indexed, ball,
												   InvalidOid, InvalidOid)));
	}

	PG_RETURN_POINTER(NULL);
}

/* ---- operator estimators ---- */

/* restriction and join estimator of <@ and @> (both read only these args) */
PG_FUNCTION_INFO_V1(simhash_ball_sel);
Datum
simhash_ball_sel(PG_FUNCTION_ARGS)
{
	PlannerInfo *root = (PlannerInfo *) PG_GETARG_POINTER(0);
	Oid			sibling = get_opcode(PG_GETARG_OID(1));
	List	   *args = (List *) PG_GETARG_POINTER(2);
	Oid			ball_type = extension_type(sibling, "simhash_ball");
	Oid			ball128_type = extension_type(sibling, "simhash128_ball");
	Node	   *ball;
	int			bits;

	/* the ball operand of "fp <@ ball" or "ball @> fp" */
	ball = exprType(linitial(args)) == ball_type || exprType(linitial(args)) == ball128_type ?
		linitial(args) : lsecond(args);
	bits = exprType(ball) == ball128_type ? 128 : SIMHASH_BITS;
	if (exprType(ball) != ball_type && exprType(ball) != ball128_type)
		PG_RETURN_FLOAT8(within_selectivity(DEFAULT_ESTIMATE_DISTANCE));
	PG_RETURN_FLOAT8(within_selectivity_of(simhash_estimated_distance(root, ball, sibling), bits));
}

/* restriction and join estimator of %: the threshold is the setting */
PG_FUNCTION_INFO_V1(simhash_similar_sel);
Datum
simhash_similar_sel(PG_FUNCTION_ARGS)
{
	PG_RETURN_FLOAT8(within_selectivity(simhash_max_distance_guc));
}
