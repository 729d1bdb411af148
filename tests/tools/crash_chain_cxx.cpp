// SPDX-License-Identifier: MIT
// crash_chain_cxx.cpp - tb-crash-chain-cxx: the C++ form of tb-crash-chain (crash_chain.c):
// a std::thread running app::Worker::run -> app::Worker::level1 -> app::Worker::level2(int),
// which stores through a NULL pointer, built with frame pointers; the crash snapshot's stack
// names them demangled (t_crash_snapshot_names_the_thread_and_stack.sh).  Prints "pid: P" and
// "tid: T" (the thread's), first.
#include <cstdio>
#include <thread>

#include <sys/syscall.h>
#include <unistd.h>

#include <tracebuf/event.h>

TB_EVENT(crashcxx, step, (u32, i))

namespace app {
struct Worker {
	int *volatile target = nullptr;
	__attribute__((noinline)) void level2(int v)
	{
		*target = v;
		__asm__ volatile("" ::: "memory");
	}
	__attribute__((noinline)) void level1()
	{
		level2(1);
		__asm__ volatile("" ::: "memory");
	}
	__attribute__((noinline)) void run()
	{
		std::printf("tid: %ld\n", static_cast<long>(syscall(SYS_gettid)));
		std::fflush(stdout);
		for (uint32_t i = 0; i < 10; i++)
			tb_crashcxx_step(i);
		level1();
		__asm__ volatile("" ::: "memory");
	}
};
} // namespace app

int main()
{
	std::printf("pid: %ld\n", static_cast<long>(getpid()));
	std::fflush(stdout);
	app::Worker w;
	std::thread t(&app::Worker::run, &w);
	t.join();
	return 0;
}
