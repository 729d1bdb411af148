/* SPDX-License-Identifier: MIT */
/*
 * verify.c - tb-verify [--written N] [--no-loss] [--quiet] DIR: the
 * accounting identity of a trace directory (tests/lib/tbverify.h), for the
 * shell tests ($VERIFY, tests/lib/recorder_env.sh) and for a person
 * checking a trace by hand.  Exit 0 valid, 1 not, 2 usage.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tbverify.h"

int main(int argc, char **argv)
{
	int64_t written = -1;
	int no_loss = 0, quiet = 0;
	const char *dir = NULL;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--written") && i + 1 < argc)
			written = strtoll(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--no-loss"))
			no_loss = 1;
		else if (!strcmp(argv[i], "--quiet"))
			quiet = 1;
		else if (!dir && argv[i][0] != '-')
			dir = argv[i];
		else {
			fprintf(stderr, "usage: %s [--written N] [--no-loss] [--quiet] DIR\n", argv[0]);
			return 2;
		}
	}
	if (!dir) {
		fprintf(stderr, "usage: %s [--written N] [--no-loss] [--quiet] DIR\n", argv[0]);
		return 2;
	}
	return tbv_verify_dir(dir, written, no_loss, quiet);
}
