/* SPDX-License-Identifier: MIT */
/*
 * record_pid.c - `tracebuf record --pid PID`: what record needs to attach a
 * program that was started without tracebuf (docs/DESIGN.md, "Attaching to
 * a running program").
 *
 *   record_pid_find     the process (pid + start time), its uid, the ELF
 *                       symbols tb_disabled_mask and tb_attach_request in the
 *                       files it maps (libtracebuf.so's .dynsym, or a static
 *                       link's symbol table), a session of another recorder
 *                       it maps (refused: record --attach), and the per-pid
 *                       session path DIR/tracebuf-pid-PID-START
 *   record_pid_request  process_vm_writev: the request, then the mask
 *   record_pid_state    process_vm_readv: the program's answer
 *   record_pid_open,    its end, seen from outside (a pidfd; the wait status
 *   record_pid_note_end from /proc/PID/stat while it is a zombie)
 *   record_pid_sweep    per-pid session files of processes gone
 *
 * Nothing read from the program or its files is trusted: the ELF file is
 * bounds-checked, the addresses must fall in a writable mapping of it, and
 * the symbol's size must be this version's struct.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "cli.h"
#include "producer/attach.h"
#include "record_pid.h"

/* Fields of /proc/PID/stat after the command: state, starttime (field 22),
 * and exit_code (field 52; NULL: not wanted; -1 when absent). */
static int proc_stat_x(pid_t pid, char *state, unsigned long long *start, char *comm, size_t commcap, long *exit_code)
{
	char path[64], buf[1024];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return -EIO;
	buf[n] = 0;
	char *open_p = strchr(buf, '('), *close_p = strrchr(buf, ')');
	if (!open_p || !close_p || close_p < open_p)
		return -EIO;
	if (comm) {
		size_t l = (size_t)(close_p - open_p - 1);
		if (l >= commcap)
			l = commcap - 1;
		memcpy(comm, open_p + 1, l);
		comm[l] = 0;
	}
	char *p = close_p + 1;
	unsigned long long v = 0;
	if (exit_code)
		*exit_code = -1;
	for (int field = 3; field <= (exit_code ? 52 : 22); field++) {
		while (*p == ' ' || *p == '\n')
			p++;
		if (!*p) {
			if (field > 22)
				break; /* an older kernel: no exit_code */
			return -EIO;
		}
		if (field == 3)
			*state = *p;
		if (field == 22)
			v = strtoull(p, NULL, 10);
		if (field == 52)
			*exit_code = strtol(p, NULL, 10);
		while (*p && *p != ' ' && *p != '\n')
			p++;
	}
	*start = v;
	return 0;
}

static int proc_stat(pid_t pid, char *state, unsigned long long *start, char *comm, size_t commcap)
{
	return proc_stat_x(pid, state, start, comm, commcap, NULL);
}

/* 1 when /proc/PID/task lists another thread than the leader's. */
static int other_threads(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
	DIR *d = opendir(path);
	if (!d)
		return 0;
	struct dirent *de;
	int n = 0;
	while (n < 2 && (de = readdir(d)))
		n += de->d_name[0] != '.';
	closedir(d);
	return n > 1;
}

int record_pid_alive(const struct record_pid *t)
{
	char st = 0;
	unsigned long long start = 0;
	if (proc_stat(t->pid, &st, &start, NULL, 0) < 0 || start != t->start)
		return 0;
	/* a zombie leader whose other threads run (its main thread called
	 * pthread_exit) is a live process */
	return (st != 'Z' && st != 'X') || other_threads(t->pid);
}

void record_pid_open(struct record_pid *t)
{
	t->pidfd = -1;
#ifdef SYS_pidfd_open
	int fd = (int)syscall(SYS_pidfd_open, t->pid, 0);
	if (fd < 0)
		return;
	/* the pid may have been reused between the look and the open: the
	 * fd is kept only when the process it names is the one found */
	if (!record_pid_alive(t)) {
		close(fd);
		return;
	}
	t->pidfd = fd;
#endif
}

int record_pid_gone(const struct record_pid *t)
{
	if (t->pidfd >= 0) {
		struct pollfd p = { t->pidfd, POLLIN, 0 };
		return poll(&p, 1, 0) > 0;
	}
	return !record_pid_alive(t);
}

void record_pid_note_end(struct record_pid *t)
{
	if (t->ended)
		return;
	t->ended = 1;
	char st = 0;
	unsigned long long start = 0;
	long code = -1;
	/* only its parent can wait for it; anyone with ptrace access reads
	 * exit_code from /proc while it is a zombie (until the parent reaps
	 * it, which may already have happened: then the status is unknown) */
	if (proc_stat_x(t->pid, &st, &start, NULL, 0, &code) == 0 && start == t->start && (st == 'Z' || st == 'X') &&
	    code >= 0 && code <= 0xffff) {
		t->status_known = 1;
		t->status = (int)code;
	}
}

