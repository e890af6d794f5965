#define _GNU_SOURCE
#include "imgwarm_fs.h"
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <sys/mman.h>
#include <errno.h>
#include <stdio.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static int64_t ns(int64_t sec, int64_t nsec) { return sec * 1000000000LL + nsec; }

/* Set once statx has failed with ENOSYS/EPERM: later calls go straight to
 * fstatat. A benign race: every thread computes the same value. */
static volatile int statx_unavailable = 0;

static int via_fstatat(int dirfd, const char *name, imgwarm_stat *out) {
    struct stat st;
    if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) return errno;
    out->mode = st.st_mode;
    out->has_btime = 0;
    out->size = st.st_size;
    out->blocks = st.st_blocks;
    out->atime_ns = ns(st.st_atim.tv_sec, st.st_atim.tv_nsec);
    out->mtime_ns = ns(st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
    out->ctime_ns = ns(st.st_ctim.tv_sec, st.st_ctim.tv_nsec);
    out->btime_ns = 0;
    return 0;
}

int imgwarm_statat(int dirfd, const char *name, imgwarm_stat *out) {
#ifdef STATX_BTIME
    if (!statx_unavailable) {
        struct statx sx;
        /* AT_STATX_DONT_SYNC: on network filesystems, take the cached
         * attributes rather than a round trip per file. */
        if (statx(dirfd, name, AT_SYMLINK_NOFOLLOW | AT_STATX_DONT_SYNC,
                  STATX_BASIC_STATS | STATX_BTIME, &sx) == 0) {
            out->mode = sx.stx_mode;
            out->has_btime = (sx.stx_mask & STATX_BTIME) ? 1 : 0;
            out->size = (int64_t)sx.stx_size;
            out->blocks = (int64_t)sx.stx_blocks;
            out->atime_ns = ns(sx.stx_atime.tv_sec, sx.stx_atime.tv_nsec);
            out->mtime_ns = ns(sx.stx_mtime.tv_sec, sx.stx_mtime.tv_nsec);
            out->ctime_ns = ns(sx.stx_ctime.tv_sec, sx.stx_ctime.tv_nsec);
            out->btime_ns = out->has_btime ? ns(sx.stx_btime.tv_sec, sx.stx_btime.tv_nsec) : 0;
            return 0;
        }
        if (errno != ENOSYS && errno != EPERM) return errno;
        statx_unavailable = 1;
    }
#endif
    return via_fstatat(dirfd, name, out);
}

long imgwarm_getdents(int fd, void *buffer, unsigned long size) {
    long n = syscall(SYS_getdents64, fd, buffer, size);
    return n < 0 ? -(long)errno : n;
}

int imgwarm_open_noatime(const char *path) {
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOATIME);
    return fd >= 0 ? fd : -errno;
}

int imgwarm_renew_atime(const char *path) {
    struct timespec times[2] = {{0, UTIME_NOW}, {0, UTIME_OMIT}};
    return utimensat(AT_FDCWD, path, times, 0) == 0 ? 0 : errno;
}

int imgwarm_set_atime(int fd, int64_t sec, int64_t nsec) {
    struct timespec times[2] = {{(time_t)sec, (long)nsec}, {0, UTIME_OMIT}};
    return futimens(fd, times) == 0 ? 0 : errno;
}

void *imgwarm_map_grow(void *old, size_t old_size, size_t new_size) {
    void *p = old == NULL
        ? mmap(NULL, new_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
        : mremap(old, old_size, new_size, MREMAP_MAYMOVE);
    return p == MAP_FAILED ? NULL : p;
}

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif

int imgwarm_renameat_noreplace(int from_dir, const char *from, int to_dir, const char *to) {
#ifdef SYS_renameat2
    if (syscall(SYS_renameat2, from_dir, from, to_dir, to, RENAME_NOREPLACE) == 0) return 0;
    /* EINVAL: this filesystem has no RENAME_NOREPLACE; ENOSYS/EPERM: an
     * old kernel or a seccomp filter. Anything else is the answer. */
    if (errno != EINVAL && errno != ENOSYS && errno != EPERM) return errno;
#endif
    if (linkat(from_dir, from, to_dir, to, 0) != 0) return errno;
    unlinkat(from_dir, from, 0);
    return 0;
}

int imgwarm_open_folder(const char *path) {
    int fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
    return fd >= 0 ? fd : -errno;
}

int imgwarm_rename_noreplace(const char *from, const char *to) {
    return imgwarm_renameat_noreplace(AT_FDCWD, from, AT_FDCWD, to);
}

int imgwarm_open_unnamed(int dirfd, const char *dir) {
#ifdef O_TMPFILE
    return openat(dirfd, dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0644);
#else
    errno = EOPNOTSUPP;
    return -1;
#endif
}

/* Set once the kernel has refused AT_EMPTY_PATH and /proc worked: later
 * links go straight there. A benign race: every thread computes the same
 * value. */
static volatile int empty_path_refused = 0;

int imgwarm_link_unnamed(int fd, int dirfd, const char *name) {
    if (!empty_path_refused) {
        if (linkat(fd, "", dirfd, name, AT_EMPTY_PATH) == 0) return 0;
        if (errno == EEXIST) return EEXIST;
    }
    char proc[40];
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
    if (linkat(AT_FDCWD, proc, dirfd, name, AT_SYMLINK_FOLLOW) != 0) return errno;
    empty_path_refused = 1;
    return 0;
}

int imgwarm_malloc_trim(void) {
#if defined(__GLIBC__)
    return malloc_trim(0);
#else
    return 0;
#endif
}

int imgwarm_malloc_thresholds(int mmap_threshold, int trim_threshold) {
#if defined(__GLIBC__)
    return mallopt(M_MMAP_THRESHOLD, mmap_threshold) == 1 && mallopt(M_TRIM_THRESHOLD, trim_threshold) == 1;
#else
    (void)mmap_threshold;
    (void)trim_threshold;
    return 0;
#endif
}
