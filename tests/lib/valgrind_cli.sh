#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# valgrind_cli.sh - stands in for the tracebuf CLI in the .valgrind tests
# (cmake -DTB_VALGRIND=ON; make test-valgrind): runs $TB_CLI_REAL under
# memcheck with $TB_VALGRIND_OPTS.  The command a `record` runs is exec'd
# natively (no --trace-children).  A memcheck error exits 99.
# shellcheck disable=SC2086  # TB_VALGRIND_OPTS is a word list
exec valgrind ${TB_VALGRIND_OPTS:?} "${TB_CLI_REAL:?}" "$@"
