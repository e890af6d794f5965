/* PNG validation: libpng reads and judges everything up to the first IDAT
   (png_read_info: signature, IHDR, PLTE, every chunk's CRC and order), and
   the size limits are checked; then the image data and the chunks after it
   are read here, the way libpng's sequential reader reads them (pngrutil.c
   png_read_IDAT_data and png_read_finish_IDAT, pngread.c png_read_row and
   png_read_end of libpng 1.6.39, with a NULL end info as we pass it), with
   the same zlib calls on the same input blocks and row-sized outputs, so
   every verdict is libpng's: each row of each interlace pass inflated and
   its filter byte checked, "Not enough image data" when the stream or the
   IDAT chunks end early, CRCs of critical chunks, IEND. What is left out is
   the work that cannot change a verdict: undoing the row filters (Paeth and
   the others only compute pixel values) and assembling interlaced rows,
   about half of libpng's instructions per image.

   APNG: Debian's libpng has no APNG patch and reads only the default image
   (its acTL, fcTL and fdAT chunks are unknown ancillary chunks to it, whose
   CRC errors it forgives). So every further frame is checked here, by hand,
   after libpng accepted the file: a walk over the chunks (CRCs, sequence
   numbers, acTL's frame count, each frame's rectangle inside the canvas and
   the frame budget of internal.h, all before any inflating), then each
   frame's fdAT zlib stream inflated to its end with zlib, its rows counted
   and their filter bytes checked. Frames are not unfiltered or composited:
   that only computes pixel values, and cannot fail.

   Both zlib paths above are the reference; each stream first goes through
   a fast path (libdeflate, in one call) whose success alone decides, see
   "the fast path" below. */
#include <libdeflate.h>
#include <png.h>
#include <setjmp.h>
#include <stdlib.h>
#include <zlib.h>
#include "inflate_agree.h"
#include "internal.h"

/* libpng's own default user limit; rows wider than this would need
   megabytes per row buffer, and no real PNG is that wide. */
#define IW_PNG_MAX_SIDE 1000000u
/* Largest ancillary chunk libpng may allocate, compressed or inflated:
   with text skipped, that is an iCCP profile (inflated into libpng's read
   buffer, then copied into the info struct: twice this at most, which the
   decode memory estimate charges for a file with iCCP). The largest ICC
   profiles in use (printer profiles with large lookup tables) stay under
   4 MiB; libpng's own default (PNG_USER_CHUNK_MALLOC_MAX) is 8,000,000. */
#define IW_PNG_CHUNK_MALLOC_MAX (8u * 1024u * 1024u)
/* Ancillary chunks libpng keeps in its info struct (sPLT, now that text
   and unknown chunks are skipped); libpng's default is 1000. Each is at
   most the chunk's length (and its entries, 10 bytes for 6 or 10 read),
   so they count as the file's size in the estimate. */
#define IW_PNG_CHUNK_CACHE_MAX 32u

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
    /* The fast path's libdeflate decompressor, made on first use; NULL
       when the caller asked for zlib's path only. */
    struct libdeflate_decompressor **inflater;
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
    png_set_chunk_cache_max(png, IW_PNG_CHUNK_CACHE_MAX);
    /* Unknown chunks (APNG's among them) are skipped, their CRC checked;
       the APNG walk below reads the animation chunks itself. */
    png_set_keep_unknown_chunks(png, PNG_HANDLE_CHUNK_NEVER, NULL, 0);
    /* Text is skipped the same way, CRC checked, never inflated or kept:
       libpng would inflate each zTXt and iTXt (up to the chunk malloc
       limit) and keep every text chunk in the info struct, so a file of
       many small compressed chunks costs gigabytes. No verdict depends on
       text: libpng reports its faults as benign (warnings). A known chunk
       named here is handled as an unknown one (pngread.c png_read_info:
       png_chunk_unknown_handling before the known handlers). */
    static const png_byte text_chunks[] = {'t', 'E', 'X', 't', '\0', 'z', 'T', 'X', 't', '\0', 'i', 'T', 'X', 't', '\0'};
    png_set_keep_unknown_chunks(png, PNG_HANDLE_CHUNK_NEVER, text_chunks, 3);

    png_read_info(png, info);
    c->out->width = png_get_image_width(png, info);
    c->out->height = png_get_image_height(png, info);
    c->out->frames = 1;
    if (iw_exceeds(c->out->width, c->out->height, c->max_pixels)) return IW_TOO_LARGE;

    return IW_OK;
}

/* ---- image data and trailing chunks, as libpng reads them ------------- */

/* pnglibconf.h of libpng 1.6: PNG_IDAT_READ_SIZE (PNG_ZBUF_SIZE) is the
   block libpng reads IDAT data in; PNG_INFLATE_BUF_SIZE the buffer of its
   end-of-stream check. Both change where zlib stops, so both are kept. */
#define IW_PNG_IDAT_READ_SIZE 8192u
#define IW_PNG_INFLATE_BUF_SIZE 1024u

