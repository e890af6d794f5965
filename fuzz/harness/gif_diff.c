/* gif-diff: iw_validate_gif (the LZW check without pixels, gif_validate.c)
   against giflib's own DGifGetLine decoding of every frame
   (Tests/CGifReference), on arbitrary input at two pixel limits. Any
   difference in status, width, height, frames or reason aborts with both
   verdicts printed: the fuzzer keeps the input. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "imgwarm_codecs.h"
#include "gif_reference.h"

static void compare(const uint8_t *data, size_t size) {
    /* The second limit makes the frame budget and the size refusals
       bite; the first lets frames of up to a million pixels decode. */
    static const uint64_t limits[] = {1000000, 2000};
    for (size_t i = 0; i < sizeof limits / sizeof limits[0]; i++) {
        iw_result got, want;
        int s = iw_validate_gif(data, size, limits[i], &got);
        int r = iwr_validate_gif_giflib(data, size, limits[i], &want);
        if (s != r || got.width != want.width || got.height != want.height || got.frames != want.frames ||
            strcmp(got.reason, want.reason) != 0) {
            fprintf(stderr, "gif-diff: verdicts differ at pixel limit %llu\n"
                            "  LZW check: %d %ux%u %u frames \"%s\"\n"
                            "  giflib:    %d %ux%u %u frames \"%s\"\n",
                    (unsigned long long)limits[i], s, got.width, got.height, got.frames, got.reason, r,
                    want.width, want.height, want.frames, want.reason);
            abort();
        }
    }
}

/* The input as the LZW data of a one-frame GIF, so that most mutations
   land in the codes: bytes 0-1 the frame's width and height (1-64), byte 2
   the LZW code size (0-11; over 8 is giflib's error), byte 3 the data block
   size (1-255) and, in its top bit, whether the empty block and trailer
   follow. */
static void compare_as_lzw(const uint8_t *data, size_t size) {
    if (size < 4) return;
    unsigned w = 1 + data[0] % 64, h = 1 + data[1] % 64, code_size = data[2] % 12;
    unsigned block = 1 + (data[3] & 0x7f) % 255, end = data[3] >> 7;
    const uint8_t *lzw = data + 4;
    size_t n = size - 4;
    uint8_t *gif = malloc(32 + n + n / block + 4);
    if (!gif) return;
    size_t k = 0;
    static const uint8_t head[] = {'G', 'I', 'F', '8', '9', 'a'};
    memcpy(gif, head, sizeof head);
    k = sizeof head;
    uint8_t screen[] = {(uint8_t)w, 0, (uint8_t)h, 0, 0x80, 0, 0, 0, 0, 0, 255, 255, 255};
    memcpy(gif + k, screen, sizeof screen);
    k += sizeof screen;
    uint8_t desc[] = {0x2C, 0, 0, 0, 0, (uint8_t)w, 0, (uint8_t)h, 0, 0, (uint8_t)code_size};
    memcpy(gif + k, desc, sizeof desc);
    k += sizeof desc;
    for (size_t i = 0; i < n; i += block) {
        size_t b = n - i < block ? n - i : block;
        gif[k++] = (uint8_t)b;
        memcpy(gif + k, lzw + i, b);
        k += b;
    }
    if (end) {
        gif[k++] = 0;
        gif[k++] = 0x3B;
    }
    compare(gif, k);
    free(gif);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    compare(data, size);
    compare_as_lzw(data, size);
    return 0;
}
