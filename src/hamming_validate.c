/*
 * hamming_validate.c
 *	  amvalidate of the "hamming" access method: an operator class may hold
 *	  the operators <@ (simhash, simhash_ball), % and = (simhash, simhash)
 *	  as search strategies 1 to 3, and <-> (simhash, simhash) returning
 *	  integer as ordering strategy 4 (sorted by a btree family that can sort
 *	  integers), and no support function.
 */
#include "strategy.h"
#include "hamming.h"

#include "access/amvalidate.h"
#include "access/htup_details.h"
#include "catalog/pg_amop.h"
#include "catalog/pg_amproc.h"
#include "catalog/pg_opclass.h"
#include "catalog/pg_opfamily.h"
#include "catalog/pg_type.h"
#include "utils/builtins.h"
#include "utils/regproc.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"

static char *
opfamily_name(Oid opfamilyoid)
{
	HeapTuple	tuple = SearchSysCache1(OPFAMILYOID, ObjectIdGetDatum(opfamilyoid));
	char	   *name;

	if (!HeapTupleIsValid(tuple))
		elog(ERROR, "cache lookup failed for operator family %u", opfamilyoid);
	name = pstrdup(NameStr(((Form_pg_opfamily) GETSTRUCT(tuple))->opfname));
	ReleaseSysCache(tuple);
	return name;
}

bool
hamming_validate(Oid opclassoid)
{
	bool		result = true;
	HeapTuple	classtup;
	Form_pg_opclass classform;
	Oid			opfamilyoid;
	Oid			opcintype;
	char	   *opfamilyname;
	CatCList   *oprlist;
	CatCList   *proclist;
	int			i;

	classtup = SearchSysCache1(CLAOID, ObjectIdGetDatum(opclassoid));
	if (!HeapTupleIsValid(classtup))
		elog(ERROR, "cache lookup failed for operator class %u", opclassoid);
	classform = (Form_pg_opclass) GETSTRUCT(classtup);
	opfamilyoid = classform->opcfamily;
	opcintype = classform->opcintype;
	opfamilyname = opfamily_name(opfamilyoid);

	oprlist = SearchSysCacheList1(AMOPSTRATEGY, ObjectIdGetDatum(opfamilyoid));
	proclist = SearchSysCacheList1(AMPROCNUM, ObjectIdGetDatum(opfamilyoid));

	for (i = 0; i < proclist->n_members; i++)
	{
		Form_pg_amproc procform = (Form_pg_amproc) GETSTRUCT(&proclist->members[i]->tuple);

		ereport(INFO,
				(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
				 errmsg("operator family \"%s\" of access method %s contains function %s with support number %d, but the method has no support functions",
						opfamilyname, "hamming", format_procedure(procform->amproc),
						procform->amprocnum)));
		result = false;
	}

	for (i = 0; i < oprlist->n_members; i++)
	{
		Form_pg_amop oprform = (Form_pg_amop) GETSTRUCT(&oprlist->members[i]->tuple);
		bool		ok;

		if (oprform->amopstrategy < 1 || oprform->amopstrategy > HAMMING_NSTRATEGIES)
		{
			ereport(INFO,
					(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
					 errmsg("operator family \"%s\" of access method %s contains operator %s with invalid strategy number %d",
							opfamilyname, "hamming", format_operator(oprform->amopopr),
							oprform->amopstrategy)));
			result = false;
			continue;
		}
		if (oprform->amopstrategy == SIMHASH_STRATEGY_NEAREST)
			ok = oprform->amoppurpose == AMOP_ORDER &&
				opfamily_can_sort_type(oprform->amopsortfamily, INT4OID) &&
				check_amop_signature(oprform->amopopr, INT4OID, opcintype, opcintype);
		else
			ok = oprform->amoppurpose == AMOP_SEARCH &&
				check_amop_signature(oprform->amopopr, BOOLOID, opcintype,
									 oprform->amopstrategy == SIMHASH_STRATEGY_IN_BALL ?
									 oprform->amoprighttype : opcintype);
		if (!ok)
		{
			ereport(INFO,
					(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
					 errmsg("operator family \"%s\" of access method %s contains operator %s with a wrong signature or purpose for strategy %d",
							opfamilyname, "hamming", format_operator(oprform->amopopr),
							oprform->amopstrategy)));
			result = false;
		}
	}

	ReleaseCatCacheList(proclist);
	ReleaseCatCacheList(oprlist);
	ReleaseSysCache(classtup);
	return result;
}
