/* SPDX-License-Identifier: MIT */
/*
 * cli_symbols.c - ELF symbolisation for the profile tools (cli_symbols.h),
 * with elfutils: libdwfl finds the symbol tables (the file's .symtab or
 * .dynsym, or the .symtab of its separate debuginfo found by build-id or
 * .gnu_debuglink under /usr/lib/debug, or its .gnu_debugdata), libelf
 * gives the program headers the load bias is computed from.  Only one thing
 * is read here before them (tables_bounded): the section headers, to refuse
 * a file whose symbol or string tables lie outside it or in holes (a sparse
 * file declaring a 4 GiB symbol table cost libdw 31 s and 4.2 GB).
 */
#define _GNU_SOURCE
#include "cli_symbols.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef TB_HAVE_LIBDW
#include <elf.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#endif

struct sym_file {
	struct sym_file *next;
	char *path;  /* the recorded path without " (deleted)" */
	int state;   /* 0 not opened yet, 1 usable, -1 unusable (reported) */
	int deleted; /* the path had " (deleted)" */
	int vdso;    /* this process's vDSO image, not a file */
	uint64_t vdso_at, vdso_len;
	int no_segment_reported;
	struct sym_ctx *ctx;
#ifdef TB_HAVE_LIBDW
	Dwfl *dwfl;
	Dwfl_Module *mod;
	Elf *elf;
	int et_exec;
#endif
};

struct problem {
	char *file, *what;
};

struct sym_ctx {
	struct sym_file *files;
	sym_diag_fn diag;
	void *arg;
	struct problem *probs;
	size_t nprobs, cap;
	struct sym_file *vdso;
	char *name; /* sym_name()'s buffer */
	size_t name_cap;
};

struct sym_ctx *sym_new(sym_diag_fn diag, void *arg)
{
	struct sym_ctx *c = calloc(1, sizeof *c);
	if (c) {
		c->diag = diag;
		c->arg = arg;
	}
	return c;
}

void sym_free(struct sym_ctx *c)
{
	if (!c)
		return;
	while (c->files) {
		struct sym_file *f = c->files;
		c->files = f->next;
#ifdef TB_HAVE_LIBDW
		if (f->dwfl)
			dwfl_end(f->dwfl); /* closes the file and frees its Elf */
#endif
		free(f->path);
		free(f);
	}
	for (size_t i = 0; i < c->nprobs; i++) {
		free(c->probs[i].file);
		free(c->probs[i].what);
	}
	free(c->probs);
	free(c->name);
	free(c);
}

static void problem(struct sym_ctx *c, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 3, 4), unused));

static void problem(struct sym_ctx *c, const char *path, const char *fmt, ...)
{
	char what[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	if (c->nprobs == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 8;
		struct problem *n = realloc(c->probs, cap * sizeof *n);
		if (n) {
			c->probs = n;
			c->cap = cap;
		}
	}
	if (c->nprobs < c->cap) {
		c->probs[c->nprobs].file = strdup(path);
		c->probs[c->nprobs].what = strdup(what);
		if (c->probs[c->nprobs].file && c->probs[c->nprobs].what) {
			c->nprobs++;
		} else {
			free(c->probs[c->nprobs].file);
			free(c->probs[c->nprobs].what);
		}
	}
	if (c->diag)
		c->diag(c->arg, path, what);
}

size_t sym_nproblems(const struct sym_ctx *c) { return c->nprobs; }
const char *sym_problem_file(const struct sym_ctx *c, size_t i) { return i < c->nprobs ? c->probs[i].file : NULL; }
const char *sym_problem_what(const struct sym_ctx *c, size_t i) { return i < c->nprobs ? c->probs[i].what : NULL; }

#ifdef TB_HAVE_LIBDW
const char *sym_unavailable(void)
{
	return NULL;
}

const char *sym_backend(void)
{
	static char buf[64];
	if (!buf[0])
		snprintf(buf, sizeof buf, "libdw %s", dwfl_version(NULL));
	return buf;
}
#else
const char *sym_unavailable(void)
{
	return "tracebuf was built without elfutils libdw (pkg-config found no libdw; install libdw-dev "
	       "and libelf-dev and rebuild): addresses are shown as module+file offset";
}

const char *sym_backend(void)
{
	return "none";
}
#endif

struct sym_file *sym_file_get(struct sym_ctx *c, const char *path)
{
	static const char deleted[] = " (deleted)";
	size_t n = strlen(path), dl = sizeof deleted - 1;
	if (!n || path[0] != '/')
		return NULL; /* "[vdso]", "[anon:...]", "": no file */
	int del = n > dl && !strcmp(path + n - dl, deleted);
	if (del)
		n -= dl;
	for (struct sym_file *f = c->files; f; f = f->next)
		if (strlen(f->path) == n && !memcmp(f->path, path, n))
			return f;
	struct sym_file *f = calloc(1, sizeof *f);
	if (!f || !(f->path = strndup(path, n))) {
		free(f);
		return NULL;
	}
	f->deleted = del;
	f->ctx = c;
	f->next = c->files;
	c->files = f;
	return f;
}

#ifdef TB_HAVE_LIBDW
/* length of this process's [vdso] mapping; 0 when none */
static uint64_t own_vdso_len(uint64_t at)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	uint64_t len = 0;
	while (f && fgets(line, sizeof line, f)) {
		char *end;
		uint64_t s = strtoull(line, &end, 16);
		if (*end != '-' || s != at || !strstr(line, "[vdso]"))
			continue;
		uint64_t e = strtoull(end + 1, &end, 16);
		if (*end == ' ' && e > s)
			len = e - s;
	}
	if (f)
		fclose(f);
	return len;
}