/* Adam7: x start, y start, x step, y step of each pass. */
static const uint8_t iw_adam7[7][4] = {
    {0, 0, 8, 8}, {4, 0, 8, 8}, {0, 4, 4, 8}, {2, 0, 4, 4}, {0, 2, 2, 4}, {1, 0, 2, 2}, {0, 1, 1, 2},
};

/* The pixels of pass `pass` (0 when not interlaced), 0x0 when it has none. */
static void iw_pass_pixels(uint32_t width, uint32_t height, int interlaced, int pass, uint32_t *w, uint32_t *h) {
    static const uint8_t whole[4] = {0, 0, 1, 1};
    const uint8_t *a = interlaced ? iw_adam7[pass] : whole;
    *w = width > a[0] ? (width - a[0] + a[2] - 1) / a[2] : 0;
    *h = height > a[1] ? (height - a[1] + a[3] - 1) / a[3] : 0;
}

/* Where one frame's filtered image data stands: rows of 1 filter byte plus
   rowbytes, pass by pass. */
typedef struct {
    uint32_t width, height;
    unsigned bits_per_pixel;
    int interlaced;
    int pass;          /* 0..6 when interlaced, 0 otherwise; 7 when done */
    uint32_t row;      /* row within the pass */
    uint32_t rows;     /* rows of the pass */
    size_t row_len;    /* 1 + rowbytes of the pass */
    size_t at;         /* bytes of the current row seen */
    uint32_t rows_seen; /* over all passes, for reasons */
    uint32_t rows_total;
} iw_rows;

static void iw_pass_size(const iw_rows *r, int pass, uint32_t *w, uint32_t *h) {
    iw_pass_pixels(r->width, r->height, r->interlaced, pass, w, h);
}

/* Moves to the next pass that has pixels (or to "done"). */
static void iw_rows_next_pass(iw_rows *r, int from) {
    int last = r->interlaced ? 7 : 1;
    for (r->pass = from; r->pass < last; r->pass++) {
        uint32_t w, h;
        iw_pass_size(r, r->pass, &w, &h);
        if (w > 0 && h > 0) {
            r->rows = h;
            r->row = 0;
            r->row_len = 1 + ((size_t)w * r->bits_per_pixel + 7) / 8;
            return;
        }
    }
    r->pass = 7;
}

static void iw_rows_init(iw_rows *r, uint32_t w, uint32_t h, unsigned bpp, int interlaced) {
    memset(r, 0, sizeof *r);
    r->width = w;
    r->height = h;
    r->bits_per_pixel = bpp;
    r->interlaced = interlaced;
    for (int p = 0; p < (interlaced ? 7 : 1); p++) {
        uint32_t pw, ph;
        iw_pass_size(r, p, &pw, &ph);
        if (pw > 0) r->rows_total += ph;
    }
    iw_rows_next_pass(r, 0);
}

static int iw_rows_done(const iw_rows *r) { return r->pass == 7; }

/* Takes inflated bytes; -1 with the bad filter byte in *bad. Bytes past
   the last row are ignored, as libpng only warns about them. */
static int iw_rows_take(iw_rows *r, const uint8_t *p, size_t n, unsigned *bad) {
    while (n > 0 && !iw_rows_done(r)) {
        if (r->at == 0 && *p > 4) {
            *bad = *p;
            return -1;
        }
        size_t take = r->row_len - r->at < n ? r->row_len - r->at : n;
        p += take;
        n -= take;
        r->at += take;
        if (r->at == r->row_len) {
            r->at = 0;
            r->rows_seen++;
            if (++r->row == r->rows) iw_rows_next_pass(r, r->pass + 1);
        }
    }
    return 0;
}

static unsigned iw_png_bits_per_pixel(uint8_t depth, uint8_t color) {
    unsigned channels = color == 2 ? 3 : color == 4 ? 2 : color == 6 ? 4 : 1;
    return channels * depth;
}

/* ---- the fast path: libdeflate, where its success decides ------------ */

/* zlib's inflate, called for each row as libpng calls it, is most of a
   PNG's validation cost (its per-call set-up and slow tail on short rows
   most of all). So a whole zlib stream (the image's IDAT data, or one APNG
   frame's fdAT data) is first inflated in one call with libdeflate into a
   buffer of exactly the bytes the rows need. Only its success decides:
   every row's filter byte must be one zlib's path accepts, and
   iw_zlib_agrees (inflate_agree.c) must find none of the places where
   libdeflate accepts what zlib refuses; then zlib's path would have
   inflated the same bytes and passed them too. Any other outcome (a
   libdeflate error, too many or too few bytes, a bad filter byte, a chunk
   cut or with a bad CRC...) runs zlib's path from the start of the image
   data, whose verdict and reason are the reference.

   Larger images than this keep zlib's row buffer, so a validation's memory
   stays bounded (a 3,000 x 2,700 RGBA image fits). */
#define IW_PNG_FAST_MAX_BYTES (32u * 1024u * 1024u)

/* Filtered bytes of an image or frame: each pass's rows, a filter byte
   and the row's bytes each. */
