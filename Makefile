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

# -Wextra minus the warnings PostgreSQL's own headers trigger
PG_CFLAGS = -Wall -Wextra -Wno-unused-parameter -Wno-sign-compare -Wno-missing-field-initializers
ifdef WERROR
PG_CFLAGS += -Werror
endif

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)