struct sym_file *sym_vdso(struct sym_ctx *c, uint64_t len)
{
	if (!c->vdso) {
		struct sym_file *f = calloc(1, sizeof *f);
		if (!f || !(f->path = strdup("[vdso]"))) {
			free(f);
			return NULL;
		}
		f->vdso = 1;
		f->ctx = c;
		f->vdso_at = getauxval(AT_SYSINFO_EHDR);
		f->vdso_len = f->vdso_at ? own_vdso_len(f->vdso_at) : 0;
		f->state = f->vdso_len ? 0 : -1;
		f->next = c->files;
		c->files = f;
		c->vdso = f;
	}
	struct sym_file *f = c->vdso;
	return f->state >= 0 && len == f->vdso_len ? f : NULL;
}
#else
struct sym_file *sym_vdso(struct sym_ctx *c, uint64_t len)
{
	return NULL;
}
#endif

#ifdef TB_HAVE_LIBDW
/* Where separate debuginfo is looked for: NULL is elfutils' default
 * (":.debug:/usr/lib/debug": next to the file, in .debug/, under /usr/lib/debug). */
static char *debuginfo_path;

static const Dwfl_Callbacks callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &debuginfo_path,
};

/*
 * The file's symbol and string tables (SHT_SYMTAB, SHT_DYNSYM, SHT_STRTAB)
 * inside the file and holding data: a table past its end, or one in which
 * the file has a hole (SEEK_HOLE; file systems without holes report none),
 * is refused with the reason in why.  Bounds the symboliser's work by the
 * data the file holds, not by the sizes it declares.  0 when usable (or not
 * an ELF file libdw will read: it says why itself), -1 refused.
 */