/* Effective uid of the process (Uid: line of /proc/PID/status), or -1. */
static long proc_euid(pid_t pid)
{
	char path[64], line[256];
	snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	long euid = -1;
	while (fgets(line, sizeof line, f)) {
		if (strncmp(line, "Uid:", 4))
			continue;
		char *end;
		errno = 0;
		strtoul(line + 4, &end, 10); /* real */
		unsigned long e = strtoul(end, &end, 10);
		if (!errno && e <= 0xffffffffu)
			euid = (long)e;
		break;
	}
	fclose(f);
	return euid;
}

struct elf_syms {
	uint64_t mask, mask_size, req, req_size; /* st_value, st_size; 0: not found */
	uint64_t min_vaddr;                      /* lowest PT_LOAD, page-aligned */
	int dyn;                                 /* ET_DYN: loaded at a bias */
};

/* Looks for the two symbols in an ELF file's .dynsym, then .symtab.
 * 1 found both, 0 not (or not an ELF file), every offset bounds-checked. */
static int elf_find(const char *path, struct elf_syms *out)
{
	memset(out, 0, sizeof *out);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size < sizeof(Elf64_Ehdr)) {
		close(fd);
		return 0;
	}
	uint64_t size = (uint64_t)st.st_size;
	const uint8_t *b = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (b == MAP_FAILED)
		return 0;
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)b;
	int found = 0;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_ident[EI_DATA] != ELFDATA2LSB || (eh->e_type != ET_EXEC && eh->e_type != ET_DYN))
		goto out;
	out->dyn = eh->e_type == ET_DYN;
	if (eh->e_phentsize != sizeof(Elf64_Phdr) || eh->e_phoff > size ||
	    (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr) > size - eh->e_phoff)
		goto out;
	const Elf64_Phdr *ph = (const Elf64_Phdr *)(b + eh->e_phoff);
	uint64_t minv = UINT64_MAX;
	for (unsigned i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_LOAD && ph[i].p_vaddr < minv)
			minv = ph[i].p_vaddr;
	if (minv == UINT64_MAX)
		goto out;
	out->min_vaddr = minv & ~(uint64_t)4095;
	if (eh->e_shentsize != sizeof(Elf64_Shdr) || eh->e_shoff > size ||
	    (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr) > size - eh->e_shoff)
		goto out;
	const Elf64_Shdr *sh = (const Elf64_Shdr *)(b + eh->e_shoff);
	for (int pass = 0; pass < 2 && !(out->mask && out->req); pass++) {
		uint32_t want = pass == 0 ? SHT_DYNSYM : SHT_SYMTAB;
		for (unsigned i = 0; i < eh->e_shnum; i++) {
			if (sh[i].sh_type != want || sh[i].sh_link >= eh->e_shnum || sh[i].sh_entsize != sizeof(Elf64_Sym))
				continue;
			const Elf64_Shdr *strs = &sh[sh[i].sh_link];
			if (sh[i].sh_offset > size || sh[i].sh_size > size - sh[i].sh_offset || strs->sh_offset > size ||
			    strs->sh_size > size - strs->sh_offset)
				continue;
			const Elf64_Sym *sym = (const Elf64_Sym *)(b + sh[i].sh_offset);
			const char *str = (const char *)(b + strs->sh_offset);
			uint64_t n = sh[i].sh_size / sizeof(Elf64_Sym);
			for (uint64_t k = 0; k < n; k++) {
				if (sym[k].st_shndx == SHN_UNDEF || ELF64_ST_TYPE(sym[k].st_info) != STT_OBJECT ||
				    sym[k].st_name >= strs->sh_size)
					continue;
				const char *nm = str + sym[k].st_name;
				size_t room = strs->sh_size - sym[k].st_name;
				if (strnlen(nm, room) == room)
					continue;
				if (!strcmp(nm, "tb_disabled_mask")) {
					out->mask = sym[k].st_value;
					out->mask_size = sym[k].st_size;
				} else if (!strcmp(nm, "tb_attach_request")) {
					out->req = sym[k].st_value;
					out->req_size = sym[k].st_size;
				}
			}
		}
	}
	found = out->mask && out->req;
out:
	munmap((void *)b, size);
	return found;
}

struct map_line {
	uint64_t start, end, off;
	char perms[8];
	char path[PATH_MAX];
};

