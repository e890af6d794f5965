#!/usr/bin/env bash
# CPU seconds of the ways to create 20,000 small files (10 KB each) in one
# folder, as the cache store and curl's tool do: what imgwarm's atomic
# write (an unnamed O_TMPFILE file, then linkat) costs against a plain
# open/write/close. Usage: bench/atomic-write-cost.sh [FOLDER (tmpfs: /dev/shm)] [ROUNDS]
set -euo pipefail
dir="${1:-/dev/shm}/atomic-write-cost.$$"
rounds="${2:-3}"
work="$(mktemp -d)"
trap 'rm -rf "$work" "$dir"' EXIT
cat > "$work/w.c" <<'C'
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
static double cpu(void) {
    struct rusage r; getrusage(RUSAGE_SELF, &r);
    return r.ru_utime.tv_sec + r.ru_stime.tv_sec + (r.ru_utime.tv_usec + r.ru_stime.tv_usec) / 1e6;
}
int main(int argc, char **argv) {
    int mode = atoi(argv[1]), n = 20000, d = open(argv[2], O_DIRECTORY | O_RDONLY);
    static char buf[10240]; memset(buf, 7, sizeof buf);
    char name[64], other[64];
    double start = cpu();
    for (int i = 0; i < n; i++) {
        snprintf(name, sizeof name, "f%06d.png", i);
        int fd;
        switch (mode) {
        case 0: /* curl's tool: the final name at once */
            fd = openat(d, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
            if (fd < 0 || write(fd, buf, sizeof buf) < 0) return 1;
            close(fd); break;
        case 1: /* imgwarm: unnamed file, linked by descriptor (root, or Linux 6.10+) */
        case 2: /* imgwarm: unnamed file, linked through /proc/self/fd (others) */
            fd = openat(d, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0644);
            if (fd < 0 || write(fd, buf, sizeof buf) < 0) return 1;
            if (mode == 1) { if (linkat(fd, "", d, name, AT_EMPTY_PATH) != 0) return 2; }
            else { snprintf(other, sizeof other, "/proc/self/fd/%d", fd);
                   if (linkat(AT_FDCWD, other, d, name, AT_SYMLINK_FOLLOW) != 0) return 2; }
            close(fd); break;
        default: /* a named temp file, then renameat2 without replacing */
            snprintf(other, sizeof other, ".tmp%06d", i);
            fd = openat(d, other, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
            if (fd < 0 || write(fd, buf, sizeof buf) < 0) return 1;
            close(fd);
            if (renameat2(d, other, d, name, RENAME_NOREPLACE) != 0) return 3;
        }
    }
    printf("%.3f\n", cpu() - start);
    return 0;
}
C
cc -O2 -o "$work/w" "$work/w.c"
labels=("open, write, close (curl's tool)" "O_TMPFILE, write, linkat by descriptor" "O_TMPFILE, write, linkat through /proc/self/fd" "named temp, write, close, renameat2")
for r in $(seq "$rounds"); do
  for m in 0 1 2 3; do
    rm -rf "$dir"; mkdir -p "$dir"
    printf 'round %s  %-48s %s CPU-s\n' "$r" "${labels[$m]}" "$("$work/w" "$m" "$dir")"
  done
done
