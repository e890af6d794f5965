/* Helpers shared by the validators; not part of the module's API. */
#ifndef IMGWARM_CODECS_INTERNAL_H
#define IMGWARM_CODECS_INTERNAL_H
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
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
