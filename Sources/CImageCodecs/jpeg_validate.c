/* JPEG validation with libjpeg-turbo: header, pixel limit, then every
   scanline and jpeg_finish_decompress (which reads up to EOI).
   libjpeg treats a truncated file and corrupt entropy data as mere
   warnings (it pads with gray and carries on), so warnings are caught
   here and, except for a few harmless ones, end the decode as errors. */
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <jpeglib.h>
#include <jerror.h>
#include "internal.h"

/* Up to this many stray bytes before a marker are tolerated: some encoders
   pad the end of the entropy data and every viewer shows such files fine;
   desynchronised (corrupt) entropy data leaves far more behind. */
#define IW_JPEG_TOLERATED_EXTRANEOUS_BYTES 64

/* Output scale 1/IW_JPEG_SCALE_DENOM (see iw_jpeg_run); a macro so the
   gain can be measured against full-size decoding. */
#ifndef IW_JPEG_SCALE_DENOM
#define IW_JPEG_SCALE_DENOM 8
#endif

/* Rows (at the output scale) skipped between two checks of the CPU bound
   in a single-scan image: a few iMCU rows. */
#define IW_JPEG_SKIP_STEP 64

typedef struct {
    struct jpeg_error_mgr pub;  /* first: libjpeg casts to it */
    jmp_buf jump;
    iw_result *out;
    int status;                 /* set before longjmp */
} jpeg_ctx_err;

static void iw_jpeg_fail(j_common_ptr cinfo, int status) {
    jpeg_ctx_err *e = (jpeg_ctx_err *)cinfo->err;
    char buf[JMSG_LENGTH_MAX];
    (*cinfo->err->format_message)(cinfo, buf);
    e->status = status;
    /* The caller prefixes "corrupt JPEG: "; libjpeg's own prefix would
       say it twice. */
    static const char prefix[] = "Corrupt JPEG data: ";
    const char *msg = strncmp(buf, prefix, sizeof prefix - 1) == 0 ? buf + sizeof prefix - 1 : buf;
    iw_set_reason(e->out, "%s", msg);
    longjmp(e->jump, 1);
}

static void iw_jpeg_error_exit(j_common_ptr cinfo) {
    int code = cinfo->err->msg_code;
    int status = IW_CORRUPT;
    if (code == JERR_EMPTY_IMAGE) status = IW_NO_PIXELS;
    else if (code == JERR_OUT_OF_MEMORY) status = IW_NO_MEMORY;
    else if (code == JERR_INPUT_EOF) status = IW_TRUNCATED;
    iw_jpeg_fail(cinfo, status);
}

/* msg_level < 0 is a warning; >= 0 are trace messages (ignored). */
static void iw_jpeg_emit_message(j_common_ptr cinfo, int msg_level) {
    if (msg_level >= 0) return;
    struct jpeg_error_mgr *err = cinfo->err;
    switch (err->msg_code) {
    case JWRN_JPEG_EOF:
        /* The memory source ran out and inserted a fake EOI. */
        iw_jpeg_fail(cinfo, IW_TRUNCATED);
        return;
    case JWRN_EXTRANEOUS_DATA:
        if (err->msg_parm.i[0] <= IW_JPEG_TOLERATED_EXTRANEOUS_BYTES) {
            err->num_warnings++;
            return;
        }
        iw_jpeg_fail(cinfo, IW_CORRUPT);
        return;
    case JWRN_ADOBE_XFORM:
    case JWRN_JFIF_MAJOR:
    case JWRN_BOGUS_ICC:
        /* Metadata oddities: the pixels are intact. */
        err->num_warnings++;
        return;
    default:
        /* Bad Huffman/arithmetic code, premature end of a data segment,
           a lost restart marker, an inconsistent progression: pixels are
           missing or wrong. */
        iw_jpeg_fail(cinfo, IW_CORRUPT);
        return;
    }
}

static void iw_jpeg_output_message(j_common_ptr cinfo) { (void)cinfo; }

