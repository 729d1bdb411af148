/* SPDX-License-Identifier: MIT */
/* embedded.c - the consumer as threads of the traced process (tracebuf/consumer.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <tracebuf/consumer.h>
#include <tracebuf/session.h>

#include "consumer/engine_impl.h"
#include "relay/relay.h"

struct tb_recorder {
	struct tb_session *s;
	struct tb_engine *e;
};


/* /proc/self/cmdline with spaces, for the metadata env */
static void own_cmdline(char *buf, size_t len)
{
	buf[0] = 0;
	int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	ssize_t n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = 0;
	for (ssize_t i = 0; i < n - 1; i++)
		if (!buf[i])
			buf[i] = ' ';
}

int tb_session_start(const struct tb_session_opts *opts, const char *outdir, struct tb_recorder **out)
{
	return tb_session_start_relay(opts, outdir, NULL, out);
}

int tb_session_start_relay(const struct tb_session_opts *opts, const char *outdir, const struct tb_relay_opts *relay,
			   struct tb_recorder **out)
{
	if (!out)
		return tb_fail(-EINVAL, "tb_session_start: no output handle");
	*out = NULL;
	struct tb_relay_cfg rc_cfg;
	if (relay) {
		if (relay->size < offsetof(struct tb_relay_opts, live_timer_ns) + sizeof relay->live_timer_ns || !relay->url)
			return tb_fail(-EINVAL, "tb_session_start_relay: relay options without a url, or of an unknown size");
		if (relay->live_timer_ns / 1000 > UINT32_MAX)
			return tb_fail(-EINVAL, "tb_session_start_relay: live timer %" PRIu64 " ns is too long (at most ~70 min)",
				       relay->live_timer_ns);
		rc_cfg = (struct tb_relay_cfg){ .url = relay->url,
						.session_name = relay->session_name ? relay->session_name : "tracebuf",
						.hostname = relay->hostname,
						.live_timer_us = (uint32_t)(relay->live_timer_ns / 1000) };
	}
	if (!outdir && !relay)
		return tb_fail(-EINVAL, "tb_session_start: no output directory");
	uint64_t live_ns = 0; /* tb_engine_cfg: 0 the default, UINT64_MAX off */
	if (opts && opts->size >= offsetof(struct tb_session_opts, live_period_ns) + sizeof opts->live_period_ns)
		live_ns = opts->live_period_ns;
	if (live_ns && live_ns != UINT64_MAX && (live_ns < TB_MIN_LIVE_PERIOD_NS || live_ns > TB_MAX_LIVE_PERIOD_NS))
		return tb_fail(-EINVAL,
			       "tb_session_start: live period %" PRIu64 " ns is out of range (10 ms to 1 hour; "
			       "0 for the default 1 s, UINT64_MAX for off)",
			       live_ns);
	int created = 0, rc = outdir ? tb_output_dir(outdir, &created) : 0;
	if (rc < 0)
		return rc;
	struct tb_recorder *r = calloc(1, sizeof *r);
	if (!r)
		return tb_fail(-ENOMEM, "out of memory");
	struct tb_session_opts dflt = { .size = sizeof dflt };
	rc = tb_session_create(opts ? opts : &dflt, &r->s);
	if (rc < 0)
		goto fail;

