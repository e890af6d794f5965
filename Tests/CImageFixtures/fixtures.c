#include "imgwarm_fixtures.h"
#include <gif_lib.h>
#include <png.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jpeglib.h>

/* ---- shared ------------------------------------------------------------ */

typedef struct {
    uint8_t *data;
    size_t len;
    size_t cap;
    int failed;
} growbuf;

static void gb_append(growbuf *b, const void *p, size_t n) {
    if (b->failed) return;
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n) cap *= 2;
        uint8_t *d = (uint8_t *)realloc(b->data, cap);
        if (!d) {
            b->failed = 1;
            return;
        }
        b->data = d;
        b->cap = cap;
    }
    memcpy(b->data + b->len, p, n);
    b->len += n;
}

static void gb_be32(growbuf *b, uint32_t v) {
    uint8_t p[4] = {(uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v};
    gb_append(b, p, 4);
}

void iwf_free(iwf_buffer *buffer) {
    free(buffer->data);
    buffer->data = NULL;
    buffer->len = 0;
}

static int give(growbuf *b, iwf_buffer *out) {
    if (b->failed) {
        free(b->data);
        return -1;
    }
    out->data = b->data;
    out->len = b->len;
    return 0;
}

/* A smooth gradient plus a little hash noise: compresses like a photo
   (neither a flat colour nor white noise), so truncating "in the middle"
   really cuts through image data. */
uint8_t iwf_sample(uint32_t x, uint32_t y, uint32_t channel, uint32_t seed) {
    uint32_t h = x * 374761393u + y * 668265263u + channel * 2246822519u + seed * 3266489917u;
    h = (h ^ (h >> 13)) * 1274126177u;
    h ^= h >> 16;
    uint32_t base = (x * 3 + y * 2 + channel * 60 + seed * 17) & 0xFF;
    return (uint8_t)(base + (h & 0x0F));
}

uint32_t iwf_crc32(const uint8_t *data, size_t len) {
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < len; i++) {
        c ^= data[i];
        for (int k = 0; k < 8; k++) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
    }
    return c ^ 0xFFFFFFFFu;
}

/* ---- PNG --------------------------------------------------------------- */

static void png_write_grow(png_structp png, png_bytep p, size_t n) {
    gb_append((growbuf *)png_get_io_ptr(png), p, n);
}
static void png_flush_none(png_structp png) { (void)png; }
static void png_quiet_error(png_structp png, png_const_charp msg) {
    (void)msg;
    png_longjmp(png, 1);
}
static void png_quiet_warning(png_structp png, png_const_charp msg) {
    (void)png;
    (void)msg;
}

static int channels_of(int color_type) {
    switch (color_type) {
    case PNG_COLOR_TYPE_GRAY: return 1;
    case PNG_COLOR_TYPE_PALETTE: return 1;
    case PNG_COLOR_TYPE_GRAY_ALPHA: return 2;
    case PNG_COLOR_TYPE_RGB: return 3;
    default: return 4;
    }
}

