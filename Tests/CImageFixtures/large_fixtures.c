/* Large images for the decode memory tests: a smooth gradient, so a
   progressive JPEG of millions of pixels stays a small file (as the 1.1 MB
   9999x9999 one of the report that took 609 MB to validate) and encodes in
   little time. */
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jpeglib.h>
#include "imgwarm_fixtures.h"

typedef struct {
    struct jpeg_error_mgr pub;
    jmp_buf jump;
} large_jpeg_err;

static void large_jpeg_exit(j_common_ptr c) { longjmp(((large_jpeg_err *)c->err)->jump, 1); }
static void large_jpeg_quiet(j_common_ptr c) { (void)c; }

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
        if (progressive) jpeg_simple_progression(&c);
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
