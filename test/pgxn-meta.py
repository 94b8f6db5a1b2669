#!/usr/bin/env python3
"""test/pgxn-meta.py: checks META.json against the PGXN Meta Spec 1.0.0
(https://pgxn.org/spec/), and a release archive against META.json.

    python3 test/pgxn-meta.py [ARCHIVE.zip]

Without an argument it checks META.json of the tree: the required keys and
their types, terms, semantic versions, licenses, prerequisites, resources,
release status, that only x_ keys are custom, and that META.json agrees with
simhash.control (version) and the tree (every file it names exists).  With
ARCHIVE.zip (what `make dist` writes) it checks the archive as PGXN reads it:
one top-level directory NAME-VERSION/, META.json in it equal to the tree's,
every file META.json names inside it.  Prints one line per problem and ends
with "pgxn-meta: N passed, M failed".
"""
import json
import os
import re
import sys
import zipfile

SEMVER = re.compile(r'^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-?[0-9A-Za-z]+(\.[0-9A-Za-z]+)*)?$')
TERM = re.compile(r'^[^\s/\\\x00-\x1f]{2,}$')
TAG = re.compile(r'^[^/\\\x00-\x1f]{1,255}$')
LICENSES = {'agpl_3', 'apache_1_1', 'apache_2_0', 'artistic_1', 'artistic_2', 'bsd', 'freebsd',
            'gfdl_1_2', 'gfdl_1_3', 'gpl_1', 'gpl_2', 'gpl_3', 'lgpl_2_1', 'lgpl_3_0', 'mit',
            'mozilla_1_0', 'mozilla_1_1', 'openssl', 'perl_5', 'postgresql', 'qpl_1_0', 'ssleay',
            'sun', 'zlib', 'open_source', 'restricted', 'unrestricted', 'unknown'}
PHASES = {'configure', 'build', 'runtime', 'test', 'develop'}
RELATIONS = {'requires', 'recommends', 'suggests', 'conflicts'}
KEYS = {'abstract', 'maintainer', 'license', 'meta-spec', 'name', 'provides', 'version',
        'description', 'generated_by', 'tags', 'no_index', 'prereqs', 'release_status', 'resources'}
REQUIRED = {'abstract', 'maintainer', 'license', 'meta-spec', 'name', 'provides', 'version'}

problems = []
checks = 0


def check(ok, message):
    global checks
    checks += 1
    if not ok:
        problems.append(message)
    return ok


def version_range(value):
    # "0", a version, or comma-separated clauses "op version"
    if value == 0 or value == '0':
        return True
    if not isinstance(value, str):
        return False
    for clause in value.split(','):
        m = re.match(r'^\s*(==|!=|>=|<=|>|<)?\s*(\S+)\s*$', clause)
        if not m or not SEMVER.match(m.group(2)):
            return False
    return True


def is_string(v):
    return isinstance(v, str) and v.strip() != ''


