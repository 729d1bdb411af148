/* SPDX-License-Identifier: MIT */
/*
 * open.c - the tracepoints through perf_event_open: each tracepoint's
 * format read, the scheduling events one per CPU per tracepoint, the
 * system calls and page faults one per tree task per CPU (inherited), each
 * group of a CPU's events writing into one mmap ring (PERF_EVENT_IOC_SET_
 * OUTPUT onto the group's first), samples of IDENTIFIER | TID | TIME | CPU
 * | RAW on CLOCK_MONOTONIC (use_clockid; docs/KERNEL.md says why).  Where
 * tracefs is and what is missing when the kernel refuses: perm.c; the
 * tree's tasks: tasks.c.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "kernel/kernel_impl.h"


/* The default list (docs/KERNEL.md): sched_waking where the kernel has it, else sched_wakeup. */
static const unsigned default_tps[] = { TB_KTP_SWITCH, TB_KTP_WAKING, TB_KTP_WAKEUP_NEW, TB_KTP_FORK,
					TB_KTP_EXEC, TB_KTP_EXIT, TB_KTP_MIGRATE };

/* Which of a CPU's rings a tracepoint's records go to: the scheduling
 * events in one, the optional, much more frequent ones (system calls, page
 * faults: sampled on every CPU, kept or left out by the recorder) in
 * another, so that a flood of them (other processes' included) fills
 * only their own ring and never costs a scheduling event. */
static unsigned ring_group(unsigned tp)
{
	return tp >= TB_KTP_SYS_ENTER;
}

/* Names that stand for several tracepoints in --kernel=LIST. */
static const struct {
	const char *name;
	unsigned tps[8], n;
} groups[] = {
	{ "sched", { TB_KTP_SWITCH, TB_KTP_WAKING, TB_KTP_WAKEUP_NEW, TB_KTP_FORK, TB_KTP_EXEC, TB_KTP_EXIT,
		     TB_KTP_MIGRATE },
	  7 },
	{ "syscalls", { TB_KTP_SYS_ENTER, TB_KTP_SYS_EXIT }, 2 },
	{ "page_faults", { TB_KTP_PF_USER }, 1 },
};

/* Which tracepoints: cfg->list, or the default list.  want[tp] = 1. */
static int parse_list(const char *list, int *want, int *explicit_list)
{
	memset(want, 0, sizeof(int) * TB_KTP_N);
	*explicit_list = list && *list;
	if (!*explicit_list) {
		for (unsigned i = 0; i < sizeof default_tps / sizeof default_tps[0]; i++)
			want[default_tps[i]] = 1;
		return 0;
	}
	for (const char *p = list; *p;) {
		const char *e = strchr(p, ',');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		unsigned g;
		for (g = 0; g < sizeof groups / sizeof groups[0]; g++)
			if (strlen(groups[g].name) == n && !memcmp(groups[g].name, p, n))
				break;
		if (g < sizeof groups / sizeof groups[0]) {
			for (unsigned i = 0; i < groups[g].n; i++)
				want[groups[g].tps[i]] = 1;
		} else {
			int tp = tb_ktp_lookup(p, n);
			if (tp < 0) {
				char names[512] = "";
				for (unsigned i = 0; i < TB_KTP_N; i++)
					snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s:%s", i ? ", " : "",
						 tb_ktp_sys(i), tb_ktp_tracepoint(i));
				return tb_fail(-EINVAL,
					       "--kernel: unknown tracepoint '%.*s' (known: %s; or the sets sched (the "
					       "default), syscalls, page_faults)",
					       (int)n, p, names);
			}
			want[tp] = 1;
		}
		p += n;
		if (*p == ',')
			p++;
	}
	return 0;
}

