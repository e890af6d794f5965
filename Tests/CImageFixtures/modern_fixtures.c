/* Test-only encoders for AVIF (libavif with aom), HEIC (libheif with x265)
   and JPEG XL (libjxl): the same libraries the validators decode with
   carry encoders in Debian, so the tests make their images here. */
#include <avif/avif.h>
#include <jxl/encode.h>
#include <libheif/heif.h>
#include <stdlib.h>
#include <string.h>
#include "imgwarm_fixtures.h"

static int iwf_take(const uint8_t *data, size_t len, iwf_buffer *out) {
    out->data = (uint8_t *)malloc(len ? len : 1);
    if (!out->data) return 1;
    memcpy(out->data, data, len);
    out->len = len;
    return 0;
}

/* MARK: AVIF */

int iwf_avif(uint32_t width, uint32_t height, uint32_t frames, int alpha, iwf_buffer *out) {
    memset(out, 0, sizeof *out);
    avifEncoder *encoder = avifEncoderCreate();
    avifImage *image = avifImageCreate(width, height, 8, AVIF_PIXEL_FORMAT_YUV420);
    avifRWData output = AVIF_DATA_EMPTY;
    int rc = 1;
    if (!encoder || !image) goto done;
    encoder->codecChoice = AVIF_CODEC_CHOICE_AOM;
    encoder->speed = AVIF_SPEED_FASTEST;
    encoder->maxThreads = 1;
    encoder->timescale = 10;
    /* Fixed quantizers: with libavif's defaults, Debian's libaom (built
       with assertions) aborts in its rate control on longer sequences of
       small frames (ratectrl.c: `q <= rc->worst_quality`). */
    encoder->minQuantizer = 20;
    encoder->maxQuantizer = 20;
    encoder->minQuantizerAlpha = 20;
    encoder->maxQuantizerAlpha = 20;
    avifImageAllocatePlanes(image, alpha ? AVIF_PLANES_ALL : AVIF_PLANES_YUV);
    for (uint32_t f = 0; f < frames; f++) {
        for (uint32_t plane = 0; plane < 3; plane++) {
            /* 4:2:0: chroma planes are half size, rounded up. */
            uint32_t pw = plane ? (width + 1) / 2 : width, ph = plane ? (height + 1) / 2 : height;
            for (uint32_t y = 0; y < ph; y++)
                for (uint32_t x = 0; x < pw; x++)
                    image->yuvPlanes[plane][y * image->yuvRowBytes[plane] + x] = iwf_sample(x, y, plane, f);
        }
        if (alpha)
            for (uint32_t y = 0; y < height; y++)
                for (uint32_t x = 0; x < width; x++)
                    image->alphaPlane[y * image->alphaRowBytes + x] = (uint8_t)(255 - ((x + y + f) & 63));
        avifAddImageFlags flags = frames == 1 ? AVIF_ADD_IMAGE_FLAG_SINGLE : AVIF_ADD_IMAGE_FLAG_NONE;
        if (avifEncoderAddImage(encoder, image, 1, flags) != AVIF_RESULT_OK) goto done;
    }
    if (avifEncoderFinish(encoder, &output) != AVIF_RESULT_OK) goto done;
    rc = iwf_take(output.data, output.size, out);
done:
    avifRWDataFree(&output);
    if (image) avifImageDestroy(image);
    if (encoder) avifEncoderDestroy(encoder);
    return rc;
}

/* A grid image (ISO/IEC 23008-12 6.6.2.3): columns x rows tiles of
   tile_width x tile_height, each its own AV1 item, through libavif's
   avifEncoderAddImageGrid (libavif writes the grid item's data in `idat`
   and an `ispe` of the whole canvas for it). */
