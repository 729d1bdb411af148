/* SPDX-License-Identifier: MIT */
/*
 * cli_crash.c - the crash a program's libtracebuf wrote into its trace
 * (cli_crash.h): one pass of the reader for the crash_map records and the
 * crash of the process, then each stack address looked up in the mapping
 * recorded for it, its file's symbols through cli_symbols.h (the profile
 * reader's symboliser), names demangled (cli_demangle.h).
 */
#define _GNU_SOURCE
#include "cli_crash.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include <tracebuf/reader.h>

#include "cli.h"
#include "cli_demangle.h"
#include "cli_report.h"
#include "cli_symbols.h"

struct cmap {
	uint64_t start, end, pgoff;
	char *path;
};

const char *cli_crash_code_name(int signo, int code)
{
	switch (code) {
	case SI_USER: return "SI_USER";
	case SI_KERNEL: return "SI_KERNEL";
	case SI_QUEUE: return "SI_QUEUE";
	case SI_TKILL: return "SI_TKILL";
	default: break;
	}
	if (signo == SIGSEGV)
		return code == SEGV_MAPERR ? "SEGV_MAPERR" : code == SEGV_ACCERR ? "SEGV_ACCERR" : NULL;
	if (signo == SIGBUS)
		return code == BUS_ADRALN ? "BUS_ADRALN" : code == BUS_ADRERR ? "BUS_ADRERR"
			: code == BUS_OBJERR ? "BUS_OBJERR" : NULL;
	if (signo == SIGFPE)
		return code == FPE_INTDIV ? "FPE_INTDIV" : code == FPE_INTOVF ? "FPE_INTOVF"
			: code == FPE_FLTDIV ? "FPE_FLTDIV" : code == FPE_FLTINV ? "FPE_FLTINV" : NULL;
	if (signo == SIGILL)
		return code == ILL_ILLOPC ? "ILL_ILLOPC" : code == ILL_ILLOPN ? "ILL_ILLOPN"
			: code == ILL_PRVOPC ? "ILL_PRVOPC" : NULL;
	if (signo == SIGTRAP)
		return code == TRAP_BRKPT ? "TRAP_BRKPT" : code == TRAP_TRACE ? "TRAP_TRACE" : NULL;
	if (signo == SIGSYS)
		return code == 1 ? "SYS_SECCOMP" : NULL;
	return NULL;
}

static const char *base_of(const char *path)
{
	const char *b = strrchr(path, '/');
	return b && b[1] ? b + 1 : path;
}

/* "function+0xOFF (module)" or "module+0xOFF" for address a (look-up address
 * la: a - 1 for a return address); NULL when no recorded mapping holds it */
static char *symbolise(struct sym_ctx *sc, const struct cmap *m, size_t nm, uint64_t a, uint64_t la)
{
	const struct cmap *hit = NULL;
	for (size_t i = nm; i-- > 0 && !hit;)
		if (la >= m[i].start && la < m[i].end)
			hit = &m[i];
	if (!hit)
		return NULL;
	struct sym_file *f = sym_file_get(sc, hit->path);
	uint64_t bias, within = 0;
	const char *name = NULL;
	if (f && sym_bias(f, hit->start, hit->pgoff, &bias) == 0)
		name = sym_name_at(f, la - bias, &within);
	char tx[512], *out = NULL;
	cli_tx(tx, sizeof tx, base_of(hit->path));
	if (name) {
		char *d = cli_demangle(name);
		char nx[1024];
		cli_tx(nx, sizeof nx, d ? d : name);
		free(d);
		if (asprintf(&out, "%s+0x%" PRIx64 " (%s)", nx, within + (a - la), tx) < 0)
			out = NULL;
	} else if (asprintf(&out, "%s+0x%" PRIx64, tx, a - hit->start + hit->pgoff) < 0) {
		out = NULL;
	}
	return out;
}

static void on_diag(void *arg, const char *path, const char *what)
{
	(void)arg;
	(void)path;
	(void)what; /* an unreadable file: its frames show module+offset */
}

