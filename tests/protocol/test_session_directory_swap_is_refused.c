/* SPDX-License-Identifier: MIT */
/*
 * test_session_directory_swap_is_refused - the session directory is checked
 * and used through one descriptor: swapping it for a symbolic link between
 * the check and the creation of the file cannot make tb_session_create()
 * put the file where the check did not look.
 *
 * A thread keeps exchanging (renameat2 RENAME_EXCHANGE, atomic) the name
 * `d` between a private directory and a symbolic link to a directory
 * writable by everybody without the sticky bit (which the check refuses),
 * while this thread creates sessions in `d`.  Every creation must either
 * succeed inside the private directory or be refused; no file may ever
 * appear in the unsafe directory.  (Checking by path and then creating by
 * path, as before, lets the swap land between the two: files appeared in
 * the unsafe directory within a few hundred tries.)
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <tracebuf/session.h>

#include "tbtest.h"

static char base[512];
static int stop;

static void *swapper(void *arg)
{
	(void)arg;
	char a[600], b[600];
	snprintf(a, sizeof a, "%s/d", base);
	snprintf(b, sizeof b, "%s/l", base);
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED))
		if (renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE) != 0)
			return (void *)(long)errno;
	return NULL;
}

/* Entries of `dir` other than . and .. */
static unsigned entries(const char *dir)
{
	DIR *d = opendir(dir);
	CHECK(d);
	unsigned n = 0;
	struct dirent *de;
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) {
			fprintf(stderr, "%s/%s\n", dir, de->d_name);
			n++;
		}
	closedir(d);
	return n;
}

int main(void)
{
	snprintf(base, sizeof base, "%s/swap", tbt_tmpdir());
	CHECK(mkdir(base, 0700) == 0);
	char unsafe[600], link[600], d[600];
	snprintf(unsafe, sizeof unsafe, "%s/unsafe", base);
	snprintf(link, sizeof link, "%s/l", base);
	snprintf(d, sizeof d, "%s/d", base);
	CHECK(mkdir(d, 0700) == 0);
	CHECK(mkdir(unsafe, 0777) == 0 && chmod(unsafe, 0777) == 0);
	CHECK(symlink("unsafe", link) == 0);
	if (renameat2(AT_FDCWD, d, AT_FDCWD, link, RENAME_EXCHANGE) != 0)
		SKIP("renameat2(RENAME_EXCHANGE) not supported here: %s", strerror(errno));
	CHECK(renameat2(AT_FDCWD, d, AT_FDCWD, link, RENAME_EXCHANGE) == 0); /* back: d is the directory */

	/* sanity: without the swap, the private directory works and the unsafe one is refused */
	struct tb_channel_opts co = { .size = sizeof co, .sb_size = 4096, .sb_count = 2 };
	struct tb_session_opts so = { .size = sizeof so, .dir = d, .nchannels = 1, .channels = &co };
	struct tb_session *s;
	CHECK_RC(tb_session_create(&so, &s), 0);
	CHECK_RC(tb_session_unlink(s), 0);
	tb_session_close(s);
	struct tb_session_opts uo = so;
	uo.dir = unsafe;
	CHECK_RC(tb_session_create(&uo, &s), -EPERM);

	pthread_t th;
	CHECK(pthread_create(&th, NULL, swapper, NULL) == 0);
	/* at least 1500 tries, and on until both states of `d` were met */
	unsigned ok = 0, refused = 0, other = 0, tries = 0;
	for (; tries < 1500 || ((!ok || !refused) && tries < 100000); tries++) {
		int rc = tb_session_create(&so, &s);
		if (rc == 0) {
			ok++;
			/* removed through the directory it was created in, whatever `d` is now */
			CHECK_RC(tb_session_unlink(s), 0);
			tb_session_close(s);
		} else if (rc == -EPERM) {
			refused++;
		} else {
			other++; /* e.g. -ENOENT: the name was between two states */
		}
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	void *res;
	pthread_join(th, &res);
	CHECK(res == NULL, "renameat2: %s", strerror((int)(long)res));
	printf("%u creations while the directory was swapped: %u in the private directory, %u refused, %u other "
	       "errors\n",
	       tries, ok, refused, other);
	CHECK_EQ_U64(entries(unsafe), 0); /* never a file where the check did not look */
	struct stat st;
	const char *real = lstat(d, &st) == 0 && S_ISDIR(st.st_mode) ? d : link;
	CHECK_EQ_U64(entries(real), 0); /* and every session created was removed from its own directory */
	CHECK(ok > 0 && refused > 0, "the swap must have been seen both ways (ok %u, refused %u)", ok, refused);
	return 0;
}
