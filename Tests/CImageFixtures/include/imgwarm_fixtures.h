#ifndef IMGWARM_FIXTURES_H
#define IMGWARM_FIXTURES_H
/*
 * Test-only encoders: the decode tests make their images here, with the
 * same libraries real encoders use, instead of committing binary files.
 * Pixels are a deterministic function of (x, y, seed): same input, same
 * bytes. Every function returns 0 on success and fills *out (free it with
 * iwf_free); nothing is printed.
 */
#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint8_t *data;
    size_t len;
} iwf_buffer;

void iwf_free(iwf_buffer *buffer);

/* color_type as in PNG: 0 gray, 2 RGB, 3 palette, 4 gray+alpha, 6 RGBA.
   bit_depth 1/2/4/8 (gray, palette) or 8/16. trns: a tRNS chunk (palette
   alphas, or one transparent gray/RGB colour). */
int iwf_png(uint32_t width, uint32_t height, int color_type, int bit_depth,
            int interlaced, int trns, uint32_t seed, iwf_buffer *out);

/* An APNG: acTL + fcTL before the IDAT of frame 0, then fcTL + fdAT per
   further frame, every chunk with its CRC. */
int iwf_apng(uint32_t width, uint32_t height, uint32_t frames, iwf_buffer *out);

typedef enum {
    IWF_JPEG_BASELINE = 0,
    IWF_JPEG_PROGRESSIVE = 1,
    IWF_JPEG_GRAY = 2,
    IWF_JPEG_CMYK = 3,
    IWF_JPEG_YCCK = 4,
} iwf_jpeg_kind;

/* markers: also an EXIF APP1 and an ICC_PROFILE APP2 marker. */
int iwf_jpeg(uint32_t width, uint32_t height, int kind, int quality, int markers,
             uint32_t seed, iwf_buffer *out);

/* A smooth gradient, 4:4:4, quality 90 (large_fixtures.c): a 4000x4000
   progressive JPEG is a small file whose decoder needs 96 MB;
   progressive: 0 baseline, 1 libjpeg's simple progression (10 scans),
   2 the most scans libjpeg's encoder allows (2,112: large_fixtures.c). */
int iwf_jpeg_smooth(uint32_t width, uint32_t height, int progressive, iwf_buffer *out);

/* A 1x1 grey PNG with `chunks` zTXt (or, with itxt, compressed iTXt)
   chunks before its image data, each inflating to `inflated` zero bytes. */
int iwf_png_text_bomb(uint32_t chunks, uint32_t inflated, int itxt, iwf_buffer *out);

/* frames > 1 adds a NETSCAPE2.0 loop extension; frames after the first
   cover the centre quarter of the screen, or, with last_outside, the last
   one hangs past the screen's right and bottom edges. */
int iwf_gif(uint32_t width, uint32_t height, uint32_t frames, int last_outside,
            iwf_buffer *out);

/* Still WebP through libwebp's encoder: lossy (VP8, with an ALPH chunk
   when alpha) or lossless (VP8L). alpha: pixels with varying alpha. */
int iwf_webp(uint32_t width, uint32_t height, int lossless, int alpha, uint32_t seed, iwf_buffer *out);

/* Animated WebP through WebPAnimEncoder: `frames` distinct full-canvas
   frames, 100 ms each, looping. */
int iwf_webp_animated(uint32_t width, uint32_t height, uint32_t frames, int lossless, iwf_buffer *out);

/* The pixel value every encoder here uses: a gradient plus hash noise. */
uint8_t iwf_sample(uint32_t x, uint32_t y, uint32_t channel, uint32_t seed);

/* AVIF through libavif and aom (speed 10): frames > 1 makes an image
   sequence (`avis`, one track); alpha adds an alpha item or track. */
int iwf_avif(uint32_t width, uint32_t height, uint32_t frames, int alpha, iwf_buffer *out);

/* An AVIF grid: columns x rows AV1 tiles of tile_width x tile_height
   (4:2:0, 8 bits), the primary item a `grid` whose output is the whole
   canvas. */
int iwf_avif_grid(uint32_t tile_width, uint32_t tile_height, uint32_t columns, uint32_t rows, iwf_buffer *out);

/* HEIC through libheif and x265 (quality 50): one primary image, RGB or,
   with alpha, RGBA (an auxiliary alpha image). */
int iwf_heic(uint32_t width, uint32_t height, int alpha, iwf_buffer *out);

/* JPEG XL through libjxl (effort 3): a bare codestream, or with container
   the ISO-BMFF container; frames > 1 makes an animation. */
int iwf_jxl(uint32_t width, uint32_t height, uint32_t frames, int container, iwf_buffer *out);

/* The CRC-32 of PNG chunks (over type + data). */
uint32_t iwf_crc32(const uint8_t *data, size_t len);
#endif
