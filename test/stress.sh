#!/usr/bin/env bash
# The stress tests of checkpoint/restart (test/integration/test_cr_stress.py) at full size:
# 200 checkpoints in a row on one running job, with what each process holds before and
# after printed; two jobs checkpointed at the same time; 32 ranks oversubscribed. The test
# command runs the same tests with 25 checkpoints.
#
#   test/stress.sh [CHECKPOINTS] [RANKS] [INSTALL_DIR]     (defaults: 200, 32, install)
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
CRMPI_STRESS_CHECKPOINTS=${1:-200} CRMPI_STRESS_RANKS=${2:-32} \
    CRMPI_INSTALL=${3:-$top/install} /usr/bin/python3 -m pytest -q -s -p no:cacheprovider \
    --durations=3 "$top/test/integration/test_cr_stress.py"