int iwf_avif_grid(uint32_t tile_width, uint32_t tile_height, uint32_t columns, uint32_t rows, iwf_buffer *out) {
    memset(out, 0, sizeof *out);
    uint32_t count = columns * rows;
    avifEncoder *encoder = avifEncoderCreate();
    avifImage **tiles = (avifImage **)calloc(count ? count : 1, sizeof *tiles);
    avifRWData output = AVIF_DATA_EMPTY;
    int rc = 1;
    if (!encoder || !tiles || count == 0) goto done;
    encoder->codecChoice = AVIF_CODEC_CHOICE_AOM;
    encoder->speed = AVIF_SPEED_FASTEST;
    encoder->maxThreads = 1;
    encoder->minQuantizer = 20;
    encoder->maxQuantizer = 20;
    for (uint32_t t = 0; t < count; t++) {
        avifImage *tile = avifImageCreate(tile_width, tile_height, 8, AVIF_PIXEL_FORMAT_YUV420);
        if (!tile) goto done;
        tiles[t] = tile;
        avifImageAllocatePlanes(tile, AVIF_PLANES_YUV);
        for (uint32_t plane = 0; plane < 3; plane++) {
            uint32_t pw = plane ? (tile_width + 1) / 2 : tile_width, ph = plane ? (tile_height + 1) / 2 : tile_height;
            for (uint32_t y = 0; y < ph; y++)
                for (uint32_t x = 0; x < pw; x++)
                    tile->yuvPlanes[plane][y * tile->yuvRowBytes[plane] + x] = iwf_sample(x, y, plane, t);
        }
    }
    if (avifEncoderAddImageGrid(encoder, columns, rows, (const avifImage *const *)tiles, AVIF_ADD_IMAGE_FLAG_SINGLE) !=
        AVIF_RESULT_OK)
        goto done;
    if (avifEncoderFinish(encoder, &output) != AVIF_RESULT_OK) goto done;
    rc = iwf_take(output.data, output.size, out);
done:
    avifRWDataFree(&output);
    if (tiles)
        for (uint32_t t = 0; t < count; t++)
            if (tiles[t]) avifImageDestroy(tiles[t]);
    free(tiles);
    if (encoder) avifEncoderDestroy(encoder);
    return rc;
}

/* MARK: HEIC */

typedef struct {
    uint8_t *data;
    size_t len;
    int failed;
} iwf_heif_sink;

static struct heif_error iwf_heif_write(struct heif_context *ctx, const void *data, size_t size, void *userdata) {
    (void)ctx;
    iwf_heif_sink *sink = (iwf_heif_sink *)userdata;
    uint8_t *grown = (uint8_t *)realloc(sink->data, sink->len + size + 1);
    struct heif_error ok = {heif_error_Ok, heif_suberror_Unspecified, "ok"};
    if (!grown) {
        sink->failed = 1;
        return ok;
    }
    memcpy(grown + sink->len, data, size);
    sink->data = grown;
    sink->len += size;
    return ok;
}

int iwf_heic(uint32_t width, uint32_t height, int alpha, iwf_buffer *out) {
    memset(out, 0, sizeof *out);
    struct heif_context *ctx = heif_context_alloc();
    struct heif_encoder *encoder = NULL;
    struct heif_image *image = NULL;
    struct heif_image_handle *handle = NULL;
    iwf_heif_sink sink = {NULL, 0, 0};
    int rc = 1;
    if (!ctx) goto done;
    if (heif_context_get_encoder_for_format(ctx, heif_compression_HEVC, &encoder).code != heif_error_Ok) goto done;
    heif_encoder_set_lossy_quality(encoder, 50);
    enum heif_chroma chroma = alpha ? heif_chroma_interleaved_RGBA : heif_chroma_interleaved_RGB;
    if (heif_image_create((int)width, (int)height, heif_colorspace_RGB, chroma, &image).code != heif_error_Ok) goto done;
    if (heif_image_add_plane(image, heif_channel_interleaved, (int)width, (int)height, 8).code != heif_error_Ok) goto done;
    int stride = 0;
    uint8_t *pixels = heif_image_get_plane(image, heif_channel_interleaved, &stride);
    uint32_t channels = alpha ? 4 : 3;
    for (uint32_t y = 0; y < height; y++)
        for (uint32_t x = 0; x < width; x++)
            for (uint32_t c = 0; c < channels; c++)
                pixels[(size_t)y * (size_t)stride + x * channels + c] = c == 3 ? (uint8_t)(255 - ((x + y) & 63)) : iwf_sample(x, y, c, 0);
    if (heif_context_encode_image(ctx, image, encoder, NULL, &handle).code != heif_error_Ok) goto done;
    struct heif_writer writer = {1, iwf_heif_write};
    if (heif_context_write(ctx, &writer, &sink).code != heif_error_Ok || sink.failed) goto done;
    out->data = sink.data;
    out->len = sink.len;
    sink.data = NULL;
    rc = 0;
done:
    free(sink.data);
    if (handle) heif_image_handle_release(handle);
    if (image) heif_image_release(image);
    if (encoder) heif_encoder_release(encoder);
    if (ctx) heif_context_free(ctx);
    return rc;
}

