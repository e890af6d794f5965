/* GIF validation with giflib, record by record: the logical screen and each
   frame's size are checked against the limits before the frame is decoded
   (a frame may reach outside the screen: see iw_gif_run), and every frame's
   LZW data is checked without producing pixels (iw_gif_lzw_frame below);
   DGifSlurp would keep the rasters of all frames in memory at once. */
#include <gif_lib.h>
#include <stdlib.h>
#include "internal.h"

/* --- The LZW check of one frame ------------------------------------------

   Why by hand: a verdict needs no pixel, only whether giflib's decoding of
   the frame succeeds and how it fails, and giflib has no decode-without-
   pixels mode: DGifGetLine emits every pixel by walking prefix chains (about
   70 instructions a pixel, most of a GIF's validation). So the raw data
   blocks still come from giflib (DGifGetCode / DGifGetCodeNext: block
   reading and truncation stay its own), and the code walk below mirrors
   giflib 5.2.1's dgif_lib.c decision for decision: DGifSetupDecompress
   (the state after a code size), DGifDecompressInput (code widths: the
   RunningCode / RunningBits / MaxCode1 growth, the LZ_BITS cap),
   DGifBufferedInput (a zero-length block while codes are still needed is
   D_GIF_ERR_IMAGE_DEFECT, a short block D_GIF_ERR_READ_FAILED),
   DGifDecompressLine (ClearCode, EOFCode before the last pixel:
   D_GIF_ERR_EOF_TOO_SOON; a code with no prefix yet, whether the one being
   defined, RunningCode - 2, or garbage beyond it, decodes as the previous
   code plus one pixel; the prefix-chain walk fails with
   D_GIF_ERR_IMAGE_DEFECT when it meets an undefined code or would overflow
   the 4095-entry pixel stack, as a cycle made of garbage codes does; the
   table entry RunningCode - 2 is defined once, from LastCode), and
   DGifGetLine (once the frame's pixels are all out, the remaining blocks are
   read up to the empty one, whatever they hold). Lines only cut giflib's
   pixel stream into pieces, so a frame is its width x height pixels in one
   piece here. DGifGetPrefixChar and the Suffix table only give pixel
   values, which no decision reads: neither is kept.

   Instead of pushing a code's pixels, the walk counts them: len[code] is the
   length of the code's string once its prefix chain is known to end in a
   pixel (a chain never changes after that: giflib writes a Prefix entry
   only while it is empty, until the next ClearCode). A chain through a
   code not defined yet (garbage codes can point forward, or at themselves)
   is walked entry by entry like giflib's, and its length kept once it
   resolves. The cost is per code, not per pixel.
   tests: Tests/ImgWarmKitTests/Decode/ImageValidatorGIFTests.swift compares every
   verdict with giflib's own DGifGetLine (Tests/CGifReference), and the
   fuzz target gif-diff (scripts/fuzz.sh) does so on arbitrary input. */

enum {
    IW_LZ_MAX_CODE = 4095, /* gif_lib_private.h: LZ_MAX_CODE */
    IW_LZ_BITS = 12,       /* gif_lib_private.h: LZ_BITS */
    /* giflib's NO_SUCH_CODE is 4098; its decisions on it ask whether a
       value is NO_SUCH_CODE or above LZ_MAX_CODE, which 0xFFFF answers the
       same, and it fits the 16-bit entries below. */
    IW_LZ_NONE = 0xFFFF,
};

/* An entry of the code table between two ClearCodes: giflib's Prefix, and
   a length that stands for its pixel stack. */
typedef struct {
    uint16_t prefix;
    /* The string length of a pixel (1) or of a code whose chain is known to
       end in a pixel (at most LZ_MAX_CODE: what fits giflib's stack);
       0: ClearCode, EOFCode, not defined, or not resolved yet. */
    uint16_t len;
} iw_lzw_entry;

/* DGifSetupDecompress's reset of Prefix, for the codes from `first` (0, or
   above EOFCode) to `last`; pixels have length 1. */
static void iw_lzw_reset(iw_lzw_entry *t, int first, int last, int clear_code) {
    /* size_t bounds, end exclusive: loops the compiler vectorizes. */
    size_t c = (size_t)first, pixels_end = (size_t)clear_code, end = (size_t)last + 1;
    for (; c < pixels_end; c++) t[c] = (iw_lzw_entry){IW_LZ_NONE, 1};
    for (; c < end; c++) t[c] = (iw_lzw_entry){IW_LZ_NONE, 0};
}