int cli_crash_read(const char *trace_dir, uint32_t pid, struct cli_crash *c)
{
	memset(c, 0, sizeof *c);
	struct tb_reader *r;
	int rc = tb_reader_open(trace_dir, NULL, &r);
	if (rc < 0)
		return rc;
	uint32_t id_crash = UINT32_MAX, id_map = UINT32_MAX;
	for (uint32_t id = 0; id < tb_reader_nclass_ids(r); id++) {
		const char *n = tb_reader_class_name(r, id);
		if (n && !strcmp(n, "tracebuf:crash"))
			id_crash = id;
		else if (n && !strcmp(n, "tracebuf:crash_map"))
			id_map = id;
	}
	struct cmap *maps = NULL;
	size_t nm = 0, cap = 0;
	int found = 0;
	const struct tb_rd_event *e;
	while (id_crash != UINT32_MAX && rc == 0 && cli_next(r, &e) > 0) {
		if (tb_rd_kind(e) != TB_RD_EVENT || (pid && tb_rd_pid(e) != pid))
			continue;
		uint32_t id = tb_rd_id(e);
		if (id == id_map) {
			if (nm == cap) {
				cap = cap ? 2 * cap : 16;
				struct cmap *n = realloc(maps, cap * sizeof *n);
				if (!n) {
					rc = -ENOMEM;
					break;
				}
				maps = n;
			}
			int fs = tb_rd_field_index(e, "start"), fe = tb_rd_field_index(e, "end");
			int fo = tb_rd_field_index(e, "pgoff"), fp = tb_rd_field_index(e, "path");
			const char *path = fp >= 0 ? tb_rd_str(e, (unsigned)fp, NULL) : NULL;
			if (fs < 0 || fe < 0 || fo < 0 || !path)
				continue;
			maps[nm] = (struct cmap){ tb_rd_u64(e, (unsigned)fs), tb_rd_u64(e, (unsigned)fe),
						  tb_rd_u64(e, (unsigned)fo), strdup(path) };
			if (!maps[nm].path) {
				rc = -ENOMEM;
				break;
			}
			nm++;
		} else if (id == id_crash) {
			static const char *const names[] = { "signo", "code", "tid", "addr", "ip", "sp", "flags", "stack" };
			int fi[8];
			for (int i = 0; i < 8; i++)
				fi[i] = tb_rd_field_index(e, names[i]);
			if (fi[0] < 0 || fi[7] < 0)
				continue; /* not the layout this reader knows */
			found = 1;
			c->pid = tb_rd_pid(e);
			c->ns = tb_rd_ns(e);
			c->signo = (uint32_t)tb_rd_u64(e, (unsigned)fi[0]);
			c->code = fi[1] >= 0 ? (int32_t)tb_rd_i64(e, (unsigned)fi[1]) : 0;
			c->tid = fi[2] >= 0 ? (uint32_t)tb_rd_u64(e, (unsigned)fi[2]) : tb_rd_tid(e);
			c->addr = fi[3] >= 0 ? tb_rd_u64(e, (unsigned)fi[3]) : 0;
			c->ip = fi[4] >= 0 ? tb_rd_u64(e, (unsigned)fi[4]) : 0;
			c->sp = fi[5] >= 0 ? tb_rd_u64(e, (unsigned)fi[5]) : 0;
			c->flags = fi[6] >= 0 ? (uint32_t)tb_rd_u64(e, (unsigned)fi[6]) : 0;
			uint32_t cnt = 0;
			tb_rd_seq(e, (unsigned)fi[7], &cnt);
			c->n = cnt > CLI_CRASH_DEPTH ? CLI_CRASH_DEPTH : cnt; /* a damaged record: the contract bounds it */
			for (uint32_t j = 0; j < c->n; j++)
				c->stack[j] = tb_rd_seq_u64(e, (unsigned)fi[7], j);
		}
	}
	if (found && rc == 0) {
		const char *tn = tb_reader_thread_name(r, c->tid);
		if (tn)
			cli_tx(c->thread, sizeof c->thread, tn);
		struct sym_ctx *sc = sym_new(on_diag, NULL);
		for (uint32_t j = 0; sc && j < c->n; j++)
			c->sym[j] = symbolise(sc, maps, nm, c->stack[j], j ? c->stack[j] - 1 : c->stack[j]);
		sym_free(sc);
	}
	for (size_t i = 0; i < nm; i++)
		free(maps[i].path);
	free(maps);
	tb_reader_close(r);
	if (rc < 0) {
		cli_crash_free(c);
		return rc;
	}
	return found;
}

void cli_crash_free(struct cli_crash *c)
{
	for (uint32_t j = 0; j < CLI_CRASH_DEPTH; j++) {
		free(c->sym[j]);
		c->sym[j] = NULL;
	}
}

