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
#include <sys/vfs.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <sys/random.h>
#include <pthread.h>
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
    out->device = (uint64_t)st.st_dev;
    out->inode = (uint64_t)st.st_ino;
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
            out->device = (uint64_t)makedev(sx.stx_dev_major, sx.stx_dev_minor);
            out->inode = (uint64_t)sx.stx_ino;
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
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOATIME | O_NOFOLLOW);
    return fd >= 0 ? fd : -errno;
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

int imgwarm_open_folder(const char *path) {
    int fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
    return fd >= 0 ? fd : -errno;
}

int imgwarm_open_unnamed(int dirfd, const char *dir) {
#ifdef O_TMPFILE
    return openat(dirfd, dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0644);
#else
    errno = EOPNOTSUPP;
    return -1;
#endif
}

int imgwarm_open_spill(int dirfd) {
#ifdef O_TMPFILE
    return openat(dirfd, ".", O_TMPFILE | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
#else
    errno = EOPNOTSUPP;
    return -1;
#endif
}

long imgwarm_fs_type(int fd) {
    struct statfs s;
    if (fstatfs(fd, &s) != 0) return 0;
    return (long)s.f_type;
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

int imgwarm_open_folder_at(int dirfd, const char *name, int listing) {
    /* O_NOFOLLOW on the last component; with O_PATH a symlink there would
     * be opened itself, and O_DIRECTORY turns that into ENOTDIR. */
    int flags = (listing ? O_RDONLY : O_PATH) | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
    int fd = openat(dirfd, name, flags);
    return fd >= 0 ? fd : -errno;
}

int imgwarm_identity(int fd, imgwarm_identity_t *out) {
    struct stat st;
    if (fstat(fd, &st) != 0) return errno;
    out->device = (uint64_t)st.st_dev;
    out->inode = (uint64_t)st.st_ino;
    out->owner = (uint32_t)st.st_uid;
    out->mode = (uint32_t)st.st_mode;
    out->links = (uint64_t)st.st_nlink;
    return 0;
}

int imgwarm_identity_at(int dirfd, const char *name, imgwarm_identity_t *out) {
    struct stat st;
    if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) return errno;
    out->device = (uint64_t)st.st_dev;
    out->inode = (uint64_t)st.st_ino;
    out->owner = (uint32_t)st.st_uid;
    out->mode = (uint32_t)st.st_mode;
    out->links = (uint64_t)st.st_nlink;
    return 0;
}

int imgwarm_open_file_at(int dirfd, const char *name, int noatime) {
    int flags = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | (noatime ? O_NOATIME : 0);
    int fd = openat(dirfd, name, flags);
    return fd >= 0 ? fd : -errno;
}

int imgwarm_touch_at(int dirfd, const char *name, int64_t atime_sec, int64_t atime_nsec, int64_t mtime_sec,
                     int64_t mtime_nsec, int layout_times) {
    struct timespec times[2];
    if (layout_times) {
        times[0].tv_sec = (time_t)atime_sec; times[0].tv_nsec = (long)atime_nsec;
        times[1].tv_sec = (time_t)mtime_sec; times[1].tv_nsec = (long)mtime_nsec;
    } else {
        times[0].tv_sec = 0; times[0].tv_nsec = UTIME_NOW;
        times[1].tv_sec = 0; times[1].tv_nsec = UTIME_OMIT;
    }
    return utimensat(dirfd, name, times, AT_SYMLINK_NOFOLLOW) == 0 ? 0 : errno;
}

/* SipHash-2-4 (Aumasson and Bernstein) of one 64-bit word under a key drawn
 * from getrandom once per process: temp names that another process cannot
 * predict from the ones it has seen, without a getrandom call per file. */
static uint64_t sip_key[2];
static pthread_once_t sip_once = PTHREAD_ONCE_INIT;

static void sip_init(void) {
    size_t got = 0;
    unsigned char *p = (unsigned char *)sip_key;
    while (got < sizeof sip_key) {
        ssize_t n = getrandom(p + got, sizeof sip_key - got, 0);
        if (n > 0) { got += (size_t)n; continue; }
        if (n < 0 && errno == EINTR) continue;
        /* No getrandom (a seccomp filter): /dev/urandom. */
        int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
        if (fd >= 0) {
            while (got < sizeof sip_key) {
                ssize_t m = read(fd, p + got, sizeof sip_key - got);
                if (m <= 0) break;
                got += (size_t)m;
            }
            close(fd);
        }
        break;
    }
}

#define ROTL(x, b) (uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))
#define SIPROUND do { \
    v0 += v1; v1 = ROTL(v1, 13); v1 ^= v0; v0 = ROTL(v0, 32); \
    v2 += v3; v3 = ROTL(v3, 16); v3 ^= v2; \
    v0 += v3; v3 = ROTL(v3, 21); v3 ^= v0; \
    v2 += v1; v1 = ROTL(v1, 17); v1 ^= v2; v2 = ROTL(v2, 32); } while (0)

uint64_t imgwarm_unpredictable(uint64_t counter) {
    pthread_once(&sip_once, sip_init);
    uint64_t k0 = sip_key[0], k1 = sip_key[1];
    uint64_t v0 = 0x736f6d6570736575ULL ^ k0, v1 = 0x646f72616e646f6dULL ^ k1;
    uint64_t v2 = 0x6c7967656e657261ULL ^ k0, v3 = 0x7465646279746573ULL ^ k1;
    uint64_t m = counter;
    v3 ^= m; SIPROUND; SIPROUND; v0 ^= m;
    uint64_t b = ((uint64_t)8) << 56;
    v3 ^= b; SIPROUND; SIPROUND; v0 ^= b;
    v2 ^= 0xff; SIPROUND; SIPROUND; SIPROUND; SIPROUND;
    return v0 ^ v1 ^ v2 ^ v3;
}