/* Room for one more event fd (and its id, and a twin) in k's arrays. */
static int room(struct tb_kernel *k)
{
	if (k->nfds < k->capfds && k->nids < k->capfds && k->ncfds < k->capfds)
		return 0;
	size_t cap = k->capfds ? k->capfds * 2 : 64;
	int *fds = realloc(k->fds, cap * sizeof *fds);
	if (fds)
		k->fds = fds;
	unsigned *fc = realloc(k->fd_cpu, cap * sizeof *fc);
	if (fc)
		k->fd_cpu = fc;
	struct kid *ids = realloc(k->ids, cap * sizeof *ids);
	if (ids)
		k->ids = ids;
	int *cfds = realloc(k->cfds, cap * sizeof *cfds);
	if (cfds)
		k->cfds = cfds;
	unsigned *cc = realloc(k->cfd_cpu, cap * sizeof *cc);
	if (cc)
		k->cfd_cpu = cc;
	if (!fds || !fc || !ids || !cfds || !cc)
		return tb_fail(-ENOMEM, "--kernel: out of memory");
	k->capfds = cap;
	return 0;
}

/* fd's records into its group's ring on CPU c: the group's first event
 * there maps the ring, the others are redirected to it (SET_OUTPUT). */
static int to_ring(struct tb_kernel *k, struct kcpu *c, int fd, unsigned g)
{
	long page = sysconf(_SC_PAGESIZE);
	if (c->gring[g] >= 0) {
		if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, c->rings[c->gring[g]].fd) < 0)
			return tb_fail(-errno, "--kernel: PERF_EVENT_IOC_SET_OUTPUT (CPU %d): %s", c->cpu, strerror(errno));
		return 0;
	}
	struct kring *kr = &c->rings[c->nrings];
	kr->fd = fd;
	kr->group = g;
	kr->map_len = (size_t)(k->ring_pages + 1) * (size_t)page;
	kr->map = mmap(NULL, kr->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (kr->map == MAP_FAILED) {
		int err = errno;
		kr->map = NULL;
		return tb_fail(-err, "--kernel: cannot map the perf ring of CPU %d (%u KiB): %s%s", c->cpu,
			       (unsigned)(kr->map_len / 1024), strerror(err),
			       err == EPERM ? " (above kernel.perf_event_mlock_kb for this user: "
					      "raise it, or use a smaller ring)"
					    : "");
	}
	c->gring[g] = (int)c->nrings++;
	if (c->fd < 0)
		c->fd = fd;
	struct perf_event_mmap_page *mp = kr->map;
	/* data_offset/data_size: Linux 4.1+; before, the data follows the first page */
	uint64_t off = mp->data_offset ? mp->data_offset : (uint64_t)page;
	uint64_t size = mp->data_size ? mp->data_size : (uint64_t)k->ring_pages * (uint64_t)page;
	if (off + size > kr->map_len || (size & (size - 1)))
		return tb_fail(-EINVAL, "--kernel: perf ring of CPU %d: impossible layout", c->cpu);
	kr->ring.data = (const uint8_t *)kr->map + off;
	kr->ring.size = size;
	kr->ring.head = (const uint64_t *)&mp->data_head;
	kr->ring.tail = (uint64_t *)&mp->data_tail;
	return 0;
}

static void keep_fd(struct tb_kernel *k, struct kcpu *c, int fd, unsigned tp, uint64_t id)
{
	k->fd_cpu[k->nfds] = (unsigned)(c - k->cpus);
	k->fds[k->nfds++] = fd;
	k->ids[k->nids].id = id;
	k->ids[k->nids].tp = tp;
	k->nids++;
}

/*
 * Tracepoint tp on CPU c: for every task (tid -1), with its counting twin,
 * or for task tid and what it starts later (inherit: system calls and page
 * faults of the tree; enabled at once, since a task started while its
 * parent's event is off would never be counted: no twin, the ring's own
 * loss records say what it lost).  *offline: the CPU is not there.
 */
