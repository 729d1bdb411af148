/* SPDX-License-Identifier: MIT */
/*
 * cli_text.c - every string the tools print that came from a trace, a
 * profile, a session or an ELF file goes through here: the reader's one
 * escaping rule (tb_rd_format_text, include/tracebuf/reader.h), so that no
 * control character (a terminal escape) reaches a terminal raw.  Messages on
 * stderr (cli_error, cli_msg) are escaped whole: they echo names and file
 * contents.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tracebuf/reader.h>

#include "cli.h"

const char *cli_tx(char *buf, size_t cap, const char *s)
{
	if (!cap)
		return "";
	size_t n = tb_rd_format_text(s, strlen(s), buf, cap - 1);
	if (n < cap) {
		buf[n] = 0;
		return buf;
	}
	/* cut: never in the middle of a \xNN or of a UTF-8 sequence */
	size_t end = cap - 1, j = end;
	while (j && ((unsigned char)buf[j - 1] & 0xc0) == 0x80)
		j--;
	if (j && (unsigned char)buf[j - 1] >= 0xc0 && !tb_rd_utf8_len(buf + j - 1, end - (j - 1), NULL))
		end = j - 1;
	for (size_t i = end >= 3 ? end - 3 : 0; i < end; i++)
		if (buf[i] == '\\' && (i + 1 == end || buf[i + 1] == 'x')) {
			end = i;
			break;
		}
	buf[end] = 0;
	return buf;
}

void cli_puttx(FILE *f, const char *s)
{
	char small[512];
	size_t n = tb_rd_format_text(s, strlen(s), small, sizeof small);
	if (n <= sizeof small) {
		fwrite(small, 1, n, f);
		return;
	}
	char *b = malloc(n);
	if (b) {
		tb_rd_format_text(s, strlen(s), b, n);
		fwrite(b, 1, n, f);
		free(b);
	} else {
		fwrite(small, 1, sizeof small, f);
	}
}

static void vline(FILE *f, const char *fmt, va_list ap)
{
	char msg[4096];
	vsnprintf(msg, sizeof msg, fmt, ap);
	cli_puttx(f, msg);
	fputc('\n', f);
}

int cli_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "tracebuf %s: ", cmd);
	va_start(ap, fmt);
	vline(stderr, fmt, ap);
	va_end(ap);
	return TB_EXIT_FAIL;
}

void cli_msg(FILE *f, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vline(f, fmt, ap);
	va_end(ap);
}

char *cli_txdup(const char *s)
{
	size_t n = tb_rd_format_text(s, strlen(s), NULL, 0);
	char *b = malloc(n + 1);
	if (b) {
		tb_rd_format_text(s, strlen(s), b, n);
		b[n] = 0;
	}
	return b;
}
