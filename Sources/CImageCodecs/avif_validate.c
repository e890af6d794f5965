/* AVIF validation with libavif: the container is parsed first
   (avifDecoderParse), which gives the size and the frame count, and only an
   image within the limits is decoded, every frame of a sequence.

   The AV1 decoder is libaom, not dav1d (libavif's first choice): Debian's
   dav1d writes "Error parsing OBU data" and the like to stderr on damaged
   data and libavif 0.11 cannot give it a logger, while libaom is silent,
   and stricter: it checks each tile's trailing bits, so a flipped bit in
   the coded data fails instead of decoding to noise (of 2000 copies of a
   3-frame AVIF with 1-4 random bit flips, dav1d rejected 319, aom 1922).
   libaom has no frame size limit of its own, so every AV1 payload read
   from `mdat` is peeked first (aom_codec_peek_stream_info reads the
   sequence header's maximum frame size) and one over the limit stops the
   decode before libaom allocates that frame. */
#define _GNU_SOURCE /* strcasestr */
#include <aom/aom_decoder.h>
#include <aom/aomdx.h>
#include <avif/avif.h>
#include <stdlib.h>
#include "bmff.h"
#include "frame_budget.h"
#include "lazy_codecs.h"

/* An avifIO over the bytes in memory that peeks at AV1 payloads. */
typedef struct {
    avifIO io;
    const uint8_t *data;
    size_t len;
    uint64_t max_pixels;
    /* Payload bytes of the top-level `mdat` boxes: [begin, end) pairs. */
    size_t mdat[8][2];
    int mdat_count;
    /* Set when a payload's sequence header is over the limit. */
    uint32_t refused_width, refused_height;
    /* What the container said of the planes (after avifDecoderParse), and
       the reason set when a payload's frame size needs more memory than
       the image's share (iw_over_memory_share). */
    int alpha, deep, parsed;
    iw_result *out;
    int over_memory;
} iw_avif_io;

static void iw_avif_find_mdat(iw_avif_io *s) {
    size_t pos = 0;
    while (pos + 8 <= s->len && s->mdat_count < 8) {
        uint64_t size = iw_be32(s->data + pos);
        size_t header = 8;
        if (size == 1) {
            if (pos + 16 > s->len) return;
            size = ((uint64_t)iw_be32(s->data + pos + 8) << 32) | iw_be32(s->data + pos + 12);
            header = 16;
        } else if (size == 0) {
            size = s->len - pos;
        }
        if (size < header) return;
        uint64_t end = size > s->len - pos ? s->len : pos + size;
        if (memcmp(s->data + pos + 4, "mdat", 4) == 0) {
            s->mdat[s->mdat_count][0] = pos + header;
            s->mdat[s->mdat_count][1] = (size_t)end;
            s->mdat_count++;
        }
        if (end >= s->len) return;
        pos = (size_t)end;
    }
}

static avifResult iw_avif_read(avifIO *io, uint32_t flags, uint64_t offset, size_t size, avifROData *out) {
    iw_avif_io *s = (iw_avif_io *)io;
    if (flags != 0 || offset > s->len) return AVIF_RESULT_IO_ERROR;
    uint64_t avail = s->len - offset;
    if (size > avail) size = (size_t)avail;
    out->data = s->data + offset;
    out->size = size;
    for (int i = 0; i < s->mdat_count; i++) {
        if (offset < s->mdat[i][0] || offset + size > s->mdat[i][1] || size == 0) continue;
        aom_codec_stream_info_t info;
        memset(&info, 0, sizeof info);
        if (aom_codec_peek_stream_info(aom_codec_av1_dx(), out->data, size, &info) == AOM_CODEC_OK &&
            iw_exceeds(info.w, info.h, s->max_pixels)) {
            s->refused_width = info.w;
            s->refused_height = info.h;
            return AVIF_RESULT_IO_ERROR;
        }
        /* The frame size the AV1 decoder will allocate for, whatever the
           container's ispe or tkhd said: re-checked against the image's
           share before libaom sees the payload. */
        if (s->parsed && info.w > 0 && info.h > 0 &&
            iw_over_memory_share(IW_CODEC_AVIF, info.w, info.h, s->alpha, s->deep, "the AV1 sequence header",
                                 s->out) != IW_OK) {
            s->over_memory = 1;
            return AVIF_RESULT_IO_ERROR;
        }
    }
    return AVIF_RESULT_OK;
}

