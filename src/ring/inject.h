/* SPDX-License-Identifier: MIT */
/*
 * inject.h - injection points at the observable steps of the append and
 * switch protocols.  Normal builds: nothing.  TB_INJECT builds (the stress
 * build, `cmake -DTB_INJECT=ON`): each point may delay, yield or raise a
 * signal, as configured by $TB_INJECT="delay=P,yield=P,signal=P,spin=N"
 * (P in per mille; spin = iterations of the asm spin inside the critical
 * sections, see rseq.h).
 */
#ifndef TB_RING_INJECT_H
#define TB_RING_INJECT_H

#include "core/view.h"

enum {
	TB_INJ_RECORD_PREPARED = 0, /* between prepare_record() and its commit */
	TB_INJ_SWITCH_PREPARED = 1, /* between prepare_switch() and its commit */
};

#ifdef TB_INJECT
TB_HIDDEN void tb_inject(int point);
#else
static inline void tb_inject(int point)
{
	(void)point;
}
#endif

#endif
