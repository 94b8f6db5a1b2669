/*
 * similar_hook.c
 *	  The thresholds of the % operator and of ~= on texts are fixed when a
 *	  statement is planned.
 *
 * "a % b" means "a <~> b <= simhash.max_distance".  A planner hook rewrites
 * every "a % b" (and simhash_similar(a, b)) of the query into
 * simhash_within(a, b, <the setting's current value>) before any other
 * planner sees it, so the threshold is a constant inside the query.  That is
 * what a distributed planner such as Citus deparses and ships to the nodes
 * that hold the data: they answer with the threshold of the session that
 * asked, not with their own setting.  The rewritten condition is planned
 * like any simhash_within() (index condition, selectivity).  Likewise
 * every "a ~= b" of two texts becomes "a ~= simhash_doc(b, <the current
 * simhash.similarity_threshold>)", the same test with its threshold in the
 * query, which the text index serves as it serves the first.
 *
 * Since plans now hold the values, a change of simhash.max_distance or
 * simhash.similarity_threshold invalidates the session's cached plans
 * (prepared statements, PL/pgSQL), so that their next execution is planned
 * with the new value.
 *
 * The hook exists once the library is loaded.  A query planned before that
 * (the first query of a session, when nothing of simhash ran yet) keeps its
 * % operator (or ~=), which is then evaluated where it runs.  On the
 * coordinator that is correct; on a Citus worker, reading the worker's own
 * setting would be a silent wrong answer, so there the operator raises an
 * error instead.
 */
#include "settings.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/indexing.h"
#include "catalog/pg_extension.h"
#include "catalog/pg_type.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/planner.h"
#include "parser/parse_func.h"
#include "parser/parse_oper.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/guc.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/plancache.h"
#include "utils/syscache.h"

/* what Citus names its connections to the nodes that run shard queries */
#define CITUS_INTERNAL_APPLICATION_PREFIX "citus_internal gpid="

static planner_hook_type prev_planner_hook = NULL;

/* simhash_similar and simhash_within of the installed extension */
static bool functions_known = false;
static Oid	similar_fn = InvalidOid;
static Oid	within_fn = InvalidOid;
/* ~= of two texts (its function), ~= of a text and a simhash_doc, simhash_doc(text, float8) */
static Oid	text_near_fn = InvalidOid;
static Oid	doc_near_op = InvalidOid;
static Oid	doc_fn = InvalidOid;
static Oid	doc_type = InvalidOid;

/* any change to pg_proc (such as CREATE or DROP EXTENSION): look them up again */
static void
forget_functions(Datum arg, int cacheid, uint32 hashvalue)
{
	functions_known = false;
}

/* the schema of the simhash extension, or InvalidOid */
static Oid
extension_schema(void)
{
	Relation	rel = table_open(ExtensionRelationId, AccessShareLock);
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tuple;
	Oid			nsp = InvalidOid;

	ScanKeyInit(&key, Anum_pg_extension_extname, BTEqualStrategyNumber, F_NAMEEQ,
				CStringGetDatum("simhash"));
	scan = systable_beginscan(rel, ExtensionNameIndexId, true, NULL, 1, &key);
	tuple = systable_getnext(scan);
	if (HeapTupleIsValid(tuple))
		nsp = ((Form_pg_extension) GETSTRUCT(tuple))->extnamespace;
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	return nsp;
}

static void
look_up_functions(void)
{
	Oid			nsp;
	Oid			simhash_type;
	Oid			argtypes[3];
	List	   *name;

	if (functions_known)
		return;
	similar_fn = within_fn = text_near_fn = doc_near_op = doc_fn = doc_type = InvalidOid;
	nsp = extension_schema();
	simhash_type = OidIsValid(nsp) ?
		GetSysCacheOid2(TYPENAMENSP, Anum_pg_type_oid, CStringGetDatum("simhash"),
						ObjectIdGetDatum(nsp)) : InvalidOid;
	if (OidIsValid(simhash_type))
	{
		char	   *nspname = get_namespace_name(nsp);

		argtypes[0] = argtypes[1] = simhash_type;
		argtypes[2] = INT4OID;
		name = list_make2(makeString(nspname), makeString("simhash_similar"));
		similar_fn = LookupFuncName(name, 2, argtypes, true);
		name = list_make2(makeString(nspname), makeString("simhash_within"));
		within_fn = LookupFuncName(name, 3, argtypes, true);
		doc_type = GetSysCacheOid2(TYPENAMENSP, Anum_pg_type_oid, CStringGetDatum("simhash_doc"),
								   ObjectIdGetDatum(nsp));
		if (OidIsValid(doc_type))
		{
			argtypes[0] = argtypes[1] = TEXTOID;
			name = list_make2(makeString(nspname), makeString("simhash_near"));
			text_near_fn = LookupFuncName(name, 2, argtypes, true);
			argtypes[1] = FLOAT8OID;
			name = list_make2(makeString(nspname), makeString("simhash_doc"));
			doc_fn = LookupFuncName(name, 2, argtypes, true);
			name = list_make2(makeString(nspname), makeString("~="));
			doc_near_op = LookupOperName(NULL, name, TEXTOID, doc_type, true, -1);
		}
	}
	functions_known = true;
}

