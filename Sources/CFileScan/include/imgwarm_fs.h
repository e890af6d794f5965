#ifndef IMGWARM_FS_H
#define IMGWARM_FS_H
/* The Linux and glibc calls imgwarm needs that Swift's Glibc module does not
 * import (_GNU_SOURCE-only or in <malloc.h>): getdents64, to read a directory
 * in large batches; statx, for birth times; O_NOATIME opens; mremap; O_PATH
 * folder opens; O_TMPFILE; mallopt. Kept to plain data so that no errno or variadic call
 * has to cross into Swift. */
#include <stddef.h>
#include <stdint.h>

/* What the walker needs of one file; times in nanoseconds since the epoch. */
typedef struct {
    uint32_t mode;        /* st_mode (type and permission bits) */
    uint32_t has_btime;   /* 1 when the filesystem reported a birth time */
    int64_t size;         /* logical length */
    int64_t blocks;       /* 512-byte blocks allocated */
    int64_t atime_ns;
    int64_t mtime_ns;
    int64_t ctime_ns;
    int64_t btime_ns;     /* 0 unless has_btime */
    uint64_t device;      /* st_dev and st_ino: which file this is */
    uint64_t inode;
} imgwarm_stat;

/* statx(dirfd, name, AT_SYMLINK_NOFOLLOW) into `out`; falls back to
 * fstatat (no birth time) where statx is missing or filtered (old kernels,
 * strict seccomp profiles). Returns 0, or the errno value. */
int imgwarm_statat(int dirfd, const char *name, imgwarm_stat *out);

/* open(path, O_RDONLY | O_CLOEXEC | O_NOATIME | O_NOFOLLOW): a symbolic link
 * at the path is refused (ELOOP), never read through; reading the file leaves
 * its access time alone, which SDWebImage's default expiry (access date)
 * depends on. O_NOATIME is _GNU_SOURCE-only. The kernel allows it only to the
 * file's owner (or CAP_FOWNER) and answers EPERM otherwise. Returns the fd,
 * or -errno. */
int imgwarm_open_noatime(const char *path);

/* futimens(fd, {atime, UTIME_OMIT}): puts an access time back. Returns 0,
 * or the errno value. */
int imgwarm_set_atime(int fd, int64_t sec, int64_t nsec);

/* getdents64 on an open directory: bytes read, 0 at the end, or -errno. */
long imgwarm_getdents(int fd, void *buffer, unsigned long size);

/* Fields of one `struct linux_dirent64` record inside a getdents buffer
 * (d_ino u64, d_off s64, d_reclen u16, d_type u8, d_name[]). */
static inline unsigned short imgwarm_dirent_reclen(const void *record) {
    return *(const unsigned short *)((const char *)record + 16);
}
static inline unsigned char imgwarm_dirent_type(const void *record) {
    return *((const unsigned char *)record + 18);
}
static inline const char *imgwarm_dirent_name(const void *record) {
    return (const char *)record + 19;
}

/* An anonymous private mapping of `new_size` bytes holding the first
 * `old_size` bytes of `old` (NULL: a new mapping). Grows with mremap, which
 * moves pages instead of copying them, so the old and new arrays never take
 * memory at once. Returns NULL on failure (`old` is then left as it was).
 * mremap is variadic in C, which Swift cannot call. */
void *imgwarm_map_grow(void *old, size_t old_size, size_t new_size);

/* open(path, O_PATH | O_DIRECTORY | O_CLOEXEC): a folder descriptor for the
 * *at calls, needing no read permission on the folder (O_PATH is
 * _GNU_SOURCE-only). Returns the fd, or -errno. */
int imgwarm_open_folder(const char *path);

/* An unnamed file in a folder (openat with O_TMPFILE; `dir` relative to
 * `dirfd`, "." for the folder `dirfd` itself), mode 0644 less the umask:
 * no name exists until imgwarm_link_unnamed gives it one, so no reader
 * sees it half written, and it vanishes if the process dies. Returns the
 * descriptor, or -1 with errno: EOPNOTSUPP, EISDIR or EINVAL when the
 * filesystem or kernel has no unnamed files. */
int imgwarm_open_unnamed(int dirfd, const char *dir);

