/* SPDX-License-Identifier: MIT */
/*
 * producer.c - the process's producer session, event classes, and the
 * public write entry points (TB_EVENT's tb_emit, tb_write, reserve/commit).
 *
 * The producer session is published once through `prod` (release) and read
 * with an acquire load on every event.  It is never unmapped while the
 * process lives: a thread may be inside an append when tb_producer_use()
 * changes it, so an old mapping is left in place (bounded: one per call).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <tracebuf/event.h>
#include <tracebuf/session.h>

#include "core/labels.h"
#include "core/utf8.h"
#include "producer/attach.h"
#include "producer/producer.h"
#include "ring/rseq.h"
#include "session/registry.h"

/* 0 for ever in a program nobody attaches to; `record --pid` writes
 * TB_ATTACH_REQUESTED into it from outside (producer/attach.h).  Writable,
 * so no longer in .rodata: it gets a cache line of its own (the alias of a
 * 64-byte aligned line), so that no variable of the library or of a program
 * linked statically that other threads write shares the line every disabled
 * event loads (false sharing would make a disabled event a cache miss). */
static uint32_t disabled_line[16] __attribute__((aligned(64), used));
extern uint32_t tb_disabled_mask __attribute__((alias("disabled_line")));
struct tb_attach_request tb_attach_request;

static struct tb_session *prod;               /* acquire/release */
static int autoattach_status = 1;
/* TB_EVENT's type codes (event.h, TB__FT_<type>) are the registry's
 * (core/format.h), value for value: a new type is added to both or the build
 * stops here.  (strn is str with a bound: the same code.) */
_Static_assert(TB__FT_u8 == TB_FT_U8 && TB__FT_u16 == TB_FT_U16 && TB__FT_u32 == TB_FT_U32 && TB__FT_u64 == TB_FT_U64 &&
		       TB__FT_i8 == TB_FT_I8 && TB__FT_i16 == TB_FT_I16 && TB__FT_i32 == TB_FT_I32 &&
		       TB__FT_i64 == TB_FT_I64 && TB__FT_f64 == TB_FT_F64 && TB__FT_str == TB_FT_STRING &&
		       TB__FT_bytes == TB_FT_BYTES && TB__FT_u64s == TB_FT_U64SEQ &&
		       TB__FT_bool == TB_FT_BOOL && TB__FT_f32 == TB_FT_F32 && TB__FT_enum == TB_FT_ENUM &&
		       TB_FT_ENUM + 1 == TB_FT_MAX_,
	       "TB__FT_* (event.h) and enum tb_field_type (format.h) differ");

static pthread_mutex_t classes_lock = PTHREAD_MUTEX_INITIALIZER;
static struct tb_event_class *classes;        /* every class of this process */
static struct tb_session *retired;            /* former producer sessions, kept mapped */

struct tb_session *tb_producer_session(void)
{
	return __atomic_load_n(&prod, __ATOMIC_ACQUIRE);
}

int tb_producer_autoattach_status(void)
{
	return autoattach_status;
}

/* Registers `cls` in session `s` and points its mask into the registry. */
static void bind_class(struct tb_session *s, struct tb_event_class *cls)
{
	struct tb_field_desc f[TB_MAX_FIELDS];
	memset(f, 0, sizeof f);
	char labels[TB_LABELS_MAX];
	size_t used = 0;
	labels[0] = 0;
	uint32_t nf = cls->nfields > TB_MAX_FIELDS ? TB_MAX_FIELDS : cls->nfields;
	for (uint32_t i = 0; i < nf; i++) {
		snprintf(f[i].name, sizeof f[i].name, "%s", cls->fields[i].name);
		f[i].type = cls->fields[i].type;
		f[i].max_len = cls->fields[i].max_len;
		if (f[i].type == TB_FT_ENUM) {
			/* the list as written in TB_EVENT, parsed once here (never on
			 * the fast path) into the registry's text.  Labels that do not
			 * parse leave the values: the field is recorded as a plain
			 * int32 (`tracebuf list --fields PROGRAM` reports such lists) */
			char err[256];
			size_t before = used;
			if (tb_labels_from_c(cls->fields[i].labels ? cls->fields[i].labels : "", labels, sizeof labels,
					     &used, err, sizeof err) < 0) {
				tb_fail(-EINVAL, "event '%s' field '%s': %s; recorded as i32", cls->name, f[i].name, err);
				f[i].type = TB_FT_I32;
				used = before;
				labels[used] = 0;
			}
		}
	}
	int id = tb_registry_register(s, cls->name, nf, f, labels);
	if (id < 0) {
		/* stays disabled; tb_errmsg() of this thread says why */
		__atomic_store_n(&cls->mask, &tb_disabled_mask, __ATOMIC_RELEASE);
		return;
	}
	cls->id = (uint32_t)id;
	/* Release: a thread that sees the new mask pointer sees cls->id. */
	__atomic_store_n(&cls->mask, &s->reg->events[id].enabled, __ATOMIC_RELEASE);
}

