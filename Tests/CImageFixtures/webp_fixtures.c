/* Test-only WebP encoders over libwebp (and libwebpmux's WebPAnimEncoder
   for animations); see imgwarm_fixtures.h. */
#include "imgwarm_fixtures.h"
#include <stdlib.h>
#include <string.h>
#include <webp/encode.h>
#include <webp/mux.h>

/* RGBA pixels of one frame; alpha varies across the image when asked. */
static uint8_t *rgba_pixels(uint32_t w, uint32_t h, int alpha, uint32_t seed) {
    uint8_t *p = (uint8_t *)malloc((size_t)w * h * 4);
    if (!p) return NULL;
    for (uint32_t y = 0; y < h; y++) {
        for (uint32_t x = 0; x < w; x++) {
            uint8_t *px = p + ((size_t)y * w + x) * 4;
            for (uint32_t c = 0; c < 3; c++) px[c] = iwf_sample(x, y, c, seed);
            px[3] = alpha ? (uint8_t)((x * 255) / (w > 1 ? w - 1 : 1)) : 255;
        }
    }
    return p;
}

/* WebPEncode* allocate with WebPMalloc; hand the bytes over in malloc'd
   memory, which iwf_free releases. */
static int give_webp(uint8_t *data, size_t len, iwf_buffer *out) {
    if (!data || len == 0) return -1;
    out->data = (uint8_t *)malloc(len);
    if (!out->data) {
        WebPFree(data);
        return -1;
    }
    memcpy(out->data, data, len);
    out->len = len;
    WebPFree(data);
    return 0;
}

int iwf_webp(uint32_t w, uint32_t h, int lossless, int alpha, uint32_t seed, iwf_buffer *out) {
    uint8_t *pixels = rgba_pixels(w, h, alpha, seed);
    if (!pixels) return -1;
    uint8_t *data = NULL;
    size_t len = lossless ? WebPEncodeLosslessRGBA(pixels, (int)w, (int)h, (int)w * 4, &data)
                          : WebPEncodeRGBA(pixels, (int)w, (int)h, (int)w * 4, 80, &data);
    free(pixels);
    return give_webp(data, len, out);
}

int iwf_webp_animated(uint32_t w, uint32_t h, uint32_t frames, int lossless, iwf_buffer *out) {
    WebPAnimEncoderOptions options;
    WebPConfig config;
    if (!WebPAnimEncoderOptionsInit(&options) || !WebPConfigInit(&config)) return -1;
    /* Every frame as a key frame and no frame merging: the file holds
       exactly `frames` ANMF chunks, as the tests count them. */
    options.kmin = 0;
    options.kmax = 1;
    options.allow_mixed = 0;
    config.lossless = lossless;
    config.quality = 80;
    WebPAnimEncoder *enc = WebPAnimEncoderNew((int)w, (int)h, &options);
    if (!enc) return -1;
    int ok = 1;
    for (uint32_t f = 0; f < frames && ok; f++) {
        WebPPicture pic;
        uint8_t *pixels = rgba_pixels(w, h, 0, f * 7 + 1);
        ok = pixels && WebPPictureInit(&pic);
        if (ok) {
            pic.width = (int)w;
            pic.height = (int)h;
            pic.use_argb = 1;
            ok = WebPPictureImportRGBA(&pic, pixels, (int)w * 4)
                 && WebPAnimEncoderAdd(enc, &pic, (int)(f * 100), &config);
            WebPPictureFree(&pic);
        }
        free(pixels);
    }
    WebPData data = {NULL, 0};
    ok = ok && WebPAnimEncoderAdd(enc, NULL, (int)(frames * 100), NULL) && WebPAnimEncoderAssemble(enc, &data);
    WebPAnimEncoderDelete(enc);
    if (!ok) {
        WebPDataClear(&data);
        return -1;
    }
    return give_webp((uint8_t *)data.bytes, data.size, out);
}
