/* TIFF: libtiff decodes every strip or tile of the first image, for the
   cases the header walk of ImageHeader.tiff cannot judge alone (a strip
   whose StripByteCounts reach past the end of the data: cut short, or only
   overstated while every pixel byte is there). libtiff is what ImageIO's
   TIFF reader is built on, and it forgives an overstated count: its
   directory reader re-estimates a single uncompressed strip whose count
   passes the file ("Bogus StripByteCounts field, ignoring and calculating
   from imagelength", tif_dirread.c). So the verdict on those files is
   libtiff's. Read from memory through TIFFClientOpenExt
   with per-handle error and warning handlers (libtiff 4.5): nothing is
   printed and no global handler is touched, so calls on several threads
   stay apart. The first image only: SDWebImage shows a TIFF through
   SDImageIOCoder, the first frame. */
#include <stdlib.h>
#include <tiffio.h>
#include "internal.h"

/* Largest single allocation libtiff may make for one image (a strip or
   tile buffer, its directory arrays): what a frame of the pixel limit
   needs in 16-bit RGBA, and no more than 1 GiB. */
#define IW_TIFF_MAX_ALLOC (1024L * 1024L * 1024L)

typedef struct {
    const uint8_t *data;
    size_t len;
    uint64_t pos;
    iw_result *out;
    int failed;
} iw_tiff_src;

static tmsize_t iw_tiff_read(thandle_t h, void *buf, tmsize_t n) {
    iw_tiff_src *s = (iw_tiff_src *)h;
    if (n <= 0 || s->pos >= s->len) return 0;
    uint64_t avail = s->len - s->pos;
    uint64_t want = (uint64_t)n < avail ? (uint64_t)n : avail;
    memcpy(buf, s->data + s->pos, (size_t)want);
    s->pos += want;
    return (tmsize_t)want;
}

static tmsize_t iw_tiff_write(thandle_t h, void *buf, tmsize_t n) {
    (void)h;
    (void)buf;
    (void)n;
    return -1;
}

static toff_t iw_tiff_seek(thandle_t h, toff_t off, int whence) {
    iw_tiff_src *s = (iw_tiff_src *)h;
    uint64_t base = whence == SEEK_CUR ? s->pos : whence == SEEK_END ? s->len : 0;
    if (off > UINT64_MAX - base) return (toff_t)-1;
    /* Past the end is allowed (reads there return 0), as for a file. */
    s->pos = base + off;
    return s->pos;
}

static int iw_tiff_close(thandle_t h) {
    (void)h;
    return 0;
}

static toff_t iw_tiff_size(thandle_t h) { return ((iw_tiff_src *)h)->len; }

/* The first error is the reason; warnings are not verdicts (libtiff warns
   about the very counts it then corrects). Returning 1 keeps libtiff from
   calling the process-wide handler, which prints to stderr. */
static int iw_tiff_error(TIFF *tif, void *user, const char *module, const char *fmt, va_list ap) {
    (void)tif;
    (void)module;
    iw_tiff_src *s = (iw_tiff_src *)user;
    if (!s->failed) {
        char text[IW_REASON_SIZE];
        vsnprintf(text, sizeof text, fmt, ap);
        iw_set_reason(s->out, "%s", text);
        s->failed = 1;
    }
    return 1;
}

static int iw_tiff_warning(TIFF *tif, void *user, const char *module, const char *fmt, va_list ap) {
    (void)tif;
    (void)user;
    (void)module;
    (void)fmt;
    (void)ap;
    return 1;
}

int iw_validate_tiff_data(const uint8_t *data, size_t len, uint64_t max_pixels, iw_result *out) {
    iw_reset(out);
    iw_tiff_src src = {data, len, 0, out, 0};
    TIFFOpenOptions *opts = TIFFOpenOptionsAlloc();
    if (!opts) {
        iw_set_reason(out, "cannot create a libtiff reader");
        return IW_NO_MEMORY;
    }
    TIFFOpenOptionsSetMaxSingleMemAlloc(opts, IW_TIFF_MAX_ALLOC);
    TIFFOpenOptionsSetErrorHandlerExtR(opts, iw_tiff_error, &src);
    TIFFOpenOptionsSetWarningHandlerExtR(opts, iw_tiff_warning, &src);
    /* "m": no memory mapping, every read goes through iw_tiff_read. */
    TIFF *tif = TIFFClientOpenExt("tiff", "rm", (thandle_t)&src, iw_tiff_read, iw_tiff_write, iw_tiff_seek,
                                  iw_tiff_close, iw_tiff_size, NULL, NULL, opts);
    TIFFOpenOptionsFree(opts);
    if (!tif) {
        if (!src.failed) iw_set_reason(out, "libtiff cannot read the header");
        return IW_CORRUPT;
    }
    int status = IW_OK;
    uint32_t w = 0, h = 0;
    TIFFGetField(tif, TIFFTAG_IMAGEWIDTH, &w);
    TIFFGetField(tif, TIFFTAG_IMAGELENGTH, &h);
    out->width = w;
    out->height = h;
    out->frames = 1;
    if (w == 0 || h == 0) {
        iw_set_reason(out, "header gives %ux%u", w, h);
        status = IW_NO_PIXELS;
    } else if (iw_exceeds(w, h, max_pixels)) {
        status = IW_TOO_LARGE;
    } else {
        int tiled = TIFFIsTiled(tif);
        uint32_t pieces = tiled ? TIFFNumberOfTiles(tif) : TIFFNumberOfStrips(tif);
        tmsize_t size = tiled ? TIFFTileSize(tif) : TIFFStripSize(tif);
        void *buf = size > 0 && size <= IW_TIFF_MAX_ALLOC ? malloc((size_t)size) : NULL;
        if (!buf) {
            if (!src.failed) iw_set_reason(out, "no buffer for a %s of %lld bytes", tiled ? "tile" : "strip", (long long)size);
            status = size > 0 ? IW_NO_MEMORY : IW_CORRUPT;
        }
        for (uint32_t k = 0; buf && k < pieces; k++) {
            /* Size -1: through the codec (DumpModeDecode for uncompressed
               data), which checks each strip's data against its byte
               count, as tiffinfo -D and ImageMagick read it; a size would
               let an uncompressed strip be read raw, its count unchecked. */
            tmsize_t got = tiled ? TIFFReadEncodedTile(tif, k, buf, (tmsize_t)-1)
                                 : TIFFReadEncodedStrip(tif, k, buf, (tmsize_t)-1);
            if (got < 0 || src.failed) {
                char why[IW_REASON_SIZE];
                snprintf(why, sizeof why, "%s", src.failed ? out->reason : "read error");
                iw_set_reason(out, "%s %u of %u: %s", tiled ? "tile" : "strip", k + 1, pieces, why);
                status = IW_CORRUPT;
                break;
            }
        }
        free(buf);
    }
    TIFFClose(tif);
    return status;
}
