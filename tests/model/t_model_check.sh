#!/bin/bash
# SPDX-License-Identifier: MIT
# t_model_check - the Promela model of the write protocol (model/tracebuf.pml)
# verifies exhaustively, and its mutants are caught (model/check.sh quick).
# The model is of the rseq protocol and does not depend on the session: it
# runs once, in the rseq variant.
set -u
src=${TB_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
if [ -n "${TRACEBUF_NO_RSEQ:-}" ] && [ "${TRACEBUF_NO_RSEQ}" != 0 ]; then
  echo "SKIP: the model is checked once, in the rseq variant of this test"
  exit 77
fi
command -v spin >/dev/null || { echo "SKIP: spin not installed (apt-get install spin)"; exit 77; }
exec bash "$src/model/check.sh" quick