/* MARK: JPEG XL */

int iwf_jxl(uint32_t width, uint32_t height, uint32_t frames, int container, iwf_buffer *out) {
    memset(out, 0, sizeof *out);
    JxlEncoder *enc = JxlEncoderCreate(NULL);
    uint8_t *pixels = (uint8_t *)malloc((size_t)width * height * 3);
    uint8_t *buffer = NULL;
    int rc = 1;
    if (!enc || !pixels) goto done;
    if (JxlEncoderUseContainer(enc, container ? JXL_TRUE : JXL_FALSE) != JXL_ENC_SUCCESS) goto done;
    JxlBasicInfo info;
    JxlEncoderInitBasicInfo(&info);
    info.xsize = width;
    info.ysize = height;
    info.bits_per_sample = 8;
    info.num_color_channels = 3;
    info.uses_original_profile = JXL_FALSE;
    if (frames > 1) {
        info.have_animation = JXL_TRUE;
        info.animation.tps_numerator = 10;
        info.animation.tps_denominator = 1;
    }
    if (JxlEncoderSetBasicInfo(enc, &info) != JXL_ENC_SUCCESS) goto done;
    JxlColorEncoding color;
    JxlColorEncodingSetToSRGB(&color, JXL_FALSE);
    if (JxlEncoderSetColorEncoding(enc, &color) != JXL_ENC_SUCCESS) goto done;
    JxlEncoderFrameSettings *settings = JxlEncoderFrameSettingsCreate(enc, NULL);
    /* Effort 3 of 9: fast, still a real VarDCT image. */
    JxlEncoderFrameSettingsSetOption(settings, JXL_ENC_FRAME_SETTING_EFFORT, 3);
    JxlPixelFormat format = {3, JXL_TYPE_UINT8, JXL_NATIVE_ENDIAN, 0};
    for (uint32_t f = 0; f < frames; f++) {
        if (frames > 1) {
            JxlFrameHeader header;
            JxlEncoderInitFrameHeader(&header);
            header.duration = 1;
            if (JxlEncoderSetFrameHeader(settings, &header) != JXL_ENC_SUCCESS) goto done;
        }
        for (uint32_t y = 0; y < height; y++)
            for (uint32_t x = 0; x < width; x++)
                for (uint32_t c = 0; c < 3; c++)
                    pixels[((size_t)y * width + x) * 3 + c] = iwf_sample(x, y, c, f);
        if (JxlEncoderAddImageFrame(settings, &format, pixels, (size_t)width * height * 3) != JXL_ENC_SUCCESS) goto done;
    }
    JxlEncoderCloseInput(enc);
    size_t capacity = 4096, used = 0;
    buffer = (uint8_t *)malloc(capacity);
    if (!buffer) goto done;
    for (;;) {
        uint8_t *next = buffer + used;
        size_t avail = capacity - used;
        JxlEncoderStatus status = JxlEncoderProcessOutput(enc, &next, &avail);
        used = (size_t)(next - buffer);
        if (status == JXL_ENC_SUCCESS) break;
        if (status != JXL_ENC_NEED_MORE_OUTPUT) goto done;
        capacity *= 2;
        uint8_t *grown = (uint8_t *)realloc(buffer, capacity);
        if (!grown) goto done;
        buffer = grown;
    }
    out->data = buffer;
    out->len = used;
    buffer = NULL;
    rc = 0;
done:
    free(buffer);
    free(pixels);
    if (enc) JxlEncoderDestroy(enc);
    return rc;
}