void tb_class_register(struct tb_event_class *cls)
{
	pthread_mutex_lock(&classes_lock);
	for (struct tb_event_class *c = classes; c; c = c->next)
		if (c == cls) {
			pthread_mutex_unlock(&classes_lock);
			return;
		}
	cls->next = classes;
	classes = cls;
	struct tb_session *s = tb_producer_session();
	if (s)
		bind_class(s, cls);
	pthread_mutex_unlock(&classes_lock);
}

static int use_locked(struct tb_session *s);

int tb_producer_use(struct tb_session *s)
{
	if (s && s->readonly)
		return tb_fail(-EINVAL, "session %s is attached read-only: it cannot be written", s->path);
	if (s && s->protocol == TB_PROTO_RSEQ && tb_rseq_cpu() < 0)
		return tb_fail(-ENOTSUP,
			       "session %s uses rseq, which this process does not have (valgrind, seccomp, old kernel, "
			       "glibc.pthread.rseq=0): create the session with TRACEBUF_NO_RSEQ=1",
			       s->path);
	pthread_mutex_lock(&classes_lock);
	int rc = use_locked(s);
	pthread_mutex_unlock(&classes_lock);
	return rc;
}

/* tb_producer_use() under classes_lock.  Async-signal-safe apart from the
 * registry's robust lock and snprintf of names (docs/DESIGN.md, "Attaching
 * to a running program"): record --pid's attach runs it from tb_emit(). */
static int use_locked(struct tb_session *s)
{
	if (s && tb_proc_register(s) == -ETIMEDOUT) {
		/* the registry lock is stuck: no class could ever be registered */
		return -ETIMEDOUT; /* tb_errmsg() says which session */
	}
	if (s) /* never unmapped from now on (tb_session_close) */
		__atomic_store_n(&s->pinned, 1, __ATOMIC_RELAXED);
	/* switch classes to the new session (or disable them) first... */
	for (struct tb_event_class *c = classes; c; c = c->next) {
		if (s)
			bind_class(s, c);
		else
			__atomic_store_n(&c->mask, &tb_disabled_mask, __ATOMIC_RELEASE);
	}
	/* ...then publish the session; pairs with the acquire in tb_emit() */
	struct tb_session *old = __atomic_exchange_n(&prod, s, __ATOMIC_ACQ_REL);
	/* every thread writes its name again in the new session; relaxed: see
	 * tb_thread_name_due() */
	__atomic_fetch_add(&tb_name_gen, 1, __ATOMIC_RELAXED);
	if (old && old != s && !old->retired) {
		/* a thread may still be appending to it: never unmapped.  Bounded:
		 * one per session ever used as the producer session. */
		old->retired = 1;
		old->retired_next = retired;
		retired = old;
	}
	return 0;
}

/* ---------------------------------------------------------------------- */
/* record --pid: attach at the first event after a recorder asked          */
/* ---------------------------------------------------------------------- */

/* 1 while one thread attaches: the others (and a signal handler that
 * interrupts it and writes an event) drop their event instead of waiting */
static int attach_busy;

