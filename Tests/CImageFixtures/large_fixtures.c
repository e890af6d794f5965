/* Large images for the decode memory tests: a smooth gradient, so a
   progressive JPEG of millions of pixels stays a small file (as the 1.1 MB
   9999x9999 one of the report that took 609 MB to validate) and encodes in
   little time. */
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jpeglib.h>
#include <zlib.h>
#include "imgwarm_fixtures.h"

typedef struct {
    struct jpeg_error_mgr pub;
    jmp_buf jump;
} large_jpeg_err;

static void large_jpeg_exit(j_common_ptr c) { longjmp(((large_jpeg_err *)c->err)->jump, 1); }
static void large_jpeg_quiet(j_common_ptr c) { (void)c; }

/* The most scans libjpeg's encoder accepts for 8-bit data (jcmaster.c,
   validate_script: Ah and Al at most 10; a coefficient's first scan has
   Ah 0, each refinement Ah = the previous Al and Al = Ah - 1; AC scans
   hold one component): for each component, its DC and each of its 63 AC
   coefficients alone, at Al 10, then refined bit by bit down to 0:
   3 x 64 x 11 = 2,112 scans. */
static _Thread_local jpeg_scan_info iwf_scans[3 * 64 * 11];
static int iwf_most_scans(struct jpeg_compress_struct *c) {
    int n = 0;
    for (int ci = 0; ci < 3; ci++) {
        for (int k = 0; k < 64; k++) {
            for (int al = 10; al >= 0; al--) {
                jpeg_scan_info *s = &iwf_scans[n++];
                s->comps_in_scan = 1;
                s->component_index[0] = ci;
                s->Ss = k;
                s->Se = k;
                s->Ah = al == 10 ? 0 : al + 1;
                s->Al = al;
            }
        }
    }
    /* The DC scans of every component first: an AC scan needs its
       component's DC scan before it (validate_script). Reordered stably:
       DC (k 0) scans, then the AC ones. */
    jpeg_scan_info sorted[3 * 64 * 11];
    int m = 0;
    for (int i = 0; i < n; i++) if (iwf_scans[i].Ss == 0) sorted[m++] = iwf_scans[i];
    for (int i = 0; i < n; i++) if (iwf_scans[i].Ss != 0) sorted[m++] = iwf_scans[i];
    memcpy(iwf_scans, sorted, sizeof sorted);
    c->scan_info = iwf_scans;
    c->num_scans = n;
    return 0;
}

int iwf_jpeg_smooth(uint32_t w, uint32_t h, int progressive, iwf_buffer *out) {
    struct jpeg_compress_struct c;
    large_jpeg_err e;
    memset(&c, 0, sizeof c);
    c.err = jpeg_std_error(&e.pub);
    e.pub.error_exit = large_jpeg_exit;
    e.pub.output_message = large_jpeg_quiet;
    unsigned char *buf = NULL;
    unsigned long size = 0;
    JSAMPROW row = (JSAMPROW)malloc((size_t)w * 3);
    /* volatile: read after a longjmp. */
    volatile int rc = -1;
    if (row && setjmp(e.jump) == 0) {
        jpeg_create_compress(&c);
        jpeg_mem_dest(&c, &buf, &size);
        c.image_width = w;
        c.image_height = h;
        c.input_components = 3;
        c.in_color_space = JCS_RGB;
        jpeg_set_defaults(&c);
        jpeg_set_quality(&c, 90, TRUE);
        /* 4:4:4: three full-resolution components, the largest
           coefficient buffers a colour JPEG of this size can have. */
        for (int i = 0; i < 3; i++) c.comp_info[i].h_samp_factor = c.comp_info[i].v_samp_factor = 1;
        if (progressive == 1) jpeg_simple_progression(&c);
        if (progressive == 2 && iwf_most_scans(&c) != 0) longjmp(e.jump, 1);
        jpeg_start_compress(&c, TRUE);
        while (c.next_scanline < h) {
            uint32_t y = c.next_scanline;
            for (uint32_t x = 0; x < w; x++) {
                row[3 * x] = (JSAMPLE)(x * 255u / (w ? w : 1));
                row[3 * x + 1] = (JSAMPLE)(y * 255u / (h ? h : 1));
                row[3 * x + 2] = (JSAMPLE)((x + y) * 127u / (w + h));
            }
            jpeg_write_scanlines(&c, &row, 1);
        }
        jpeg_finish_compress(&c);
        rc = 0;
    }
    jpeg_destroy_compress(&c);
    free(row);
    if (rc != 0) {
        free(buf);
        return -1;
    }
    out->data = buf;
    out->len = size;
    return 0;
}