static int open_one(struct tb_kernel *k, struct kcpu *c, unsigned tp, int tid, int *offline)
{
	long page = sysconf(_SC_PAGESIZE);
	struct perf_event_attr a;
	memset(&a, 0, sizeof a);
	a.size = sizeof a;
	a.type = PERF_TYPE_TRACEPOINT;
	a.config = k->fmt[tp].id;
	a.sample_period = 1;
	a.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_RAW;
	a.disabled = tid < 0;
	a.inherit = tid >= 0;
	a.use_clockid = 1;
	a.clockid = CLOCK_MONOTONIC;
	a.watermark = 1;
	a.wakeup_watermark = (uint32_t)((uint64_t)k->ring_pages * (uint64_t)page / 4);
	/* the event's own count and the samples the kernel charged as lost to
	 * a full ring (PERF_FORMAT_LOST, Linux 6.0+): what the final pass
	 * separates "ring full, record still pending" from "counted, never
	 * written, never charged" with (docs/KERNEL.md, "Losses") */
	a.read_format = k->no_lost_format || tid >= 0 ? 0 : PERF_FORMAT_LOST;
	if (room(k))
		return -ENOMEM;
	int fd = (int)syscall(SYS_perf_event_open, &a, tid, c->cpu, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0 && tid < 0 && errno == EINVAL && !k->no_lost_format) {
		k->no_lost_format = 1; /* a kernel before 6.0 */
		a.read_format = 0;
		fd = (int)syscall(SYS_perf_event_open, &a, tid, c->cpu, -1, PERF_FLAG_FD_CLOEXEC);
	}
	if (fd < 0) {
		int err = errno;
		if (err == ENODEV || err == ENXIO) {
			*offline = 1; /* an offline CPU */
			return 0;
		}
		if (tid >= 0 && err == ESRCH)
			return 0; /* the task has ended: what it started is opened on its own */
		if (err == EACCES || err == EPERM)
			return tb_kperm_error(err, tp);
		return tb_fail(-err, "--kernel: perf_event_open(%s:%s, CPU %d%s): %s", tb_ktp_sys(tp),
			       tb_ktp_tracepoint(tp), c->cpu, tid >= 0 ? ", a task of the tree" : "", strerror(err));
	}
	uint64_t id = 0;
	if (ioctl(fd, PERF_EVENT_IOC_ID, &id) < 0) {
		int err = errno;
		close(fd);
		return tb_fail(-err, "--kernel: PERF_EVENT_IOC_ID: %s", strerror(err));
	}
	keep_fd(k, c, fd, tp, id);
	if (tid < 0) {
		/* its counting twin, in its group: enabled and disabled with it,
		 * it counts every hit of the tracepoint on this CPU, so that
		 * delivered + filtered + lost can be checked against it */
		struct perf_event_attr ca = a;
		ca.sample_period = 0;
		ca.sample_type = 0;
		ca.disabled = 0;
		ca.watermark = 0;
		ca.wakeup_watermark = 0;
		ca.read_format = 0;
		int cfd = (int)syscall(SYS_perf_event_open, &ca, -1, c->cpu, fd, PERF_FLAG_FD_CLOEXEC);
		if (cfd >= 0) {
			k->cfd_cpu[k->ncfds] = (unsigned)(c - k->cpus);
			k->cfds[k->ncfds++] = cfd;
		} else {
			k->count_failed = 1;
		}
	}
	return to_ring(k, c, fd, ring_group(tp));
}

/* The group-1 tracepoints on task tid, CPU c. */
static int open_task(struct tb_kernel *k, struct kcpu *c, uint32_t tid, int *offline)
{
	int rc = 0;
	for (unsigned tp = 0; tp < TB_KTP_N && !rc && !*offline; tp++)
		if (k->cls_of[tp] >= 0 && ring_group(tp))
			rc = open_one(k, c, tp, (int)tid, offline);
	return rc;
}