static uint64_t iw_filtered_bytes(uint32_t width, uint32_t height, unsigned bpp, int interlaced) {
    uint64_t total = 0;
    for (int pass = 0; pass < (interlaced ? 7 : 1); pass++) {
        uint32_t pw, ph;
        iw_pass_pixels(width, height, interlaced, pass, &pw, &ph);
        if (pw > 0 && ph > 0) total += (uint64_t)ph * (1 + ((uint64_t)pw * bpp + 7) / 8);
    }
    return total;
}

/* A zlib stream gathered from chunk payloads: the payload itself when it
   is in one piece, else a copy of the pieces end to end. */
typedef struct {
    const uint8_t *data;
    uint8_t *copy;
    size_t len, cap;
} iw_stream;

static int iw_stream_add(iw_stream *s, const uint8_t *p, size_t n) {
    if (n == 0) return 1;
    if (s->len == 0) {
        s->data = p;
        s->len = n;
        return 1;
    }
    if (s->data != s->copy || s->len + n > s->cap) {
        size_t cap = 2 * (s->len + n);
        uint8_t *copy = (uint8_t *)malloc(cap);
        if (!copy) return 0;
        memcpy(copy, s->data, s->len);
        free(s->copy);
        s->copy = copy;
        s->cap = cap;
        s->data = copy;
    }
    memcpy(s->copy + s->len, p, n);
    s->len += n;
    return 1;
}

/* 1 when the stream is good image data for a width x height image or
   frame (see above); 0 when zlib's path must decide. window_from_header:
   zlib's window is the size the stream's header gives (libpng's
   inflateInit2 with 0), else 32 KiB (the APNG path's inflateInit). zlib
   checks a distance against what its window holds, libdeflate against the
   whole output: the two agree when the window holds 32 KiB (the farthest
   distance) or the whole output. */
static int iw_fast_inflate(struct libdeflate_decompressor **inflater, const iw_stream *s, uint32_t width,
                           uint32_t height, unsigned bpp, int interlaced, int window_from_header) {
    uint64_t want = iw_filtered_bytes(width, height, bpp, interlaced);
    if (s->len < 2 || want == 0 || want > IW_PNG_FAST_MAX_BYTES) return 0;
    unsigned cinfo = s->data[0] >> 4;
    if (cinfo > 7) return 0;
    uint64_t window = window_from_header ? (uint64_t)1 << (cinfo + 8) : 32768u;
    if (window < 32768u && want > window) return 0;
    if (!*inflater) *inflater = libdeflate_alloc_decompressor();
    struct libdeflate_decompressor *d = *inflater;
    uint8_t *out = (uint8_t *)malloc((size_t)want);
    int good = 0;
    size_t used = 0;
    if (d && out &&
        libdeflate_zlib_decompress_ex(d, s->data, s->len, out, (size_t)want, &used, NULL) == LIBDEFLATE_SUCCESS) {
        iw_rows rows;
        unsigned bad = 0;
        iw_rows_init(&rows, width, height, bpp, interlaced);
        good = iw_rows_take(&rows, out, (size_t)want, &bad) == 0 && iw_rows_done(&rows) &&
               iw_zlib_agrees(s->data, used);
    }
    free(out);
    return good;
}

/* The image data on the fast path: the IDAT chunks from the first (whose
   header libpng read) to the first other chunk, each whole with its CRC
   right, as one stream. 1: the image data is good and c->pos is past the
   last of those IDATs; zlib's path would have reached the same chunk, as
   png_read_end reads the IDATs after the stream's end (each whole with its
   CRC right) like any chunk. 0: c->pos is unchanged. */
static int iw_png_idat_fast(png_ctx *c, unsigned bpp) {
    if (iw_filtered_bytes(c->out->width, c->out->height, bpp, c->interlaced) > IW_PNG_FAST_MAX_BYTES) return 0;
    size_t pos = c->pos - 8;
    iw_stream s;
    memset(&s, 0, sizeof s);
    int good = 1;
    do {
        uint32_t n = iw_be32(c->data + pos);
        if (n > 0x7FFFFFFFu || (uint64_t)n + 12 > c->len - pos ||
            (uint32_t)crc32(0, c->data + pos + 4, n + 4) != iw_be32(c->data + pos + 8 + n) ||
            !iw_stream_add(&s, c->data + pos + 8, n)) {
            good = 0;
            break;
        }
        pos += 12 + (size_t)n;
    } while (c->len - pos >= 8 && memcmp(c->data + pos + 4, "IDAT", 4) == 0);
    good = good && iw_fast_inflate(c->inflater, &s, c->out->width, c->out->height, bpp, c->interlaced, 1);
    free(s.copy);
    if (good) c->pos = pos;
    return good;
}

typedef struct {
    png_ctx *c;
    uLong crc;           /* CRC of the current chunk so far */
    uint32_t idat_left;  /* bytes of the current IDAT not read yet */
    z_stream z;
    int z_open;
    int z_started;       /* the first byte was seen (libpng's zstream_start) */
    int ended;           /* Z_STREAM_END seen */
} iw_png_reader;

