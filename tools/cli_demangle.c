/* SPDX-License-Identifier: MIT */
/*
 * cli_demangle.c - demangling of symbol names (cli_demangle.h): libiberty's
 * cplus_demangle where the build found it, else libstdc++'s __cxa_demangle
 * through dlopen, else nothing.  Only names that start as a mangling does
 * (_Z, _R, and a legacy Rust _ZN...E) are given to the demangler.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "cli_demangle.h"

#ifdef TB_HAVE_LIBIBERTY
#include <demangle.h>
#endif

static int demangle_on = 1;

void cli_demangle_set(int on)
{
	demangle_on = on;
}

#ifndef TB_HAVE_LIBIBERTY
typedef char *(*cxa_demangle_fn)(const char *, char *, size_t *, int *);
static cxa_demangle_fn cxa_demangle;
static int cxa_tried;

static cxa_demangle_fn load_cxa(void)
{
	if (!cxa_tried) {
		cxa_tried = 1;
		/* RTLD_LOCAL: nothing of libstdc++ is seen by anything else */
		void *h = dlopen("libstdc++.so.6", RTLD_NOW | RTLD_LOCAL);
		if (h)
			cxa_demangle = (cxa_demangle_fn)dlsym(h, "__cxa_demangle");
	}
	return cxa_demangle;
}
#endif

char *cli_demangle(const char *sym)
{
	if (!demangle_on || !sym || sym[0] != '_' || (sym[1] != 'Z' && sym[1] != 'R'))
		return NULL;
#ifdef TB_HAVE_LIBIBERTY
	/* the automatic style tries Rust (legacy and v0) first, then C++;
	 * recursion is bounded (no DMGL_NO_RECURSE_LIMIT) */
	return cplus_demangle(sym, DMGL_PARAMS | DMGL_ANSI);
#else
	cxa_demangle_fn f = load_cxa();
	if (!f || sym[1] != 'Z')
		return NULL;
	int status = -1;
	char *d = f(sym, NULL, NULL, &status);
	if (status != 0) {
		free(d);
		return NULL;
	}
	return d;
#endif
}

const char *cli_demangle_backend(void)
{
	if (!demangle_on)
		return "off (--no-demangle)";
#ifdef TB_HAVE_LIBIBERTY
	return "libiberty (C++, Rust)";
#else
	return load_cxa() ? "libstdc++ __cxa_demangle (C++; install libiberty-dev and rebuild for Rust)"
			  : "none (no libiberty at build time, no libstdc++.so.6)";
#endif
}
