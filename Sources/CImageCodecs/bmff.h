/* A walk over the top-level boxes of an ISO-BMFF file (AVIF, HEIF), used
   only to explain a failure the library reported: libheif calls a `meta`
   box cut short "No 'meta' box" and libavif a cut `mdat` "BMFF parsing
   failed", where the cause is the data ending early. Not part of the
   module's API; the libraries remain the judges of the data. */
#ifndef IMGWARM_BMFF_H
#define IMGWARM_BMFF_H
#include "internal.h"

/* Returns 1 and describes the box in reason when a top-level box claims
   more bytes than the data has left (or its header itself is cut). */
static inline int iw_bmff_cut_box(const uint8_t *data, size_t len, iw_result *out) {
    size_t pos = 0;
    while (pos < len) {
        size_t left = len - pos;
        if (left < 8) {
            iw_set_reason(out, "premature end of data in a box header at byte %zu", pos);
            return 1;
        }
        uint64_t size = iw_be32(data + pos);
        char type[5] = {0};
        for (int i = 0; i < 4; i++) {
            uint8_t c = data[pos + 4 + i];
            type[i] = (c >= 0x20 && c < 0x7F) ? (char)c : '?';
        }
        size_t header = 8;
        if (size == 1) {
            /* 64-bit largesize follows the type. */
            if (left < 16) {
                iw_set_reason(out, "premature end of data in the header of box '%s' at byte %zu", type, pos);
                return 1;
            }
            size = ((uint64_t)iw_be32(data + pos + 8) << 32) | iw_be32(data + pos + 12);
            header = 16;
        } else if (size == 0) {
            return 0; /* the box runs to the end of the file */
        }
        if (size < header) return 0; /* malformed, not a cut: the library said why */
        if (size > left) {
            iw_set_reason(out, "premature end of data in box '%s' at byte %zu (%llu bytes, %zu left)",
                          type, pos, (unsigned long long)size, left);
            return 1;
        }
        pos += (size_t)size;
    }
    return 0;
}
#endif