char *cli_crash_json(const struct cli_crash *c, int indent, int with_ids)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return NULL;
	const char *code = cli_crash_code_name((int)c->signo, c->code);
	fputs("{\n", f);
	if (with_ids) {
		const char *ab = c->signo < 65 ? sigabbrev_np((int)c->signo) : NULL;
		fprintf(f, "%*s\"pid\": %" PRIu32 ",\n%*s\"tid\": %" PRIu32 ",\n%*s\"signo\": %" PRIu32
			   ",\n%*s\"signal\": \"%s%s\",\n%*s\"time_ns\": %" PRId64 ",\n",
			indent + 2, "", c->pid, indent + 2, "", c->tid, indent + 2, "", c->signo, indent + 2, "",
			ab ? "SIG" : "", ab ? ab : "?", indent + 2, "", c->ns);
	}
	fprintf(f, "%*s\"thread\": ", indent + 2, "");
	if (c->thread[0])
		rpt_jstr(f, c->thread);
	else
		fputs("null", f); /* not named: the program's name */
	fprintf(f, ",\n%*s\"code\": %" PRId32 ",\n%*s\"code_name\": ", indent + 2, "", c->code, indent + 2, "");
	if (code)
		rpt_jstr(f, code);
	else
		fputs("null", f);
	if (c->code <= 0) /* sent (kill, tgkill, sigqueue): si_addr's place holds the sender */
		fprintf(f, ",\n%*s\"addr\": null,\n%*s\"sender_pid\": %" PRIu32 ",\n%*s\"sender_uid\": %" PRIu32,
			indent + 2, "", indent + 2, "", (uint32_t)c->addr, indent + 2, "", (uint32_t)(c->addr >> 32));
	else
		fprintf(f, ",\n%*s\"addr\": \"0x%" PRIx64 "\"", indent + 2, "", c->addr);
	fprintf(f, ",\n%*s\"ip\": \"0x%" PRIx64 "\",\n%*s\"sp\": \"0x%" PRIx64
		   "\",\n%*s\"stack_ended\": \"%s\",\n%*s\"scanned\": %s,\n%*s\"mappings\": %s,\n%*s\"stack\": [",
		indent + 2, "", c->ip, indent + 2, "", c->sp, indent + 2, "",
		c->flags & 2 ? "truncated" : c->flags & 1 ? "aborted" : "complete", indent + 2, "",
		c->flags & 8 ? "true" : "false", indent + 2, "", c->flags & 4 ? "false" : "true", indent + 2, "");
	for (uint32_t j = 0; j < c->n; j++) {
		fprintf(f, "%s\n%*s{ \"address\": \"0x%" PRIx64 "\", \"symbol\": ", j ? "," : "", indent + 4, "",
			c->stack[j]);
		if (c->sym[j])
			rpt_jstr(f, c->sym[j]);
		else
			fputs("null", f);
		fputs(" }", f);
	}
	fprintf(f, "\n%*s]\n%*s}", indent + 2, "", indent, "");
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

void cli_crash_print(FILE *out, const struct cli_crash *c)
{
	const char *code = cli_crash_code_name((int)c->signo, c->code);
	const char *abbrev = c->signo < 65 ? sigabbrev_np((int)c->signo) : NULL;
	if (abbrev)
		fprintf(out, "Crash: SIG%s", abbrev);
	else
		fprintf(out, "Crash: signal %" PRIu32, c->signo);
	if (code)
		fprintf(out, " (%s)", code);
	else
		fprintf(out, " (code %" PRId32 ")", c->code);
	if (c->code <= 0)
		fprintf(out, " sent by pid %" PRIu32 " (uid %" PRIu32 ")", (uint32_t)c->addr, (uint32_t)(c->addr >> 32));
	else if (c->signo == SIGSEGV || c->signo == SIGBUS)
		fprintf(out, " at address 0x%" PRIx64, c->addr);
	fprintf(out, ", in thread %" PRIu32 "%s%s%s of pid %" PRIu32 "; ip 0x%" PRIx64 ", sp 0x%" PRIx64 "\n", c->tid,
		c->thread[0] ? " (" : "", c->thread, c->thread[0] ? ")" : "", c->pid, c->ip, c->sp);
	for (uint32_t j = 0; j < c->n; j++)
		fprintf(out, "  #%-2" PRIu32 " 0x%016" PRIx64 "  %s\n", j, c->stack[j], c->sym[j] ? c->sym[j] : "?");
	if (c->flags & 2)
		fprintf(out, "  (the stack goes on: %u frames are kept)\n", (unsigned)CLI_CRASH_DEPTH);
	else if (c->flags & 1)
		fputs("  (the frame-pointer chain ended at a frame it could not follow: code built without frame "
		      "pointers, e.g. -fomit-frame-pointer or a libc's, hides its callers)\n", out);
	if (c->flags & 8)
		fputs("  (some frames were found by scanning stack words where code keeps no frame records: one of "
		      "them may be a stale address)\n", out);
	if (c->flags & 4)
		fputs("  (the mappings were not written: the handler ran on a small alternate stack, or /proc was "
		      "unreadable; addresses only)\n", out);
	fputc('\n', out);
}