/* "START-END PERMS OFFSET DEV INODE   PATH" (the kernel's format) */
static int parse_map_line(const char *line, struct map_line *m)
{
	char *p;
	m->path[0] = 0;
	m->start = strtoull(line, &p, 16);
	if (*p != '-')
		return -1;
	m->end = strtoull(p + 1, &p, 16);
	if (*p != ' ')
		return -1;
	p++;
	size_t pl = strcspn(p, " ");
	if (pl < 4 || pl >= sizeof m->perms)
		return -1;
	memcpy(m->perms, p, pl);
	m->perms[pl] = 0;
	p += pl;
	m->off = strtoull(p, &p, 16);
	for (int field = 0; field < 2; field++) { /* dev, inode */
		p += strspn(p, " ");
		p += strcspn(p, " \n");
	}
	p += strspn(p, " ");
	snprintf(m->path, sizeof m->path, "%s", p);
	m->path[strcspn(m->path, "\n")] = 0;
	return 0;
}

/* 1 when [addr, addr + len) lies in writable mappings of the process. */
static int writable_at(pid_t pid, uint64_t addr, uint64_t len)
{
	char path[64], line[PATH_MAX + 128];
	snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return 0;
	/* the maps are in address order; a .bss continues the file's last
	 * page in an anonymous mapping right after it */
	uint64_t at = addr, end = addr + len;
	struct map_line m;
	while (at < end && end >= addr && fgets(line, sizeof line, f))
		if (parse_map_line(line, &m) == 0 && m.perms[1] == 'w' && m.start <= at && at < m.end)
			at = m.end;
	fclose(f);
	return at >= end && end >= addr;
}

/* 1 when the file starts as a tracebuf session does. */
static int is_session_file(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return 0;
	uint64_t magic = 0;
	struct stat st;
	int yes = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && pread(fd, &magic, sizeof magic, 0) == sizeof magic &&
		  magic == 0x3146425543415254ull; /* TB_MAP_MAGIC, core/format.h: "TRACBUF1" */
	close(fd);
	return yes;
}

