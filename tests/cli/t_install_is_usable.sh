# SPDX-License-Identifier: MIT
# t_install_is_usable.sh - `cmake --install` gives a tree a real codebase can use: pkg-config
# finds tracebuf (a C program built with `pkg-config --cflags --libs tracebuf`), CMake finds it
# (a C++ project with find_package(tracebuf) and tracebuf::tracebuf), the installed `tracebuf
# record` records both and `tracebuf profile` finds its sampler library; and all of it still
# works after the installed tree is moved to another directory.  The man page and the bash
# completion are installed too.  Without LD_LIBRARY_PATH (issue 26): what pkg-config's line
# links runs (its Libs carry an rpath), the installed bin/tracebuf-workload runs (RUNPATH
# $ORIGIN/../lib), and a program linked without an rpath that cannot find libtracebuf.so.0
# under `record` gets the reason said, not a silent "0 events".
set -u
. "$(dirname "$0")/../lib/recorder_env.sh"
B=${TB_BUILD:?}
if grep -q "^TB_SANITIZE:STRING=." "$B/CMakeCache.txt" 2> /dev/null; then
	echo "SKIP: a sanitizer build: programs linked against it need the sanitizer runtime (the plain build runs this test)"
	exit 77
fi
for t in pkg-config cc c++ cmake; do
	command -v $t > /dev/null || { echo "SKIP: $t not installed"; exit 77; }
done
cmake --install "$B" --prefix "$T/p1" > "$T/install.log" 2>&1 || { cat "$T/install.log"; fail "cmake --install"; }

cat > "$T/app.c" <<'CEOF'
#include <tracebuf/event.h>
TB_EVENT(inst, c, (u32, i))
int main(void) { for (unsigned i = 0; i < 100; i++) tb_inst_c(i); return 0; }
CEOF
mkdir -p "$T/proj"
cat > "$T/proj/CMakeLists.txt" <<'CEOF'
cmake_minimum_required(VERSION 3.20)
project(uses_tracebuf LANGUAGES CXX)
find_package(tracebuf 0.1 REQUIRED)
add_executable(app app.cpp)
target_link_libraries(app PRIVATE tracebuf::tracebuf)
CEOF
cat > "$T/proj/app.cpp" <<'CEOF'
#include <tracebuf/event.h>
#include <vector>
TB_EVENT(inst, cxx, (u32, i), (str, s))
int main() { std::vector<int> v(50); for (unsigned i = 0; i < v.size(); i++) tb_inst_cxx(i, "c++"); return 0; }
CEOF

check_prefix() { # check_prefix PREFIX LABEL
	local P=$1 what=$2 pcdir
	pcdir=$(dirname "$(find "$P" -name tracebuf.pc | head -1)")
	[ -n "$pcdir" ] || fail "$what: no tracebuf.pc installed"
	export PKG_CONFIG_PATH=$pcdir
	# shellcheck disable=SC2046
	cc -O2 -Wall -Werror "$T/app.c" -o "$T/app.$what" $(pkg-config --cflags --libs tracebuf) ||
		fail "$what: building with pkg-config --cflags --libs tracebuf"
	local libdir
	libdir=$(pkg-config --variable=libdir tracebuf)
	[ -f "$libdir/libtracebuf.so" ] || fail "$what: pkg-config's libdir $libdir has no libtracebuf.so"
	rm -rf "$T/build.$what"
	cmake -S "$T/proj" -B "$T/build.$what" -DCMAKE_PREFIX_PATH="$P" > "$T/cmake.log" 2>&1 ||
		{ cat "$T/cmake.log"; fail "$what: find_package(tracebuf)"; }
	cmake --build "$T/build.$what" > "$T/cmake.log" 2>&1 || { cat "$T/cmake.log"; fail "$what: building the CMake project"; }
	rm -rf "$T/tc.$what" "$T/tx.$what" "$T/pr.$what"
	env -u LD_LIBRARY_PATH "$P/bin/tracebuf" record -q -o "$T/tc.$what" -- "$T/app.$what" ||
		fail "$what: the installed tracebuf record of the C program built with pkg-config's line (no LD_LIBRARY_PATH: its rpath)"
	[ "$("$P/bin/tracebuf" dump "$T/tc.$what" | grep -c 'inst:c:')" -eq 100 ] || fail "$what: the C program's events"
	LD_LIBRARY_PATH=$libdir "$P/bin/tracebuf" record -q -o "$T/tx.$what" -- "$T/build.$what/app" ||
		fail "$what: the installed tracebuf record of the C++ program"
	[ "$("$P/bin/tracebuf" dump "$T/tx.$what" | grep -c 'inst:cxx:')" -eq 50 ] || fail "$what: the C++ program's events"
	LD_LIBRARY_PATH=$libdir "$P/bin/tracebuf" profile -q -o "$T/pr.$what" -- "$T/app.$what" > /dev/null 2> "$T/prof.err" ||
		{ cat "$T/prof.err"; fail "$what: the installed tracebuf profile (its sampler library)"; }
	# the installed workload finds its library (RUNPATH), wherever the tree is
	env -u LD_LIBRARY_PATH "$P/bin/tracebuf-workload" --events 10 > "$T/wl.out" 2>&1 ||
		{ cat "$T/wl.out"; fail "$what: the installed bin/tracebuf-workload does not run"; }
	rm -rf "$T/tw.$what"
	env -u LD_LIBRARY_PATH "$P/bin/tracebuf" record -q -o "$T/tw.$what" -- "$P/bin/tracebuf-workload" --events 10 > /dev/null ||
		fail "$what: recording the installed workload"
	# linked without an rpath, the library is not found: record says so
	# shellcheck disable=SC2046
	cc -O2 "$T/app.c" -o "$T/norpath.$what" $(pkg-config --cflags tracebuf) -L"$libdir" -ltracebuf ||
		fail "$what: building without an rpath"
	rm -rf "$T/tn.$what"
	env -u LD_LIBRARY_PATH "$P/bin/tracebuf" record -o "$T/tn.$what" -- "$T/norpath.$what" > /dev/null 2> "$T/norpath.err"
	rc=$?
	[ $rc -eq 127 ] || { cat "$T/norpath.err"; fail "$what: a program whose library is missing: record exited $rc, want its 127"; }
	grep -q 'the trace holds no event: norpath.* exited with status 127 .*did not find a library.*LD_LIBRARY_PATH' "$T/norpath.err" ||
		{ cat "$T/norpath.err"; fail "$what: record did not say why the trace is empty (library not found)"; }
	[ -f "$P/share/man/man1/tracebuf.1" ] || fail "$what: no man page installed"
	# the documents the man page points to are installed where it says
	grep -q 'share/doc/tracebuf' "$P/share/man/man1/tracebuf.1" || fail "$what: the man page does not say where the docs are"
	[ -f "$P/share/doc/tracebuf/GUIDE.md" ] && [ -f "$P/share/doc/tracebuf/RECORDER.md" ] &&
		[ -f "$P/share/doc/tracebuf/README.md" ] || fail "$what: docs not installed in share/doc/tracebuf"
	[ -f "$P/share/bash-completion/completions/tracebuf" ] || fail "$what: no bash completion installed"
	echo "ok: $what"
}
check_prefix "$T/p1" installed
mv "$T/p1" "$T/moved"
check_prefix "$T/moved" moved
echo PASS
