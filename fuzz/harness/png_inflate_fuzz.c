/* libFuzzer entry point, differential: PNG/APNG validation with the fast
   inflate path (libdeflate deciding when it can, what iw_validate_png does)
   against zlib's reference path (IW_PNG_INFLATE_ZLIB), which must give the
   same status, size, frame count and reason on every input. Each input is
   judged as it is and again with every chunk's CRC made right, so that
   damage inside a zlib stream reaches both inflaters instead of stopping
   at the chunk's CRC check. A difference traps, with both verdicts on
   stderr. Written in C: it only calls the C codec. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include "imgwarm_codecs.h"

static uint32_t be32(const uint8_t *p) {
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void compare(const uint8_t *data, size_t size, const char *variant) {
    iw_result fast, ref;
    /* The image fuzzer's pixel limit: large enough for every seed, small
       enough that no input takes long. */
    const uint64_t max_pixels = 1u << 20;
    int fs = iw_validate_png_using(data, size, max_pixels, IW_PNG_INFLATE_FAST, &fast);
    int rs = iw_validate_png_using(data, size, max_pixels, IW_PNG_INFLATE_ZLIB, &ref);
    if (fs != rs || fast.width != ref.width || fast.height != ref.height || fast.frames != ref.frames ||
        strcmp(fast.reason, ref.reason) != 0) {
        fprintf(stderr, "png-inflate: fast and zlib paths differ (%s input):\n  fast: %d %ux%u %u frames \"%s\"\n"
                        "  zlib: %d %ux%u %u frames \"%s\"\n",
                variant, fs, fast.width, fast.height, fast.frames, fast.reason, rs, ref.width, ref.height, ref.frames,
                ref.reason);
        __builtin_trap();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    compare(data, size, "as is");
    uint8_t *fixed = (uint8_t *)malloc(size ? size : 1);
    if (!fixed) return 0;
    memcpy(fixed, data, size);
    for (size_t pos = 8; size >= 12 && pos <= size - 12;) {
        uint32_t n = be32(fixed + pos);
        if (n > size - pos - 12) break;
        uint32_t crc = (uint32_t)crc32(0, fixed + pos + 4, n + 4);
        for (int k = 0; k < 4; k++) fixed[pos + 8 + n + k] = (uint8_t)(crc >> (24 - 8 * k));
        pos += 12 + (size_t)n;
    }
    compare(fixed, size, "CRCs made right");
    free(fixed);
    return 0;
}