static int iw_jpeg_run(struct jpeg_decompress_struct *cinfo, jpeg_ctx_err *e,
                       const uint8_t *data, size_t len, uint64_t max_pixels,
                       JSAMPROW *row) {
    if (setjmp(e->jump)) return e->status ? e->status : IW_CORRUPT;
    jpeg_create_decompress(cinfo);
    jpeg_mem_src(cinfo, data, (unsigned long)len);
    jpeg_read_header(cinfo, TRUE);
    e->out->width = cinfo->image_width;
    e->out->height = cinfo->image_height;
    e->out->frames = 1;
    if (cinfo->image_width == 0 || cinfo->image_height == 0) {
        iw_set_reason(e->out, "SOF gives %ux%u", cinfo->image_width, cinfo->image_height);
        return IW_NO_PIXELS;
    }
    /* jpeg_start_decompress allocates: refuse bombs before it. */
    if (iw_exceeds(cinfo->image_width, cinfo->image_height, max_pixels)) return IW_TOO_LARGE;

    /* Damage is found by the entropy decoder, which parses every
       coefficient of every block whatever happens to them afterwards; the
       IDCT, upsampling and colour conversion cannot fail. So no pixel is
       produced that the verdict does not need:
       - one scan (baseline): jpeg_skip_scanlines entropy-decodes the
         skipped iMCU rows into no block at all (decode_mcu with a NULL
         buffer), with the same warnings as a full decode. It skips the
         last rows without decoding them, so those are read as pixels.
       - several scans (progressive): buffered-image mode, whose
         jpeg_start_decompress sets up the same modules (and checks) but
         returns before the output pass; jpeg_consume_input then
         entropy-decodes every scan up to EOI, as jpeg_start_decompress
         does in normal mode before the output pass we leave out.
       The rows that are produced come at 1/8 scale with the fast IDCT and
       no smoothing. Measured with callgrind on the bench corpora (see
       docs/performance.md). */
    cinfo->scale_num = 1;
    cinfo->scale_denom = IW_JPEG_SCALE_DENOM;
    cinfo->dct_method = JDCT_IFAST;
    cinfo->do_fancy_upsampling = FALSE;
    cinfo->do_block_smoothing = FALSE;
    if (jpeg_has_multiple_scans(cinfo)) {
        cinfo->buffered_image = TRUE;
        jpeg_start_decompress(cinfo);
        int r;
        while ((r = jpeg_consume_input(cinfo)) != JPEG_REACHED_EOI) {
            if (r == JPEG_SUSPENDED) {
                /* Only a suspending source suspends; ours never does. */
                iw_set_reason(e->out, "decoder stalled in scan %d", cinfo->input_scan_number);
                return IW_CORRUPT;
            }
            /* jpeg_consume_input returns after each iMCU row of a scan
               (JPEG_ROW_COMPLETED) and at each scan's end: the CPU bound
               is checked there. A progressive file may hold thousands of
               scans, each a pass over every block of the image. */
            if (iw_out_of_time_every(r == JPEG_ROW_COMPLETED ? 16 : 1)) {
                iw_set_reason(e->out, "stopped in scan %d", cinfo->input_scan_number);
                return IW_TOO_COMPLEX;
            }
        }
        jpeg_finish_decompress(cinfo);
        return IW_OK;
    }
    cinfo->buffered_image = FALSE;
    jpeg_start_decompress(cinfo);
    size_t rowbytes = (size_t)cinfo->output_width * (size_t)cinfo->output_components;
    *row = (JSAMPROW)malloc(rowbytes ? rowbytes : 1);
    if (!*row) {
        iw_set_reason(e->out, "out of memory for a row");
        return IW_NO_MEMORY;
    }
    /* Skipped in steps, the CPU bound checked between them. */
    while (cinfo->output_height - cinfo->output_scanline > 1) {
        JDIMENSION left = cinfo->output_height - 1 - cinfo->output_scanline;
        JDIMENSION skip = left < IW_JPEG_SKIP_STEP ? left : IW_JPEG_SKIP_STEP;
        if (jpeg_skip_scanlines(cinfo, skip) != skip) {
            iw_set_reason(e->out, "decoder stalled at row %u", cinfo->output_scanline);
            return IW_CORRUPT;
        }
        if (iw_out_of_time()) {
            iw_set_reason(e->out, "stopped at row %u of %u", cinfo->output_scanline, cinfo->output_height);
            return IW_TOO_COMPLEX;
        }
    }
    while (cinfo->output_scanline < cinfo->output_height) {
        if (jpeg_read_scanlines(cinfo, row, 1) != 1) {
            /* Only a suspending source returns 0 rows; ours never does. */
            iw_set_reason(e->out, "decoder stalled at row %u", cinfo->output_scanline);
            return IW_CORRUPT;
        }
    }
    jpeg_finish_decompress(cinfo);
    return IW_OK;
}

/* A new decoder object per image, on purpose: libjpeg keeps the Huffman
   and quantization tables of earlier images on a reused object (for
   abbreviated datastreams), so a file lacking DHT or DQT would borrow them
   and pass (the fuzz mutants showed it). Reuse with jpeg_abort_decompress
   would only save about 1,600 instructions of ~1.2 million per thumbnail
   (callgrind), so every image gets a fresh object. */
int iw_validate_jpeg(const uint8_t *data, size_t len, uint64_t max_pixels, iw_result *out) {
    iw_reset(out);
    struct jpeg_decompress_struct cinfo;
    jpeg_ctx_err e;
    memset(&cinfo, 0, sizeof cinfo);
    memset(&e, 0, sizeof e);
    cinfo.err = jpeg_std_error(&e.pub);
    e.pub.error_exit = iw_jpeg_error_exit;
    e.pub.emit_message = iw_jpeg_emit_message;
    e.pub.output_message = iw_jpeg_output_message;
    e.out = out;
    JSAMPROW row = NULL;
    int status = iw_jpeg_run(&cinfo, &e, data, len, max_pixels, &row);
    if (status == IW_TRUNCATED) iw_set_reason(out, "premature end of data");
    else if (status == IW_OK) out->reason[0] = '\0';
    jpeg_destroy_decompress(&cinfo);
    free(row);
    return status;
}
