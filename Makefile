# simhash: PGXS build.  `make`, `make install`, `make installcheck`.
EXTENSION = simhash
MODULE_big = simhash
OBJS = $(patsubst %.c,%.o,$(wildcard src/*.c))
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

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

.PHONY: prove_installcheck dist
prove_installcheck:
	$(prove_installcheck)

# the release archive for PGXN: the committed tree of HEAD (tag it first)
EXTVERSION = $(shell sed -n "s/^default_version = '\(.*\)'/\1/p" $(EXTENSION).control)
dist:
	git archive --format=zip --prefix=$(EXTENSION)-$(EXTVERSION)/ -o $(EXTENSION)-$(EXTVERSION).zip HEAD

# PostgreSQL 15 is the oldest version the code compiles against (and the only one tested)
ifeq ($(shell test "$(MAJORVERSION)" -lt 15 2>/dev/null && echo old),old)
$(error simhash needs PostgreSQL 15 or later; $(PG_CONFIG) is PostgreSQL $(VERSION))
endif
