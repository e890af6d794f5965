/* The heap's peak, for the decode-memory fuzz target: malloc, calloc,
   realloc, free and the aligned allocators defined here, forwarding to
   glibc's own (__libc_malloc and the like), so every allocation of the
   decoders, libraries included, is counted (glibc 2.36 has no
   __malloc_hook). Only the calling thread's allocations count while it
   tracks (iw_peak_begin .. iw_peak_end); sizes are malloc_usable_size,
   what the heap really hands out. Built without ASan, whose allocator
   would take these names. */
#include <malloc.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);
extern void *__libc_memalign(size_t, size_t);

static _Thread_local int tracking;
static _Thread_local int64_t live, peak;

static void counted(void *p, int sign) {
    if (!tracking || !p) return;
    live += sign * (int64_t)malloc_usable_size(p);
    if (live > peak) peak = live;
}

void *malloc(size_t n) {
    void *p = __libc_malloc(n);
    counted(p, 1);
    return p;
}
void *calloc(size_t a, size_t b) {
    void *p = __libc_calloc(a, b);
    counted(p, 1);
    return p;
}
void *realloc(void *old, size_t n) {
    counted(old, -1);
    void *p = __libc_realloc(old, n);
    counted(p ? p : old, 1);
    return p;
}
void free(void *p) {
    counted(p, -1);
    __libc_free(p);
}
void *memalign(size_t align, size_t n) {
    void *p = __libc_memalign(align, n);
    counted(p, 1);
    return p;
}
void *aligned_alloc(size_t align, size_t n) { return memalign(align, n); }
int posix_memalign(void **out, size_t align, size_t n) {
    void *p = memalign(align, n);
    if (!p) return 12; /* ENOMEM */
    *out = p;
    return 0;
}

void iw_peak_begin(void) {
    live = 0;
    peak = 0;
    tracking = 1;
}

/* The most the thread held at once since iw_peak_begin (frees of memory
   allocated before it count as negative). */
uint64_t iw_peak_end(void) {
    tracking = 0;
    return peak > 0 ? (uint64_t)peak : 0;
}
