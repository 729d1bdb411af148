/* SPDX-License-Identifier: MIT */
/*
 * test_trusted_ring_is_released_only_after_every_hold - with
 * --trust-writers (tb_engine_cfg.trust_writers) the recorder writes and
 * sends packets from the ring itself, and an output that reads a packet
 * after its packets() call (the relay's sender) holds its sub-buffer
 * (tb_engine_hold()).  Checked here with an output of the test's own that
 * holds every packet it is given and gives them back from another thread,
 * while a producer thread writes in block mode into a small ring (8
 * sub-buffers of 4 KiB) ten times what the ring holds:
 *
 *  - every packet the output is given lies in the ring's mapping (no copy);
 *  - the ring's consumer position never passes a sub-buffer still held:
 *    checked at every step, and while the oldest hold is kept and a later
 *    one is given back first (the ring releases in order);
 *  - a packet's bytes when it is given back (what a sender would send) are
 *    the bytes of the packet the local copy has: the producer did not write
 *    into a held sub-buffer;
 *  - nothing is lost: block mode waited for the holds, and the trace on
 *    disk holds every event, read back by the reader without a diagnostic.
 *
 * Without the holds (the sub-buffers released at the reap), the first check
 * of the consumer position fails.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sys/stat.h>
#include <time.h>

#include <tracebuf/event.h>
#include <tracebuf/reader.h>
#include <tracebuf/session.h>

#include "consumer/engine_impl.h"
#include "core/view.h"
#include "tbtest.h"

TB_EVENT(tr, ev, (u64, seq))

#define SB 4096u
#define NSB 8u
#define EVENTS 20000u /* 16-byte records: ~80 packets, ten rings' worth */
#define MAXP 4096u

struct held {
	unsigned ch, cpu;
	int key;
	uint64_t seq;
	size_t len;            /* content bytes after the header */
	const uint8_t *rest;   /* in the ring */
	uint8_t *seen;         /* its bytes when given back */
};

static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct tb_engine *e;
	struct held p[MAXP];
	unsigned n;           /* holds taken */
	unsigned outside;     /* packets given that were not in the ring */
} H = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, NULL, { { 0 } }, 0, 0 };

static void out_packets(void *arg, unsigned ch, unsigned cpu, const struct iovec *iov, int n, uint64_t events)
{
	(void)arg;
	(void)events;
	for (int i = 0; i < n; i++) {
		if (iov[i].iov_len != sizeof(struct tb_packet_header))
			continue;
		struct tb_packet_header h;
		memcpy(&h, iov[i].iov_base, sizeof h);
		if (i + 1 >= n || iov[i + 1].iov_len == sizeof(struct tb_packet_header))
			continue; /* an empty packet (a copy of a header) */
		int key = tb_engine_hold(H.e, ch, cpu, iov[i].iov_base);
		pthread_mutex_lock(&H.lock);
		if (key < 0) {
			H.outside++;
		} else if (H.n < MAXP) {
			H.p[H.n++] = (struct held){ ch, cpu, key, h.packet_seq_num, iov[i + 1].iov_len,
						   iov[i + 1].iov_base, NULL };
			pthread_cond_broadcast(&H.cond);
		}
		pthread_mutex_unlock(&H.lock);
		i++;
	}
}

static const struct tb_output test_output = { .name = "test holds", .packets = out_packets };

static struct tb_session *S;

/* The ring's consumer position never passes a held sub-buffer (given[k]: 1 when given back). */
static void check_tail(const unsigned char *given, const char *when)
{
	pthread_mutex_lock(&H.lock);
	unsigned n = H.n;
	pthread_mutex_unlock(&H.lock);
	for (unsigned k = 0; k < n; k++) {
		if (given[k])
			continue;
		const struct held *p = &H.p[k];
		/* acquire: as the producers' load of tail */
		uint64_t tail = __atomic_load_n(&tb_ctl_of(S, p->ch, p->cpu)->tail, __ATOMIC_ACQUIRE);
		CHECK(tail <= p->seq * SB, "%s: the consumer position of ring %u/%u is %" PRIu64
					   " past packet %" PRIu64 " (at %" PRIu64 ") which an output still holds",
		      when, p->ch, p->cpu, tail, p->seq, p->seq * SB);
	}
}

static void give_back(unsigned k, unsigned char *given)
{
	struct held *p = &H.p[k];
	p->seen = malloc(p->len);
	CHECK(p->seen != NULL);
	memcpy(p->seen, p->rest, p->len); /* what a sender would send now */
	given[k] = 1;
	tb_engine_unhold(H.e, p->ch, p->cpu, p->key);
}

static void *producer(void *arg)
{
	(void)arg;
	CHECK_RC(tb_producer_use(S), 0);
	for (uint64_t i = 0; i < EVENTS; i++)
		tb_tr_ev(i);
	return NULL;
}

/* Waits until the output holds at least `want` packets, at most ms; returns how many. */
static unsigned wait_holds_for(unsigned want, unsigned ms)
{
	struct timespec t;
	clock_gettime(CLOCK_REALTIME, &t);
	t.tv_sec += ms / 1000;
	t.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (t.tv_nsec >= 1000000000L) {
		t.tv_sec++;
		t.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&H.lock);
	while (H.n < want && pthread_cond_timedwait(&H.cond, &H.lock, &t) == 0)
		;
	unsigned n = H.n;
	pthread_mutex_unlock(&H.lock);
	return n;
}

/* The same, bounded by 120 s (a verdict, not a pace). */
static unsigned wait_holds(unsigned want)
{
	return wait_holds_for(want, 120000);
}

