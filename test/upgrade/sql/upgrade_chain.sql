-- The upgrade chain from the first version reaches the current one, and an
-- upgraded installation has the same objects as a fresh one, object by
-- object: a fresh CREATE EXTENSION runs the full script of the current
-- version (simhash--0.4.0.sql), the upgrade runs simhash--0.1.0.sql and
-- every update script after it, and both must define each object alike.
SET client_min_messages = warning;
DROP EXTENSION IF EXISTS simhash CASCADE;
RESET client_min_messages;
-- every object of the installed extension, with what defines it: its
-- catalog row (other objects named, never by oid) and its comment; array
-- types are members from PostgreSQL 16 on (not on 15), so they are left out
-- for the same list on every version
CREATE FUNCTION pg_temp.simhash_objects() RETURNS TABLE (object text, definition text)
LANGUAGE sql AS $$
SELECT pg_describe_object(d.classid, d.objid, 0),
       concat_ws(' | ',
         CASE d.classid
         WHEN 'pg_proc'::regclass THEN
           (SELECT concat_ws(' ', p.prokind, p.provolatile, p.proisstrict, p.proparallel, p.proleakproof,
                             p.prosecdef, p.procost, p.prorows, p.prosupport::regproc, (SELECT l.lanname FROM pg_language l WHERE l.oid = p.prolang),
                             pg_get_function_arguments(p.oid), pg_get_function_result(p.oid), p.prosrc, p.probin,
                             (SELECT concat_ws(' ', a.aggtransfn::regproc, a.aggfinalfn::regproc, a.aggcombinefn::regproc,
                                               a.aggserialfn::regproc, a.aggdeserialfn::regproc, a.aggtranstype::regtype,
                                               a.aggtransspace, a.agginitval, a.aggfinalmodify)
                              FROM pg_aggregate a WHERE a.aggfnoid = p.oid))
            FROM pg_proc p WHERE p.oid = d.objid)
         WHEN 'pg_type'::regclass THEN
           (SELECT concat_ws(' ', t.typtype, t.typlen, t.typbyval, t.typcategory, t.typalign, t.typstorage,
                             t.typinput::regproc, t.typoutput::regproc, t.typreceive::regproc, t.typsend::regproc,
                             t.typmodin::regproc, t.typmodout::regproc, t.typanalyze::regproc, t.typelem::regtype)
            FROM pg_type t WHERE t.oid = d.objid)
         WHEN 'pg_operator'::regclass THEN
           (SELECT concat_ws(' ', o.oprkind, o.oprcanmerge, o.oprcanhash, o.oprresult::regtype,
                             o.oprcode::regprocedure, o.oprcom::regoperator, o.oprnegate::regoperator,
                             o.oprrest::regproc, o.oprjoin::regproc)
            FROM pg_operator o WHERE o.oid = d.objid)
         WHEN 'pg_cast'::regclass THEN
           (SELECT concat_ws(' ', c.castfunc::regprocedure, c.castcontext, c.castmethod)
            FROM pg_cast c WHERE c.oid = d.objid)
         WHEN 'pg_am'::regclass THEN
           (SELECT concat_ws(' ', a.amtype, a.amhandler::regproc) FROM pg_am a WHERE a.oid = d.objid)
         WHEN 'pg_opclass'::regclass THEN
           (SELECT concat_ws(' ', c.opcdefault, c.opcintype::regtype, c.opckeytype::regtype,
                             pg_describe_object('pg_opfamily'::regclass, c.opcfamily, 0))
            FROM pg_opclass c WHERE c.oid = d.objid)
         WHEN 'pg_opfamily'::regclass THEN
           (SELECT concat_ws('; ',
                     (SELECT string_agg(concat_ws(' ', pg_describe_object('pg_amop'::regclass, a.oid, 0),
                                                  a.amoppurpose, a.amopsortfamily::regclass), '; ' ORDER BY a.amopstrategy)
                      FROM pg_amop a WHERE a.amopfamily = d.objid),
                     (SELECT string_agg(pg_describe_object('pg_amproc'::regclass, a.oid, 0), '; '
                                        ORDER BY a.amprocnum, a.amproclefttype, a.amprocrighttype)
                      FROM pg_amproc a WHERE a.amprocfamily = d.objid)))
         END,
         obj_description(d.objid, d.classid::regclass::name))
FROM pg_depend d
WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
  AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'simhash')
  AND NOT EXISTS (SELECT FROM pg_type t WHERE d.classid = 'pg_type'::regclass AND t.oid = d.objid AND t.typcategory = 'A')
$$;
CREATE EXTENSION simhash VERSION '0.1.0';
SELECT extversion FROM pg_extension WHERE extname = 'simhash';
-- fingerprints of 0.1.0 survive an upgrade unchanged
CREATE TABLE upgrade_docs (body text, fp simhash);
INSERT INTO upgrade_docs VALUES ('The quick brown fox jumps over the lazy dog', simhash('The quick brown fox jumps over the lazy dog'::text));
ALTER EXTENSION simhash UPDATE;
SELECT extversion = (SELECT default_version FROM pg_available_extensions WHERE name = 'simhash') AS at_default_version
FROM pg_extension WHERE extname = 'simhash';
SELECT fp = simhash(body) AS fingerprint_unchanged FROM upgrade_docs;
CREATE TEMP TABLE upgraded_objects AS SELECT * FROM pg_temp.simhash_objects();
DROP TABLE upgrade_docs;
DROP EXTENSION simhash;
CREATE EXTENSION simhash;
CREATE TEMP TABLE fresh_objects AS SELECT * FROM pg_temp.simhash_objects();
-- the two installations side by side: no object missing on either side, and
-- none defined differently (each listed here would be a difference)
SELECT (SELECT count(*) FROM fresh_objects) AS objects,
       (SELECT count(*) FROM upgraded_objects) AS upgraded_objects;
SELECT coalesce(f.object, u.object) AS object,
       f.definition AS fresh, u.definition AS upgraded
FROM fresh_objects f FULL JOIN upgraded_objects u ON u.object = f.object
WHERE f.definition IS DISTINCT FROM u.definition
ORDER BY 1;
-- every object was compared by its definition, not only by its name
SELECT count(*) AS objects_without_definition FROM fresh_objects WHERE definition = '' OR definition IS NULL;

-- a role without superuser that may create schemas installs 0.1.0 (the
-- extension is trusted) and updates it through every script
SET client_min_messages = warning;
DROP EXTENSION simhash;
DROP ROLE IF EXISTS regress_simhash_upgrade_low;
RESET client_min_messages;
CREATE ROLE regress_simhash_upgrade_low NOSUPERUSER NOCREATEDB NOCREATEROLE;
SELECT format('GRANT CREATE ON DATABASE %I TO regress_simhash_upgrade_low', current_database()) \gexec
SET ROLE regress_simhash_upgrade_low;
CREATE SCHEMA upgrade_low;
CREATE EXTENSION simhash SCHEMA upgrade_low VERSION '0.1.0';
ALTER EXTENSION simhash UPDATE;
SELECT e.extversion = v.default_version AS at_default_version, pg_get_userbyid(e.extowner) AS owner
FROM pg_extension e JOIN pg_available_extensions v ON v.name = e.extname WHERE e.extname = 'simhash';
DROP EXTENSION simhash;
DROP SCHEMA upgrade_low;
RESET ROLE;
SELECT format('REVOKE CREATE ON DATABASE %I FROM regress_simhash_upgrade_low', current_database()) \gexec
DROP ROLE regress_simhash_upgrade_low;
