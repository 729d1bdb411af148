/* SPDX-License-Identifier: MIT */
/* cli_report.c - number, time and JSON formatting shared by the two halves of `tracebuf report`. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_report.h"

/* a - b without overflow (damaged timestamps can be anywhere) */
int64_t rpt_sat(__int128 d)
{
	return d > INT64_MAX ? INT64_MAX : d < INT64_MIN ? INT64_MIN : (int64_t)d;
}

int64_t rpt_diff(int64_t a, int64_t b)
{
	return rpt_sat((__int128)a - b);
}

/* 1234567 -> "1,234,567" */
const char *rpt_grp(char *buf, uint64_t v)
{
	char t[32];
	int n = snprintf(t, sizeof t, "%" PRIu64, v), o = 0;
	for (int i = 0; i < n; i++) {
		if (i && (n - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = t[i];
	}
	buf[o] = 0;
	return buf;
}

const char *rpt_dur(char *buf, int64_t ns)
{
	if (ns < 1000)
		sprintf(buf, "%" PRId64 " ns", ns);
	else if (ns < 1000000)
		sprintf(buf, "%.3f us", ns / 1e3);
	else if (ns < NS)
		sprintf(buf, "%.3f ms", ns / 1e6);
	else if (ns < 600 * NS)
		sprintf(buf, "%.3f s", ns / 1e9);
	else
		sprintf(buf, "%" PRId64 " h %02" PRId64 " min %06.3f s", ns / (3600 * NS), ns / (60 * NS) % 60,
			(double)(ns % (60 * NS)) / 1e9);
	return buf;
}

void rpt_jstr(FILE *f, const char *s)
{
	char buf[1024];
	size_t n = tb_rd_format_string(s, strlen(s), 1, buf, sizeof buf);
	if (n <= sizeof buf) {
		fwrite(buf, 1, n, f);
		return;
	}
	char *b = malloc(n);
	if (!b) {
		fputs("\"\"", f);
		return;
	}
	tb_rd_format_string(s, strlen(s), 1, b, n);
	fwrite(b, 1, n, f);
	free(b);
}

static const char *errname(int err)
{
	switch (err) {
	case -EBADMSG: return "EBADMSG";
	case -ENODATA: return "ENODATA";
	case -ERANGE: return "ERANGE";
	case -ENOENT: return "ENOENT";
	case -EACCES: return "EACCES";
	default: return "EIO";
	}
}

/* ,"diagnostics":{"count":N,"items":[...]}} and the end of the report's JSON object */
void rpt_json_diags(FILE *f, const struct tb_reader *r)
{
	uint64_t nd = tb_reader_ndiags(r);
	fprintf(f, ",\"diagnostics\":{\"count\":%" PRIu64 ",\"items\":[", nd);
	for (uint64_t i = 0; i < nd; i++) {
		const struct tb_rd_diag *d = tb_reader_diag(r, i);
		if (!d)
			break;
		fprintf(f, "%s{\"file\":", i ? "," : "");
		rpt_jstr(f, d->file);
		fprintf(f, ",\"offset\":%" PRIu64 ",\"error\":\"%s\",\"what\":", d->offset, errname(d->err));
		rpt_jstr(f, d->what);
		fputc('}', f);
	}
	fputs("]}}\n", f);
}