/* Reads n bytes of the current chunk (into the CRC); NULL when the data
   ends first. */
static const uint8_t *iw_png_take(iw_png_reader *r, size_t n) {
    png_ctx *c = r->c;
    if (c->len - c->pos < n) {
        c->hit_end = 1;
        return NULL;
    }
    const uint8_t *p = c->data + c->pos;
    c->pos += n;
    r->crc = crc32(r->crc, p, (uInt)n);
    return p;
}

/* png_read_chunk_header: length, type, its checks (an over-long chunk is
   only a benign error in libpng, so not checked). */
static int iw_png_chunk_header(iw_png_reader *r, uint32_t *length, char type[4]) {
    png_ctx *c = r->c;
    if (c->len - c->pos < 8) {
        c->hit_end = 1;
        return IW_TRUNCATED;
    }
    const uint8_t *p = c->data + c->pos;
    c->pos += 8;
    *length = iw_be32(p);
    memcpy(type, p + 4, 4);
    r->crc = crc32(0, p + 4, 4);
    if (*length > 0x7FFFFFFFu) {
        iw_set_reason(c->out, "PNG unsigned integer out of range");
        return IW_CORRUPT;
    }
    for (int i = 0; i < 4; i++) {
        uint8_t ch = (uint8_t)type[i];
        if (ch < 65 || ch > 122 || (ch > 90 && ch < 97)) {
            /* png_format_buffer: letters as they are, other bytes in hex. */
            char name[17];
            size_t at = 0;
            for (int k = 0; k < 4; k++) {
                uint8_t b = p[4 + k];
                int letter = (b >= 65 && b <= 90) || (b >= 97 && b <= 122);
                at += (size_t)snprintf(name + at, sizeof name - at, letter ? "%c" : "[%02X]", b);
            }
            iw_set_reason(c->out, "%s: invalid chunk type", name);
            return IW_CORRUPT;
        }
    }
    return IW_OK;
}

/* png_crc_finish: skips the rest of the chunk, then its CRC must match;
   libpng forgives a bad CRC in an ancillary chunk (lowercase first letter). */
static int iw_png_crc_finish(iw_png_reader *r, uint32_t skip, const char type[4]) {
    if (!iw_png_take(r, skip)) return IW_TRUNCATED;
    png_ctx *c = r->c;
    if (c->len - c->pos < 4) {
        c->hit_end = 1;
        return IW_TRUNCATED;
    }
    uint32_t want = iw_be32(c->data + c->pos);
    c->pos += 4;
    if (want != (uint32_t)r->crc && !(type[0] & 0x20)) {
        iw_set_reason(c->out, "%.4s: CRC error", type);
        return IW_CORRUPT;
    }
    return IW_OK;
}

/* The input side of png_read_IDAT_data: the next block of IDAT data, over
   as many (empty) IDAT chunks as it takes; any other chunk means the image
   data ended too soon. */
static int iw_png_next_block(iw_png_reader *r) {
    static const char idat[4] = {'I', 'D', 'A', 'T'};
    while (r->idat_left == 0) {
        int st = iw_png_crc_finish(r, 0, idat);
        if (st != IW_OK) return st;
        char type[4];
        uint32_t length;
        if ((st = iw_png_chunk_header(r, &length, type)) != IW_OK) return st;
        if (memcmp(type, idat, 4) != 0) {
            iw_set_reason(r->c->out, "Not enough image data");
            return IW_CORRUPT;
        }
        r->idat_left = length;
    }
    uint32_t n = r->idat_left < IW_PNG_IDAT_READ_SIZE ? r->idat_left : IW_PNG_IDAT_READ_SIZE;
    const uint8_t *p = iw_png_take(r, n);
    if (!p) return IW_TRUNCATED;
    r->idat_left -= n;
    r->z.next_in = (Bytef *)p;
    r->z.avail_in = n;
    return IW_OK;
}

/* png_zlib_inflate: libpng refuses a window size field above 7 itself. */
static int iw_png_inflate(iw_png_reader *r) {
    if (!r->z_started && r->z.avail_in > 0) {
        if ((*r->z.next_in >> 4) > 7) {
            r->z.msg = (char *)"invalid window size (libpng)";
            return Z_DATA_ERROR;
        }
        r->z_started = 1;
    }
    return inflate(&r->z, Z_NO_FLUSH);
}

/* png_zstream_error's names for a zlib status without a message. */
static const char *iw_zlib_message(const z_stream *z, int ret) {
    if (z->msg) return z->msg;
    switch (ret) {
    case Z_STREAM_END: return "unexpected end of LZ stream";
    case Z_NEED_DICT: return "missing LZ dictionary";
    case Z_STREAM_ERROR: return "bad parameters to zlib";
    case Z_DATA_ERROR: return "damaged LZ stream";
    case Z_MEM_ERROR: return "insufficient memory";
    case Z_BUF_ERROR: return "truncated";
    default: return "unexpected zlib return code";
    }
}