static int png_encode(uint32_t w, uint32_t h, int color_type, int bit_depth, int interlaced,
                      int trns, uint32_t seed, growbuf *b, png_bytep *rows, uint8_t *pixels) {
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, png_quiet_error, png_quiet_warning);
    if (!png) return -1;
    png_infop info = png_create_info_struct(png);
    if (!info || setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, &info);
        return -1;
    }
    png_set_write_fn(png, b, png_write_grow, png_flush_none);
    png_set_IHDR(png, info, w, h, bit_depth, color_type,
                 interlaced ? PNG_INTERLACE_ADAM7 : PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    int levels = bit_depth >= 8 ? 256 : (1 << bit_depth);
    if (color_type == PNG_COLOR_TYPE_PALETTE) {
        png_color palette[256];
        png_byte alpha[256];
        for (int i = 0; i < levels; i++) {
            palette[i].red = (png_byte)(i * 255 / (levels - 1));
            palette[i].green = (png_byte)(255 - i * 255 / (levels - 1));
            palette[i].blue = (png_byte)(i * 37);
            alpha[i] = (png_byte)(i * 255 / (levels - 1));
        }
        png_set_PLTE(png, info, palette, levels);
        if (trns) png_set_tRNS(png, info, alpha, levels, NULL);
    } else if (trns && (color_type == PNG_COLOR_TYPE_RGB || color_type == PNG_COLOR_TYPE_GRAY)) {
        png_color_16 key = {0, 1, 2, 3, 1};
        png_set_tRNS(png, info, NULL, 0, &key);
    }
    png_write_info(png, info);
    if (bit_depth < 8) png_set_packing(png);  /* rows hold one byte per pixel */
    int bytes = channels_of(color_type) * (bit_depth == 16 ? 2 : 1);
    size_t rowbytes = (size_t)w * bytes;
    for (uint32_t y = 0; y < h; y++) {
        rows[y] = pixels + y * rowbytes;
        for (uint32_t x = 0; x < w; x++) {
            for (int c = 0; c < bytes; c++) {
                uint8_t v = iwf_sample(x, y, (uint32_t)c, seed);
                if (bit_depth < 8) v = (uint8_t)(v % levels);
                rows[y][x * bytes + c] = v;
            }
        }
    }
    png_write_image(png, rows);
    png_write_end(png, info);
    png_destroy_write_struct(&png, &info);
    return 0;
}

int iwf_png(uint32_t w, uint32_t h, int color_type, int bit_depth, int interlaced, int trns,
            uint32_t seed, iwf_buffer *out) {
    growbuf b = {0};
    png_bytep *rows = (png_bytep *)calloc(h ? h : 1, sizeof(png_bytep));
    uint8_t *pixels = (uint8_t *)calloc((size_t)w * (h ? h : 1) * 8 + 1, 1);
    int rc = -1;
    if (rows && pixels) rc = png_encode(w, h, color_type, bit_depth, interlaced, trns, seed, &b, rows, pixels);
    free(rows);
    free(pixels);
    if (rc != 0) {
        free(b.data);
        return rc;
    }
    return give(&b, out);
}

static void put_chunk(growbuf *b, const char *type, const uint8_t *data, uint32_t len) {
    gb_be32(b, len);
    size_t start = b->len;
    gb_append(b, type, 4);
    if (len) gb_append(b, data, len);
    if (b->failed) return;
    gb_be32(b, iwf_crc32(b->data + start, 4 + (size_t)len));
}