static void attach_answer(int rc)
{
	if (rc < 0) {
		const char *m = tb_errmsg();
		size_t n = 0;
		while (n < sizeof tb_attach_request.msg - 1 && m[n]) {
			tb_attach_request.msg[n] = m[n];
			n++;
		}
		tb_attach_request.msg[n] = 0;
	}
	/* relaxed: the recorder reads it with process_vm_readv after it saw
	 * tb_disabled_mask go back to 0 (released below) */
	__atomic_store_n(&tb_attach_request.result, rc, __ATOMIC_RELAXED);
}

/*
 * Called by tb_emit() when an enabled class finds no producer session:
 * record --pid asked (producer/attach.h).  One thread wins attach_busy and
 * attaches, the event that brought each caller here is dropped (it was
 * written before the attach).  Async-signal-safe as far as the attach can
 * be (docs/DESIGN.md, "Attaching to a running program"): no malloc (the
 * session struct is mmap()ed), no stdio, no lock this process may hold
 * while interrupted: classes_lock is only tried, and when it is taken (a
 * class being registered, maybe by the very thread this handler
 * interrupted) the attach waits for a later event.  errno is preserved.
 */
__attribute__((noinline, cold)) void tb_attach_poll(void)
{
	/* acquire: the recorder wrote the request before this word (two
	 * process_vm_writev calls in that order; x86-64 keeps stores in order) */
	if (__atomic_load_n(&tb_disabled_mask, __ATOMIC_ACQUIRE) != TB_ATTACH_REQUESTED)
		return;
	int idle = 0;
	/* acquire/release on attach_busy: the winner sees what the previous
	 * winner wrote (prod, the masks) */
	if (!__atomic_compare_exchange_n(&attach_busy, &idle, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		return;
	int saved = errno;
	int done = 1;
	struct tb_attach_request *r = &tb_attach_request;
	if (__atomic_load_n(&r->magic, __ATOMIC_RELAXED) != TB_ATTACH_MAGIC ||
	    __atomic_load_n(&r->pid, __ATOMIC_RELAXED) != (uint32_t)getpid()) {
		/* not a request for this process (a child forked while its parent
		 * was asked inherits the words): forget it */
	} else if (tb_producer_session()) {
		attach_answer(0); /* attached meanwhile */
	} else if (pthread_mutex_trylock(&classes_lock) != 0) {
		done = 0; /* a class is being registered: at a later event */
	} else {
		char path[TB_ATTACH_PATH_MAX];
		memcpy(path, r->path, sizeof path);
		path[sizeof path - 1] = 0;
		struct tb_session *s = NULL;
		int rc = tb_session_attach(path, TB_ATTACH_NO_GUARD_ | TB_ATTACH_SIGSAFE_, &s);
		if (rc == 0 && s->protocol == TB_PROTO_RSEQ && tb_rseq_cpu() < 0)
			rc = tb_fail(-ENOTSUP, "session %s uses rseq, which this process does not have (valgrind, seccomp, "
					       "glibc.pthread.rseq=0): run record --pid with TRACEBUF_NO_RSEQ=1", path);
		if (rc == 0)
			rc = use_locked(s);
		if (rc < 0 && s) {
			/* never published: nobody of this process uses it */
			tb_session_close(s);
		}
		pthread_mutex_unlock(&classes_lock);
		if (rc == 0) /* a recorder attached: the crash handler (crash.c) */
			tb_crash_install(tb_producer_session);
		attach_answer(rc);
	}
	if (done) /* release: after prod and every class mask (use_locked) */
		__atomic_store_n(&tb_disabled_mask, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&attach_busy, 0, __ATOMIC_RELEASE);
	errno = saved;
}

/* tb_emit() when it is not one record to one channel by the fast path:
 * every enabled channel through tb_append(), truncations counted. */
static __attribute__((noinline)) void emit_slow(struct tb_session *s, struct tb_event_class *cls, const void *payload,
						size_t len, uint32_t truncated)
{
	uint32_t mask = __atomic_load_n(cls->mask, __ATOMIC_RELAXED) & ((1u << s->nchannels) - 1);
	while (mask) {
		unsigned ch = (unsigned)__builtin_ctz(mask);
		mask &= mask - 1;
		tb_append(s, ch, cls->id, payload, (uint32_t)len);
		if (__builtin_expect(truncated != 0, 0))
			tb_count(s, ch, offsetof(struct tb_ctl, truncated), truncated);
	}
}

/*
 * Every TB_EVENT comes here.  The common case, a class enabled on one
 * channel and nothing truncated, runs the ring's fast path inline
 * (tb_append_fast) and returns: no further call, no register saved.  When
 * it does not commit, the arguments come back from the call record and
 * the general path takes over.
 */
void tb_emit(struct tb_event_class *cls, const void *payload, size_t len, uint32_t truncated)
{
	struct tb_session *s = tb_producer_session();
	if (__builtin_expect(!s, 0)) {
		/* a class enabled with no session: tb_disabled_mask made nonzero
		 * by record --pid (a tail call: the path above is unchanged) */
		tb_attach_poll();
		return;
	}
	/* relaxed: the mask points into the session published by the acquire
	 * load above (tb_producer_use stores the class's mask pointer first) */
	uint32_t mask = __atomic_load_n(cls->mask, __ATOMIC_RELAXED) & ((1u << s->nchannels) - 1);
	if (__builtin_expect((mask & (mask - 1)) == 0 && mask && !truncated && len <= TB_PAYLOAD_MAX, 1)) {
		/* one channel, nothing truncated */
		tb_append_inline(s, (unsigned)__builtin_ctz(mask), cls->id, payload, (uint32_t)len);
		return;
	}
	emit_slow(s, cls, payload, len, truncated);
}

/* ---- thread names (format.h TB_THREAD_NAME_EVENT) ---- */

static struct tb_event_class tname_cls = {
	.name = TB_THREAD_NAME_EVENT,
	.nfields = 2,
	.fields = { { "tid", TB_FT_U32, 0, NULL }, { "name", TB_FT_STRING, TB_THREAD_NAME_MAX, NULL } },
	.mask = &tb_disabled_mask,
};
/* The name every thread inherits at exec (read by the constructor, on the
 * thread that loads the library: the main thread, before main). */
static char exec_name[TB_THREAD_NAME_MAX + 1];

__attribute__((constructor)) static void tname_init(void)
{
	/* the raw system call: prctl() may be our own wrapper (rename_hooks.c) */
	if (syscall(SYS_prctl, PR_GET_NAME, (unsigned long)exec_name, 0ul, 0ul, 0ul) != 0)
		exec_name[0] = 0;
	exec_name[TB_THREAD_NAME_MAX] = 0;
	tb_class_register(&tname_cls);
	/* the crash handler's (crash.c): in every session, written only on a crash */
	tb_crash_cls.mask = &tb_disabled_mask;
	tb_crash_map_cls.mask = &tb_disabled_mask;
	tb_class_register(&tb_crash_cls);
	tb_class_register(&tb_crash_map_cls);
	/* last: the ring's append slow path calls this from now on (append.h);
	 * relaxed, as it is loaded there */
	__atomic_store_n(&tb_ring_name_hook, tb_thread_name_first, __ATOMIC_RELAXED);
}

static uint32_t tname_payload(uint8_t *buf, uint32_t tid, const char *name)
{
	size_t n = 0;
	while (n < TB_THREAD_NAME_MAX && name[n])
		n++;
	memcpy(buf, &tid, 4);
	memcpy(buf + 4, name, n);
	buf[4 + n] = 0;
	return (uint32_t)(4 + n + 1);
}

void tb_thread_name_first(struct tb_session *s, unsigned ch)
{
	tb_name_done = __atomic_load_n(&tb_name_gen, __ATOMIC_RELAXED);
	char name[TB_THREAD_NAME_MAX + 1] = { 0 };
	if (syscall(SYS_prctl, PR_GET_NAME, (unsigned long)name, 0ul, 0ul, 0ul) != 0 || !strcmp(name, exec_name))
		return; /* unknown, or the program's name: readers show the tid */
	/* Acquire pairs with the release in bind_class(): id is the one the
	 * mask belongs to.  The class must be bound to this very session (a
	 * tb_producer_use() may be switching sessions meanwhile). */
	const uint32_t *m = __atomic_load_n(&tname_cls.mask, __ATOMIC_ACQUIRE);
	uint32_t id = tname_cls.id;
	if (id >= s->reg_capacity || m != &s->reg->events[id].enabled ||
	    !(__atomic_load_n(m, __ATOMIC_RELAXED) & (1u << ch)))
		return;
	uint8_t buf[4 + TB_THREAD_NAME_MAX + 1];
	tb_append(s, ch, id, buf, tname_payload(buf, tb_self_tid(), name));
}

void tb_thread_renamed(uint32_t tid, const char *name)
{
	if (!tb_producer_session() || !name)
		return;
	uint8_t buf[4 + TB_THREAD_NAME_MAX + 1];
	if (tid) {
		if (tid == tb_self_tid())
			tb_name_done = __atomic_load_n(&tb_name_gen, __ATOMIC_RELAXED);
		tb_emit(&tname_cls, buf, tname_payload(buf, tid, name), 0);
		return;
	}
	/* another thread, whose tid pthreads does not tell (glibc < 2.39):
	 * every thread of this process that is now called `name` */
	char want[TB_THREAD_NAME_MAX + 1];
	size_t wn = 0;
	while (wn < TB_THREAD_NAME_MAX && name[wn]) {
		want[wn] = name[wn];
		wn++;
	}
	want[wn] = 0;
	int dfd = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return;
	DIR *d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return;
	}
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		uint32_t t = 0;
		const char *q = de->d_name;
		for (; *q >= '0' && *q <= '9'; q++)
			t = t * 10 + (uint32_t)(*q - '0');
		if (*q || !t)
			continue;
		char path[48], *p = path, comm[32];
		memcpy(p, "/proc/self/task/", 16);
		p = tb_put_u32(p + 16, t);
		memcpy(p, "/comm", 6);
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		ssize_t n = read(fd, comm, sizeof comm - 1);
		close(fd);
		if (n <= 0)
			continue;
		comm[n] = 0;
		if (comm[n - 1] == '\n')
			comm[n - 1] = 0;
		if (!strcmp(comm, want))
			tb_emit(&tname_cls, buf, tname_payload(buf, t, want), 0);
	}
	closedir(d);
}