/* One row: png_read_IDAT_data with an output of row_len bytes, then
   png_read_row's filter byte check. */
static int iw_png_read_row(iw_png_reader *r, uint8_t *row, size_t row_len) {
    r->z.next_out = row;
    size_t avail_out = row_len;
    do {
        int st;
        if (r->z.avail_in == 0 && (st = iw_png_next_block(r)) != IW_OK) return st;
        r->z.avail_out = (uInt)avail_out;
        avail_out = 0;
        int ret = iw_png_inflate(r);
        avail_out += r->z.avail_out;
        r->z.avail_out = 0;
        if (ret == Z_STREAM_END) {
            r->z.next_out = NULL;
            r->ended = 1;
            break;
        }
        if (ret != Z_OK) {
            iw_set_reason(r->c->out, "IDAT: %s", iw_zlib_message(&r->z, ret));
            return ret == Z_MEM_ERROR ? IW_NO_MEMORY : IW_CORRUPT;
        }
    } while (avail_out > 0);
    if (avail_out > 0) {
        iw_set_reason(r->c->out, "Not enough image data");
        return IW_CORRUPT;
    }
    if (row[0] > 4) {
        iw_set_reason(r->c->out, "bad adaptive filter value");
        return IW_CORRUPT;
    }
    return IW_OK;
}

/* png_read_finish_IDAT after the last row: one look for the end of the
   stream (its errors and extra data are benign in libpng), then the rest
   of the current IDAT and its CRC. */
static int iw_png_finish_idat(iw_png_reader *r) {
    if (!r->ended) {
        uint8_t tmp[IW_PNG_INFLATE_BUF_SIZE];
        size_t produced = 0;
        do {
            int st;
            if (r->z.avail_in == 0 && (st = iw_png_next_block(r)) != IW_OK) return st;
            r->z.next_out = tmp;
            r->z.avail_out = sizeof tmp;
            int ret = iw_png_inflate(r);
            produced += sizeof tmp - r->z.avail_out;
            r->z.avail_out = 0;
            if (ret == Z_STREAM_END || ret != Z_OK) break;
        } while (produced > 0);
    }
    static const char idat[4] = {'I', 'D', 'A', 'T'};
    return iw_png_crc_finish(r, r->idat_left, idat);
}

/* png_read_end with a NULL info: every chunk up to IEND has its CRC
   checked (critical ones must match), a second IHDR is fatal. */
static int iw_png_read_end(iw_png_reader *r) {
    for (;;) {
        char type[4];
        uint32_t length;
        int st = iw_png_chunk_header(r, &length, type);
        if (st != IW_OK) return st;
        if (memcmp(type, "IHDR", 4) == 0) {
            iw_set_reason(r->c->out, "IHDR: out of place");
            return IW_CORRUPT;
        }
        if ((st = iw_png_crc_finish(r, length, type)) != IW_OK) return st;
        if (memcmp(type, "IEND", 4) == 0) return IW_OK;
    }
}

/* Image data from the first IDAT (libpng's png_read_info stopped after its
   chunk header), every row of every pass, then the trailing chunks. */
static int iw_png_image_data(png_ctx *c) {
    const uint8_t *ihdr = c->data + 16;
    const unsigned bpp = iw_png_bits_per_pixel(ihdr[8], ihdr[9]);
    const uint32_t width = c->out->width, height = c->out->height;
    c->interlaced = ihdr[12] == 1;
    iw_png_reader r;
    memset(&r, 0, sizeof r);
    r.c = c;
    if (c->inflater && iw_png_idat_fast(c, bpp)) {
        c->stage = 2;
        return iw_png_read_end(&r);
    }
    r.idat_left = iw_be32(c->data + c->pos - 8);
    r.crc = crc32(0, c->data + c->pos - 4, 4);
    /* libpng's inflate: the window size the stream's header gives. */
    if (inflateInit2(&r.z, 0) != Z_OK) {
        iw_set_reason(c->out, "out of memory for zlib");
        return IW_NO_MEMORY;
    }
    size_t row_max = ((size_t)width * bpp + 7) / 8 + 1;
    c->row = (uint8_t *)malloc(row_max);
    if (!c->row) {
        inflateEnd(&r.z);
        iw_set_reason(c->out, "out of memory for a row");
        return IW_NO_MEMORY;
    }
    int st = IW_OK;
    c->stage = 1;
    for (int pass = 0; pass < (c->interlaced ? 7 : 1) && st == IW_OK; pass++) {
        uint32_t pw, ph;
        iw_pass_pixels(width, height, c->interlaced, pass, &pw, &ph);
        if (pw == 0 || ph == 0) continue;
        size_t row_len = ((size_t)pw * bpp + 7) / 8 + 1;
        c->pass = pass;
        /* The image row this pass row is, for reasons: y start + k x y step. */
        uint32_t y0 = c->interlaced ? iw_adam7[pass][1] : 0, dy = c->interlaced ? iw_adam7[pass][3] : 1;
        for (uint32_t k = 0; k < ph && st == IW_OK; k++) {
            c->row_index = y0 + k * dy;
            st = iw_png_read_row(&r, c->row, row_len);
            if (st == IW_OK && iw_out_of_time_every(64)) {
                iw_set_reason(c->out, "stopped at row %u of %u", c->row_index, height);
                st = IW_TOO_COMPLEX;
            }
        }
    }
    if (st == IW_OK) {
        /* libpng finishes the data inside the last row call it makes. */
        c->pass = c->interlaced ? 6 : 0;
        c->row_index = height - 1;
        st = iw_png_finish_idat(&r);
    }
    inflateEnd(&r.z);
    if (st == IW_OK) {
        c->stage = 2;
        st = iw_png_read_end(&r);
    }
    return st;
}

