/* SPDX-License-Identifier: MIT */
/*
 * test_profile_period_lengthens_where_the_rate_starves_the_program - the
 * pace of the sampler's re-armed perf event (src/profile/prof_impl.h,
 * prof_pace_next(); profile.c, pace()): a sample that took 8 periods of the
 * thread's CPU time or more (the expiries fell in the kernel: on a VM where
 * one timer interrupt costs about a period, -F 100000 starves the program)
 * doubles the period, up to 1 ms; a run of samples that took under 4
 * periods each halves it back, the run needed doubling with each doubling
 * (a machine that cannot take the rate is not asked again every few
 * samples); the asked period is the floor.  Pure: the verdicts read no clock.
 */
#include "profile/prof_impl.h"
#include "tbtest.h"

#define US 1000ull

/* n samples in a row that each took `took` ns; returns the final multiple */
static uint32_t run(struct prof_pace *p, unsigned n, uint64_t took, uint64_t asked)
{
	for (unsigned i = 0; i < n; i++)
		p->mult = prof_pace_next(p, took, asked);
	return p->mult ? p->mult : 1;
}

int main(void)
{
	const uint64_t asked = 10 * US; /* -F 100000 */
	struct prof_pace p = { 0, 0, 0 };

	/* a healthy thread: samples within a few periods keep the asked one */
	CHECK(run(&p, 1000, 15 * US, asked) == 1);
	CHECK(run(&p, 1000, 79 * US, asked) == 1, "just under 8 periods: no change");

	/* a storm: each sample took 8 periods or more: the period doubles */
	CHECK(prof_pace_next(&p, 80 * US, asked) == 2);
	p.mult = 2;
	CHECK(p.calm_need == PROF_PACE_CALM_FIRST);
	/* once the kernel took it, 8 of the new periods are needed again */
	CHECK(prof_pace_next(&p, 150 * US, asked) == 2, "under 8 of the doubled periods: stays");
	CHECK(prof_pace_next(&p, 160 * US, asked) == 4);
	/* a kernel that refused the new period (the caller keeps mult): asked again */
	CHECK(prof_pace_next(&p, 160 * US, asked) == 4);
	p.mult = 4;

	/* never past 1 ms: 10 us x 64 = 640 us is the last doubling */
	CHECK(run(&p, 100, 100000 * US, asked) == 64);
	CHECK(asked * 64 <= PROF_PACE_MAX_NS && asked * 128 > PROF_PACE_MAX_NS);
	CHECK(p.calm_need == 1024, "calm_need doubled with every doubling (16 .. 1024): %u", p.calm_need);
	p = (struct prof_pace){ 2, 0, PROF_PACE_CALM_MAX };
	CHECK(prof_pace_next(&p, 1000 * US, asked) == 4);
	CHECK(p.calm_need == PROF_PACE_CALM_MAX, "capped");

	/* back: calm samples (under 4 periods) halve it after calm_need of them */
	p = (struct prof_pace){ 2, 0, PROF_PACE_CALM_FIRST };
	CHECK(run(&p, PROF_PACE_CALM_FIRST - 1, 30 * US, asked) == 2, "one calm sample short: stays");
	CHECK(run(&p, 1, 30 * US, asked) == 1, "the calm run: back to the asked period");
	CHECK(run(&p, 1000, 30 * US, asked) == 1, "never under the asked period");

	/* the run must be unbroken: a sample in between (4..8 periods) restarts it */
	p = (struct prof_pace){ 2, 0, PROF_PACE_CALM_FIRST };
	run(&p, PROF_PACE_CALM_FIRST - 1, 30 * US, asked);
	CHECK(run(&p, 1, 100 * US, asked) == 2);
	CHECK(run(&p, PROF_PACE_CALM_FIRST - 1, 30 * US, asked) == 2, "the run restarted");
	CHECK(run(&p, 1, 30 * US, asked) == 1);

	/* storms again and again: each back-off needs a longer calm run to undo */
	p = (struct prof_pace){ 0, 0, 0 };
	uint32_t need = 0;
	for (int round = 0; round < 4; round++) {
		CHECK(run(&p, 1, 1000 * US, asked) == 2);
		CHECK(p.calm_need > need, "round %d: calm_need %u after %u", round, p.calm_need, need);
		need = p.calm_need;
		CHECK(run(&p, need - 1, 10 * US, asked) == 2);
		CHECK(run(&p, 1, 10 * US, asked) == 1);
	}
	CHECK(need == PROF_PACE_CALM_FIRST << 3);

	/* a slow asked rate (-F 5000, 200 us): one doubling reaches 400 us,
	 * the next 800 us, then 1 ms stops it */
	p = (struct prof_pace){ 0, 0, 0 };
	CHECK(run(&p, 10, 100000 * US, 200 * US) == 4);
	printf("PASS\n");
	return 0;
}
