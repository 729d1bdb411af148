/* SPDX-License-Identifier: MIT */
/*
 * cmd_profile.c - tracebuf profile [-F HZ] [-o DIR] [--unwind auto|fp|libunwind]
 *                 [--depth N] [record options] -- CMD [ARGS]
 *
 * `tracebuf record` of CMD with the sampler preloaded: sets LD_PRELOAD
 * (libtracebuf.so.0 and libtracebuf-profile.so, before whatever LD_PRELOAD
 * held) and TRACEBUF_PROFILE_* in our own environment, which cmd_record()
 * copies into CMD's, and calls cmd_record() with a rebuilt argv.  The
 * sampler is src/profile/ (docs/PROFILE.md).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

#define NAME "profile"
#define PROFILE_LIB "libtracebuf-profile.so"
#define TRACEBUF_LIB "libtracebuf.so.0"

#ifndef TB_PROFILE_LIBDIR
#define TB_PROFILE_LIBDIR "/usr/local/lib"
#endif
#ifndef TB_PROFILE_LIBDIR_REL
#define TB_PROFILE_LIBDIR_REL "../lib"
#endif

static void profile_usage(FILE *f)
{
	fprintf(f,
		"usage: tracebuf profile [options] [-o DIR] -- CMD [ARGS...]\n"
		"\n"
		"Runs CMD (and every process it starts) with the sampler preloaded: each thread gets a\n"
		"CPU-time timer whose SIGPROF handler writes one profile:sample (PC and call chain) into\n"
		"the per-CPU rings; the executable mappings (and each dlopen's) are recorded so that\n"
		"the trace can be symbolised after CMD has exited: tracebuf report --profile DIR.\n"
		"Exits with CMD's exit status (128+N if it died of signal N).\n"
		"\n"
		"  -F, --freq HZ             samples per second of CPU time per thread (999): a perf\n"
		"                            cpu-clock event where perf_event_open is allowed, else a CPU-time\n"
		"                            timer (at most CONFIG_HZ: a sample then stands for 1 + its\n"
		"                            'overrun' periods; so does one taken where the machine could\n"
		"                            not take the rate and the period was lengthened, above 4000)\n"
		"  -o, --output DIR          trace directory (default profile-YYYYMMDD-HHMMSS)\n"
		"  --unwind auto|fp|libunwind  call chains by libunwind (DWARF CFI: also through code\n"
		"                            without frame pointers) or by frame pointers (fp: cheaper);\n"
		"                            auto (default): libunwind where it can be loaded, else fp\n"
		"  --depth N                 longest call chain, PC included (1..127, default 127)\n"
		"  -q, --quiet               no status line, no summary\n"
		"\n"
		"Passed to 'tracebuf record' (see tracebuf record --help): --sb-size, --sb-count,\n"
		"--events (profile:* is always added), --flush-period, --watermark, --session,\n"
		"--shm-dir, --channel and --mode (discard only: samples are dropped and counted when\n"
		"a ring is full, never waited for).\n"
		"\n"
		"The sampler library is $TRACEBUF_PROFILE_LIB, else " PROFILE_LIB " next to this\n"
		"program, else in " TB_PROFILE_LIBDIR_REL " from it (an installed tree, even moved), else in\n"
		TB_PROFILE_LIBDIR ".  CMD must be dynamically linked (LD_PRELOAD).\n"
		"Exit: CMD's status; 1 when profiling failed (and CMD exited 0); 2 usage.\n");
}

enum {
	OPT_UNWIND = 256, OPT_DEPTH, OPT_SB_SIZE, OPT_SB_COUNT, OPT_EVENTS, OPT_FLUSH, OPT_WATERMARK,
	OPT_SESSION, OPT_SHM_DIR, OPT_CHANNEL, OPT_MODE, OPT_BLOCK_TIMEOUT, OPT_NO_ATTR, OPT_ATTACH,
};

static int usage_error(const char *fmt, const char *arg)
{
	return cli_usage(NAME, fmt, arg);
}

/* the spelling of a passed-on option for tracebuf record */
static const char *record_opt(int c)
{
	switch (c) {
	case OPT_SB_SIZE: return "--sb-size";
	case OPT_SB_COUNT: return "--sb-count";
	case OPT_FLUSH: return "--flush-period";
	case OPT_WATERMARK: return "--watermark";
	case OPT_SESSION: return "--session";
	case OPT_SHM_DIR: return "--shm-dir";
	default: return "--block-timeout";
	}
}

static int parse_uint(const char *s, unsigned long lo, unsigned long hi, unsigned long *out)
{
	uint64_t v;
	if (cli_parse_uint(s, hi, &v) || v < lo)
		return -1;
	*out = (unsigned long)v;
	return 0;
}