static int same_file(const char *a, const char *b)
{
	struct stat sa, sb;
	return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

static int vm_read(const struct record_pid *t, uint64_t addr, void *buf, size_t len);

/* What to do when reading or writing the process is refused (its maps, process_vm_readv/writev). */
static int vm_error(const char *cmd, const struct record_pid *t, const char *what, int err)
{
	if (err == EPERM || err == EACCES) {
		char scope[32] = "no Yama here";
		int fd = open("/proc/sys/kernel/yama/ptrace_scope", O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			ssize_t n = read(fd, scope, sizeof scope - 1);
			char v[8] = "";
			if (n > 0 && n < (ssize_t)sizeof v) {
				memcpy(v, scope, (size_t)n);
				v[n] = 0;
				v[strcspn(v, "\n")] = 0;
				snprintf(scope, sizeof scope, "here: %s", v);
			}
			close(fd);
		}
		return cli_error(cmd,
				 "cannot %s process %d (%s): %s: attaching needs ptrace permission over it: run as root (or "
				 "with CAP_SYS_PTRACE), or as its user with /proc/sys/kernel/yama/ptrace_scope 0 (%s), "
				 "or let the program call prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY)",
				 what, (int)t->pid, t->comm, strerror(err), scope);
	}
	return cli_error(cmd, "cannot %s process %d (%s): %s", what, (int)t->pid, t->comm, strerror(err));
}

int record_pid_find(const char *cmd, pid_t pid, const char *shm_dir, struct record_pid *t)
{
	memset(t, 0, sizeof *t);
	t->pid = pid;
	t->pidfd = -1;
	char st = 0;
	int rc = proc_stat(pid, &st, &t->start, t->comm, sizeof t->comm);
	if (rc == -ENOENT)
		return cli_error(cmd, "--pid %d: no such process", (int)pid);
	if (rc < 0)
		return cli_error(cmd, "--pid %d: cannot read /proc/%d/stat: %s", (int)pid, (int)pid, strerror(-rc));
	if ((st == 'Z' || st == 'X') && !record_pid_alive(t))
		return cli_error(cmd, "--pid %d (%s): the process has exited (a zombie)", (int)pid, t->comm);
	if (pid == getpid())
		return cli_error(cmd, "--pid %d: that is this recorder", (int)pid);
	long euid = proc_euid(pid);
	if (euid < 0)
		return cli_error(cmd, "--pid %d: cannot read /proc/%d/status", (int)pid, (int)pid);
	if ((uid_t)euid != geteuid())
		return cli_error(cmd,
				 "--pid %d (%s) runs as uid %ld, this recorder as uid %u: the session file must belong to the "
				 "program's user; run tracebuf record --pid as uid %ld",
				 (int)pid, t->comm, euid, (unsigned)geteuid(), euid);
	const char *dir = shm_dir ? shm_dir : getenv("TRACEBUF_SHM_DIR");
	if (!dir || !*dir)
		dir = "/dev/shm";
	if ((size_t)snprintf(t->session, sizeof t->session, "%s/tracebuf-pid-%d-%llu", dir, (int)pid, t->start) >=
	    sizeof t->session)
		return cli_error(cmd, "--shm-dir %s: too long", dir);
	struct stat sb;
	t->exists = lstat(t->session, &sb) == 0;

	char path[64], line[PATH_MAX + 128];
	snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
	FILE *f = fopen(path, "re");
	if (!f && (errno == EACCES || errno == EPERM))
		return vm_error(cmd, t, "read the memory map of", errno);
	if (!f)
		return cli_error(cmd, "--pid %d: cannot read %s: %s", (int)pid, path, strerror(errno));
	char other[PATH_MAX] = "";
	struct map_line m;
	int found = 0, ambiguous = 0;
	while (fgets(line, sizeof line, f)) {
		if (parse_map_line(line, &m) < 0 || m.path[0] != '/')
			continue;
		if (m.perms[3] == 's') {
			/* a shared file mapping: a session this program writes to? */
			if (t->exists && same_file(m.path, t->session))
				t->mapped = 1;
			else if (!other[0] && is_session_file(m.path))
				snprintf(other, sizeof other, "%s", m.path);
			continue;
		}
		if (m.off != 0)
			continue;
		if (found && !strcmp(t->lib, m.path))
			continue; /* (only a file's first mapping has offset 0, usually) */
		struct elf_syms es;
		if (!elf_find(m.path, &es))
			continue;
		uint64_t bias = es.dyn ? m.start - es.min_vaddr : 0;
		if (found && strcmp(t->lib, m.path)) {
			ambiguous = 1;
			continue;
		}
		found = 1;
		snprintf(t->lib, sizeof t->lib, "%s", m.path);
		if (es.mask_size < sizeof(uint32_t) || es.req_size != sizeof(struct tb_attach_request)) {
			fclose(f);
			return cli_error(cmd,
					 "--pid %d (%s): %s is another version of libtracebuf (its attach request is %" PRIu64
					 " bytes, this recorder's %zu): use the tracebuf command of the same version",
					 (int)pid, t->comm, m.path, es.req_size, sizeof(struct tb_attach_request));
		}
		t->mask_addr = bias + es.mask;
		t->req_addr = bias + es.req;
	}
	fclose(f);
	if (other[0])
		return cli_error(cmd,
				 "--pid %d (%s) is traced already: it writes to session %s (started under tracebuf record, "
				 "or by tb_session_start); drain it with tracebuf record --attach %s -o DIR",
				 (int)pid, t->comm, other, other);
	if (!found)
		return cli_error(cmd,
				 "--pid %d (%s) does not use libtracebuf: no tb_disabled_mask and tb_attach_request in its "
				 "executable or libraries (a program linked statically must keep its symbol table: not "
				 "stripped)",
				 (int)pid, t->comm);
	if (ambiguous)
		return cli_error(cmd, "--pid %d (%s): several copies of libtracebuf are loaded (%s and others): cannot "
				 "tell which one its events use", (int)pid, t->comm, t->lib);
	if (!writable_at(pid, t->mask_addr, sizeof(uint32_t)) ||
	    !writable_at(pid, t->req_addr, sizeof(struct tb_attach_request)))
		return cli_error(cmd, "--pid %d (%s): the symbols of %s do not fall in writable memory of the process "
				 "(the file was replaced since it was loaded?)", (int)pid, t->comm, t->lib);
	/* the permission to write is the permission to read (ptrace access):
	 * asked here, before anything is created */
	uint32_t mask = 0;
	int err = vm_read(t, t->mask_addr, &mask, sizeof mask);
	if (err)
		return vm_error(cmd, t, "read the memory of", err);
	if (mask != 0 && mask != TB_ATTACH_REQUESTED)
		return cli_error(cmd, "--pid %d (%s): its tb_disabled_mask holds %#x, not 0: refusing to touch it", (int)pid,
				 t->comm, mask);
	return 0;
}

static int vm_write(const struct record_pid *t, uint64_t addr, const void *buf, size_t len)
{
	/* NOLINTNEXTLINE(performance-no-int-to-ptr): an address in the other process */
	struct iovec local = { (void *)buf, len }, remote = { (void *)(uintptr_t)addr, len };
	ssize_t n = process_vm_writev(t->pid, &local, 1, &remote, 1, 0);
	if (n == (ssize_t)len)
		return 0;
	return n < 0 ? errno : EIO;
}

static int vm_read(const struct record_pid *t, uint64_t addr, void *buf, size_t len)
{
	/* NOLINTNEXTLINE(performance-no-int-to-ptr): an address in the other process */
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };
	ssize_t n = process_vm_readv(t->pid, &local, 1, &remote, 1, 0);
	if (n == (ssize_t)len)
		return 0;
	return n < 0 ? errno : EIO;
}