static int open_events(struct tb_kernel *k, int *want, int explicit_list, const char *evdir)
{
	/* Every class tracebuf knows is declared, opened or not, each under a
	 * fixed id (TB_KERNEL_ID_BASE + enum tb_ktp): the kernel streams a
	 * killed recorder left in a directory that `record --attach` completes
	 * stay readable whatever list either recorder was given. */
	for (unsigned tp = 0; tp < TB_KTP_N; tp++)
		tb_ktp_class(tp, TB_KERNEL_ID_BASE + tp, &k->classes[tp]);
	k->nclasses = TB_KTP_N;
	int any = 0;
	char missing[256] = "";
	for (unsigned tp = 0; tp < TB_KTP_N; tp++) {
		k->cls_of[tp] = -1;
		if (!want[tp])
			continue;
		char path[512], text[8192];
		snprintf(path, sizeof path, "%s/%s/%s/format", evdir, tb_ktp_sys(tp), tb_ktp_tracepoint(tp));
		int rc = tb_kfile_read(path, text, sizeof text);
		if (rc == -ENOENT && !explicit_list && tp == TB_KTP_WAKING)
			want[TB_KTP_WAKEUP] = 1; /* an old kernel: the wakeup it has */
		if (rc == -ENOENT) {
			snprintf(missing + strlen(missing), sizeof missing - strlen(missing), "%s%s:%s", *missing ? ", " : "",
				 tb_ktp_sys(tp), tb_ktp_tracepoint(tp));
			continue;
		}
		if (rc == -EACCES || rc == -EPERM) {
			char st[768];
			tb_kperm_state(st, sizeof st, 0);
			return tb_fail(rc, "--kernel: cannot read %s: %s", path, st);
		}
		if (rc < 0)
			return tb_fail(rc, "--kernel: cannot read %s: %s", path, strerror(-rc));
		if (tb_tp_format_parse(text, &k->fmt[tp]) < 0) {
			tb_kernel_warn(k, "--kernel: %s: a format this recorder cannot parse; %s:%s skipped", path,
				       tb_ktp_sys(tp), tb_ktp_tracepoint(tp));
			continue;
		}
		/* the fields the class needs must be there: decode an all-zero record of the format's size */
		struct tb_kev probe;
		uint8_t zero[512] = { 0 };
		uint32_t sz = 0;
		for (unsigned f = 0; f < k->fmt[tp].n; f++)
			if ((uint32_t)k->fmt[tp].f[f].off + k->fmt[tp].f[f].size > sz)
				sz = (uint32_t)k->fmt[tp].f[f].off + k->fmt[tp].f[f].size;
		if (sz > sizeof zero || tb_ktp_decode(tp, &k->fmt[tp], zero, sz, 0, 0, &probe) < 0) {
			tb_kernel_warn(k, "--kernel: %s:%s on this kernel lacks a field tracebuf writes (%s); skipped",
				       tb_ktp_sys(tp), tb_ktp_tracepoint(tp), path);
			continue;
		}
		k->cls_of[tp] = (int32_t)tp;
		k->nopened++;
		any = 1;
	}
	if (*missing)
		tb_kernel_warn(k, "--kernel: this kernel has no tracepoint %s: skipped", missing);
	if (!any)
		return tb_fail(-ENOENT, "--kernel: none of the tracepoints asked for exists on this kernel (%s)",
			       *missing ? missing : "none asked");

	long ncpu = sysconf(_SC_NPROCESSORS_CONF);
	if (ncpu < 1)
		ncpu = 1;
	k->cpus = calloc((size_t)ncpu, sizeof *k->cpus);
	if (!k->cpus)
		return tb_fail(-ENOMEM, "--kernel: out of memory");
	/* the tracepoints of group 1 (system calls, page faults) are opened on
	 * the tree's tasks, inherited by what they start, unless --kernel-all */
	int pertask = 0;
	for (unsigned tp = 0; tp < TB_KTP_N; tp++)
		pertask |= k->cls_of[tp] >= 0 && ring_group(tp) && !k->all;
	k->pertask = pertask;
	uint32_t *tasks = NULL;
	size_t ntasks = 0, captasks = 0;
	if (pertask && tb_ktree_tasks(k, &tasks, &ntasks, &captasks) < 0)
		return tb_fail(-ENOMEM, "--kernel: out of memory");
	int rc = 0;
	for (long cpu = 0; cpu < ncpu && !rc; cpu++) {
		struct kcpu *c = &k->cpus[k->ncpu++]; /* counted now: close() frees what it holds */
		memset(c, 0, sizeof *c);
		c->cpu = (int)cpu;
		c->fd = -1;
		c->chain_next = -1;
		c->sfd = -1;
		c->gring[0] = c->gring[1] = -1;
		int offline = 0;
		for (unsigned tp = 0; tp < TB_KTP_N && !offline && !rc; tp++) {
			if (k->cls_of[tp] >= 0 && !(pertask && ring_group(tp)))
				rc = open_one(k, c, tp, -1, &offline);
		}
		if (!rc && c->fd < 0 && !pertask) {
			k->ncpu--; /* offline */
			continue;
		}
		if (!rc && !(c->pkt = calloc(1, TB_KPKT_SIZE)))
			rc = tb_fail(-ENOMEM, "--kernel: out of memory");
		if (offline) {
			free(c->pkt);
			c->pkt = NULL;
			k->ncpu--; /* not there: nothing of it opened on any task either */
		}
	}
	/* each task on every CPU in turn, so that the window in which a task has
	 * its events on some CPUs only (a call entered on one and left on
	 * another) is one task's opening, not the whole tree's */
	for (size_t i = 0; pertask && i < ntasks && !rc; i++)
		for (unsigned j = 0; j < k->ncpu && !rc; j++) {
			int offline = 0;
			rc = open_task(k, &k->cpus[j], tasks[i], &offline);
		}
	/* a CPU with no ring at all (no tracepoint of group 0, no task of the tree) */
	for (unsigned j = 0; !rc && j < k->ncpu; j++)
		if (k->cpus[j].fd < 0) {
			free(k->cpus[j].pkt);
			memmove(&k->cpus[j], &k->cpus[j + 1], (k->ncpu - j - 1) * sizeof k->cpus[0]);
			k->ncpu--;
			/* no fd names CPU j; those of the CPUs after it name them one lower now */
			for (unsigned f = 0; f < k->nfds; f++)
				k->fd_cpu[f] -= k->fd_cpu[f] > j;
			for (unsigned f = 0; f < k->ncfds; f++)
				k->cfd_cpu[f] -= k->cfd_cpu[f] > j;
			j--;
		}
	/* threads the tree started while the events were being opened (before
	 * an opened one could pass them on): open theirs too, until none is new */
	for (int round = 0; pertask && !rc && round < 16; round++) {
		size_t before = ntasks;
		if (tb_ktree_tasks(k, &tasks, &ntasks, &captasks) < 0) {
			rc = tb_fail(-ENOMEM, "--kernel: out of memory");
			break;
		}
		if (ntasks == before)
			break;
		k->maybe_dups = 1; /* each new one may also have inherited some (capture.c drops the twins) */
		for (unsigned i = 0; i < k->ncpu && !rc; i++) {
			int offline = 0;
			for (size_t t = before; t < ntasks && !rc && !offline; t++)
				rc = open_task(k, &k->cpus[i], tasks[t], &offline);
		}
	}
	free(tasks);
	return rc;
}

