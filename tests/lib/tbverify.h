/* SPDX-License-Identifier: MIT */
/*
 * tbverify.h - check a trace directory the consumer wrote (tbverify.c).
 *
 * Walks every packet of every stream of DIR and checks: whole packets only,
 * headers sane, timestamps monotonic per stream, events_discarded never
 * decreasing, every record inside its packet, workload:* records valid
 * (check == value ^ (seq * K) ^ thread), no (event, thread, seq) twice, and
 * with written >= 0: written == delivered + discarded (the last packet's
 * events_discarded per stream); with no_loss: nothing discarded.  Prints
 * "delivered=.. discarded=.. packets=.. streams=.." unless quiet.
 * Return: 0 when every check holds, 1 otherwise (what failed is printed).
 */
#ifndef TB_TESTS_TBVERIFY_H
#define TB_TESTS_TBVERIFY_H

#include <stdint.h>

int tbv_verify_dir(const char *dir, int64_t written, int no_loss, int quiet);

#endif