int record_pid_request(const char *cmd, struct record_pid *t)
{
	static struct tb_attach_request r; /* 4 KiB: not on the stack */
	memset(&r, 0, sizeof r);
	r.magic = TB_ATTACH_MAGIC;
	r.pid = (uint32_t)t->pid;
	r.result = TB_ATTACH_PENDING;
	snprintf(r.path, sizeof r.path, "%s", t->session);
	uint32_t mask = 0;
	int err = vm_read(t, t->mask_addr, &mask, sizeof mask);
	if (err)
		return vm_error(cmd, t, "read the memory of", err);
	if (mask != 0 && mask != TB_ATTACH_REQUESTED)
		return cli_error(cmd, "--pid %d (%s): its tb_disabled_mask holds %#x, not 0: refusing to touch it", (int)t->pid,
				 t->comm, mask);
	/* the request first, the mask last: the program reads the request
	 * after it sees the mask (acquire, producer.c tb_attach_poll); the
	 * two system calls store in this order */
	if ((err = vm_write(t, t->req_addr, &r, sizeof r)))
		return vm_error(cmd, t, "write into", err);
	mask = TB_ATTACH_REQUESTED;
	if ((err = vm_write(t, t->mask_addr, &mask, sizeof mask)))
		return vm_error(cmd, t, "write into", err);
	return 0;
}

int record_pid_state(struct record_pid *t, char *msg, size_t cap)
{
	uint32_t mask = 1;
	int32_t result = TB_ATTACH_PENDING;
	char m[sizeof ((struct tb_attach_request *)0)->msg];
	if (msg && cap)
		msg[0] = 0;
	if (vm_read(t, t->mask_addr, &mask, sizeof mask) ||
	    vm_read(t, t->req_addr + offsetof(struct tb_attach_request, result), &result, sizeof result))
		return 0; /* gone: the caller sees it */
	if (mask == TB_ATTACH_REQUESTED)
		return 0;
	if (result == 0)
		return 1;
	if (result < 0) {
		if (!vm_read(t, t->req_addr + offsetof(struct tb_attach_request, msg), m, sizeof m) && msg && cap) {
			m[sizeof m - 1] = 0;
			snprintf(msg, cap, "%s", m);
		}
		return -1;
	}
	return -2;
}

void record_pid_cancel(struct record_pid *t)
{
	uint32_t mask = 0;
	if (vm_read(t, t->mask_addr, &mask, sizeof mask) == 0 && mask == TB_ATTACH_REQUESTED) {
		/* a program attaching right now stores 0 itself afterwards: it is
		 * then attached to a session nobody drains (a later record --pid
		 * takes it over) */
		mask = 0;
		vm_write(t, t->mask_addr, &mask, sizeof mask);
	}
}

void record_pid_sweep(const char *cmd, const char *dir, int quiet)
{
	if (!dir || !*dir)
		dir = getenv("TRACEBUF_SHM_DIR");
	if (!dir || !*dir)
		dir = "/dev/shm";
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (strncmp(de->d_name, "tracebuf-pid-", 13) || de->d_name[13] < '1' || de->d_name[13] > '9')
			continue;
		char *end;
		errno = 0;
		long pid = strtol(de->d_name + 13, &end, 10);
		if (errno || *end != '-' || pid > INT32_MAX || end[1] < '0' || end[1] > '9')
			continue;
		unsigned long long start = strtoull(end + 1, &end, 10);
		if (errno || *end)
			continue;
		struct record_pid t = { .pid = (pid_t)pid, .start = start };
		struct stat sb;
		if (record_pid_alive(&t) || fstatat(dirfd(d), de->d_name, &sb, AT_SYMLINK_NOFOLLOW) != 0 ||
		    !S_ISREG(sb.st_mode) || sb.st_uid != geteuid())
			continue;
		if (unlinkat(dirfd(d), de->d_name, 0) == 0 && !quiet)
			cli_msg(stderr, "tracebuf %s: removed %s/%s, the session of process %ld, which is gone", cmd, dir,
				de->d_name, pid);
	}
	closedir(d);
}