def check_meta(meta, where, exists):
    for key in meta:
        check(key in KEYS or key.lower().startswith('x_'), '%s: unknown key %r (custom keys start with x_)' % (where, key))
    for key in REQUIRED:
        check(key in meta, '%s: required key %r missing' % (where, key))
    check(TERM.match(str(meta.get('name', ''))) is not None, '%s: name %r is not a term' % (where, meta.get('name')))
    check(SEMVER.match(str(meta.get('version', ''))) is not None, '%s: version %r is not a semantic version' % (where, meta.get('version')))
    check(is_string(meta.get('abstract')), '%s: abstract must be a non-empty string' % where)
    m = meta.get('maintainer')
    check(is_string(m) or (isinstance(m, list) and m and all(is_string(x) for x in m)),
          '%s: maintainer must be a string or a list of strings' % where)
    lic = meta.get('license')
    if isinstance(lic, str):
        check(lic in LICENSES, '%s: license %r is not one of the spec\'s names' % (where, lic))
    elif isinstance(lic, list):
        check(lic and all(x in LICENSES for x in lic), '%s: license list has an unknown name' % where)
    else:
        check(isinstance(lic, dict) and lic and all(isinstance(v, str) and v.startswith('http') for v in lic.values()),
              '%s: license must be a name, a list of names or an object of URLs' % where)
    spec = meta.get('meta-spec')
    check(isinstance(spec, dict) and spec.get('version') == '1.0.0', '%s: meta-spec.version must be "1.0.0"' % where)
    provides = meta.get('provides')
    if check(isinstance(provides, dict) and provides, '%s: provides must be a non-empty object' % where):
        for ext, p in provides.items():
            check(TERM.match(ext) is not None, '%s: provides key %r is not a term' % (where, ext))
            if not check(isinstance(p, dict), '%s: provides.%s must be an object' % (where, ext)):
                continue
            for key in p:
                check(key in {'file', 'version', 'abstract', 'docfile'} or key.lower().startswith('x_'),
                      '%s: provides.%s has unknown key %r' % (where, ext, key))
            check(SEMVER.match(str(p.get('version', ''))) is not None, '%s: provides.%s.version is not a semantic version' % (where, ext))
            for key in ('file', 'docfile'):
                if key in p or key == 'file':
                    check(is_string(p.get(key)) and exists(p.get(key, '')),
                          '%s: provides.%s.%s %r is not a file of the distribution' % (where, ext, key, p.get(key)))
    if 'tags' in meta:
        check(isinstance(meta['tags'], list) and all(isinstance(t, str) and TAG.match(t) for t in meta['tags']),
              '%s: tags must be a list of tags (no slash, backslash or control character, at most 255 characters)' % where)
    if 'release_status' in meta:
        check(meta['release_status'] in {'stable', 'testing', 'unstable'}, '%s: release_status must be stable, testing or unstable' % where)
    if 'prereqs' in meta:
        pr = meta['prereqs']
        if check(isinstance(pr, dict), '%s: prereqs must be an object' % where):
            for phase, rels in pr.items():
                check(phase in PHASES, '%s: prereqs phase %r unknown' % (where, phase))
                if not check(isinstance(rels, dict), '%s: prereqs.%s must be an object' % (where, phase)):
                    continue
                for rel, deps in rels.items():
                    check(rel in RELATIONS, '%s: prereqs.%s relation %r unknown' % (where, phase, rel))
                    if check(isinstance(deps, dict), '%s: prereqs.%s.%s must be an object' % (where, phase, rel)):
                        for name, rng in deps.items():
                            check(TERM.match(name) is not None and version_range(rng),
                                  '%s: prereqs.%s.%s.%s: %r is not a version range' % (where, phase, rel, name, rng))
    if 'resources' in meta:
        res = meta['resources']
        if check(isinstance(res, dict), '%s: resources must be an object' % where):
            for key, v in res.items():
                check(key in {'homepage', 'bugtracker', 'repository'} or key.lower().startswith('x_'),
                      '%s: resources key %r unknown' % (where, key))
            if 'homepage' in res:
                check(is_string(res['homepage']) and res['homepage'].startswith('http'), '%s: resources.homepage must be a URL' % where)
            for key, allowed in (('bugtracker', {'web', 'mailto'}), ('repository', {'url', 'web', 'type'})):
                if key in res:
                    check(isinstance(res[key], dict) and set(res[key]) <= allowed | {k for k in res[key] if k.lower().startswith('x_')},
                          '%s: resources.%s has unknown keys' % (where, key))
    if 'no_index' in meta:
        ni = meta['no_index']
        check(isinstance(ni, dict) and set(ni) <= {'file', 'directory'} and all(isinstance(v, list) for v in ni.values()),
              '%s: no_index must hold lists file and directory' % where)


root = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..')
tree_meta = json.load(open(os.path.join(root, 'META.json'), encoding='utf-8'))
check_meta(tree_meta, 'META.json', lambda f: os.path.isfile(os.path.join(root, f)))
control = open(os.path.join(root, 'simhash.control'), encoding='utf-8').read()
m = re.search(r"^default_version\s*=\s*'([^']*)'", control, re.M)
check(m and m.group(1) == tree_meta.get('version'),
      'META.json: version %r is not default_version of simhash.control (%r)' % (tree_meta.get('version'), m and m.group(1)))
for ext, p in tree_meta.get('provides', {}).items():
    check(p.get('version') == tree_meta.get('version'), 'META.json: provides.%s.version differs from version' % ext)

if len(sys.argv) > 1:
    archive = sys.argv[1]
    prefix = '%s-%s/' % (tree_meta.get('name'), tree_meta.get('version'))
    with zipfile.ZipFile(archive) as z:
        names = z.namelist()
        check(all(n.startswith(prefix) for n in names), '%s: not every entry is under %s' % (archive, prefix))
        check(os.path.basename(archive) == prefix[:-1] + '.zip', '%s: the archive is not named %s.zip' % (archive, prefix[:-1]))
        if check(prefix + 'META.json' in names, '%s: no %sMETA.json' % (archive, prefix)):
            zmeta = json.loads(z.read(prefix + 'META.json').decode('utf-8'))
            check(zmeta == tree_meta, '%s: its META.json differs from the tree\'s' % archive)
            check_meta(zmeta, archive + ':META.json', lambda f: prefix + f in names)
        for f in ('simhash.control', 'Makefile', 'README.md'):
            check(prefix + f in names, '%s: %s missing' % (archive, f))

for p in problems:
    print('pgxn-meta: ' + p)
print('pgxn-meta: %d passed, %d failed' % (checks - len(problems), len(problems)))
sys.exit(1 if problems else 0)