/* ---- APNG frames ------------------------------------------------------- */

/* One frame's zlib stream, fed fdAT payload by payload. */
typedef struct {
    z_stream z;
    int open;
    int ended;
    iw_rows rows;
    uint32_t frame;  /* 1-based, counting the default image when it is frame 1 */
} iw_frame_stream;

static int iw_frame_feed(iw_frame_stream *f, const uint8_t *p, size_t n, iw_result *out) {
    uint8_t buf[16384];
    f->z.next_in = (Bytef *)p;
    f->z.avail_in = (uInt)n;
    while (f->z.avail_in > 0 && !f->ended) {
        f->z.next_out = buf;
        f->z.avail_out = sizeof buf;
        int ret = inflate(&f->z, Z_NO_FLUSH);
        unsigned bad = 0;
        if (iw_rows_take(&f->rows, buf, sizeof buf - f->z.avail_out, &bad) != 0) {
            iw_set_reason(out, "APNG frame %u: fdAT: bad adaptive filter value %u at row %u of %u",
                          f->frame, bad, f->rows.rows_seen, f->rows.rows_total);
            return IW_CORRUPT;
        }
        if (ret == Z_STREAM_END) f->ended = 1;
        else if (ret != Z_OK) {
            iw_set_reason(out, "APNG frame %u: fdAT: %s", f->frame, f->z.msg ? f->z.msg : "zlib error");
            return ret == Z_MEM_ERROR ? IW_NO_MEMORY : IW_CORRUPT;
        }
    }
    return IW_OK;
}

/* The frame's stream must have ended (its Adler-32 checked by zlib) with
   every row of the frame. */
static int iw_frame_finish(iw_frame_stream *f, iw_result *out) {
    int status = IW_OK;
    if (!iw_rows_done(&f->rows)) {
        iw_set_reason(out, "APNG frame %u: image data ends at row %u of %u", f->frame,
                      f->rows.rows_seen, f->rows.rows_total);
        status = IW_TRUNCATED;
    } else if (!f->ended) {
        iw_set_reason(out, "APNG frame %u: zlib stream not ended after the last row", f->frame);
        status = IW_TRUNCATED;
    }
    if (f->open) inflateEnd(&f->z);
    f->open = 0;
    return status;
}

/* An APNG chunk's checks that do not need inflating: CRC, length, and the
   sequence number shared by fcTL and fdAT. */
static int iw_apng_chunk(const uint8_t *chunk, uint32_t n, uint32_t *next_seq, iw_result *out) {
    const char *type = (const char *)chunk + 4;
    uint32_t want = iw_be32(chunk + 8 + n);
    if ((uint32_t)crc32(0, chunk + 4, n + 4) != want) {
        iw_set_reason(out, "%.4s: CRC error", type);
        return IW_CORRUPT;
    }
    if (memcmp(type, "acTL", 4) == 0) return n == 8 ? IW_OK : (iw_set_reason(out, "acTL: length %u, not 8", n), IW_CORRUPT);
    if (n < 4 || (memcmp(type, "fcTL", 4) == 0 && n != 26)) {
        iw_set_reason(out, "%.4s: length %u", type, n);
        return IW_CORRUPT;
    }
    uint32_t seq = iw_be32(chunk + 8);
    if (seq != *next_seq) {
        iw_set_reason(out, "%.4s: sequence number %u where %u was due", type, seq, *next_seq);
        return IW_CORRUPT;
    }
    (*next_seq)++;
    return IW_OK;
}

/* Checks an fcTL's rectangle and operations; frame 1 before IDAT must
   cover the canvas (it is the default image). */
static int iw_apng_fctl(const uint8_t *body, uint32_t frame, int before_idat, uint32_t cw, uint32_t ch,
                        iw_result *out) {
    uint32_t w = iw_be32(body + 4), h = iw_be32(body + 8), x = iw_be32(body + 12), y = iw_be32(body + 16);
    uint8_t dispose = body[24], blend = body[25];
    if (w == 0 || h == 0 || x > cw || y > ch || w > cw - x || h > ch - y) {
        iw_set_reason(out, "APNG frame %u (%ux%u at %u,%u) lies outside the %ux%u canvas", frame, w, h, x, y, cw, ch);
        return IW_CORRUPT;
    }
    if (before_idat && (x != 0 || y != 0 || w != cw || h != ch)) {
        iw_set_reason(out, "APNG frame 1 is the default image but is %ux%u at %u,%u, not the %ux%u canvas",
                      w, h, x, y, cw, ch);
        return IW_CORRUPT;
    }
    if (dispose > 2 || blend > 1) {
        iw_set_reason(out, "APNG frame %u: dispose op %u, blend op %u", frame, dispose, blend);
        return IW_CORRUPT;
    }
    return IW_OK;
}