static void put_be32(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static void put_fctl(growbuf *b, uint32_t seq, uint32_t w, uint32_t h) {
    uint8_t f[26] = {0};
    put_be32(f, seq);
    put_be32(f + 4, w);
    put_be32(f + 8, h);
    /* x, y offsets 0; delay 1/10 s; dispose none; blend source */
    f[20] = 0; f[21] = 1; f[22] = 0; f[23] = 10;
    put_chunk(b, "fcTL", f, sizeof f);
}

/* The concatenated IDAT payloads of an encoded PNG. */
static int idat_payload(const iwf_buffer *png, growbuf *idat) {
    size_t i = 8;
    while (i + 12 <= png->len) {
        uint32_t len = ((uint32_t)png->data[i] << 24) | ((uint32_t)png->data[i + 1] << 16) |
                       ((uint32_t)png->data[i + 2] << 8) | png->data[i + 3];
        if (memcmp(png->data + i + 4, "IDAT", 4) == 0) gb_append(idat, png->data + i + 8, len);
        i += 12 + (size_t)len;
    }
    return idat->failed ? -1 : 0;
}

int iwf_apng(uint32_t w, uint32_t h, uint32_t frames, iwf_buffer *out) {
    growbuf b = {0};
    uint32_t seq = 0;
    for (uint32_t f = 0; f < frames; f++) {
        iwf_buffer one = {0};
        if (iwf_png(w, h, PNG_COLOR_TYPE_RGB_ALPHA, 8, 0, 0, f, &one) != 0) {
            free(b.data);
            return -1;
        }
        growbuf idat = {0};
        idat_payload(&one, &idat);
        if (f == 0) {
            gb_append(&b, one.data, 8 + 25);  /* signature + IHDR chunk */
            uint8_t actl[8];
            put_be32(actl, frames);
            put_be32(actl + 4, 0);  /* loop forever */
            put_chunk(&b, "acTL", actl, 8);
            put_fctl(&b, seq++, w, h);
            put_chunk(&b, "IDAT", idat.data, (uint32_t)idat.len);
        } else {
            put_fctl(&b, seq++, w, h);
            uint8_t *fdat = (uint8_t *)malloc(idat.len + 4);
            if (fdat) {
                put_be32(fdat, seq++);
                memcpy(fdat + 4, idat.data, idat.len);
                put_chunk(&b, "fdAT", fdat, (uint32_t)idat.len + 4);
                free(fdat);
            } else {
                b.failed = 1;
            }
        }
        free(idat.data);
        iwf_free(&one);
    }
    put_chunk(&b, "IEND", NULL, 0);
    return give(&b, out);
}

/* ---- JPEG -------------------------------------------------------------- */

typedef struct {
    struct jpeg_error_mgr pub;
    jmp_buf jump;
} quiet_jpeg_err;

static void jpeg_quiet_exit(j_common_ptr cinfo) { longjmp(((quiet_jpeg_err *)cinfo->err)->jump, 1); }
static void jpeg_quiet_output(j_common_ptr cinfo) { (void)cinfo; }

/* A minimal EXIF block: "Exif\0\0" + a little-endian TIFF header with an
   empty IFD. */
static const uint8_t exif_app1[] = {
    'E', 'x', 'i', 'f', 0, 0, 'I', 'I', 0x2A, 0, 8, 0, 0, 0, 0, 0, 0, 0, 0, 0,
};

static int jpeg_encode(struct jpeg_compress_struct *c, quiet_jpeg_err *e, uint32_t w, uint32_t h,
                       int kind, int quality, int markers, uint32_t seed,
                       unsigned char **buf, unsigned long *size, JSAMPROW *row) {
    if (setjmp(e->jump)) return -1;
    jpeg_create_compress(c);
    jpeg_mem_dest(c, buf, size);
    c->image_width = w;
    c->image_height = h;
    switch (kind) {
    case IWF_JPEG_GRAY: c->input_components = 1; c->in_color_space = JCS_GRAYSCALE; break;
    case IWF_JPEG_CMYK:
    case IWF_JPEG_YCCK: c->input_components = 4; c->in_color_space = JCS_CMYK; break;
    default: c->input_components = 3; c->in_color_space = JCS_RGB; break;
    }
    jpeg_set_defaults(c);
    if (kind == IWF_JPEG_YCCK) jpeg_set_colorspace(c, JCS_YCCK);
    jpeg_set_quality(c, quality, TRUE);
    if (kind == IWF_JPEG_PROGRESSIVE) jpeg_simple_progression(c);
    jpeg_start_compress(c, TRUE);
    if (markers) {
        jpeg_write_marker(c, JPEG_APP0 + 1, exif_app1, sizeof exif_app1);
        /* ICC_PROFILE\0, chunk 1 of 1, then a (fake) 128-byte profile. */
        uint8_t icc[14 + 128] = "ICC_PROFILE";
        icc[12] = 1;
        icc[13] = 1;
        for (int i = 0; i < 128; i++) icc[14 + i] = (uint8_t)i;
        jpeg_write_marker(c, JPEG_APP0 + 2, icc, sizeof icc);
    }
    *row = (JSAMPROW)malloc((size_t)w * (size_t)c->input_components);
    if (!*row) return -1;
    while (c->next_scanline < h) {
        uint32_t y = c->next_scanline;
        for (uint32_t x = 0; x < w; x++)
            for (int k = 0; k < c->input_components; k++)
                (*row)[x * c->input_components + k] = iwf_sample(x, y, (uint32_t)k, seed);
        jpeg_write_scanlines(c, row, 1);
    }
    jpeg_finish_compress(c);
    return 0;
}

int iwf_jpeg(uint32_t w, uint32_t h, int kind, int quality, int markers, uint32_t seed, iwf_buffer *out) {
    struct jpeg_compress_struct c;
    quiet_jpeg_err e;
    memset(&c, 0, sizeof c);
    c.err = jpeg_std_error(&e.pub);
    e.pub.error_exit = jpeg_quiet_exit;
    e.pub.output_message = jpeg_quiet_output;
    unsigned char *buf = NULL;
    unsigned long size = 0;
    JSAMPROW row = NULL;
    int rc = jpeg_encode(&c, &e, w, h, kind, quality, markers, seed, &buf, &size, &row);
    jpeg_destroy_compress(&c);
    free(row);
    if (rc != 0) {
        free(buf);
        return rc;
    }
    out->data = buf;  /* jpeg_mem_dest allocates with malloc */
    out->len = size;
    return 0;
}

/* ---- GIF --------------------------------------------------------------- */

static int gif_write_grow(GifFileType *gif, const GifByteType *p, int n) {
    growbuf *b = (growbuf *)gif->UserData;
    gb_append(b, p, (size_t)n);
    return b->failed ? 0 : n;
}

static int gif_frame(GifFileType *gif, int left, int top, int w, int h, uint32_t seed, GifPixelType *line) {
    /* Graphic control: dispose to background, 10/100 s delay, no transparency. */
    GifByteType gce[4] = {0x08, 10, 0, 0};
    if (EGifPutExtension(gif, GRAPHICS_EXT_FUNC_CODE, 4, gce) == GIF_ERROR) return -1;
    if (EGifPutImageDesc(gif, left, top, w, h, false, NULL) == GIF_ERROR) return -1;
    for (int y = 0; y < h; y++) {
        for (int x = 0; x < w; x++) line[x] = iwf_sample((uint32_t)x, (uint32_t)y, 0, seed);
        if (EGifPutLine(gif, line, w) == GIF_ERROR) return -1;
    }
    return 0;
}

int iwf_gif(uint32_t w, uint32_t h, uint32_t frames, int last_outside, iwf_buffer *out) {
    growbuf b = {0};
    int err = 0;
    GifFileType *gif = EGifOpen(&b, gif_write_grow, &err);
    if (!gif) return -1;
    ColorMapObject *map = GifMakeMapObject(256, NULL);
    GifPixelType *line = (GifPixelType *)malloc(w ? w : 1);
    int rc = (map && line) ? 0 : -1;
    if (rc == 0) {
        for (int i = 0; i < 256; i++) {
            map->Colors[i].Red = (GifByteType)i;
            map->Colors[i].Green = (GifByteType)(255 - i);
            map->Colors[i].Blue = (GifByteType)(i * 7);
        }
        if (EGifPutScreenDesc(gif, (int)w, (int)h, 8, 0, map) == GIF_ERROR) rc = -1;
    }
    if (rc == 0 && frames > 1) {
        /* NETSCAPE2.0 application extension: loop forever. */
        static const GifByteType loop[3] = {1, 0, 0};
        if (EGifPutExtensionLeader(gif, APPLICATION_EXT_FUNC_CODE) == GIF_ERROR ||
            EGifPutExtensionBlock(gif, 11, "NETSCAPE2.0") == GIF_ERROR ||
            EGifPutExtensionBlock(gif, 3, loop) == GIF_ERROR ||
            EGifPutExtensionTrailer(gif) == GIF_ERROR)
            rc = -1;
    }
    for (uint32_t f = 0; rc == 0 && f < frames; f++) {
        int left = 0, top = 0, fw = (int)w, fh = (int)h;
        if (f > 0) {
            left = (int)w / 4;
            top = (int)h / 4;
            fw = (int)w / 2 ? (int)w / 2 : 1;
            fh = (int)h / 2 ? (int)h / 2 : 1;
        }
        if (last_outside && f == frames - 1) {
            left = (int)w / 2 + 1;
            top = (int)h / 2 + 1;
            fw = (int)w / 2 + 1;
            fh = (int)h / 2 + 1;
        }
        rc = gif_frame(gif, left, top, fw, fh, f, line);
    }
    if (EGifCloseFile(gif, &err) == GIF_ERROR) rc = -1;
    GifFreeMapObject(map);
    free(line);
    if (rc != 0) {
        free(b.data);
        return rc;
    }
    return give(&b, out);
}