static int tables_bounded(int fd, uint64_t size, char *why, size_t cap)
{
	unsigned char id[EI_NIDENT];
	if (pread(fd, id, sizeof id, 0) != (ssize_t)sizeof id || memcmp(id, ELFMAG, SELFMAG) ||
	    id[EI_DATA] != ELFDATA2LSB || (id[EI_CLASS] != ELFCLASS64 && id[EI_CLASS] != ELFCLASS32))
		return 0;
	int is64 = id[EI_CLASS] == ELFCLASS64;
	uint64_t shoff;
	unsigned shnum, shentsize;
	if (is64) {
		Elf64_Ehdr eh;
		if (pread(fd, &eh, sizeof eh, 0) != (ssize_t)sizeof eh)
			return 0;
		shoff = eh.e_shoff, shnum = eh.e_shnum, shentsize = eh.e_shentsize;
	} else {
		Elf32_Ehdr eh;
		if (pread(fd, &eh, sizeof eh, 0) != (ssize_t)sizeof eh)
			return 0;
		shoff = eh.e_shoff, shnum = eh.e_shnum, shentsize = eh.e_shentsize;
	}
	if (shentsize != (is64 ? sizeof(Elf64_Shdr) : sizeof(Elf32_Shdr)) || !shnum)
		return 0; /* no usable section headers: libdw decides */
	if (shoff > size || (size - shoff) / shentsize < shnum) {
		snprintf(why, cap, "its section headers are outside the file");
		return -1;
	}
	for (unsigned i = 0; i < shnum; i++) {
		uint64_t type, off, len;
		if (is64) {
			Elf64_Shdr sh;
			if (pread(fd, &sh, sizeof sh, (off_t)(shoff + (uint64_t)i * shentsize)) != (ssize_t)sizeof sh)
				return 0;
			type = sh.sh_type, off = sh.sh_offset, len = sh.sh_size;
		} else {
			Elf32_Shdr sh;
			if (pread(fd, &sh, sizeof sh, (off_t)(shoff + (uint64_t)i * shentsize)) != (ssize_t)sizeof sh)
				return 0;
			type = sh.sh_type, off = sh.sh_offset, len = sh.sh_size;
		}
		if ((type != SHT_SYMTAB && type != SHT_DYNSYM && type != SHT_STRTAB) || !len)
			continue;
		if (off > size || len > size - off) {
			snprintf(why, cap, "section %u (a symbol or string table of %" PRIu64 " bytes at offset %" PRIu64
				 ") is outside the file (%" PRIu64 " bytes)", i, len, off, size);
			return -1;
		}
		off_t hole = lseek(fd, (off_t)off, SEEK_HOLE);
		if (hole >= 0 && (uint64_t)hole < off + len) {
			snprintf(why, cap, "section %u (a symbol or string table of %" PRIu64 " bytes at offset %" PRIu64
				 ") has a hole at offset %" PRIu64 " (a sparse or damaged file)", i, len, off,
				 (uint64_t)hole);
			return -1;
		}
	}
	return 0;
}