/* DGifBufferedInput's read of the next block: the block (its size, then its
   bytes), or NULL with gif->Error set where giflib fails. */
static const GifByteType *iw_lzw_next_block(GifFileType *gif) {
    GifByteType *block = NULL;
    if (DGifGetCodeNext(gif, &block) == GIF_ERROR) return NULL; /* READ_FAILED */
    if (block == NULL) gif->Error = D_GIF_ERR_IMAGE_DEFECT;   /* an empty block while codes are needed */
    return block;
}

/* DGifDecompressLine's prefix-chain walk from `code` with `depth` pixels
   already on giflib's stack: the pixels the code then puts out, or 0 where
   giflib fails with D_GIF_ERR_IMAGE_DEFECT (an undefined code in the chain,
   or a chain that would fill the stack). A chain known to end in a pixel
   is jumped over in one step: giflib's walk would end on the same test. */
static int iw_lzw_trace(iw_lzw_entry *t, int clear_code, int code, int depth) {
    int sp = depth, cp = code;
    while (sp < IW_LZ_MAX_CODE && cp > clear_code && cp <= IW_LZ_MAX_CODE) {
        if (t[cp].len) {
            sp += t[cp].len - 1;
            cp = 0; /* a pixel: the walk ends */
            break;
        }
        sp++;
        cp = t[cp].prefix;
    }
    if (sp >= IW_LZ_MAX_CODE || cp > IW_LZ_MAX_CODE) return 0;
    /* The chain is resolved now, and stays so (it only went through
       defined codes): keep its length. */
    if (code > clear_code && code <= IW_LZ_MAX_CODE) t[code].len = (uint16_t)(sp + 1 - depth);
    return sp + 1;
}

/* One frame of width x height pixels, after DGifGetImageHeader: GIF_OK, or
   GIF_ERROR with gif->Error set as DGifGetLine would have set it. The state
   is giflib's GifFilePrivateType fields, in locals. */
static int iw_gif_lzw_frame(GifFileType *gif, uint32_t width, uint32_t height) {
    iw_lzw_entry t[IW_LZ_MAX_CODE + 1]; /* 16 KB, no allocation to fail */
    int code_size = 0;
    GifByteType *first = NULL;
    /* The first block: DGifDecompressLine needs a code at once. */
    if (DGifGetCode(gif, &code_size, &first) == GIF_ERROR) return GIF_ERROR;
    if (first == NULL) {
        gif->Error = D_GIF_ERR_IMAGE_DEFECT;
        return GIF_ERROR;
    }
    const GifByteType *p = first + 1, *end = p + first[0];
    uint64_t shift_dword = 0; /* giflib's CrntShiftDWord, with more bits read ahead */
    int shift_state = 0;
    /* DGifSetupDecompress; code_size is at most 8 (it checked). */
    const int bits_per_pixel = code_size, clear_code = 1 << code_size, eof_code = clear_code + 1;
    /* MaxCode1 is always 1 << RunningBits: not kept apart. */
    int running_code = eof_code + 1, running_bits = bits_per_pixel + 1;
    iw_lzw_reset(t, 0, IW_LZ_MAX_CODE, clear_code);
    int last = IW_LZ_NONE;
    int64_t left = (int64_t)width * height; /* at most 65535 x 65535 */
    while (left > 0) {
        /* DGifDecompressInput: the next code, then the width's growth. Its
           test of RunningBits > LZ_BITS never holds (the width starts at 9
           bits at most and stops growing at LZ_BITS): not repeated. */
        if (shift_state < running_bits) {
            if (end - p >= 8) {
                /* Whole bytes of the block already read, up to 63 bits:
                   taking them early changes nothing giflib would see. */
                uint64_t bytes;
                memcpy(&bytes, p, 8);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
                bytes = __builtin_bswap64(bytes);
#endif
                shift_dword |= bytes << shift_state;
                p += (63 - shift_state) >> 3;
                shift_state |= 56;
            } else {
                while (shift_state < running_bits) {
                    if (p == end) {
                        /* The next block only when this code needs it, as
                           DGifBufferedInput: an empty or cut block after the
                           last code must not count. */
                        const GifByteType *block = iw_lzw_next_block(gif);
                        if (block == NULL) return GIF_ERROR;
                        p = block + 1;
                        end = p + block[0];
                    }
                    shift_dword |= (uint64_t)*p++ << shift_state;
                    shift_state += 8;
                }
            }
        }
        int code = (int)(shift_dword & ((1u << running_bits) - 1));
        shift_dword >>= running_bits;
        shift_state -= running_bits;
        if (running_code < IW_LZ_MAX_CODE + 2 && ++running_code > 1 << running_bits && running_bits < IW_LZ_BITS)
            running_bits++;
        /* DGifDecompressLine on that code. */
        if (code == eof_code) {
            gif->Error = D_GIF_ERR_EOF_TOO_SOON;
            return GIF_ERROR;
        }
        if (code == clear_code) {
            /* Only codes up to RunningCode - 2 were defined since the last
               reset (and only defined codes get a length). */
            iw_lzw_reset(t, eof_code + 1, running_code - 2 < IW_LZ_MAX_CODE ? running_code - 2 : IW_LZ_MAX_CODE,
                         clear_code);
            running_code = eof_code + 1;
            running_bits = bits_per_pixel + 1;
            last = IW_LZ_NONE;
            continue;
        }
        int out = t[code].len;
        if (out == 0) {
            /* No prefix yet: giflib pushes one pixel, then walks LastCode. */
            out = t[code].prefix == IW_LZ_NONE ? iw_lzw_trace(t, clear_code, last, 1)
                                               : iw_lzw_trace(t, clear_code, code, 0);
            if (out == 0) {
                gif->Error = D_GIF_ERR_IMAGE_DEFECT;
                return GIF_ERROR;
            }
        }
        int defined = running_code - 2; /* at most LZ_MAX_CODE: RunningCode stops at LZ_MAX_CODE + 2 */
        if (last != IW_LZ_NONE && t[defined].prefix == IW_LZ_NONE) {
            /* The length before the prefix is set: a code defined from
               itself (garbage codes) has no known chain. */
            int n = t[last].len;
            t[defined] = (iw_lzw_entry){(uint16_t)last, (uint16_t)(n && n < IW_LZ_MAX_CODE ? n + 1 : 0)};
        }
        last = code;
        left -= out;
    }
    /* DGifGetLine after the last pixel: read up to the empty block. */
    GifByteType *block = NULL;
    do {
        if (DGifGetCodeNext(gif, &block) == GIF_ERROR) return GIF_ERROR;
    } while (block != NULL);
    return GIF_OK;
}

