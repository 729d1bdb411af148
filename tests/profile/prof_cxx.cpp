// SPDX-License-Identifier: MIT
// prof_cxx.cpp - a C++ program for the readers of profiles: its hot functions have mangled
// names (a static function `worker(const char*, unsigned, unsigned)` is _ZL6workerPKcjj, a
// member `shop::Cart::total(unsigned)` _ZN4shop4Cart5totalEj) and it burns CPU time in a thread
// it names "cruncher" (t_profile_reports_demangle_and_name_threads.sh).
//
// usage: prof_cxx SECONDS
#include <pthread.h>
#include <time.h>

#include <cstdio>
#include <cstdlib>

static double cpu_of_thread()
{
	timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static volatile unsigned long sink;

namespace shop {
struct Cart {
	__attribute__((noinline)) void total(unsigned n)
	{
		unsigned long s = 0;
		for (unsigned i = 0; i < n; i++)
			s += i * 7u;
		sink = s;
	}
};
} // namespace shop

__attribute__((noinline)) static void worker(const char *what, unsigned n, unsigned rounds)
{
	shop::Cart c;
	for (unsigned r = 0; r < rounds; r++)
		c.total(n + (unsigned)what[0]);
}

static double secs;

static void *cruncher(void *)
{
	pthread_setname_np(pthread_self(), "cruncher");
	double end = cpu_of_thread() + secs;
	while (cpu_of_thread() < end)
		worker("x", 10000, 10);
	return nullptr;
}

int main(int argc, char **argv)
{
	secs = argc > 1 ? atof(argv[1]) : 0.5;
	pthread_t t;
	if (pthread_create(&t, nullptr, cruncher, nullptr) != 0)
		return 1;
	double end = cpu_of_thread() + secs / 2;
	while (cpu_of_thread() < end)
		worker("y", 10000, 10);
	pthread_join(t, nullptr);
	std::printf("%lu\n", (unsigned long)sink);
	return 0;
}