static int cmp_kid(const void *a, const void *b)
{
	uint64_t x = ((const struct kid *)a)->id, y = ((const struct kid *)b)->id;
	return (x > y) - (x < y);
}

int tb_kernel_open(const struct tb_kernel_cfg *cfg, struct tb_kernel **out)
{
	*out = NULL;
	if (cfg->ring_pages & (cfg->ring_pages - 1))
		return tb_fail(-EINVAL, "--kernel: the perf ring's pages (%u) must be a power of two", cfg->ring_pages);
	int want[TB_KTP_N], explicit_list;
	int rc = parse_list(cfg->list, want, &explicit_list);
	if (rc)
		return rc;
	char evdir[256];
	if ((rc = tb_kfind_tracefs(evdir, sizeof evdir)) != 0)
		return rc;
	struct tb_kernel *k = calloc(1, sizeof *k);
	if (!k)
		return tb_fail(-ENOMEM, "--kernel: out of memory");
	pthread_mutex_init(&k->warn_lock, NULL);
	k->all = cfg->all;
	k->ring_pages = cfg->ring_pages ? cfg->ring_pages : 256; /* 1 MiB per CPU */
	k->clock_kind = cfg->clock_kind;
	k->clock_freq = cfg->clock_freq;
	k->dup_ticks = k->clock_kind == TB_CLOCK_TSC ? k->clock_freq / 500000u : 2000u; /* 2 us */
	k->mono_offset_ns = cfg->clock_mono_offset_ns;
	k->dirfd = -1;

	k->scratch = malloc(TB_PERF_REC_MAX);
	if (!k->scratch) {
		tb_kernel_close(k);
		return tb_fail(-ENOMEM, "--kernel: out of memory");
	}
	if (cfg->nroots && !(k->roots = malloc(cfg->nroots * sizeof *k->roots))) {
		tb_kernel_close(k);
		return tb_fail(-ENOMEM, "--kernel: out of memory");
	}
	for (unsigned i = 0; i < cfg->nroots; i++) {
		k->roots[k->nroots++] = cfg->roots[i];
		tb_kadd_root(k, cfg->roots[i]);
	}
	if ((rc = open_events(k, want, explicit_list, evdir)) != 0) {
		tb_kernel_close(k);
		return rc;
	}
	if (k->nids > 1)
		qsort(k->ids, k->nids, sizeof *k->ids, cmp_kid);
	k->ids_sorted = 1; /* capture.c's find_id() looks them up by halves */
	tb_kclock_pair(k);
	*out = k;
	return 0;
}