typedef struct {
    const uint8_t *data;
    size_t len;
    size_t pos;
    int hit_end;
} gif_src;

/* A short count tells giflib the data ended (D_GIF_ERR_READ_FAILED). */
static int iw_gif_read(GifFileType *gif, GifByteType *dst, int n) {
    gif_src *s = (gif_src *)gif->UserData;
    size_t want = n > 0 ? (size_t)n : 0;
    size_t avail = s->len - s->pos;
    if (want > avail) {
        want = avail;
        s->hit_end = 1;
    }
    memcpy(dst, s->data + s->pos, want);
    s->pos += want;
    return (int)want;
}

static int iw_gif_status_for(int error, const gif_src *src) {
    if (src->hit_end || error == D_GIF_ERR_READ_FAILED) return IW_TRUNCATED;
    if (error == D_GIF_ERR_NOT_ENOUGH_MEM) return IW_NO_MEMORY;
    return IW_CORRUPT;
}

/* frame: the frame being read (in_frame) or the last one read before. */
static int iw_gif_fail(GifFileType *gif, const gif_src *src, iw_result *out, uint32_t frame, int in_frame) {
    int status = iw_gif_status_for(gif->Error, src);
    const char *what = status == IW_TRUNCATED ? "premature end of data" : GifErrorString(gif->Error);
    if (!what) what = "giflib error";
    if (in_frame)
        iw_set_reason(out, "%s in frame %u", what, frame);
    else if (frame > 0)
        iw_set_reason(out, "%s after frame %u", what, frame);
    else
        iw_set_reason(out, "%s before the first frame", what);
    return status;
}

/* Skips an extension block by block (GCE, comments, NETSCAPE2.0 loops). */
static int iw_gif_skip_extension(GifFileType *gif) {
    int code = 0;
    GifByteType *ext = NULL;
    if (DGifGetExtension(gif, &code, &ext) == GIF_ERROR) return GIF_ERROR;
    while (ext != NULL) {
        if (DGifGetExtensionNext(gif, &ext) == GIF_ERROR) return GIF_ERROR;
    }
    return GIF_OK;
}

