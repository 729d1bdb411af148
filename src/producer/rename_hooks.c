/* SPDX-License-Identifier: MIT */
/*
 * rename_hooks.c - see a thread being renamed: pthread_setname_np() and
 * prctl(PR_SET_NAME) are wrapped (symbol interposition: libtracebuf.so is
 * searched before libc.so for the program's calls), call the real thing,
 * and on success write tracebuf:thread_name (format.h) to the producer
 * session.  The name a thread has before its first record needs no hook:
 * the append slow path writes it (tb_thread_name_first()).
 *
 * The exported names carry libc's symbol versions (src/libtracebuf.map).
 * Shared library only (CMakeLists.txt keeps it out of the static archive):
 * in a program linked with libtracebuf.a these symbols would replace libc's
 * for everything the program links, without the dynamic loader's RTLD_NEXT
 * to reach the real ones.  Calls made inside libc (glibc's own uses of
 * prctl) do not go through these wrappers.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "producer/producer.h"

#define TB_INTERPOSE __attribute__((visibility("default")))

TB_INTERPOSE int pthread_setname_np(pthread_t th, const char *name);
TB_INTERPOSE int prctl(int option, ...);

int pthread_setname_np(pthread_t th, const char *name)
{
	typedef int (*fn_t)(pthread_t, const char *);
	static fn_t real;
	/* relaxed: every thread that races resolves the same address */
	fn_t f = __atomic_load_n(&real, __ATOMIC_RELAXED);
	if (!f) {
		f = (fn_t)dlsym(RTLD_NEXT, "pthread_setname_np");
		if (!f)
			return ENOSYS;
		__atomic_store_n(&real, f, __ATOMIC_RELAXED);
	}
	int rc = f(th, name);
	if (rc == 0) {
		int saved = errno;
		tb_thread_renamed(pthread_equal(th, pthread_self()) ? tb_self_tid() : 0, name);
		errno = saved;
	}
	return rc;
}

/* programs linked against glibc before 2.34 ask for pthread_setname_np@GLIBC_2.12 */
TB_INTERPOSE int setname_glibc212(pthread_t th, const char *name);
__asm__(".symver setname_glibc212, pthread_setname_np@GLIBC_2.12");
int setname_glibc212(pthread_t th, const char *name)
{
	return pthread_setname_np(th, name);
}

/* glibc's prctl() is the system call with four more arguments; so is this */
int prctl(int option, ...)
{
	va_list ap;
	va_start(ap, option);
	unsigned long a2 = va_arg(ap, unsigned long), a3 = va_arg(ap, unsigned long);
	unsigned long a4 = va_arg(ap, unsigned long), a5 = va_arg(ap, unsigned long);
	va_end(ap);
	long rc = syscall(SYS_prctl, option, a2, a3, a4, a5);
	if (rc == 0 && option == PR_SET_NAME && a2) {
		int saved = errno;
		/* NOLINTNEXTLINE(performance-no-int-to-ptr): the system call's argument is the name's address */
		tb_thread_renamed(tb_self_tid(), (const char *)a2);
		errno = saved;
	}
	return (int)rc;
}
