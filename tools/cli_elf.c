/* SPDX-License-Identifier: MIT */
/*
 * cli_elf.c - the event classes an executable or library declares, read
 * from its ELF section "tracebuf_events" before it runs (TB_EVENT writes
 * one entry per class and translation unit: "provider:event\0{(u32, id),
 * (str, path)}\0", <tracebuf/event.h>): `tracebuf list FILE`, and record's
 * check of the --snapshot-on conditions.  cli.h.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

/*
 * An ELF file is untrusted input (a download, a damaged file): it is read
 * with pread, never mapped, and only what is needed: the header, the section
 * headers (at most 65535 x 64 bytes), the section names and the
 * tracebuf_events section, each checked inside the file's size and bounded:
 * a file that declares more than these limits (a sparse file declaring a
 * 4 GiB section costs no disk) is refused with a message, never read.
 */
#define ELF_NAMES_MAX (16u << 20)   /* section names: real files have a few KiB */
#define ELF_EVENTS_MAX (16u << 20)  /* tracebuf_events: ~100 bytes a class and translation unit */
#define ELF_ENTRIES_MAX (1u << 20)  /* entries in it (the same class once per translation unit) */
#define ELF_PAD_MAX 4096u           /* NUL padding between two entries (the compiler aligns them) */

/* reads size bytes at off into a new buffer (one NUL after them); NULL on a short read */
static char *read_at(int fd, uint64_t off, uint64_t size)
{
	char *b = malloc((size_t)size + 1);
	size_t got = 0;
	while (b && got < size) {
		ssize_t k = pread(fd, b + got, (size_t)size - got, (off_t)(off + got));
		if (k <= 0) {
			free(b);
			return NULL;
		}
		got += (size_t)k;
	}
	if (b)
		b[size] = 0;
	return b;
}

/* the entries of a tracebuf_events section (NAME NUL "{FIELDS}" NUL, with NUL padding between) */
static const char *parse_events(const char *p, const char *end, const char ***names, size_t *n)
{
	size_t cap = 0;
	while (p < end) {
		if (!*p) {
			const char *q = p;
			while (q < end && !*q && (size_t)(q - p) <= ELF_PAD_MAX)
				q++;
			if (q < end && (size_t)(q - p) > ELF_PAD_MAX)
				return "its tracebuf_events section is damaged (more than 4096 NUL bytes between two entries)";
			p = q;
			continue;
		}
		const char *nm = p, *z = memchr(p, 0, (size_t)(end - p));
		const char *f = z ? z + 1 : end, *fz = f < end ? memchr(f, 0, (size_t)(end - f)) : NULL;
		if (!z || !fz || *f != '{' || fz[-1] != '}')
			return "its tracebuf_events section is damaged (an entry is not NAME, {FIELDS})";
		if (*n == ELF_ENTRIES_MAX)
			return "its tracebuf_events section holds more than 1048576 entries (damaged or hostile)";
		if (*n == cap) {
			cap = cap ? cap * 2 : 64;
			const char **nn = realloc(*names, cap * sizeof *nn);
			if (!nn)
				return "out of memory";
			*names = nn;
		}
		(*names)[(*n)++] = nm;
		p = fz + 1;
	}
	return NULL;
}

int cli_elf_events_read(const char *path, struct cli_elf_events *ev, const char **why)
{
	*why = NULL;
	memset(ev, 0, sizeof *ev);
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return 0;
	struct stat st;
	unsigned char magic[SELFMAG];
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || pread(fd, magic, SELFMAG, 0) != SELFMAG ||
	    memcmp(magic, ELFMAG, SELFMAG) != 0) {
		close(fd);
		return 0;
	}
	uint64_t size = (uint64_t)st.st_size;
	Elf64_Ehdr eh;
	if (pread(fd, &eh, sizeof eh, 0) != (ssize_t)sizeof eh) {
		close(fd);
		*why = "an ELF file too short or unreadable";
		return 1;
	}
	const char *bad = NULL;
	char *shdrs = NULL, *strs = NULL, *sec = NULL;
	Elf64_Shdr sstr;
	const char **names = NULL;
	size_t n = 0, found = 0, nsec = 0;
	uint64_t total = 0; /* bytes of tracebuf_events read */
	char **secs = ev->secs;
	if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB)
		bad = "not a 64-bit little-endian ELF file";
	else if (eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shoff > size ||
		 (size - eh.e_shoff) / sizeof(Elf64_Shdr) < eh.e_shnum || eh.e_shstrndx >= eh.e_shnum)
		bad = "its section headers are outside the file";
	else if (!(shdrs = read_at(fd, eh.e_shoff, (uint64_t)eh.e_shnum * sizeof(Elf64_Shdr))))
		bad = "its section headers cannot be read";
	if (!bad) {
		memcpy(&sstr, shdrs + (size_t)eh.e_shstrndx * sizeof sstr, sizeof sstr);
		if (sstr.sh_type == SHT_NOBITS || sstr.sh_offset > size || sstr.sh_size > size - sstr.sh_offset)
			bad = "its section names are outside the file";
		else if (sstr.sh_size > ELF_NAMES_MAX)
			bad = "its section names take more than 16 MiB (damaged or hostile)";
		else if (!(strs = read_at(fd, sstr.sh_offset, sstr.sh_size)))
			bad = "its section names cannot be read";
	}
	static const char want[] = "tracebuf_events";
	for (unsigned i = 0; !bad && i < eh.e_shnum; i++) {
		Elf64_Shdr sh;
		memcpy(&sh, shdrs + (size_t)i * sizeof sh, sizeof sh);
		if (sh.sh_name >= sstr.sh_size || sstr.sh_size - sh.sh_name < sizeof want ||
		    memcmp(strs + sh.sh_name, want, sizeof want) != 0)
			continue;
		if (sh.sh_type == SHT_NOBITS || sh.sh_offset > size || sh.sh_size > size - sh.sh_offset) {
			bad = "its tracebuf_events section is outside the file";
			break;
		}
		if (sh.sh_size > ELF_EVENTS_MAX - total) {
			bad = "its tracebuf_events sections declare more than 16 MiB (damaged or hostile)";
			break;
		}
		if (nsec == CLI_ELF_SECS_MAX) {
			bad = "it has more than 64 tracebuf_events sections (damaged or hostile)";
			break;
		}
		if (!(sec = read_at(fd, sh.sh_offset, sh.sh_size))) {
			bad = "its tracebuf_events section cannot be read";
			break;
		}
		secs[nsec++] = sec;
		total += sh.sh_size;
		found = 1;
		bad = parse_events(sec, sec + sh.sh_size, &names, &n);
	}
	close(fd);
	free(strs);
	free(shdrs);
	ev->names = names;
	ev->n = n;
	ev->found = (int)found;
	ev->nsec = nsec;
	*why = bad;
	if (!bad && !found)
		*why = NULL;
	return 1;
}

void cli_elf_events_free(struct cli_elf_events *ev)
{
	free(ev->names);
	for (size_t i = 0; i < ev->nsec; i++)
		free(ev->secs[i]);
	memset(ev, 0, sizeof *ev);
}