static int iw_gif_run(GifFileType *gif, const gif_src *src, uint64_t max_pixels,
                      iw_result *out, iw_gif_frame_fn decode_frame) {
    uint32_t sw = (uint32_t)gif->SWidth, sh = (uint32_t)gif->SHeight;
    out->width = sw;
    out->height = sh;
    if (sw == 0 || sh == 0) {
        iw_set_reason(out, "logical screen is %ux%u", sw, sh);
        return IW_NO_PIXELS;
    }
    if (iw_exceeds(sw, sh, max_pixels)) return IW_TOO_LARGE;
    uint32_t frames = 0;
    uint64_t total = 0;  /* the frame budget of internal.h (LZW bombs) */
    GifRecordType record = UNDEFINED_RECORD_TYPE;
    do {
        if (DGifGetRecordType(gif, &record) == GIF_ERROR) return iw_gif_fail(gif, src, out, frames, 0);
        switch (record) {
        case IMAGE_DESC_RECORD_TYPE: {
            /* The CPU bound between frames. */
            if (iw_out_of_time()) {
                iw_set_reason(out, "stopped before frame %u", frames + 1);
                return IW_TOO_COMPLEX;
            }
            /* DGifGetImageHeader, not DGifGetImageDesc: the latter also
               appends every frame (and a copy of its colour map) to
               SavedImages, a realloc per frame and memory that grows with
               the frame count, which nothing here reads. */
            if (DGifGetImageHeader(gif) == GIF_ERROR) {
                /* DGifSetupDecompress reads the LZW minimum code size last
                   and refuses one above 8 with D_GIF_ERR_READ_FAILED
                   ("somewhat bogus error code", dgif_lib.c), which would
                   read as a cut file: name the real fault. */
                if (gif->Error == D_GIF_ERR_READ_FAILED && !src->hit_end && src->pos > 0
                    && src->data[src->pos - 1] > 8) {
                    iw_set_reason(out, "LZW minimum code size %u in frame %u is above 8 (giflib refuses it)",
                                  src->data[src->pos - 1], frames + 1);
                    return IW_CORRUPT;
                }
                return iw_gif_fail(gif, src, out, frames + 1, 1);
            }
            frames++;
            const GifImageDesc *d = &gif->Image;
            /* Width/Height are 16-bit fields: no overflow. */
            uint32_t w = (uint32_t)d->Width, h = (uint32_t)d->Height;
            if (w == 0 || h == 0) {
                iw_set_reason(out, "frame %u is %ux%u", frames, w, h);
                return IW_CORRUPT;
            }
            if (iw_exceeds(w, h, max_pixels)) {
                out->width = w;
                out->height = h;
                return IW_TOO_LARGE;
            }
            /* A frame reaching outside the logical screen is not refused:
               giflib decodes it (DGifSlurp does not compare the two),
               browsers and Pillow draw what lies inside, and ImageIO clips
               it to the screen, so an app shows the image. Its whole
               rectangle is still decoded and counted in the budget. */
            if (iw_frames_over_budget(&total, (uint64_t)w * h, max_pixels, frames, out)) return IW_TOO_LARGE;
            if (decode_frame(gif, w, h) == GIF_ERROR) return iw_gif_fail(gif, src, out, frames, 1);
            break;
        }
        case EXTENSION_RECORD_TYPE:
            if (iw_gif_skip_extension(gif) == GIF_ERROR) return iw_gif_fail(gif, src, out, frames, 0);
            break;
        default:
            break;
        }
    } while (record != TERMINATE_RECORD_TYPE);
    out->frames = frames;
    if (frames == 0) {
        iw_set_reason(out, "no image frame");
        return IW_NO_PIXELS;
    }
    return IW_OK;
}

int iw_validate_gif_with(const uint8_t *data, size_t len, uint64_t max_pixels, iw_result *out,
                         iw_gif_frame_fn decode_frame) {
    iw_reset(out);
    gif_src src = {data, len, 0, 0};
    int error = 0;
    GifFileType *gif = DGifOpen(&src, iw_gif_read, &error);
    if (!gif) {
        int status = iw_gif_status_for(error, &src);
        iw_set_reason(out, "%s", status == IW_TRUNCATED ? "premature end of data in the header"
                                                        : (GifErrorString(error) ? GifErrorString(error) : "giflib error"));
        return status;
    }
    int status = iw_gif_run(gif, &src, max_pixels, out, decode_frame);
    DGifCloseFile(gif, &error);
    return status;
}

int iw_validate_gif(const uint8_t *data, size_t len, uint64_t max_pixels, iw_result *out) {
    return iw_validate_gif_with(data, len, max_pixels, out, iw_gif_lzw_frame);
}
