/* SPDX-License-Identifier: MIT */
/*
 * tb-corrupt-live SESSION AREA [SEED [ROUNDS]] - a hostile process of the
 * same uid writing into a live session (tests/protocol/t_record_survives_live_corruption.sh;
 * not a test itself: tests/tools/ holds the programs tests drive).
 *
 * AREA:
 *   open-records  every ring's open (partial, committed, not yet consumed)
 *                 packet: its first record header is overwritten with 0xff
 *                 bytes; deterministic: the consumer finds it when the
 *                 packet is flushed.  Prints how many rings it hit.
 *   lock-stuck    the registry mutex's word, as if a live process held it for ever.
 *   data, desc, ctl, registry, header
 *                 ROUNDS (default 300) random writes of 1-16 bytes (random,
 *                 0xff or 0x00) into the ring data, the sub-buffer
 *                 descriptors, the control blocks, the registry or the map
 *                 header, 200 us apart.
 * Exit 0, or 1 when the session cannot be mapped.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <tracebuf/session.h>

#include "core/format.h"
#include "core/view.h"

static uint64_t rng = 0x5eed;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void scribble(uint8_t *p, uint64_t room)
{
	unsigned n = 1 + (unsigned)(rnd() % 16);
	if (n > room)
		n = (unsigned)room;
	unsigned kind = (unsigned)(rnd() % 3);
	for (unsigned i = 0; i < n; i++)
		p[i] = kind == 0 ? (uint8_t)rnd() : kind == 1 ? 0xff : 0;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: tb-corrupt-live SESSION AREA [SEED [ROUNDS]]\n");
		return 2;
	}
	if (argc > 3)
		rng = strtoull(argv[3], NULL, 0) | 1;
	unsigned rounds = argc > 4 ? (unsigned)strtoul(argv[4], NULL, 0) : 300;
	struct tb_session *s;
	if (tb_session_attach(argv[1], 0, &s) < 0) {
		fprintf(stderr, "tb-corrupt-live: %s\n", tb_errmsg());
		return 1;
	}
	const char *area = argv[2];
	if (!strcmp(area, "lock-stuck")) {
		/* the registry's robust mutex as if held by a live process that
		 * never lets go: glibc's lock word is the owner's tid, and pid 1
		 * lives as long as the machine */
		uint32_t owner = 1;
		memcpy(s->reg->lock, &owner, sizeof owner);
		tb_session_close(s);
		return 0;
	}
	if (!strcmp(area, "open-records")) {
		unsigned hit = 0;
		for (unsigned ch = 0; ch < s->nchannels; ch++)
			for (unsigned cpu = 0; cpu < s->ncpus; cpu++) {
				const struct tb_chan_view *cv = &s->chan[ch];
				uint64_t head = __atomic_load_n(&tb_ctl_of(s, ch, cpu)->head, __ATOMIC_ACQUIRE);
				uint64_t start = head & ~(cv->sb_size - 1);
				if (head == 0 || head - start < TB_PACKET_HEADER_SIZE + 16)
					continue;
				memset(tb_sb_at(s, ch, cpu, start) + TB_PACKET_HEADER_SIZE, 0xff, 8);
				hit++;
			}
		printf("hit %u\n", hit);
		tb_session_close(s);
		return 0;
	}
	for (unsigned r = 0; r < rounds; r++) {
		unsigned ch = (unsigned)(rnd() % s->nchannels), cpu = (unsigned)(rnd() % s->ncpus);
		const struct tb_chan_view *cv = &s->chan[ch];
		uint8_t *p;
		uint64_t len;
		if (!strcmp(area, "data")) {
			p = tb_ring_of(s, ch, cpu) + cv->data_off;
			len = cv->ring_mask + 1;
		} else if (!strcmp(area, "desc")) {
			p = (uint8_t *)tb_sbdesc_of(s, ch, cpu);
			len = (uint64_t)cv->sb_count * sizeof(struct tb_sbdesc);
		} else if (!strcmp(area, "ctl")) {
			p = (uint8_t *)tb_ctl_of(s, ch, cpu);
			len = sizeof(struct tb_ctl);
		} else if (!strcmp(area, "registry")) {
			/* not its mutex (a corrupted lock word is another test's) */
			p = (uint8_t *)s->reg + sizeof s->reg->lock;
			len = sizeof *s->reg - sizeof s->reg->lock + (uint64_t)s->reg_capacity * sizeof s->reg->events[0];
		} else if (!strcmp(area, "header")) {
			p = s->base;
			len = sizeof *s->map;
		} else {
			fprintf(stderr, "tb-corrupt-live: unknown area %s\n", area);
			return 2;
		}
		uint64_t off = rnd() % len;
		scribble(p + off, len - off);
		nanosleep(&(struct timespec){ 0, 200000 }, NULL);
	}
	tb_session_close(s);
	return 0;
}