void tb_kernel_set_output(struct tb_kernel *k, int dirfd, const uint8_t uuid[16], tb_kernel_sink sink,
			  void *sink_arg)
{
	k->dirfd = dirfd;
	k->sink = sink;
	k->sink_arg = sink_arg;
	memcpy(k->uuid, uuid, 16);
	if (dirfd < 0)
		return; /* no directory: generation 0 */
	/* record --attach into a killed recorder's directory: its kernel streams
	 * stay; ours take the first generation no file of the directory has
	 * (their own names and stream instance ids: docs/KERNEL.md) */
	for (k->gen = 0; k->gen < 0xff00u; k->gen++) {
		int taken = 0;
		for (unsigned i = 0; i < k->ncpu && !taken; i++) {
			char name[48];
			struct stat st;
			tb_kw_name(k, (unsigned)k->cpus[i].cpu, name, sizeof name);
			taken = fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 || errno != ENOENT;
		}
		if (!taken)
			break;
	}
}

void tb_kernel_close(struct tb_kernel *k)
{
	if (!k)
		return;
	for (unsigned i = 0; i < k->ncpu; i++) {
		struct kcpu *c = &k->cpus[i];
		for (unsigned r = 0; r < c->nrings; r++)
			if (c->rings[r].map)
				munmap(c->rings[r].map, c->rings[r].map_len);
		if (c->sfd >= 0)
			close(c->sfd);
		free(c->ev);
		free(c->tmp);
		free(c->arena);
		free(c->arena2);
		free(c->pkt);
	}
	for (unsigned i = 0; i < k->ncfds; i++)
		close(k->cfds[i]);
	for (unsigned i = 0; i < k->nfds; i++)
		close(k->fds[i]);
	free(k->cpus);
	free(k->cfds);
	free(k->cfd_cpu);
	free(k->fd_cpu);
	free(k->fds);
	free(k->ids);
	free(k->set);
	free(k->roots);
	free(k->scratch);
	pthread_mutex_destroy(&k->warn_lock);
	free(k);
}