/* A 1x1 grey PNG whose header holds `chunks` zTXt chunks (or iTXt when
   itxt), each inflating to `inflated` bytes of zeros: libpng inflates and
   keeps every text chunk it reads before the image data. */
static void iwf_put32(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)(v >> 24); p[1] = (uint8_t)(v >> 16); p[2] = (uint8_t)(v >> 8); p[3] = (uint8_t)v;
}

static size_t iwf_chunk(uint8_t *at, const char *type, const uint8_t *body, uint32_t n) {
    iwf_put32(at, n);
    memcpy(at + 4, type, 4);
    if (n) memcpy(at + 8, body, n);
    iwf_put32(at + 8 + n, (uint32_t)crc32(0, at + 4, n + 4));
    return 12 + (size_t)n;
}

int iwf_png_text_bomb(uint32_t chunks, uint32_t inflated, int itxt, iwf_buffer *out) {
    uint8_t *zeros = calloc(inflated ? inflated : 1, 1);
    uLongf zlen = compressBound(inflated);
    uint8_t *z = malloc(zlen);
    if (!zeros || !z || compress2(z, &zlen, zeros, inflated, 9) != Z_OK) {
        free(zeros);
        free(z);
        return -1;
    }
    free(zeros);
    /* zTXt: keyword, NUL, method 0, data. iTXt: keyword, NUL, compressed
       flag 1, method 0, empty language tag and translated keyword. */
    static const uint8_t ztxt_head[] = {'C', 'o', 'm', 'm', 'e', 'n', 't', 0, 0};
    static const uint8_t itxt_head[] = {'C', 'o', 'm', 'm', 'e', 'n', 't', 0, 1, 0, 0, 0};
    const uint8_t *head = itxt ? itxt_head : ztxt_head;
    size_t head_len = itxt ? sizeof itxt_head : sizeof ztxt_head;
    size_t body_len = head_len + zlen;
    uint8_t *body = malloc(body_len);
    size_t total = 8 + 25 + (size_t)chunks * (12 + body_len) + 64 + 12;
    uint8_t *png = malloc(total);
    if (!body || !png) {
        free(z); free(body); free(png);
        return -1;
    }
    memcpy(body, head, head_len);
    memcpy(body + head_len, z, zlen);
    free(z);
    static const uint8_t sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
    size_t pos = 0;
    memcpy(png, sig, 8);
    pos = 8;
    uint8_t ihdr[13] = {0, 0, 0, 1, 0, 0, 0, 1, 8, 0, 0, 0, 0};
    pos += iwf_chunk(png + pos, "IHDR", ihdr, 13);
    for (uint32_t i = 0; i < chunks; i++) pos += iwf_chunk(png + pos, itxt ? "iTXt" : "zTXt", body, (uint32_t)body_len);
    free(body);
    uint8_t raw[2] = {0, 0x80}, idat[32];
    uLongf idat_len = sizeof idat;
    compress2(idat, &idat_len, raw, 2, 9);
    pos += iwf_chunk(png + pos, "IDAT", idat, (uint32_t)idat_len);
    pos += iwf_chunk(png + pos, "IEND", NULL, 0);
    out->data = png;
    out->len = pos;
    return 0;
}