int tb_write(unsigned chan, uint32_t event_id, const void *payload, size_t len)
{
	struct tb_session *s = tb_producer_session();
	if (!s)
		return -ENODEV;
	if (chan >= s->nchannels || event_id >= tb_registry_count(s) || (len && !payload))
		return -EINVAL;
	if (len > TB_PAYLOAD_MAX) {
		tb_count(s, chan, offsetof(struct tb_ctl, lost_toobig), 1);
		return -ENOSPC;
	}
	/* as tb_emit(): no call between the program and the cs */
	return tb_append_inline(s, chan, event_id, payload, (uint32_t)len);
}

int tb_event_id(const char *name)
{
	struct tb_session *s = tb_producer_session();
	if (!s)
		return -ENODEV;
	return tb_registry_find(s, name);
}

/* ---------------------------------------------------------------------- */
/* reserve / commit: a per-thread stack of staging areas                   */
/* ---------------------------------------------------------------------- */

struct stage {
	uint8_t buf[TB_RESERVE_DEPTH][TB_PAYLOAD_MAX];
};
static __thread struct stage *tb_stage __attribute__((tls_model("initial-exec")));
static __thread int tb_stage_depth __attribute__((tls_model("initial-exec")));
static pthread_key_t stage_key;

static void stage_free(void *p)
{
	munmap(p, sizeof(struct stage));
}

