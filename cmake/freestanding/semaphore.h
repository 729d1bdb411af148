/* SPDX-License-Identifier: MIT */
/* src/core/ is freestanding (CMakeLists.txt, docs/DESIGN.md "Source tree"):
 * it takes no lock, makes no system call and looks at no thread.  Code that
 * needs <semaphore.h> belongs in src/platform/ or a layer above it. */
#error "src/core/ may not include <semaphore.h>: move this code to src/platform/ or above"
