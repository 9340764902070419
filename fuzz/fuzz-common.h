/* fuzz-common.h: what every fuzz target shares.
 *
 * Each target defines LLVMFuzzerTestOneInput(). Built with -Dfuzzing=true
 * (clang) it links libFuzzer; otherwise fuzz-replay.c supplies a main()
 * that feeds it the files named on its command line, so that the seed
 * corpus and every input that once crashed run in the ordinary test suite.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <tessera/tessera.h>

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerInitialize (int *argc, char ***argv);
int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

/* The lock file type of a resource type from the plugins. */
GType fuzz_lock_file_type (const char *resource_type);
/* A NUL-terminated copy of the input. */
char *fuzz_strndup (const uint8_t *data, size_t size);
/* Quiets warnings about the bad input, which are expected by the thousand. */
void  fuzz_quiet (void);
/* fuzz_quiet(), and the three plugins loaded so that every input reaches
 * their classes. */
void  fuzz_load_plugins (void);