static void open_file(struct sym_file *f)
{
	struct sym_ctx *c = f->ctx;
	const char *base = f->vdso ? f->path : strrchr(f->path, '/') + 1;
	const char *file = f->path;
	char fdpath[64];
	f->state = -1;
	int fd = -1;
	if (f->vdso) {
		/* a copy of the image in a memory file, which libdwfl reads like any file */
		fd = memfd_create("tracebuf-vdso", MFD_CLOEXEC);
		/* NOLINTNEXTLINE(performance-no-int-to-ptr): our own vDSO, at the address /proc/self/maps gave */
		ssize_t w = fd >= 0 ? write(fd, (const void *)(uintptr_t)f->vdso_at, f->vdso_len) : -1;
		if (w != (ssize_t)f->vdso_len) {
			problem(c, f->path, "cannot copy this process's vDSO (%s); its addresses are shown as [vdso]+OFFSET",
				strerror(errno));
			if (fd >= 0)
				close(fd);
			return;
		}
		snprintf(fdpath, sizeof fdpath, "/proc/self/fd/%d", fd);
		file = fdpath;
	} else {
		/* open it ourselves first: the error message names the cause */
		/* O_NONBLOCK: the path comes from the trace; a FIFO there must not
		 * hang us (then refused as not a regular file) */
		fd = open(f->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
		if (fd < 0) {
			problem(c, f->path, "cannot open: %s; its addresses are shown as %s+FILE_OFFSET%s", strerror(errno),
				base, f->deleted ? " (the file was deleted while it was mapped)" : "");
			return;
		}
		struct stat fst;
		if (fstat(fd, &fst) || !S_ISREG(fst.st_mode)) {
			problem(c, f->path, "not a regular file; its addresses are shown as %s+FILE_OFFSET", base);
			close(fd);
			return;
		}
		char why[256];
		if (tables_bounded(fd, (uint64_t)fst.st_size, why, sizeof why)) {
			problem(c, f->path, "not read: %s; its addresses are shown as %s+FILE_OFFSET", why, base);
			close(fd);
			return;
		}
		close(fd);
		fd = -1;
	}
	f->dwfl = dwfl_begin(&callbacks);
	if (!f->dwfl) {
		problem(c, f->path, "libdwfl: %s", dwfl_errmsg(-1));
		if (fd >= 0)
			close(fd);
		return;
	}
	dwfl_report_begin(f->dwfl);
	/* at its link-time addresses (bias 0): ET_DYN with base 0 + p_vaddr, ET_EXEC where it is
	 * linked; a given fd is the library's on success */
	f->mod = dwfl_report_elf(f->dwfl, base, file, fd, 0, true);
	if (!f->mod && fd >= 0)
		close(fd);
	if (!f->mod || dwfl_report_end(f->dwfl, NULL, NULL)) {
		problem(c, f->path, "not a usable ELF file (%s); its addresses are shown as %s+FILE_OFFSET", dwfl_errmsg(-1),
			base);
		return;
	}
	GElf_Addr bias;
	GElf_Ehdr eh;
	f->elf = dwfl_module_getelf(f->mod, &bias);
	if (!f->elf || !gelf_getehdr(f->elf, &eh)) {
		problem(c, f->path, "cannot read its ELF header (%s)", dwfl_errmsg(-1));
		return;
	}
	f->et_exec = eh.e_type == ET_EXEC;
	if (f->deleted)
		problem(c, f->path, "was deleted while it was mapped: symbols are read from the file now at that path");
	f->state = 1;
}

int sym_bias(struct sym_file *f, uint64_t start, uint64_t pgoff, uint64_t *bias)
{
	if (!f)
		return -1;
	if (!f->state)
		open_file(f);
	if (f->state < 0)
		return -1;
	size_t n;
	if (elf_getphdrnum(f->elf, &n))
		n = 0;
	/* the PT_LOAD whose file range, from its page-aligned start, holds pgoff;
	 * the executable one when several do (the maps are of executable lines) */
	GElf_Phdr best;
	int found = 0;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(f->elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		uint64_t align = ph.p_align > 4096 ? ph.p_align : 4096;
		uint64_t lo = ph.p_offset & ~(align - 1), hi = ph.p_offset + (ph.p_filesz ? ph.p_filesz : 1);
		if (pgoff < lo || pgoff >= hi)
			continue;
		if (!found || (!(best.p_flags & PF_X) && (ph.p_flags & PF_X))) {
			best = ph;
			found = 1;
		}
	}
	if (!found) {
		if (!f->no_segment_reported) {
			f->no_segment_reported = 1;
			problem(f->ctx, f->path,
				"no loadable segment holds file offset 0x%" PRIx64 " of the mapping at 0x%" PRIx64
				" (was the file replaced since it was profiled?); those addresses are shown as file offsets",
				pgoff, start);
		}
		return -1;
	}
	*bias = f->et_exec ? 0 : start - (best.p_vaddr + (pgoff - best.p_offset));
	return 0;
}

const char *sym_name(struct sym_file *f, uint64_t addr)
{
	return sym_name_at(f, addr, NULL);
}

const char *sym_name_at(struct sym_file *f, uint64_t addr, uint64_t *within)
{
	if (!f || f->state <= 0)
		return NULL;
	GElf_Off off;
	GElf_Sym sym;
	const char *name = dwfl_module_addrinfo(f->mod, addr, &off, &sym, NULL, NULL, NULL);
	if (within)
		*within = off;
	if (!name || !name[0] || name[0] == '@')
		return NULL;
	const char *at = strchr(name, '@');
	if (!at)
		return name;
	/* without the symbol version: "clock_gettime@@GLIBC_2.17" -> "clock_gettime" */
	struct sym_ctx *c = f->ctx;
	size_t n = (size_t)(at - name);
	if (n + 1 > c->name_cap) {
		char *b = realloc(c->name, n + 1);
		if (!b)
			return name;
		c->name = b;
		c->name_cap = n + 1;
	}
	memcpy(c->name, name, n);
	c->name[n] = 0;
	return c->name;
}
#else
int sym_bias(struct sym_file *f, uint64_t start, uint64_t pgoff, uint64_t *bias)
{
	return -1;
}

const char *sym_name(struct sym_file *f, uint64_t addr)
{
	return NULL;
}

const char *sym_name_at(struct sym_file *f, uint64_t addr, uint64_t *within)
{
	return NULL;
}
#endif
