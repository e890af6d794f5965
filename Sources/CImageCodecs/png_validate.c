/* PNG validation with libpng: header limits first, then every row of every
   interlace pass, then png_read_end so damage after the last row (a missing
   IEND, a CRC error in a trailing chunk) is seen too. */
#include <png.h>
#include <setjmp.h>
#include <stdlib.h>
#include "internal.h"

/* libpng's own default user limit; rows wider than this would need
   megabytes per row buffer, and no real PNG is that wide. */
#define IW_PNG_MAX_SIDE 1000000u
/* Largest ancillary chunk (iCCP, zTXt, ...) libpng may allocate. */
#define IW_PNG_CHUNK_MALLOC_MAX (16u * 1024u * 1024u)

typedef struct {
    const uint8_t *data;
    size_t len;
    size_t pos;
    uint64_t max_pixels;
    iw_result *out;
    png_structp png;
    png_infop info;
    uint8_t *row;      /* the one reused row buffer */
    int hit_end;       /* the read function ran out of data */
    int status;        /* a status decided before png_error, or 0 */
    int stage;         /* 0 header, 1 rows, 2 end */
    int interlaced;
    int pass;
    uint32_t row_index;
} png_ctx;

static void iw_png_read(png_structp png, png_bytep dst, size_t n) {
    png_ctx *c = (png_ctx *)png_get_io_ptr(png);
    if (c->len - c->pos < n) {
        c->hit_end = 1;
        png_error(png, "premature end of data");
    }
    memcpy(dst, c->data + c->pos, n);
    c->pos += n;
}

static void iw_png_error(png_structp png, png_const_charp msg) {
    png_ctx *c = (png_ctx *)png_get_error_ptr(png);
    iw_set_reason(c->out, "%s", msg ? msg : "libpng error");
    png_longjmp(png, 1);
}

/* Warnings are about recoverable details (a known-bad sRGB profile, a CRC
   error in an ancillary chunk that libpng drops): the image displays fine,
   so they are neither printed nor counted. */
static void iw_png_warning(png_structp png, png_const_charp msg) {
    (void)png;
    (void)msg;
}

/* The part that can longjmp: kept in its own function so that the only
   state touched after setjmp lives in *c, outside this frame. */
static int iw_png_run(png_ctx *c) {
    png_structp png = c->png;
    png_infop info = c->info;
    if (setjmp(png_jmpbuf(png))) {
        if (c->status) return c->status;
        return c->hit_end ? IW_TRUNCATED : IW_CORRUPT;
    }
    png_set_read_fn(png, c, iw_png_read);
    uint32_t side = IW_PNG_MAX_SIDE;
    if (c->max_pixels < side) side = (uint32_t)(c->max_pixels ? c->max_pixels : 1);
    png_set_user_limits(png, side, side);
    png_set_chunk_malloc_max(png, IW_PNG_CHUNK_MALLOC_MAX);
    /* Unknown chunks are skipped (CRC still checked), except acTL, kept so
       the frame count of an APNG can be read: this libpng has no APNG
       support and decodes the default image only. */
    png_set_keep_unknown_chunks(png, PNG_HANDLE_CHUNK_NEVER, NULL, 0);
    static const png_byte actl[5] = {'a', 'c', 'T', 'L', '\0'};
    png_set_keep_unknown_chunks(png, PNG_HANDLE_CHUNK_ALWAYS, actl, 1);

    png_read_info(png, info);
    c->out->width = png_get_image_width(png, info);
    c->out->height = png_get_image_height(png, info);
    c->out->frames = 1;
    if (iw_exceeds(c->out->width, c->out->height, c->max_pixels)) return IW_TOO_LARGE;

    png_unknown_chunkp chunks = NULL;
    int n = png_get_unknown_chunks(png, info, &chunks);
    for (int i = 0; i < n; i++) {
        if (memcmp(chunks[i].name, "acTL", 4) == 0 && chunks[i].size >= 8) {
            uint32_t frames = iw_be32(chunks[i].data);
            if (frames > 0) c->out->frames = frames;
        }
    }

    int passes = png_set_interlace_handling(png);
    c->interlaced = passes > 1;
    png_read_update_info(png, info);
    size_t rowbytes = png_get_rowbytes(png, info);
    c->row = (uint8_t *)malloc(rowbytes ? rowbytes : 1);
    if (!c->row) {
        c->status = IW_NO_MEMORY;
        png_error(png, "out of memory for a row");
    }
    c->stage = 1;
    for (c->pass = 0; c->pass < passes; c->pass++) {
        for (c->row_index = 0; c->row_index < c->out->height; c->row_index++) {
            png_read_row(png, c->row, NULL);
        }
    }
    c->stage = 2;
    png_read_end(png, NULL);
    return IW_OK;
}

int iw_validate_png(const uint8_t *data, size_t len, uint64_t max_pixels, iw_result *out) {
    iw_reset(out);
    /* Judge IHDR before libpng sees it: a 0-pixel or oversized image gets
       its own status (libpng would only say "Invalid IHDR data"), and
       nothing is allocated for an image that will be refused. */
    if (len >= 24 && memcmp(data + 12, "IHDR", 4) == 0) {
        uint32_t w = iw_be32(data + 16), h = iw_be32(data + 20);
        out->width = w;
        out->height = h;
        if (w == 0 || h == 0) {
            iw_set_reason(out, "IHDR gives %ux%u", w, h);
            return IW_NO_PIXELS;
        }
        if (iw_exceeds(w, h, max_pixels)) return IW_TOO_LARGE;
        if (w > IW_PNG_MAX_SIDE || h > IW_PNG_MAX_SIDE) {
            /* Within the pixel limit yet too long a side for libpng's
               limits: say so rather than libpng's "Invalid IHDR data". */
            iw_set_reason(out, "IHDR gives %ux%u, a side longer than %u pixels", w, h, IW_PNG_MAX_SIDE);
            return IW_CORRUPT;
        }
    }
    png_ctx c;
    memset(&c, 0, sizeof c);
    c.data = data;
    c.len = len;
    c.max_pixels = max_pixels;
    c.out = out;
    c.png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &c, iw_png_error, iw_png_warning);
    if (!c.png) {
        iw_set_reason(out, "cannot create a libpng reader");
        return IW_NO_MEMORY;
    }
    c.info = png_create_info_struct(c.png);
    if (!c.info) {
        png_destroy_read_struct(&c.png, NULL, NULL);
        iw_set_reason(out, "cannot create a libpng reader");
        return IW_NO_MEMORY;
    }
    int status = iw_png_run(&c);
    if (status == IW_TRUNCATED) {
        if (c.stage == 1 && c.interlaced)
            iw_set_reason(out, "premature end of data in interlace pass %d of 7 (row %u of %u)",
                          c.pass + 1, c.row_index, out->height);
        else if (c.stage == 1)
            iw_set_reason(out, "premature end of data at row %u of %u", c.row_index, out->height);
        else if (c.stage == 2)
            iw_set_reason(out, "premature end of data after the last row (no IEND)");
        else
            iw_set_reason(out, "premature end of data in the header");
    } else if (status == IW_OK) {
        out->reason[0] = '\0';
    }
    png_destroy_read_struct(&c.png, &c.info, NULL);
    free(c.row);
    return status;
}
