/* SPDX-License-Identifier: MIT */
/*
 * cli_text.c - every string the tools print that came from a trace, a
 * profile, a session or an ELF file goes through here: the reader's one
 * escaping rule (tb_rd_format_text, include/tracebuf/reader.h), so that no
 * control character (a terminal escape) reaches a terminal raw.  Messages on
 * stderr (cli_error, cli_msg, cli_usage) are escaped whole: they echo names,
 * file contents and the user's own arguments and paths (a file name may hold
 * an escape sequence or ill-formed UTF-8); cli_getopt says getopt's problems
 * itself, escaped (glibc's own messages quote argv raw); cli_caret puts a
 * caret under a place of an escaped argument.
 */
#include <getopt.h>
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

int cli_usage(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "tracebuf %s: ", cmd);
	va_start(ap, fmt);
	vline(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "(tracebuf %s --help for the options)\n", cmd);
	return TB_EXIT_USAGE;
}

/* the long option arg names ("--na" of "--na=v"), when more than one begins so: ambiguous */
static int ambiguous(const char *arg, const struct option *lo)
{
	if (strncmp(arg, "--", 2))
		return 0;
	arg += 2;
	size_t n = strcspn(arg, "=");
	int k = 0;
	for (; lo && lo->name; lo++)
		if (!strncmp(lo->name, arg, n)) {
			if (strlen(lo->name) == n)
				return 0; /* an exact match is never ambiguous */
			k++;
		}
	return k > 1;
}

int cli_getopt(const char *cmd, int argc, char **argv, const char *opts, const struct option *lo)
{
	/* opts with ':' first (after a '+' or '-'): a missing value returns ':' */
	char o[128];
	size_t k = 0;
	if (*opts == '+' || *opts == '-')
		o[k++] = *opts++;
	o[k++] = ':';
	snprintf(o + k, sizeof o - k, "%s", opts);
	opterr = 0;
	int prev = optind;
	int c = getopt_long(argc, argv, o, lo, NULL);
	if (c != '?' && c != ':')
		return c;
	/* A long option is one argv element that glibc steps past in every error: this
	 * call moved optind and argv[optind - 1] is "--...".  A bad short option may sit
	 * inside a cluster ("-qZ") that optind has not left yet (argv[optind - 1] is
	 * then an earlier element, or a non-option skipped to reach the cluster): it
	 * is named by optopt alone. */
	const char *arg = optind > prev && optind <= argc ? argv[optind - 1] : "";
	int is_long = !strncmp(arg, "--", 2) && arg[2];
	char ch[3] = { '-', (char)optopt, 0 };
	if (c == ':')
		cli_error(cmd, "option '%s' needs a value", is_long ? arg : ch);
	else if (is_long && !optopt)
		cli_error(cmd, "%s option '%s'", ambiguous(arg, lo) ? "ambiguous" : "unknown", arg);
	else if (is_long) /* a known long option given "=VALUE" that it does not take */
		cli_error(cmd, "option '%.*s' takes no value", (int)strcspn(arg, "="), arg);
	else
		cli_error(cmd, "unknown option '%s'", ch);
	return '?';
}

size_t cli_caret(const char *s, size_t pos)
{
	/* the characters (not bytes) the escaped text of s[0..pos) takes: each
	 * escape's four, one per UTF-8 character; pos first moved back to the
	 * start of the character it is in, so that a valid character cut by pos
	 * is not escaped as ill-formed (an ill-formed byte is escaped alone, and
	 * no byte inside an ill-formed subpart starts a valid character: a step
	 * of one there escapes as the whole string does) */
	size_t n = strlen(s), i = 0;
	if (pos > n)
		pos = n;
	while (i < pos) {
		size_t l = tb_rd_utf8_len(s + i, n - i, NULL);
		size_t step = l ? l : 1;
		if (i + step > pos)
			break;
		i += step;
	}
	size_t len = tb_rd_format_text(s, i, NULL, 0), col = 0;
	char small[512], *b = len <= sizeof small ? small : malloc(len);
	if (!b)
		return i;
	tb_rd_format_text(s, i, b, len);
	for (size_t j = 0; j < len; j++)
		col += ((unsigned char)b[j] & 0xc0) != 0x80;
	if (b != small)
		free(b);
	return col;
}
