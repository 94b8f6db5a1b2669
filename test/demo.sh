#!/usr/bin/env bash
# test/demo.sh: the main job, from a fresh Debian 12 machine.
#   sudo bash test/demo.sh
# Installs what is missing, builds and installs simhash, starts a throwaway
# PostgreSQL cluster, loads 268 real documents (test/data/sample.tsv), and
# prints near-duplicate lookups and groups.  The cluster is removed at exit.
set -euo pipefail
cd "$(dirname "$0")/.."
source test/cluster.sh
source test/deps.sh

prepare_machine demo
PGPORT_WANTED=54332 start_cluster "$work/demo"
psql -X -q -f test/demo.sql
