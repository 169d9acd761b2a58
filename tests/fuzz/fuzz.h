/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the fuzz targets share: the libFuzzer entry point, built either with
 * clang's libFuzzer ("make fuzz") or with fuzz-main.c's seed replayer ("make
 * check"), and the input in a memfd for the parsers that read a file
 * descriptor. Calls with effects stay outside assert(): it only checks. */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

/* The asserts are the fuzzers' oracle: a build that compiles them out would
 * pass every input. */
#ifdef NDEBUG
#error "the fuzz targets need assert(): do not build them with NDEBUG"
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A memfd named NAME that holds the SIZE bytes of DATA, for a target whose
 * parser reads a file descriptor; the caller seeks it and closes it. -1
 * when it cannot be made or written: the input is passed over. */
static inline int fuzz_memfd(const char *name, const uint8_t *data, size_t size) {
        int fd = memfd_create(name, MFD_CLOEXEC);

        if (fd < 0)
                return -1;
        for (size_t off = 0; off < size;) {
                ssize_t n = write(fd, data + off, size - off);
                if (n <= 0) {
                        (void) close(fd);
                        return -1;
                }
                off += (size_t) n;
        }
        return fd;
}