static int iw_avif_status(avifResult result) {
    switch (result) {
    case AVIF_RESULT_TRUNCATED_DATA:
    case AVIF_RESULT_WAITING_ON_IO:
        return IW_TRUNCATED;
    case AVIF_RESULT_OUT_OF_MEMORY:
        return IW_NO_MEMORY;
    case AVIF_RESULT_NO_CONTENT:
        return IW_NO_PIXELS;
    case AVIF_RESULT_NO_CODEC_AVAILABLE:
        /* A libavif built without an AV1 decoder: the data was not judged. */
        return IW_NO_DECODER;
    default:
        return IW_CORRUPT;
    }
}

/* libavif's diagnostics say more than its result code ("Box [mdat] ...");
   prefer them. where: "" or " in frame N". */
static int iw_avif_fail(const avifDecoder *decoder, avifResult result, const char *where, iw_result *out) {
    const char *detail = decoder->diag.error;
    /* An extent past the end of the data fails as "Exceeded avifIO's
       sizeHint, possibly truncated data" or "Item ID %u extent offset
       failed size hint sanity check. Truncated data?" (read.c): a cut file
       whose box sizes were patched to fit looks like that. */
    int truncated = strcasestr(detail, "truncated data") != NULL;
    if (detail[0])
        iw_set_reason(out, "%s%s (%s)", avifResultToString(result), where, detail);
    else
        iw_set_reason(out, "%s%s", avifResultToString(result), where);
    return truncated ? IW_TRUNCATED : iw_avif_status(result);
}

/* avifDecoderParse refuses items and tracks over its own limits with a
   diagnostic ending in "[WxH]" (read.c: "Item ID [%u] dimensions are too
   large [%ux%u]", "Track ID [%u] dimensions are too large [%ux%u]", and
   "Grid box dimensions are too large: [%u x %u]"). Turn that into the
   common size verdict; returns 0 when the failure is another one. */
static int iw_avif_size_refusal(const avifDecoder *decoder, uint64_t max_pixels, iw_result *out) {
    const char *detail = decoder->diag.error;
    if (!strstr(detail, "too large")) return 0;
    const char *bracket = strrchr(detail, '[');
    unsigned w = 0, h = 0;
    if (!bracket || (sscanf(bracket, "[%ux%u]", &w, &h) != 2 && sscanf(bracket, "[%u x %u]", &w, &h) != 2)) return 0;
    out->width = w;
    out->height = h;
    if (!iw_exceeds(w, h, max_pixels)) {
        /* Within our limit but not libavif's (a side over 32768 pixels,
           or over 16384x16384 pixels in all). */
        iw_set_reason(out, "%ux%u is beyond libavif's limits of %u pixels a side and %u pixels in all",
                      w, h, (unsigned)AVIF_DEFAULT_IMAGE_DIMENSION_LIMIT, (unsigned)AVIF_DEFAULT_IMAGE_SIZE_LIMIT);
    }
    return 1;
}

/* The AV1 sequence header of a payload was over the limit. */
static int iw_avif_refused(const iw_avif_io *io, iw_result *out) {
    if (io->refused_width == 0) return 0;
    out->width = io->refused_width;
    out->height = io->refused_height;
    return 1;
}