/* at load time: tb_reserve() may run first in a signal handler */
__attribute__((constructor)) static void stage_key_init(void)
{
	pthread_key_create(&stage_key, stage_free);
}

int tb_reserve(unsigned chan, uint32_t event_id, size_t len, struct tb_reservation *r)
{
	struct tb_session *s = tb_producer_session();
	if (!s)
		return -ENODEV;
	if (chan >= s->nchannels || event_id >= tb_registry_count(s))
		return -EINVAL;
	if (len > TB_PAYLOAD_MAX)
		return -EMSGSIZE;
	if (!tb_stage) {
		/* once per thread: mmap is a plain system call, safe here even
		 * from a signal handler */
		int saved = errno;
		void *p = mmap(NULL, sizeof(struct stage), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		errno = saved;
		if (p == MAP_FAILED)
			return -ENOMEM;
		tb_stage = p;
		pthread_setspecific(stage_key, p);
	}
	int d = tb_stage_depth;
	if (d >= TB_RESERVE_DEPTH)
		return -EBUSY;
	tb_stage_depth = d + 1; /* a nested handler now takes slot d + 1 */
	r->data = tb_stage->buf[d];
	r->len = len;
	r->chan = chan;
	r->event_id = event_id;
	r->slot = d;
	return 0;
}

int tb_commit(struct tb_reservation *r)
{
	struct tb_session *s = tb_producer_session();
	int rc = s ? tb_append(s, r->chan, r->event_id, r->data, (uint32_t)r->len) : -ENODEV;
	tb_stage_depth = r->slot;
	return rc;
}

void tb_cancel(struct tb_reservation *r)
{
	tb_stage_depth = r->slot;
}

/* ---------------------------------------------------------------------- */
/* automatic attach from $TRACEBUF_SESSION                                 */
/* ---------------------------------------------------------------------- */

/* line to stderr by the one text rule of every tracebuf output (docs/READER.md):
 * C0 controls, DEL, C1 controls and ill-formed UTF-8 as \xNN; it echoes a path
 * the user gave, which may hold a terminal escape */
static void put_text_line(const char *line)
{
	static const char hex[] = "0123456789abcdef";
	char out[4 * 1024 + 2];
	const unsigned char *s = (const unsigned char *)line;
	size_t n = strlen(line), o = 0;
	for (size_t i = 0; i < n && o + 17 <= sizeof out;) { /* 16: the most one step writes; 1: the newline */
		size_t k = tb_utf8_len(line + i, n - i, NULL);
		int ctl = k == 1 ? s[i] < 0x20 || s[i] == 0x7f : k == 2 && s[i] == 0xc2 && s[i + 1] < 0xa0;
		if (k && !ctl) {
			memcpy(out + o, s + i, k);
			o += k;
			i += k;
			continue;
		}
		for (size_t j = 0; j < (k ? k : 1); j++, i++) {
			out[o++] = '\\';
			out[o++] = 'x';
			out[o++] = hex[s[i] >> 4];
			out[o++] = hex[s[i] & 15];
		}
	}
	out[o++] = '\n';
	fwrite(out, 1, o, stderr);
}

__attribute__((constructor)) static void tb_autoattach(void)
{
	const char *path = getenv("TRACEBUF_SESSION");
	if (!path || !*path)
		return;
	struct tb_session *s;
	int rc = tb_session_attach(path, TB_ATTACH_NO_GUARD_, &s);
	if (rc == 0) {
		rc = tb_producer_use(s);
		if (rc)
			tb_session_close(s);
	}
	if (rc == 0) /* traced by a recorder: the crash handler (crash.c) */
		tb_crash_install(tb_producer_session);
	autoattach_status = rc;
	if (rc < 0 && !getenv("TRACEBUF_QUIET")) {
		/* The one line the library prints (include/tracebuf/session.h): the
		 * user asked for tracing by setting the variable, and a program
		 * that silently runs untraced would be mistaken for one that
		 * wrote nothing.  stderr, once, from the constructor. */
		char line[1024];
		snprintf(line, sizeof line, "tracebuf: TRACEBUF_SESSION=%s refused: %s; this program is not traced "
					    "(TRACEBUF_QUIET=1 hides this line)",
			 path, tb_errmsg());
		put_text_line(line);
	}
}