/* the two arguments of a call of simhash_similar (the % operator), or NIL */
static List *
similar_call_args(Node *node)
{
	if (IsA(node, OpExpr))
	{
		OpExpr	   *op = (OpExpr *) node;

		set_opfuncid(op);
		if (op->opfuncid == similar_fn)
			return op->args;
	}
	else if (IsA(node, FuncExpr) && ((FuncExpr *) node)->funcid == similar_fn)
		return ((FuncExpr *) node)->args;
	return NIL;
}

/* the two texts of a "a ~= b" whose threshold is the setting's, or NIL */
static List *
text_near_args(Node *node)
{
	if (IsA(node, OpExpr) && OidIsValid(text_near_fn))
	{
		OpExpr	   *op = (OpExpr *) node;

		set_opfuncid(op);
		if (op->opfuncid == text_near_fn && OidIsValid(doc_near_op) && OidIsValid(doc_fn))
			return op->args;
	}
	return NIL;
}

static bool
contains_similar(Node *node, void *context)
{
	if (node == NULL)
		return false;
	if (IsA(node, Query))
		return query_tree_walker((Query *) node, contains_similar, context, 0);
	if (similar_call_args(node) != NIL || text_near_args(node) != NIL)
		return true;
	return expression_tree_walker(node, contains_similar, context);
}

static Node *
rewrite_similar(Node *node, void *context)
{
	List	   *args;

	if (node == NULL)
		return NULL;
	if (IsA(node, Query))
		return (Node *) query_tree_mutator((Query *) node, rewrite_similar, context,
										   QTW_DONT_COPY_QUERY);
	args = similar_call_args(node);
	if (args != NIL)
	{
		Const	   *k = makeConst(INT4OID, -1, InvalidOid, sizeof(int32),
								  Int32GetDatum(simhash_max_distance_guc), false, true);
		FuncExpr   *within;

		args = (List *) expression_tree_mutator((Node *) args, rewrite_similar, context);
		within = makeFuncExpr(within_fn, BOOLOID, lappend(args, k), InvalidOid, InvalidOid,
							  COERCE_EXPLICIT_CALL);
		within->location = exprLocation(node);
		return (Node *) within;
	}
	args = text_near_args(node);
	if (args != NIL)
	{
		OpExpr	   *op = (OpExpr *) node;
		Const	   *t = makeConst(FLOAT8OID, -1, InvalidOid, sizeof(float8),
								  Float8GetDatum(simhash_similarity_threshold), false, FLOAT8PASSBYVAL);
		FuncExpr   *doc;
		OpExpr	   *near;

		args = (List *) expression_tree_mutator((Node *) args, rewrite_similar, context);
		doc = makeFuncExpr(doc_fn, doc_type, list_make2(lsecond(args), t), InvalidOid,
						   op->inputcollid, COERCE_EXPLICIT_CALL);
		near = (OpExpr *) make_opclause(doc_near_op, BOOLOID, false, (Expr *) linitial(args),
										(Expr *) doc, InvalidOid, op->inputcollid);
		near->location = op->location;
		return (Node *) near;
	}
	return expression_tree_mutator(node, rewrite_similar, context);
}

static PlannedStmt *
simhash_planner(Query *parse, const char *query_string, int cursor_options,
				ParamListInfo bound_params)
{
	look_up_functions();
	if (((OidIsValid(similar_fn) && OidIsValid(within_fn)) || OidIsValid(text_near_fn)) &&
		contains_similar((Node *) parse, NULL))
		parse = (Query *) rewrite_similar((Node *) parse, NULL);
	if (prev_planner_hook)
		return prev_planner_hook(parse, query_string, cursor_options, bound_params);
	return standard_planner(parse, query_string, cursor_options, bound_params);
}

/* assign hook of simhash.max_distance: plans that hold the old value go */
void
simhash_max_distance_assign(int newval, void *extra)
{
	if (newval != simhash_max_distance_guc)
		ResetPlanCache();
}

/* assign hook of simhash.similarity_threshold: likewise */
void
simhash_similarity_threshold_assign(double newval, void *extra)
{
	if (newval != simhash_similarity_threshold)
		ResetPlanCache();
}

void
simhash_similar_init(void)
{
	prev_planner_hook = planner_hook;
	planner_hook = simhash_planner;
	CacheRegisterSyscacheCallback(PROCOID, forget_functions, (Datum) 0);
}

/*
 * The threshold of a % that is evaluated rather than planned away: the
 * setting, except on a node that runs a shard query for Citus, where the
 * setting of the session that asked is unknown.
 */
static void
refuse_on_citus_node(const char *operator, const char *setting, const char *instead)
{
	if (application_name != NULL &&
		strncmp(application_name, CITUS_INTERNAL_APPLICATION_PREFIX,
				strlen(CITUS_INTERNAL_APPLICATION_PREFIX)) == 0)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("the %s operator reached a Citus node without its threshold", operator),
				 errdetail("The query was planned before the simhash library was loaded in the session that sent it, so %s of that session was not written into the query.", setting),
				 errhint("Write %s, or load simhash in every session of the coordinator: shared_preload_libraries = 'citus,simhash'.", instead)));
}

int
simhash_similar_threshold(void)
{
	refuse_on_citus_node("%", "simhash.max_distance", "fp <~> q <= k");
	return simhash_max_distance_guc;
}

/* the same for ~= of two texts and simhash.similarity_threshold */
double
simhash_text_threshold(void)
{
	refuse_on_citus_node("~=", "simhash.similarity_threshold", "simhash_similar(body, q, t)");
	return simhash_similarity_threshold;
}