/* The fast path for one frame: its fdAT data, from the chunk at pos (after
   its fcTL) to the next fcTL, walked as pass 2 walks it (whole chunks up to
   IEND; pass 1 checked their CRCs). 1 when the frame is good. */
static int iw_apng_frame_fast(struct libdeflate_decompressor **inflater, const uint8_t *data, size_t len,
                              size_t pos, const uint8_t *fctl, unsigned bpp, int interlaced) {
    iw_stream s;
    memset(&s, 0, sizeof s);
    int good = 1;
    while (pos + 12 <= len && good) {
        uint32_t n = iw_be32(data + pos);
        const uint8_t *chunk = data + pos;
        if (n > len - pos - 12 || memcmp(chunk + 4, "IEND", 4) == 0 || memcmp(chunk + 4, "fcTL", 4) == 0) break;
        pos += 12 + (size_t)n;
        if (memcmp(chunk + 4, "fdAT", 4) == 0 && n >= 4) good = iw_stream_add(&s, chunk + 12, n - 4);
    }
    good = good && iw_fast_inflate(inflater, &s, iw_be32(fctl + 12), iw_be32(fctl + 16), bpp, interlaced, 0);
    free(s.copy);
    return good;
}

/* After libpng accepted the file (so every chunk up to IEND is inside the
   data): the APNG's frames, if it is one. Sets out->frames. inflater: as
   png_ctx's. */
static int iw_apng_frames(const uint8_t *data, size_t len, uint64_t max_pixels,
                          struct libdeflate_decompressor **inflater, iw_result *out) {
    const uint32_t cw = out->width, ch = out->height;
    const unsigned bpp = iw_png_bits_per_pixel(data[24], data[25]);
    const int interlaced = data[28] == 1;
    /* Pass 1: structure and sizes, nothing inflated. */
    uint32_t announced = 0, frames = 0, next_seq = 0, idat_frame = 0;
    int animated = 0, seen_idat = 0, frame_has_data = 1;
    uint64_t total = 0;
    int status;
    /* An APNG is a PNG with an acTL before its first IDAT (libpng's APNG
       patch, png_handle_acTL: "Invalid acTL after IDAT skipped"); then its
       fcTL and fdAT chunks count from the first chunk on, also those before
       the acTL: the patch reads an fcTL wherever it comes before IDAT
       (png_handle_fcTL checks the sequence number, not the acTL), so
       `IHDR fcTL(0) acTL IDAT fcTL(1) fdAT(2)` animates in Firefox and every
       decoder built on it. Without such an acTL its chunks are unknown
       ancillary chunks, which decoders ignore. */
    int has_actl = 0;
    for (size_t pos = 8; pos + 12 <= len;) {
        uint32_t n = iw_be32(data + pos);
        const char *type = (const char *)data + pos + 4;
        if (n > len - pos - 12 || memcmp(type, "IEND", 4) == 0 || memcmp(type, "IDAT", 4) == 0) break;
        if (memcmp(type, "acTL", 4) == 0) {
            has_actl = 1;
            break;
        }
        pos += 12 + (size_t)n;
    }
    if (!has_actl) return IW_OK;
    for (size_t pos = 8; pos + 12 <= len;) {
        uint32_t n = iw_be32(data + pos);
        const uint8_t *chunk = data + pos;
        const char *type = (const char *)chunk + 4;
        if (n > len - pos - 12 || memcmp(type, "IEND", 4) == 0) break;
        pos += 12 + (size_t)n;
        if (memcmp(type, "IDAT", 4) == 0) {
            seen_idat = 1;
            continue;
        }
        /* The first acTL (before IDAT, as the scan above found); a later
           one is skipped as the APNG patch skips it. */
        if (memcmp(type, "acTL", 4) == 0 && !seen_idat && !animated) {
            if ((status = iw_apng_chunk(chunk, n, &next_seq, out)) != IW_OK) return status;
            announced = iw_be32(chunk + 8);
            if (announced == 0) {
                iw_set_reason(out, "acTL announces 0 frames");
                return IW_CORRUPT;
            }
            animated = 1;
            continue;
        }
        int fctl = memcmp(type, "fcTL", 4) == 0, fdat = memcmp(type, "fdAT", 4) == 0;
        if (!fctl && !fdat) continue;
        if ((status = iw_apng_chunk(chunk, n, &next_seq, out)) != IW_OK) return status;
        if (fctl) {
            if (!frame_has_data) {
                iw_set_reason(out, "APNG frame %u has no image data", frames);
                return IW_CORRUPT;
            }
            frames++;
            if ((status = iw_apng_fctl(chunk + 8, frames, !seen_idat, cw, ch, out)) != IW_OK) return status;
            if (!seen_idat) idat_frame = frames;
            frame_has_data = !seen_idat;  /* the default image's data is the IDAT */
            uint64_t pixels = (uint64_t)iw_be32(chunk + 12) * iw_be32(chunk + 16);
            if (iw_frames_over_budget(&total, pixels, max_pixels, frames, out)) return IW_TOO_LARGE;
        } else {
            if (!seen_idat || frames == 0 || frames == idat_frame) {
                iw_set_reason(out, "fdAT outside a frame (sequence number %u)", next_seq - 1);
                return IW_CORRUPT;
            }
            frame_has_data = 1;
        }
    }
    if (!animated) return IW_OK;
    if (!frame_has_data) {
        iw_set_reason(out, "APNG frame %u has no image data", frames);
        return IW_CORRUPT;
    }
    if (frames != announced) {
        iw_set_reason(out, "acTL announces %u frames, %u fcTL chunks found", announced, frames);
        return IW_CORRUPT;
    }
    out->frames = frames;
    /* Pass 2: each frame after the IDAT, its fdAT stream to the end. */
    iw_frame_stream f;
    memset(&f, 0, sizeof f);
    uint32_t frame = 0;
    status = IW_OK;
    for (size_t pos = 8; pos + 12 <= len && status == IW_OK;) {
        uint32_t n = iw_be32(data + pos);
        const uint8_t *chunk = data + pos;
        const char *type = (const char *)chunk + 4;
        if (n > len - pos - 12 || memcmp(type, "IEND", 4) == 0) break;
        pos += 12 + (size_t)n;
        if (memcmp(type, "fcTL", 4) == 0) {
            if (iw_out_of_time()) {
                iw_set_reason(out, "stopped before frame %u of %u", frame + 1, frames);
                status = IW_TOO_COMPLEX;
                break;
            }
            frame++;
            if (frame == idat_frame) continue;
            if (f.open) status = iw_frame_finish(&f, out);
            if (status != IW_OK) break;
            memset(&f, 0, sizeof f);
            /* A frame the fast path passes stays closed: its fdATs are skipped. */
            if (inflater && iw_apng_frame_fast(inflater, data, len, pos, chunk, bpp, interlaced)) continue;
            if (inflateInit(&f.z) != Z_OK) {
                iw_set_reason(out, "out of memory for zlib");
                return IW_NO_MEMORY;
            }
            f.open = 1;
            f.frame = frame;
            iw_rows_init(&f.rows, iw_be32(chunk + 12), iw_be32(chunk + 16), bpp, interlaced);
        } else if (memcmp(type, "fdAT", 4) == 0 && f.open && n >= 4) {
            status = iw_frame_feed(&f, chunk + 12, n - 4, out);
        }
    }
    if (status == IW_OK && f.open) status = iw_frame_finish(&f, out);
    if (f.open) inflateEnd(&f.z);
    return status;
}

