/* SPDX-License-Identifier: MIT */
/*
 * tracebuf-bench - runs every benchmark group and prints one table.
 * Usage: tracebuf-bench [GROUP...]   (BENCH_QUICK=1 for small counts)
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "bench.h"

struct bench_table {
	int rows;
};

int bench_quick(void)
{
	const char *e = getenv("BENCH_QUICK");
	return e && *e && strcmp(e, "0") != 0;
}

void bench_row(struct bench_table *t, const char *group, const char *config, double value, const char *unit,
	       double ratio, const char *ratio_name, const char *target)
{
	t->rows++;
	if (ratio_name)
		printf("| %-9s | %-44s | %10.2f %-9s | %8.2f %-22s | %-8s |\n", group, config, value, unit, ratio,
		       ratio_name, target ? target : "");
	else
		printf("| %-9s | %-44s | %10.2f %-9s | %8s %-22s | %-8s |\n", group, config, value, unit, "", "baseline",
		       "");
	fflush(stdout);
}

void bench_skip(struct bench_table *t, const char *group, const char *config, const char *why)
{
	t->rows++;
	printf("| %-9s | %-44s | %20s | skipped: %s\n", group, config, "", why);
	fflush(stdout);
}

/* The kind of (virtual) machine, so that tables are not compared across machines by mistake:
 * the same kernel string has run on guests whose timer interrupt cost 13 and 41 us per sample
 * (docs/BENCHMARKS.md).  The kernel's own "Hypervisor detected" line when dmesg is readable (a
 * PVM guest's CPUID signature says "bhyve bhyve"), else the CPUID signature; and the clock source. */
static void hypervisor(char *out, size_t n)
{
	snprintf(out, n, "bare metal or unknown");
#if defined(__x86_64__) || defined(__i386__)
	unsigned a, b, c, d;
	if (__get_cpuid(1, &a, &b, &c, &d) && (c >> 31 & 1)) { /* CPUID.1:ECX.31: running under a hypervisor */
		char sig[13] = { 0 };
		__cpuid(0x40000000, a, b, c, d);
		memcpy(sig, &b, 4);
		memcpy(sig + 4, &c, 4);
		memcpy(sig + 8, &d, 4);
		snprintf(out, n, "guest (CPUID \"%s\")", sig);
	}
#endif
	char line[256] = "";
	FILE *p = popen("dmesg 2> /dev/null | grep -m1 -o 'Hypervisor detected: .*'", "r");
	if (p) {
		if (fgets(line, sizeof line, p)) {
			line[strcspn(line, "\n")] = 0;
			snprintf(out, n, "%s", line + strlen("Hypervisor detected: "));
		}
		pclose(p);
	}
	size_t l = strlen(out);
	FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
	if (f && fgets(line, sizeof line, f)) {
		line[strcspn(line, "\n")] = 0;
		snprintf(out + l, n - l, ", clock source %s", line);
	}
	if (f)
		fclose(f);
}

static void machine(void)
{
	char model[512] = "unknown";
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[512];
	while (f && fgets(line, sizeof line, f))
		if (!strncmp(line, "model name", 10)) {
			char *c = strchr(line, ':');
			snprintf(model, sizeof model, "%s", c ? c + 2 : line);
			model[strcspn(model, "\n")] = 0;
			break;
		}
	if (f)
		fclose(f);
	struct utsname u;
	uname(&u);
	char hv[256];
	hypervisor(hv, sizeof hv);
	printf("machine: %s, %ld CPUs, Linux %s, %s%s\n\n", model, sysconf(_SC_NPROCESSORS_ONLN), u.release, hv,
	       bench_quick() ? "  (BENCH_QUICK: small counts, figures not meaningful)" : "");
}

static const struct {
	const char *name;
	void (*fn)(struct bench_table *);
} groups[] = {
	{ "producer", bench_producer },
	{ "threads", bench_threads },
	{ "latency", bench_latency },
	{ "lttng", bench_lttng },
	{ "record", bench_record },
	{ "consumer", bench_consumer },
	{ "memory", bench_memory },
	{ "profile", bench_profile },
	{ "convert", bench_convert },
	{ "relay", bench_relay },
	{ "kernel", bench_kernel },
	{ "equal-load", bench_equal },
	{ "soak", bench_soak },
	{ "flight", bench_flight_lttng },
};

int main(int argc, char **argv)
{
	struct bench_table t = { 0 };
	machine();
	printf("| %-9s | %-44s | %20s | %31s | %-8s |\n", "group", "configuration", "figure", "ratio", "target");
	printf("|-----------|----------------------------------------------|----------------------|---------------------------------|----------|\n");
	for (size_t i = 0; i < sizeof groups / sizeof groups[0]; i++) {
		int run = argc < 2;
		for (int a = 1; a < argc; a++)
			run |= !strcmp(argv[a], groups[i].name);
		if (run)
			groups[i].fn(&t);
	}
	return t.rows ? 0 : 1;
}
