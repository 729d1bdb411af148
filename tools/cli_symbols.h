/* SPDX-License-Identifier: MIT */
/*
 * cli_symbols.h - symbolisation of the addresses in `tracebuf profile`
 * traces (report --profile, convert --to folded / chrome), with elfutils
 * (libdwfl for the symbol tables and the debuginfo lookup, libelf for the
 * program headers).  Built without libdw (pkg-config libdw not found), every
 * lookup fails and sym_unavailable() says why: the tools then show
 * module+offset only.  See docs/PROFILE-READING.md.
 *
 * A file is opened once, at its first use, and kept: one Dwfl per file,
 * reported at its link-time addresses, so one file mapped by several
 * processes at different addresses shares one symbol table; the caller
 * turns a run-time address into a file address with the mapping's load bias
 * (sym_bias) and asks for the symbol there (sym_name).  A file that cannot
 * be used is reported once through the diagnostics callback and stays
 * unusable: lookups in it return "no symbol", nothing else is affected.
 */
#ifndef TB_CLI_SYMBOLS_H
#define TB_CLI_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>

struct sym_ctx;
struct sym_file;

/* A problem with one file (path as recorded), reported once per file. */
typedef void (*sym_diag_fn)(void *arg, const char *path, const char *what);

/* NULL on out of memory. */
struct sym_ctx *sym_new(sym_diag_fn diag, void *arg);
void sym_free(struct sym_ctx *c);

/* NULL when symbolisation is available; else a sentence saying why not. */
const char *sym_unavailable(void);
/* What symbolises ("libdw 0.188"), or "none". */
const char *sym_backend(void);

/*
 * The file of a mapping, by the path /proc/PID/maps showed.  Paths that
 * name no file ("", "[vdso]", "[anon:...]") give NULL; a " (deleted)"
 * suffix is dropped.  The file is opened at the first sym_bias() call.
 */
struct sym_file *sym_file_get(struct sym_ctx *c, const char *path);

/*
 * The vDSO of this process, as the file of a "[vdso]" mapping of `len`
 * bytes recorded on this host: the kernel maps the same image into every
 * process, so the reader's own copy (getauxval(AT_SYSINFO_EHDR)) has the
 * profiled process's symbols provided the kernel did not change since.  NULL
 * when this process has no vDSO or its length differs.  The caller decides
 * whether the trace comes from this host.
 */
struct sym_file *sym_vdso(struct sym_ctx *c, uint64_t len);

/*
 * The load bias of a mapping of f that starts at `start` and maps file
 * offset `pgoff`: file address = run-time address - bias.  It is
 * start - (p_vaddr + (pgoff - p_offset)) for the PT_LOAD segment (the
 * executable one first) whose page-aligned file range holds pgoff; 0 for
 * ET_EXEC.  Return: 0 and *bias, or -1 (the file is unreadable, not ELF,
 * or has no such segment: reported once).
 */
int sym_bias(struct sym_file *f, uint64_t start, uint64_t pgoff, uint64_t *bias);

/* The name of the symbol (function) containing file address `addr`, without
 * its symbol version ("clock_gettime", not "clock_gettime@@GLIBC_2.17"), or
 * NULL.  Valid until the next sym_name() call. */
const char *sym_name(struct sym_file *f, uint64_t addr);
/* sym_name(), and the offset of addr in the symbol in *within (the crash's
 * "function+0xOFF", tools/cli_crash.c). */
const char *sym_name_at(struct sym_file *f, uint64_t addr, uint64_t *within);

/* The problems reported so far (for JSON output). */
size_t sym_nproblems(const struct sym_ctx *c);
const char *sym_problem_file(const struct sym_ctx *c, size_t i);
const char *sym_problem_what(const struct sym_ctx *c, size_t i);

#endif
