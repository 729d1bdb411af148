/* SPDX-License-Identifier: MIT */
/*
 * cli_demangle.h - C++ and Rust symbol names as people read them, for every
 * output of the profile readers (report --profile and --html, convert --to
 * folded / speedscope / chrome / perfetto); `--no-demangle` turns it off.
 * With libiberty (Debian's libiberty-dev, found at build time):
 * cplus_demangle() in its automatic style, which reads the Itanium C++ ABI
 * (_Z...), Rust legacy (_ZN...17h<hash>E) and Rust v0 (_R...) manglings.
 * Without it, libstdc++'s __cxa_demangle (loaded with dlopen when first
 * needed): C++ only.  See docs/PROFILE-READING.md.
 */
#ifndef TB_CLI_DEMANGLE_H
#define TB_CLI_DEMANGLE_H

/* Off (0) for --no-demangle; on by default.  Set before the first cli_demangle(). */
void cli_demangle_set(int on);

/* The readable name of a mangled symbol, malloc'ed (free it), with its
 * parameter types as c++filt shows them; NULL when sym is not a mangled
 * name, demangling is off or not available, or memory ran out. */
char *cli_demangle(const char *sym);

/* What demangles: "libiberty (C++, Rust)", "libstdc++ __cxa_demangle (C++)",
 * "none" (and why), or "off (--no-demangle)". */
const char *cli_demangle_backend(void);

#endif