int iw_validate_png(const uint8_t *data, size_t len, uint64_t max_pixels, iw_result *out) {
    return iw_validate_png_using(data, len, max_pixels, IW_PNG_INFLATE_FAST, out);
}

int iw_validate_png_using(const uint8_t *data, size_t len, uint64_t max_pixels, iw_png_inflater path,
                          iw_result *out) {
    struct libdeflate_decompressor *fast = NULL;
    struct libdeflate_decompressor **inflater = path == IW_PNG_INFLATE_ZLIB ? NULL : &fast;
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
    /* A chunk before the image data that claims more bytes than are left
       is a cut file: say so before libpng, which allocates an ancillary
       chunk's declared length (tEXt, zTXt, iCCP: up to 2^31 - 1) before it
       finds the data missing (the image fuzzer found 1.7 GB for a 203-byte
       file). Same status and reason as libpng's path; lengths over 2^31 - 1
       stay libpng's to call corrupt. */
    for (size_t pos = 8; pos + 8 <= len;) {
        uint32_t n = iw_be32(data + pos);
        if (memcmp(data + pos + 4, "IDAT", 4) == 0 || n > 0x7FFFFFFFu) break;
        if ((uint64_t)n + 12 > len - pos) {
            iw_set_reason(out, "premature end of data in the header");
            return IW_TRUNCATED;
        }
        pos += 12 + (size_t)n;
    }
    png_ctx c;
    memset(&c, 0, sizeof c);
    c.data = data;
    c.len = len;
    c.max_pixels = max_pixels;
    c.out = out;
    c.inflater = inflater;
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
    if (status == IW_OK) status = iw_png_image_data(&c);
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
    }
    png_destroy_read_struct(&c.png, &c.info, NULL);
    free(c.row);
    if (status == IW_OK) {
        out->reason[0] = '\0';
        status = iw_apng_frames(data, len, max_pixels, inflater, out);
    }
    if (fast) libdeflate_free_decompressor(fast);
    return status;
}