static int iw_avif_run(avifDecoder *decoder, iw_avif_io *io, uint64_t max_pixels, iw_result *out) {
    const uint8_t *data = io->data;
    size_t len = io->len;
    uint64_t items = 0, extents = 0;
    iw_bmff_item_counts(data, len, &items, &extents);
    if (items > IW_AVIF_MAX_ITEM_MENTIONS) {
        iw_set_reason(out, "%llu item entries in meta, over %u (libavif 0.11 parses them in quadratic time)",
                      (unsigned long long)items, (unsigned)IW_AVIF_MAX_ITEM_MENTIONS);
        return IW_TOO_COMPLEX;
    }
    avifResult result = avifDecoderParse(decoder);
    if (result != AVIF_RESULT_OK) {
        if (iw_avif_refused(io, out) || iw_avif_size_refusal(decoder, max_pixels, out)) return IW_TOO_LARGE;
        if (iw_bmff_cut_box(data, len, out)) return IW_TRUNCATED;
        return iw_avif_fail(decoder, result, "", out);
    }
    /* The size of the primary item, or of the track for a sequence. */
    uint32_t w = decoder->image->width, h = decoder->image->height;
    out->width = w;
    out->height = h;
    if (w == 0 || h == 0) {
        iw_set_reason(out, "container gives %ux%u", w, h);
        return IW_NO_PIXELS;
    }
    if (iw_exceeds(w, h, max_pixels)) return IW_TOO_LARGE;
    /* The size libavif will decode at (a sequence's track, a grid's
       output), not only the ispe the estimate may have read. */
    io->alpha = decoder->alphaPresent ? 1 : 0;
    io->deep = decoder->image->depth > 8;
    io->parsed = 1;
    int over = iw_over_memory_share(IW_CODEC_AVIF, w, h, io->alpha, io->deep,
                                    decoder->imageCount > 1 ? "the track" : "the container", out);
    if (over != IW_OK) return over;
    if (decoder->imageCount < 1) {
        iw_set_reason(out, "no image in the container");
        return IW_NO_PIXELS;
    }
    uint32_t count = (uint32_t)decoder->imageCount;
    int status = iw_check_frame_count(count, out);
    if (status != IW_OK) return status;
    /* The whole sequence against the budget before its first frame. */
    uint64_t total = 0;
    for (uint32_t i = 1; i <= count; i++) {
        if (iw_frames_over_budget(&total, (uint64_t)w * h, max_pixels, i, out)) return IW_TOO_LARGE;
    }
    for (uint32_t i = 0; i < count; i++) {
        /* The CPU bound between frames: libavif 0.11 decodes a frame (all
           its tiles) in one call. */
        if (iw_out_of_time()) {
            iw_set_reason(out, "stopped before frame %u of %u", i + 1, count);
            return IW_TOO_COMPLEX;
        }
        result = avifDecoderNextImage(decoder);
        if (result != AVIF_RESULT_OK) {
            if (io->over_memory) return IW_OVER_MEMORY;
            if (iw_avif_refused(io, out)) return IW_TOO_LARGE;
            char where[48];
            snprintf(where, sizeof where, " in frame %u of %u", i + 1, count);
            return iw_avif_fail(decoder, result, where, out);
        }
        /* A frame's AV1 sequence header may give another size than the
           container (within the limit, or the read was refused). */
        const avifImage *image = decoder->image;
        if (image->width != w || image->height != h) {
            iw_set_reason(out, "frame %u is %ux%u, the container says %ux%u",
                          i + 1, image->width, image->height, w, h);
            return IW_CORRUPT;
        }
    }
    out->frames = count;
    return IW_OK;
}

int iw_validate_avif(const uint8_t *data, size_t len, uint64_t max_pixels, iw_result *out) {
    iw_reset(out);
    if (!iw_lazy_avif(out)) return IW_NO_DECODER;
    avifDecoder *decoder = avifDecoderCreate();
    if (!decoder) {
        iw_set_reason(out, "out of memory for the decoder");
        return IW_NO_MEMORY;
    }
    /* One thread: images are validated in parallel already. */
    decoder->maxThreads = 1;
    decoder->codecChoice = AVIF_CODEC_CHOICE_AOM;
    /* libavif refuses a limit above its default (avifDecoderParse returns
       AVIF_RESULT_NOT_IMPLEMENTED) and reserves 0. It checks ispe, tkhd
       and grid sizes against it. */
    uint64_t limit = max_pixels < AVIF_DEFAULT_IMAGE_SIZE_LIMIT ? max_pixels : AVIF_DEFAULT_IMAGE_SIZE_LIMIT;
    decoder->imageSizeLimit = limit > 0 ? (uint32_t)limit : 1;
    decoder->imageDimensionLimit = AVIF_DEFAULT_IMAGE_DIMENSION_LIMIT;
    /* Checked again, with a reason, from the frame count and size. */
    decoder->imageCountLimit = IW_MAX_FRAMES + 1;
    /* As SDWebImageAVIFCoder (SDImageAVIFCoder.m, decodedImageWithData:
       "Disable strict mode to keep some AVIF image compatible"): files
       missing pixi or with an odd clap are shown by the app, so they are
       good images here too. */
    decoder->strictFlags = AVIF_STRICT_DISABLED;
    /* The decoder does not own the io (no destroy callback). */
    iw_avif_io io;
    memset(&io, 0, sizeof io);
    io.io.read = iw_avif_read;
    io.io.sizeHint = len;
    io.io.persistent = AVIF_TRUE;
    io.data = data;
    io.len = len;
    io.max_pixels = max_pixels;
    io.out = out;
    iw_avif_find_mdat(&io);
    avifDecoderSetIO(decoder, &io.io);
    int status = iw_avif_run(decoder, &io, max_pixels, out);
    avifDecoderDestroy(decoder);
    return status;
}
