/* SPDX-License-Identifier: MIT */
/*
 * sigbus.c - the SIGBUS guard of mapped session files (see sigbus.h): a
 * fault past the end of a truncated session file is absorbed by mapping
 * anonymous zero pages over the part of the mapping the file lost.
 */
#define _GNU_SOURCE
#include "session/sigbus.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define GUARD_SLOTS 64u

struct guard {
	uintptr_t base;     /* start of the guarded mapping; 0 = free slot (stored last) */
	uint64_t size;      /* bytes mapped */
	uint64_t page;      /* page size */
	int fd;             /* the session file, for its current size (-1: unknown) */
	int prot;           /* protection of the mapping, kept by the replacement */
	uint64_t faults;    /* faults absorbed */
	uint64_t size_seen; /* smallest file size the handler saw */
};

static struct guard guards[GUARD_SLOTS];
static struct sigaction prev_action; /* what was installed before us: the handler chains to it */
static int installed;
static pthread_mutex_t guard_lock = PTHREAD_MUTEX_INITIALIZER;

/* Sends a SIGBUS that is not ours where it would have gone without us. */
static void chain(int sig, siginfo_t *si, void *uc)
{
	const struct sigaction *p = &prev_action;
	if (p->sa_flags & SA_SIGINFO) {
		if (p->sa_sigaction)
			p->sa_sigaction(sig, si, uc);
		return;
	}
	if (p->sa_handler != SIG_DFL && p->sa_handler != SIG_IGN) {
		p->sa_handler(sig);
		return;
	}
	int sent = si && si->si_code <= 0; /* kill(), sigqueue(), tgkill(): not a fault */
	if (sent && p->sa_handler == SIG_IGN)
		return;
	/* The default action.  A fault cannot be ignored (the kernel kills a
	 * process that ignores or blocks it): restore SIG_DFL and return, the
	 * faulting instruction runs again and the process dies of it, with
	 * the usual core dump.  A sent signal is sent again; it stays pending
	 * (SIGBUS is blocked while we run) until we return. */
	struct sigaction dfl;
	memset(&dfl, 0, sizeof dfl);
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	sigaction(SIGBUS, &dfl, NULL);
	if (sent)
		raise(sig);
}

/* Returns 1 when the fault at `a` was in a guarded mapping and is absorbed. */
static int absorb(uintptr_t a)
{
	for (unsigned i = 0; i < GUARD_SLOTS; i++) {
		struct guard *g = &guards[i];
		/* acquire: pairs with the release store of base in
		 * tb_session_guard(): size, page, fd and prot are those of this
		 * mapping */
		uintptr_t b = __atomic_load_n(&g->base, __ATOMIC_ACQUIRE);
		if (!b || a < b || a - b >= g->size)
			continue;
		uint64_t page = g->page, off = a - b;
		uint64_t keep = off & ~(page - 1); /* the faulting page goes in any case */
		uint64_t fsize = keep;
		struct stat st;
		if (g->fd >= 0 && fstat(g->fd, &st) == 0 && st.st_size >= 0) {
			fsize = (uint64_t)st.st_size;
			uint64_t end = (fsize + page - 1) & ~(page - 1); /* pages wholly past the end fault */
			if (end < keep)
				keep = end;
		}
		uint64_t seen = __atomic_load_n(&g->size_seen, __ATOMIC_RELAXED);
		while (fsize < seen &&
		       !__atomic_compare_exchange_n(&g->size_seen, &seen, fsize, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
			;
		/* seq_cst, before the mapping changes: a thread that reads the
		 * zero pages mapped below (possible only once mmap() changed the
		 * page tables, after this store is visible: the kernel takes
		 * locks with atomic instructions on the way) and then loads
		 * faults in tb_session_damaged() sees the damage.  Pairs with
		 * the acquire load there. */
		__atomic_fetch_add(&g->faults, 1, __ATOMIC_SEQ_CST);
		/* NOLINTNEXTLINE(performance-no-int-to-ptr): the guarded mapping's own pages */
		void *p = mmap((void *)(b + keep), (size_t)(g->size - keep), g->prot,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
		return p != MAP_FAILED;
	}
	return 0;
}

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
	int saved = errno;
	/* BUS_ADRERR: an access to a page of a file mapping past the end of
	 * the file (the truncation); anything else is not ours */
	if (!(si && si->si_code == BUS_ADRERR && absorb((uintptr_t)si->si_addr)))
		chain(sig, si, uc);
	errno = saved;
}

int tb_session_guard(struct tb_session *s)
{
	if (s->guard)
		return 0;
	int rc = 0;
	pthread_mutex_lock(&guard_lock);
	if (!installed) {
		/* read the previous action first: the handler may run as soon
		 * as it is installed, and chains to prev_action */
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_sigaction = on_sigbus;
		sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
		sigemptyset(&sa.sa_mask);
		if (sigaction(SIGBUS, NULL, &prev_action) != 0 || sigaction(SIGBUS, &sa, NULL) != 0)
			rc = tb_fail(-errno, "cannot install the SIGBUS handler that survives a truncated session file: %s",
				     strerror(errno));
		else
			installed = 1;
	}
	unsigned i = 0;
	if (!rc) {
		while (i < GUARD_SLOTS && __atomic_load_n(&guards[i].base, __ATOMIC_RELAXED))
			i++;
		if (i == GUARD_SLOTS)
			rc = tb_fail(-ENOSPC, "more than %u session mappings in this process: %s is not guarded against "
					      "truncation",
				     GUARD_SLOTS, s->path);
	}
	if (!rc) {
		struct guard *g = &guards[i];
		long pg = sysconf(_SC_PAGESIZE);
		g->size = s->size;
		g->page = pg > 0 ? (uint64_t)pg : 4096;
		g->fd = s->fd;
		g->prot = s->readonly ? PROT_READ : PROT_READ | PROT_WRITE;
		g->faults = 0;
		g->size_seen = UINT64_MAX;
		/* release: the handler that sees base sees the fields above */
		__atomic_store_n(&g->base, (uintptr_t)s->base, __ATOMIC_RELEASE);
		s->guard = (int)i + 1;
	}
	pthread_mutex_unlock(&guard_lock);
	return rc;
}

void tb_session_unguard(struct tb_session *s)
{
	if (!s->guard)
		return;
	pthread_mutex_lock(&guard_lock);
	/* release: pairs with the acquire load of base in absorb(); the slot
	 * is free for the next tb_session_guard() */
	__atomic_store_n(&guards[s->guard - 1].base, 0, __ATOMIC_RELEASE);
	s->guard = 0;
	pthread_mutex_unlock(&guard_lock);
}

int tb_session_damaged(const struct tb_session *s, uint64_t *size_now)
{
	if (!s->guard)
		return 0;
	const struct guard *g = &guards[s->guard - 1];
	/* acquire: pairs with the seq_cst increment in absorb(), made before
	 * the zero pages were mapped */
	if (!__atomic_load_n(&g->faults, __ATOMIC_ACQUIRE))
		return 0;
	if (size_now)
		*size_now = __atomic_load_n(&g->size_seen, __ATOMIC_RELAXED);
	return 1;
}