/* Gives the unnamed file `fd` the name `name` (relative to `dirfd`):
 * linkat by descriptor (AT_EMPTY_PATH: Linux 6.10 or later for a file the
 * caller opened, or CAP_DAC_READ_SEARCH), else through /proc/self/fd as
 * open(2) describes for O_TMPFILE, a path walk that costs about what a
 * rename does. One directory operation: a new name, never replacing one.
 * Returns 0, or the errno value: EEXIST when the name exists (it is left
 * as it is), ENOENT also when /proc is not mounted. */
int imgwarm_link_unnamed(int fd, int dirfd, const char *name);

/* A body's spill file in the folder `dirfd` (openat ".", O_TMPFILE | O_EXCL
 * | O_RDWR, mode 0600): unnamed, and O_EXCL keeps it from ever being linked
 * in; it goes when its last descriptor closes. -1 with errno (EOPNOTSUPP,
 * EISDIR or EINVAL where the filesystem has no O_TMPFILE). */
int imgwarm_open_spill(int dirfd);

/* fstatfs's f_type of the filesystem holding `fd`; 0 when unknown. */
long imgwarm_fs_type(int fd);

/* glibc's mallopt(M_MMAP_THRESHOLD) and mallopt(M_TRIM_THRESHOLD), which
 * <malloc.h> declares and Swift's Glibc module does not import. Returns 1
 * when both were taken; 0 elsewhere (another C library). */
int imgwarm_malloc_thresholds(int mmap_threshold, int trim_threshold);
/* malloc_trim(0): gives the free memory of every heap (each thread's arena
   too) back to the kernel. 0 where glibc's allocator is not in use. */
int imgwarm_malloc_trim(void);

/* A folder opened relative to `dirfd` (AT_FDCWD: `name` is a path) with
 * O_DIRECTORY | O_NOFOLLOW: a symbolic link as the last component is
 * refused (ELOOP, or ENOTDIR with O_PATH), never followed. `listing`: 1
 * opens it for reading (getdents), 0 with O_PATH (enough for the *at calls,
 * needing no read permission). Returns the fd, or -errno. */
int imgwarm_open_folder_at(int dirfd, const char *name, int listing);

/* What a file or folder is, for the checks that compare a folder with the
 * one listed earlier (device and inode) and judge who may change it. */
typedef struct {
    uint64_t device;
    uint64_t inode;
    uint64_t links;
    uint32_t owner;
    uint32_t mode;
} imgwarm_identity_t;

/* fstat(fd) into `out`. Returns 0, or the errno value. */
int imgwarm_identity(int fd, imgwarm_identity_t *out);

/* fstatat(dirfd, name, AT_SYMLINK_NOFOLLOW) into `out`: a symbolic link
 * is described, not followed. Returns 0, or the errno value. */
int imgwarm_identity_at(int dirfd, const char *name, imgwarm_identity_t *out);

/* openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK), with O_NOATIME
 * when `noatime`: a symbolic link at the name is refused (ELOOP), and a
 * FIFO does not block the open. Returns the fd, or -errno. */
int imgwarm_open_file_at(int dirfd, const char *name, int noatime);

/* utimensat(dirfd, name, AT_SYMLINK_NOFOLLOW): the given access and
 * modification times when `layout_times`, else access now and modification
 * left alone (a disk hit as SDWebImage renews it). Returns 0, or errno. */
int imgwarm_touch_at(int dirfd, const char *name, int64_t atime_sec, int64_t atime_nsec, int64_t mtime_sec,
                     int64_t mtime_nsec, int layout_times);

/* 64 bits no other process can predict (SipHash-2-4 of `counter` under a
 * key drawn once per process from getrandom): the unpredictable part of a
 * temp file's name. */
uint64_t imgwarm_unpredictable(uint64_t counter);

/* d_type values (from <dirent.h>, which Swift imports without them on some
 * toolchains). */
enum { IMGWARM_DT_UNKNOWN = 0, IMGWARM_DT_FIFO = 1, IMGWARM_DT_CHR = 2, IMGWARM_DT_DIR = 4, IMGWARM_DT_BLK = 6,
       IMGWARM_DT_REG = 8, IMGWARM_DT_LNK = 10, IMGWARM_DT_SOCK = 12 };

#endif
