/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What every fuzz target shares: the libFuzzer entry point, built either with
 * clang's libFuzzer ("make fuzz") or with fuzz-main.c's seed replayer ("make
 * check"). Calls with effects stay outside assert(): it only checks. */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* The asserts are the fuzzers' oracle: a build that compiles them out would
 * pass every input. */
#ifdef NDEBUG
#error "the fuzz targets need assert(): do not build them with NDEBUG"
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