int main(void)
{
	char path[512], out[512];
	snprintf(path, sizeof path, "%s/trust.tb", tbt_tmpdir());
	snprintf(out, sizeof out, "%s/trust-trace", tbt_tmpdir());
	CHECK(mkdir(out, 0755) == 0);
	struct tb_channel_opts co = { .size = sizeof co, .name = "c", .sb_size = SB, .sb_count = NSB,
				      .mode = TB_BLOCK, .block_timeout_ns = 10000000000ull,
				      .flush_period_ns = 5000000 };
	struct tb_session_opts so = { .size = sizeof so, .path = path, .nchannels = 1, .channels = &co };
	CHECK_RC(tb_session_create(&so, &S), 0);

	struct tb_engine_cfg cfg = { .trust_writers = 1 };
	CHECK_RC(tb_engine_create(S, out, &cfg, &H.e), 0);
	CHECK_RC(tb_output_add(H.e, &test_output, NULL), 0);
	CHECK_RC(tb_engine_start(H.e), 0);

	pthread_t thr;
	CHECK(pthread_create(&thr, NULL, producer, NULL) == 0);
	static unsigned char given[MAXP];

	/* the first three packets held: the ring may not pass the first */
	CHECK(wait_holds(3) >= 3, "the output was given %u packets in 120 s", H.n);
	check_tail(given, "three packets held");
	/* a later one given back first: the first still holds the ring */
	give_back(1, given);
	tb_engine_wake(H.e);
	CHECK(wait_holds(3) >= 3);
	check_tail(given, "the second packet given back, the first not");
	/* then every packet, oldest first, as a sender sends them, until the
	 * trace holds every event (the producer's last packet closed by the
	 * engine's flusher of its CPU, once idle a flush period) */
	unsigned next = 0;
	time_t deadline = time(NULL) + 300;
	for (;;) {
		pthread_mutex_lock(&H.lock);
		unsigned n = H.n;
		pthread_mutex_unlock(&H.lock);
		for (; next < n; next++) {
			if (!given[next])
				give_back(next, given);
			check_tail(given, "packets given back in order");
		}
		struct tb_stream_stats st;
		tb_engine_stats(H.e, -1, -1, &st);
		if (st.events >= EVENTS)
			break;
		CHECK(time(NULL) < deadline, "%" PRIu64 " of %u events written in 300 s", st.events, EVENTS);
		tb_engine_wake(H.e);
		wait_holds_for(next + 1, 100);
	}
	CHECK(pthread_join(thr, NULL) == 0);
	CHECK_RC(tb_engine_finish(H.e, TB_FINISH_DEAD), 0);
	/* what the finish's final drain handed over after the loop: given back too */
	for (; next < H.n; next++)
		if (!given[next])
			give_back(next, given);
	struct tb_stream_stats st;
	tb_engine_stats(H.e, -1, -1, &st);
	uint64_t lost = 0;
	for (unsigned k = 0; k < TB_LOSS_NCAUSES; k++)
		lost += st.lost[k];
	printf("%" PRIu64 " packets, %" PRIu64 " events written; %u held and given back; %u not in the ring; "
	       "lost %" PRIu64 "\n", st.packets, st.events, H.n, H.outside, lost);
	CHECK_EQ_U64(st.events, EVENTS);
	CHECK_EQ_U64(lost, 0);
	CHECK(H.n >= 3 * NSB, "only %u packets went through the output: the ring was not reused", H.n);
	CHECK_EQ_U64(H.outside, 0);
	tb_engine_destroy(H.e);

	/* the local copy: every event, and each packet's bytes what the output read at its give-back */
	struct tb_reader *r;
	CHECK_RC(tb_reader_open(out, NULL, &r), 0);
	uint64_t nev = 0;
	const struct tb_rd_event *ev;
	while (tb_reader_next(r, &ev) == 1)
		if (tb_rd_kind(ev) == TB_RD_EVENT && !strcmp(tb_rd_name(ev), "tr:ev"))
			nev++;
	CHECK_EQ_U64(tb_reader_ndiags(r), 0);
	tb_reader_close(r);
	CHECK_EQ_U64(nev, EVENTS);
	unsigned compared = 0;
	for (unsigned k = 0; k < H.n; k++) {
		const struct held *p = &H.p[k];
		char name[600];
		snprintf(name, sizeof name, "%s/c_%u", out, p->cpu);
		FILE *f = fopen(name, "rb");
		CHECK(f != NULL, "%s: %s", name, strerror(errno));
		/* the file's packets: find this one by its sequence number */
		struct tb_packet_header h;
		long off = 0;
		int found = 0;
		while (fseek(f, off, SEEK_SET) == 0 && fread(&h, sizeof h, 1, f) == 1) {
			if (h.packet_seq_num == p->seq && h.content_size / 8 > sizeof h) {
				uint8_t *buf = malloc(p->len);
				CHECK(buf != NULL);
				CHECK(fread(buf, 1, p->len, f) == p->len);
				CHECK(!memcmp(buf, p->seen, p->len),
				      "packet %" PRIu64 " of cpu %u: the bytes read at its give-back differ from the "
				      "local copy's (the producer wrote into a held sub-buffer)", p->seq, p->cpu);
				free(buf);
				found = 1;
				break;
			}
			off += (long)(h.packet_size / 8);
		}
		fclose(f);
		CHECK(found, "packet %" PRIu64 " of cpu %u is not in %s", p->seq, p->cpu, name);
		compared++;
		free(p->seen);
	}
	printf("%u packets compared with the local copy\n", compared);
	tb_session_close(S);
	printf("PASS\n");
	return 0;
}