static int file_exists(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* The sampler library: $TRACEBUF_PROFILE_LIB, next to /proc/self/exe, the install libdir. */
static int find_lib(char *lib, size_t len)
{
	const char *env = getenv("TRACEBUF_PROFILE_LIB");
	if (env && *env) {
		if (!file_exists(env))
			return cli_error(NAME, "TRACEBUF_PROFILE_LIB=%s: no such file (unset it to use the "
					       "library installed with tracebuf)", env);
		snprintf(lib, len, "%s", env);
		return 0;
	}
	char exe[PATH_MAX - 64], tried[3 * PATH_MAX + 64]; /* exe/PROFILE_LIB fits in PATH_MAX */
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	tried[0] = 0;
	if (n > 0) {
		exe[n] = 0;
		char *slash = strrchr(exe, '/');
		if (slash) {
			*slash = 0;
			if ((size_t)snprintf(lib, len, "%s/%s", exe, PROFILE_LIB) < len && file_exists(lib))
				return 0;
			snprintf(tried, sizeof tried, "%s, ", lib);
			/* an installed tree, wherever it was moved: BINDIR/../lib */
			if ((size_t)snprintf(lib, len, "%s/%s/%s", exe, TB_PROFILE_LIBDIR_REL, PROFILE_LIB) < len &&
			    file_exists(lib))
				return 0;
			size_t tl = strlen(tried);
			snprintf(tried + tl, sizeof tried - tl, "%s, ", lib);
		}
	}
	snprintf(lib, len, "%s/%s", TB_PROFILE_LIBDIR, PROFILE_LIB);
	if (file_exists(lib))
		return 0;
	return cli_error(NAME, "cannot find the sampler library: tried %s%s; build or install it, or set "
			       "TRACEBUF_PROFILE_LIB", tried, lib);
}

/* LD_PRELOAD = [DIR/libtracebuf.so.0:]LIB[:previous LD_PRELOAD] */
static int set_preload(const char *lib)
{
	if (strpbrk(lib, ": \t"))
		return cli_error(NAME, "%s: LD_PRELOAD cannot hold a path with ':' or spaces; set "
				       "TRACEBUF_PROFILE_LIB to a path without them", lib);
	char core[PATH_MAX];
	const char *slash = strrchr(lib, '/');
	int n = slash ? (int)(slash - lib) : 0;
	/* the libtracebuf next to the sampler, so that the sampler needs no
	 * RUNPATH (which would change the library search of CMD's dlopen) */
	snprintf(core, sizeof core, "%.*s/%s", n, lib, TRACEBUF_LIB);
	int with_core = slash && file_exists(core) && !strpbrk(core, ": \t");
	const char *old = getenv("LD_PRELOAD");
	size_t len = strlen(core) + strlen(lib) + (old ? strlen(old) : 0) + 4;
	char *v = malloc(len);
	if (!v)
		return cli_error(NAME, "out of memory");
	snprintf(v, len, "%s%s%s%s%s", with_core ? core : "", with_core ? ":" : "", lib, old && *old ? ":" : "",
		 old && *old ? old : "");
	int rc = setenv("LD_PRELOAD", v, 1);
	free(v);
	return rc ? cli_error(NAME, "setenv: %s", strerror(errno)) : 0;
}

/* 1 when libunwind can be used here (built with it, and its library loads) */
static int libunwind_usable(void)
{
#ifdef TB_PROFILE_HAVE_LIBUNWIND
	void *h = dlopen(TB_PROFILE_LIBUNWIND_SONAME, RTLD_LAZY | RTLD_LOCAL);
	if (h)
		dlclose(h);
	return h != NULL;
#else
	return 0;
#endif
}

static int check_libunwind(void)
{
#ifdef TB_PROFILE_HAVE_LIBUNWIND
	void *h = dlopen(TB_PROFILE_LIBUNWIND_SONAME, RTLD_LAZY | RTLD_LOCAL);
	if (!h)
		return cli_error(NAME, "--unwind libunwind: cannot load %s (%s); install libunwind8, or use "
				       "--unwind fp", TB_PROFILE_LIBUNWIND_SONAME, dlerror());
	dlclose(h);
	return 0;
#else
	return cli_error(NAME, "--unwind libunwind: this tracebuf was built without libunwind; install "
			       "libunwind-dev and rebuild (cmake finds it with pkg-config), or use --unwind fp");
#endif
}

/* CMD as execvp would find it; 0 or -1 */
static int which(const char *cmd, char *path, size_t len)
{
	if (strchr(cmd, '/'))
		return (size_t)snprintf(path, len, "%s", cmd) < len ? 0 : -1;
	const char *env = getenv("PATH");
	char *dirs = strdup(env && *env ? env : "/usr/local/bin:/usr/bin:/bin");
	int rc = -1;
	for (char *save = NULL, *d = dirs ? strtok_r(dirs, ":", &save) : NULL; d; d = strtok_r(NULL, ":", &save))
		if ((size_t)snprintf(path, len, "%s/%s", *d ? d : ".", cmd) < len && file_exists(path) &&
		    access(path, X_OK) == 0) {
			rc = 0;
			break;
		}
	free(dirs);
	return rc;
}

/*
 * LD_PRELOAD does not reach a statically linked program (no program
 * interpreter), nor a set-user/group-ID one (paths with '/' are ignored in
 * secure-execution mode): say so before running it, rather than leaving an
 * empty profile unexplained.
 */
static void warn_unpreloadable(const char *cmd)
{
	char path[PATH_MAX];
	struct stat st;
	if (which(cmd, path, sizeof path) || stat(path, &st) != 0)
		return; /* tracebuf record says what is wrong */
	if (st.st_mode & (S_ISUID | S_ISGID)) {
		cli_msg(stderr, "tracebuf " NAME ": warning: %s is set-user/group-ID: the loader ignores LD_PRELOAD, "
				"it will have no samples", path);
		return;
	}
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	Elf64_Ehdr eh;
	int has_interp = 0, elf = pread(fd, &eh, sizeof eh, 0) == (ssize_t)sizeof eh &&
				  !memcmp(eh.e_ident, ELFMAG, SELFMAG) && eh.e_ident[EI_CLASS] == ELFCLASS64 &&
				  eh.e_phentsize == sizeof(Elf64_Phdr);
	for (unsigned i = 0; elf && i < eh.e_phnum && !has_interp; i++) {
		Elf64_Phdr ph;
		if (pread(fd, &ph, sizeof ph, (off_t)(eh.e_phoff + (uint64_t)i * sizeof ph)) != (ssize_t)sizeof ph)
			break;
		has_interp = ph.p_type == PT_INTERP;
	}
	close(fd);
	if (elf && !has_interp)
		cli_msg(stderr, "tracebuf " NAME ": warning: %s is statically linked: the sampler cannot be "
				"preloaded, it will have no samples", path);
}

int cmd_profile(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "freq", required_argument, 0, 'F' },
		{ "output", required_argument, 0, 'o' },
		{ "unwind", required_argument, 0, OPT_UNWIND },
		{ "depth", required_argument, 0, OPT_DEPTH },
		{ "quiet", no_argument, 0, 'q' },
		{ "help", no_argument, 0, 'h' },
		/* tracebuf record's, passed on */
		{ "sb-size", required_argument, 0, OPT_SB_SIZE },
		{ "sb-count", required_argument, 0, OPT_SB_COUNT },
		{ "events", required_argument, 0, OPT_EVENTS },
		{ "flush-period", required_argument, 0, OPT_FLUSH },
		{ "watermark", required_argument, 0, OPT_WATERMARK },
		{ "session", required_argument, 0, OPT_SESSION },
		{ "shm-dir", required_argument, 0, OPT_SHM_DIR },
		{ "channel", required_argument, 0, OPT_CHANNEL },
		{ "mode", required_argument, 0, OPT_MODE },
		{ "block-timeout", required_argument, 0, OPT_BLOCK_TIMEOUT },
		/* refused, with a reason */
		{ "no-attribution", no_argument, 0, OPT_NO_ATTR },
		{ "attach", required_argument, 0, OPT_ATTACH },
		{ 0, 0, 0, 0 },
	};
	unsigned long hz = 999, depth = 127;
	const char *out = NULL, *unwind = "auto";
	char *events = NULL;
	int quiet = 0, c, rc = TB_EXIT_OK;
	/* record's argv: "record", options, "-o", DIR, "--", CMD...: at most
	 * two entries per argument of ours (--x=v becomes --x v) */
	char **rargv = calloc(2 * (size_t)argc + 8, sizeof *rargv);
	if (!rargv)
		return cli_error(NAME, "out of memory");
	int rn = 0;
	rargv[rn++] = "profile"; /* cmd_record: the messages name profile */
	optind = 1;
	while ((c = cli_getopt(NAME, argc, argv, "+F:o:qh", lo)) != -1) {
		switch (c) {
		case 'F':
			if (parse_uint(optarg, 1, 100000, &hz)) {
				rc = usage_error("-F %s: want a frequency in Hz, 1 to 100000", optarg);
				goto out;
			}
			break;
		case 'o': out = optarg; break;
		case 'q': quiet = 1; break;
		case 'h': profile_usage(stdout); goto out;
		case OPT_UNWIND:
			if (strcmp(optarg, "fp") && strcmp(optarg, "libunwind") && strcmp(optarg, "auto")) {
				rc = usage_error("--unwind %s: want auto, fp or libunwind", optarg);
				goto out;
			}
			unwind = optarg;
			break;
		case OPT_DEPTH:
			if (parse_uint(optarg, 1, 127, &depth)) {
				rc = usage_error("--depth %s: want 1 to 127 (the PC included)", optarg);
				goto out;
			}
			break;
		case OPT_MODE:
			if (strcmp(optarg, "discard")) {
				rc = usage_error("--mode %s: samples are written in discard mode only (a signal "
						 "handler must never wait)", optarg);
				goto out;
			}
			break; /* the default */
		case OPT_CHANNEL: {
			const char *m = strrchr(optarg, ':');
			int colons = 0;
			for (const char *p = optarg; *p; p++)
				colons += *p == ':';
			if (colons == 3 && m[1] && strcmp(m + 1, "discard")) {
				rc = usage_error("--channel %s: samples are written in discard mode only", optarg);
				goto out;
			}
			rargv[rn++] = "--channel";
			rargv[rn++] = optarg;
			break;
		}
		case OPT_EVENTS: {
			/* the program's own classes, and always the sampler's (a '!'
			 * exclusion still wins: see tb_pattern_match) */
			size_t len = strlen(optarg) + sizeof ",profile:*";
			free(events);
			events = malloc(len);
			if (!events) {
				rc = cli_error(NAME, "out of memory");
				goto out;
			}
			snprintf(events, len, "%s,profile:*", optarg);
			rargv[rn++] = "--events";
			rargv[rn++] = events;
			break;
		}
		case OPT_NO_ATTR:
			rc = usage_error("%s: the samples' threads come from the attribution records", "--no-attribution");
			goto out;
		case OPT_ATTACH:
			rc = usage_error("--attach %s: profile runs a command; use tracebuf record --attach to drain "
					 "a session", optarg);
			goto out;
		case OPT_SB_SIZE: case OPT_SB_COUNT: case OPT_FLUSH: case OPT_WATERMARK:
		case OPT_SESSION: case OPT_SHM_DIR: case OPT_BLOCK_TIMEOUT:
			/* "--NAME" then the value, whatever the spelling was (--x=v, --x v) */
			rargv[rn++] = (char *)record_opt(c);
			rargv[rn++] = optarg;
			break;
		default: /* '?': cli_getopt said which */
			fprintf(stderr, "(tracebuf " NAME " --help for the options)\n");
			rc = TB_EXIT_USAGE;
			goto out;
		}
	}
	if (optind >= argc) {
		rc = usage_error("%s", "no command to profile: tracebuf profile [-o DIR] -- CMD [ARGS]");
		goto out;
	}

	char lib[PATH_MAX], outbuf[PATH_MAX], num[32];
	/* auto: libunwind where it can be loaded (callers of programs built
	 * without frame pointers, the -O2 default), frame pointers otherwise,
	 * said once; the report says which was used (profile:info) */
	if (!strcmp(unwind, "auto")) {
		unwind = libunwind_usable() ? "libunwind" : "fp";
		if (!strcmp(unwind, "fp") && !quiet)
			fprintf(stderr, "tracebuf profile: unwinding by frame pointers (libunwind %s): callers of code "
					"built without frame pointers show as [unknown]\n",
#ifdef TB_PROFILE_HAVE_LIBUNWIND
				"cannot be loaded: install libunwind8"
#else
				"not built in: install libunwind-dev and rebuild"
#endif
			);
	}
	if (find_lib(lib, sizeof lib) || (!strcmp(unwind, "libunwind") && check_libunwind()) || set_preload(lib)) {
		rc = TB_EXIT_FAIL;
		goto out;
	}
	warn_unpreloadable(argv[optind]);
	snprintf(num, sizeof num, "%lu", hz);
	setenv("TRACEBUF_PROFILE_HZ", num, 1);
	snprintf(num, sizeof num, "%lu", depth);
	setenv("TRACEBUF_PROFILE_DEPTH", num, 1);
	setenv("TRACEBUF_PROFILE_UNWIND", unwind, 1);
	if (!out) {
		cli_default_out("profile", outbuf, sizeof outbuf);
		out = outbuf;
	}
	if (quiet)
		rargv[rn++] = "-q";
	rargv[rn++] = "-o";
	rargv[rn++] = (char *)out;
	rargv[rn++] = "--";
	for (int i = optind; i < argc; i++)
		rargv[rn++] = argv[i];
	rargv[rn] = NULL;
	rc = cmd_record(rn, rargv);
	char meta[PATH_MAX + 16];
	snprintf(meta, sizeof meta, "%s/metadata", out);
	if (!quiet && file_exists(meta))
		cli_msg(stderr, "tracebuf " NAME ": samples in %s (tracebuf report --profile %s)", out, out);
out:
	free(events);
	free(rargv);
	return rc;
}
