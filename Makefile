# simhash: PGXS build.  `make`, `make install`, `make installcheck`.
EXTENSION = simhash
MODULE_big = simhash
OBJS = $(patsubst %.c,%.o,$(wildcard src/*.c))
# the full script of the current version and the update scripts; versions
# before it are not installed fresh (test/upgrade/ keeps 0.1.0's full script
# for the test of the update scripts, test/t/006_upgrade.pl)
DATA = $(wildcard sql/$(EXTENSION)--*.sql)
HEADERS = src/simhash.h

# regression tests: sql/NAME.sql and expected/NAME.out (install scripts are sql/simhash--*.sql)
TESTS = $(sort $(filter-out $(DATA),$(wildcard sql/*.sql)))
REGRESS = $(patsubst sql/%.sql,%,$(TESTS))
REGRESS_OPTS = --dbname=contrib_regression
# TAP tests (test/t/*.pl): `make installcheck` runs them after pg_regress,
# `make prove_installcheck` alone; both need a non-root user (initdb refuses root)
# isolation tests: test/isolation/specs/NAME.spec and test/isolation/expected/NAME.out
ISOLATION = $(patsubst test/isolation/specs/%.spec,%,$(sort $(wildcard test/isolation/specs/*.spec)))
ISOLATION_OPTS = --inputdir=test/isolation
TAP_TESTS = 1
PROVE_TESTS = test/t/*.pl

# -Wextra minus the warnings PostgreSQL's own headers trigger
PG_CFLAGS = -Wall -Wextra -Wno-unused-parameter -Wno-sign-compare -Wno-missing-field-initializers
ifdef WERROR
PG_CFLAGS += -Werror
endif
# SIMHASH_NO_AVX512=1: the index's page loops without AVX-512 (for a CPU
# or a tool without it; CI tests them so on PostgreSQL 18)
ifdef SIMHASH_NO_AVX512
PG_CPPFLAGS += -DSIMHASH_NO_AVX512
endif

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# PGXS tracks no header: every object (and its bitcode for the JIT) is built
# again when a header of src/ changes, so that no object keeps the layout of
# a structure that changed (a `git pull` then `make` would mix the two)
$(OBJS) $(OBJS:.o=.bc): $(wildcard src/*.h)

.PHONY: prove_installcheck dist install-drop-old-scripts
# an installation by an earlier `make install` may still hold 0.1.0's full script
install: install-drop-old-scripts
install-drop-old-scripts:
	rm -f '$(DESTDIR)$(datadir)/extension/$(EXTENSION)--0.1.0.sql'

prove_installcheck:
	$(prove_installcheck)

# the release archive for PGXN: the committed tree of HEAD (tag it first),
# checked against META.json's spec (test/pgxn-meta.py)
EXTVERSION = $(shell sed -n "s/^default_version = '\(.*\)'/\1/p" $(EXTENSION).control)
dist:
	git archive --format=zip --prefix=$(EXTENSION)-$(EXTVERSION)/ -o $(EXTENSION)-$(EXTVERSION).zip HEAD
	python3 test/pgxn-meta.py $(EXTENSION)-$(EXTVERSION).zip

# PostgreSQL 15 is the oldest version the code compiles against; CI builds and
# tests 15, 17 and 18 (16 is packaged by no Debian release, so it is untested)
ifeq ($(shell test "$(MAJORVERSION)" -lt 15 2>/dev/null && echo old),old)
$(error simhash refuses PostgreSQL $(VERSION) ($(PG_CONFIG)): it needs 15 or later, for InitMaterializedSRF, MarkGUCPrefixReserved and the tuplesort options 15 introduced)
endif
ifeq ($(filter 15 17 18,$(MAJORVERSION)),)
$(warning simhash is tested on PostgreSQL 15, 17 and 18, not on $(MAJORVERSION) ($(PG_CONFIG)): run test/run-tests.sh before relying on it)
endif