	char cmdline[1024];
	own_cmdline(cmdline, sizeof cmdline);
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	struct tb_engine_env env[] = {
		{ "cmdline", cmdline, 0 },
		{ "pid", NULL, getpid() },
		{ "start_realtime_ns", NULL, (int64_t)now.tv_sec * 1000000000 + now.tv_nsec },
		{ "recorder", "embedded", 0 },
	};
	struct tb_engine_cfg cfg = { .env = env, .nenv = sizeof env / sizeof env[0], .relay = relay ? &rc_cfg : NULL,
				     .live_period_ns = live_ns };
	/* --kernel's twin (docs/KERNEL.md): this process's tree, or every process */
	uint32_t self = (uint32_t)getpid();
	struct tb_kernel_cfg kcfg = { .roots = &self, .nroots = 1 };
	if (opts && opts->size >= offsetof(struct tb_session_opts, kernel_pages) + sizeof opts->kernel_pages &&
	    opts->kernel) {
		kcfg.list = opts->kernel;
		kcfg.all = opts->kernel_all != 0;
		kcfg.ring_pages = opts->kernel_pages;
		cfg.kernel = &kcfg;
	}
	rc = tb_engine_create(r->s, outdir, &cfg, &r->e);
	if (rc < 0)
		goto fail;
	rc = tb_engine_start(r->e);
	if (rc < 0)
		goto fail;
	rc = tb_producer_use(r->s);
	if (rc < 0)
		goto fail;
	*out = r;
	return 0;
fail:
	if (r->e)
		tb_engine_destroy(r->e);
	if (r->s) {
		tb_session_unlink(r->s);
		tb_session_close(r->s);
	}
	if (created)
		rmdir(outdir); /* only if still empty */
	free(r);
	return rc;
}

struct tb_session *tb_recorder_session(const struct tb_recorder *rec)
{
	return rec ? rec->s : NULL;
}

int tb_session_stop(struct tb_recorder *r)
{
	if (!r)
		return tb_fail(-EINVAL, "tb_session_stop: no recorder");
	if (tb_producer_session() == r->s)
		tb_producer_use(NULL);
	unsigned how = TB_FINISH_SNAPSHOT;
	if (tb_session_live_procs(r->s, (uint32_t)getpid()) == 0)
		how |= TB_FINISH_DEAD; /* this process stopped writing and no other is left */
	int rc = tb_engine_finish(r->e, how);
	char msg[512];
	if (rc < 0)
		snprintf(msg, sizeof msg, "%s", tb_engine_errmsg(r->e));
	tb_engine_destroy(r->e);
	tb_session_unlink(r->s);
	tb_session_close(r->s);
	free(r);
	if (rc < 0)
		return tb_fail(rc, "%s", msg);
	return 0;
}

int tb_snapshot(struct tb_session *s, const char *outdir)
{
	if (!s)
		s = tb_producer_session();
	if (!s)
		return tb_fail(-ENODEV, "tb_snapshot: no session (this process writes to none)");
	struct tb_oneshot o = { .how = TB_ONESHOT_SNAPSHOT, .pid_env = 1 };
	int rc = tb_oneshot_run(s, outdir, &o);
	if (rc < 0)
		return rc;
	return o.st.packets > INT32_MAX ? INT32_MAX : (int)o.st.packets;
}

int tb_session_copy(struct tb_session *s, const char *outdir, unsigned how,
		    void (*warn)(void *arg, const char *sentence), void *warn_arg, struct tb_copy_result *res)
{
	if (res && res->size != sizeof *res)
		return tb_fail(-EINVAL, "struct tb_copy_result: size %zu unknown (set .size = sizeof)", res->size);
	if (!s || !outdir || how > TB_COPY_RECOVER)
		return tb_fail(-EINVAL, "tb_session_copy: no session, no directory, or how = %u unknown", how);
	unsigned live = tb_session_live_procs(s, (uint32_t)getpid());
	struct tb_oneshot o = { .how = how == TB_COPY_RECOVER ? TB_ONESHOT_RECOVER : TB_ONESHOT_SNAPSHOT,
				.warn = warn, .warn_arg = warn_arg,
				.recorder = how == TB_COPY_RECOVER ? "tracebuf recover" : "tracebuf snapshot" };
	int rc = tb_oneshot_run(s, outdir, &o);
	if (res) {
		*res = (struct tb_copy_result){ .size = sizeof *res, .events = o.st.events, .packets = o.st.packets,
						.bytes = o.st.bytes, .invalid = o.st.bad, .torn = o.st.torn,
						.quiescent = o.quiescent, .live = live };
	}
	return rc;
}
