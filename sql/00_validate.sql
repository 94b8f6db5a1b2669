-- Every operator class of the extension passes its access method's validator,
-- and every object of the extension has a comment.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS simhash;
RESET client_min_messages;

SELECT am.amname, opc.opcname, amvalidate(opc.oid)
FROM pg_opclass opc JOIN pg_am am ON am.oid = opc.opcmethod
WHERE opc.opcname LIKE 'simhash%'
ORDER BY 1, 2;

-- objects without a COMMENT (should be none)
SELECT pg_describe_object(d.classid, d.objid, 0) AS uncommented
FROM pg_depend d
JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'simhash'
WHERE d.deptype = 'e'
  AND obj_description(d.objid, (SELECT relname FROM pg_class WHERE oid = d.classid)) IS NULL
  AND d.classid <> 'pg_cast'::regclass
  AND NOT (d.classid = 'pg_type'::regclass AND EXISTS (SELECT 1 FROM pg_type WHERE oid = d.objid AND typelem <> 0 AND typname LIKE '\_%'))
ORDER BY 1;

-- functions that are not IMMUTABLE or not PARALLEL SAFE say why by their name
SELECT proname, provolatile, proparallel
FROM pg_proc p JOIN pg_depend d ON d.objid = p.oid AND d.classid = 'pg_proc'::regclass AND d.deptype = 'e'
JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'simhash'
WHERE provolatile <> 'i' OR proparallel <> 's'
ORDER BY 1;
