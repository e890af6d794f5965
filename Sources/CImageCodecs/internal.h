/* Helpers shared by the validators; not part of the module's API. */
#ifndef IMGWARM_CODECS_INTERNAL_H
#define IMGWARM_CODECS_INTERNAL_H
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "imgwarm_codecs.h"

/* Writes a one-line reason into the result (later calls overwrite). */
static inline void iw_set_reason(iw_result *out, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out->reason, sizeof out->reason, fmt, ap);
    va_end(ap);
    /* A reason is printed as `PATH: reason`: keep it on one line. */
    for (char *p = out->reason; *p; p++) {
        if (*p == '\n' || *p == '\r') *p = ' ';
    }
}

static inline void iw_reset(iw_result *out) {
    memset(out, 0, sizeof *out);
}

static inline uint32_t iw_be32(const uint8_t *p) {
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

static inline int iw_exceeds(uint64_t width, uint64_t height, uint64_t max_pixels) {
    /* width and height are at most 32 bits each: the product fits. */
    return width * height > max_pixels;
}

/* ---- the bounds of the current decode (iw_set_thread_limits) ---------- */

typedef struct {
    uint64_t memory;       /* the image's share of the budget; 0: none */
    uint64_t deadline_ns;  /* thread CPU time to stop at; 0: none */
    uint32_t calls;        /* iw_out_of_time calls, to read the clock less often */
} iw_thread_limits;
extern _Thread_local iw_thread_limits iw_limits_now;

static inline uint64_t iw_thread_cpu_ns(void) {
    struct timespec t;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t) != 0) return 0;
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* True once the decode has used its CPU time. Called between scans, rows,
   frames and tiles; the clock (a system call for a thread's CPU time) is
   read on every `every`-th call only, so a row loop pays little for it. */
static inline int iw_out_of_time_every(uint32_t every) {
    if (iw_limits_now.deadline_ns == 0) return 0;
    if (every > 1 && ++iw_limits_now.calls % every != 0) return 0;
    return iw_thread_cpu_ns() >= iw_limits_now.deadline_ns;
}
static inline int iw_out_of_time(void) { return iw_out_of_time_every(1); }

/* IW_OVER_MEMORY with a reason when an image of width x height, as its
   decoder reports it, needs more than the image's share; `what` names
   where the size comes from ("the AV1 sequence header"). */
static inline int iw_over_memory_share(iw_codec_library codec, uint64_t width, uint64_t height, int alpha, int deep,
                                       const char *what, iw_result *out) {
    if (iw_limits_now.memory == 0) return IW_OK;
    uint64_t need = iw_planes_memory(codec, width * height, alpha, deep);
    if (need <= iw_limits_now.memory) return IW_OK;
    out->width = (uint32_t)width;
    out->height = (uint32_t)height;
    iw_set_reason(out, "%llux%llu by %s needs an estimated %llu bytes to decode, more than the %llu of its share of the decode memory budget",
                  (unsigned long long)width, (unsigned long long)height, what, (unsigned long long)need,
                  (unsigned long long)iw_limits_now.memory);
    return IW_OVER_MEMORY;
}

/* Animation bombs: a small file can hold many canvas-sized frames (LZW,
   VP8 and deflate all pack thousands of pixels in a byte) and cost seconds
   of CPU per megabyte. The frames of one animation (GIF, WebP, APNG) may
   add up to this many times max_pixels: a 500x500 animation of 4000 frames
   stays under it at the default limit. */
#define IW_FRAME_PIXEL_BUDGET_FACTOR 10u

/* Adds a frame's pixels to *total; true (with the reason set) when the
   animation's frames now pass the budget. */
static inline int iw_frames_over_budget(uint64_t *total, uint64_t frame_pixels, uint64_t max_pixels,
                                        uint32_t frame, iw_result *out) {
    uint64_t budget = max_pixels > UINT64_MAX / IW_FRAME_PIXEL_BUDGET_FACTOR
                          ? UINT64_MAX : max_pixels * IW_FRAME_PIXEL_BUDGET_FACTOR;
    *total += frame_pixels;
    if (*total <= budget) return 0;
    iw_set_reason(out, "frames add up to more than %u times the pixel limit of %llu (%llu pixels by frame %u)",
                  IW_FRAME_PIXEL_BUDGET_FACTOR, (unsigned long long)max_pixels,
                  (unsigned long long)*total, frame);
    return 1;
}
#endif
