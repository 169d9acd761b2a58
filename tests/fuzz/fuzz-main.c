/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Seed replayer: links with one fuzz target in place of libFuzzer, so that a
 * plain gcc build runs every seed of its corpus in "make check" (systemd's
 * fuzz-main.c). A failed assertion or a crash fails the test. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz.h"

#define SEED_SIZE_MAX (1024 * 1024)
#define SEEDS_MAX 4096

/* Reads PATH (relative to DIRFD) whole and feeds it to the target: 0, or -1
 * with the reason on stderr. */
static int seed_run(int dirfd, const char *path, const char *shown) {
        static char buf[SEED_SIZE_MAX + 1];
        size_t len = 0;
        ssize_t n;
        int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY);

        if (fd < 0) {
                fprintf(stderr, "%s: %s\n", shown, strerror(errno));
                return -1;
        }
        while ((n = read(fd, buf + len, sizeof buf - len)) > 0)
                len += (size_t) n;
        (void) close(fd);
        if (n < 0 || len > SEED_SIZE_MAX) {
                fprintf(stderr, "%s: %s\n", shown, n < 0 ? strerror(errno) : "larger than 1 MiB");
                return -1;
        }
        /* A private copy of the exact size, so ASan/valgrind see overreads. */
        uint8_t *data = malloc(len ? len : 1);
        if (!data) {
                fprintf(stderr, "%s: out of memory\n", shown);
                return -1;
        }
        memcpy(data, buf, len);
        (void) LLVMFuzzerTestOneInput(data, len);
        free(data);
        return 0;
}

static int name_compare(const void *a, const void *b) {
        return strcmp(*(char *const *) a, *(char *const *) b);
}

/* Runs every regular file of directory PATH, in name order. Returns the
 * number run, or -1. */
static int dir_run(const char *path) {
        static char *names[SEEDS_MAX];
        size_t n = 0;
        struct dirent *de;
        int ran = 0, failed = 0;
        DIR *d = opendir(path);

        if (!d) {
                fprintf(stderr, "%s: %s\n", path, strerror(errno));
                return -1;
        }
        while ((de = readdir(d))) {
                struct stat st;
                if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
                    !S_ISREG(st.st_mode))
                        continue;
                if (n == SEEDS_MAX || !(names[n] = strdup(de->d_name))) {
                        fprintf(stderr, "%s: more than %d seeds, or out of memory\n", path,
                                SEEDS_MAX);
                        failed = 1;
                        break;
                }
                n++;
        }
        qsort(names, n, sizeof names[0], name_compare);
        for (size_t i = 0; i < n; i++) {
                char shown[4096];
                (void) snprintf(shown, sizeof shown, "%s/%s", path, names[i]);
                if (!failed) {
                        if (seed_run(dirfd(d), names[i], shown) < 0)
                                failed = 1;
                        else
                                ran++;
                }
                free(names[i]);
        }
        (void) closedir(d);
        return failed ? -1 : ran;
}

/* Arguments: seed files or corpus directories. None: the corpus named after
 * this program in $FUZZ_CORPUS (what "make check" sets). */
int main(int argc, char **argv) {
        const char *name = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
        static char dir[4096];
        char *corpus_argv[] = { argv[0], dir, NULL };
        int total = 0;

        if (strncmp(name, "lt-", 3) == 0) /* libtool's wrapper */
                name += 3;
        if (argc < 2) {
                const char *corpus = getenv("FUZZ_CORPUS");
                if (!corpus) {
                        fprintf(stderr, "usage: %s SEED|DIR... (or set FUZZ_CORPUS)\n", name);
                        return 2;
                }
                (void) snprintf(dir, sizeof dir, "%s/%s", corpus, name);
                argv = corpus_argv;
                argc = 2;
        }
        for (int i = 1; i < argc; i++) {
                struct stat st;
                int r;
                if (stat(argv[i], &st) < 0) {
                        fprintf(stderr, "%s: %s\n", argv[i], strerror(errno));
                        return 1;
                }
                if (S_ISDIR(st.st_mode))
                        r = dir_run(argv[i]);
                else
                        r = seed_run(AT_FDCWD, argv[i], argv[i]) < 0 ? -1 : 1;
                if (r < 0)
                        return 1;
                total += r;
        }
        if (total == 0) {
                fprintf(stderr, "%s: no seed found\n", name);
                return 1;
        }
        printf("%s: %d seeds pass\n", name, total);
        return 0;
}
