/* Helpers shared by the three validators; not part of the module's API. */
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
#endif
