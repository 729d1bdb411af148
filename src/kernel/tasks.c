/* SPDX-License-Identifier: MIT */
/*
 * tasks.c - the traced tree as /proc shows it: the roots' threads (the
 * filter's set of the scheduling events) and every task of the roots and
 * their descendants (the system-call events are opened on each:
 * docs/KERNEL.md).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "kernel/kernel_impl.h"

/* The root and its threads now (an attached process has threads already). */
void tb_kadd_root(struct tb_kernel *k, uint32_t pid)
{
	tb_kset_add(k, pid);
	char path[64];
	snprintf(path, sizeof path, "/proc/%u/task", pid);
	DIR *d = opendir(path);
	if (!d)
		return;
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		char *e;
		unsigned long t = strtoul(de->d_name, &e, 10);
		if (e != de->d_name && !*e && t && t < 0xffffffffu)
			tb_kset_add(k, (uint32_t)t);
	}
	closedir(d);
}

/* Appends to tasks[] the tree's tasks not in it yet: the roots' threads
 * (/proc/PID/task), and the tasks of their descendants (each task's
 * children, /proc/PID/task/TID/children).  -1: out of memory. */
int tb_ktree_tasks(struct tb_kernel *k, uint32_t **tasks, size_t *n, size_t *cap)
{
	/* the processes to look at: the roots, then the children found */
	uint32_t *procs = NULL;
	size_t np = 0, cp = 0;
	for (unsigned i = 0; i < k->nroots; i++) {
		if (np == cp) {
			cp = cp ? cp * 2 : 16;
			uint32_t *x = realloc(procs, cp * sizeof *x);
			if (!x)
				goto oom;
			procs = x;
		}
		procs[np++] = k->roots[i];
	}
	for (size_t p = 0; p < np && p < 65536; p++) {
		char path[64];
		snprintf(path, sizeof path, "/proc/%u/task", procs[p]);
		DIR *d = opendir(path);
		if (!d)
			continue;
		struct dirent *de;
		while ((de = readdir(d)) != NULL) {
			char *e;
			unsigned long t = strtoul(de->d_name, &e, 10);
			if (*e || !t || t > INT32_MAX)
				continue;
			size_t j = 0;
			while (j < *n && (*tasks)[j] != t)
				j++;
			if (j == *n) {
				if (*n == *cap) {
					size_t c2 = *cap ? *cap * 2 : 16;
					uint32_t *x = realloc(*tasks, c2 * sizeof *x);
					if (!x) {
						closedir(d);
						goto oom;
					}
					*tasks = x;
					*cap = c2;
				}
				(*tasks)[(*n)++] = (uint32_t)t;
			}
			/* its children: processes of the tree too */
			char cpath[96], buf[4096];
			snprintf(cpath, sizeof cpath, "/proc/%u/task/%lu/children", procs[p], t);
			FILE *f = fopen(cpath, "re");
			size_t got = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
			if (f)
				fclose(f);
			buf[got] = 0;
			for (char *q = buf, *qe; *q; q = qe) {
				unsigned long child = strtoul(q, &qe, 10);
				if (qe == q)
					break;
				if (!child || child > INT32_MAX)
					continue;
				if (np == cp) {
					cp = cp ? cp * 2 : 16;
					uint32_t *x = realloc(procs, cp * sizeof *x);
					if (!x) {
						closedir(d);
						goto oom;
					}
					procs = x;
				}
				procs[np++] = (uint32_t)child;
			}
		}
		closedir(d);
	}
	free(procs);
	return 0;
oom:
	free(procs);
	return -1;
}
