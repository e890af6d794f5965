/* HEIC/HEIF validation with libheif (libde265 decodes HEVC, dav1d or aom
   AV1): the container is read first, which gives the primary image's size,
   and only an image within the limit is decoded, with its alpha plane.

   What libheif 1.15 (Debian 12) cannot check: it reads the items of the
   `meta` box only, so the frames of an image sequence (`msf1`, the `moov`
   tracks of a .heics) are not decoded; a sequence is judged on its still
   primary image (Apple's .heics files carry one; a sequence without one
   fails) and, after it, on its container: every top-level box must end
   inside the data and every sample of every track must lie inside it
   (iw_bmff_sequence_check, bmff.h), so a sequence cut short fails. The
   samples' HEVC data itself is not decoded. Other top-level items (a
   burst, a stereo pair) are not decoded either: apps show the primary
   image. */
#include <libheif/heif.h>
#include <stdlib.h>
#include "bmff.h"
#include "lazy_codecs.h"

/* libheif's own per-side limit (heif_limits.h MAX_IMAGE_WIDTH/HEIGHT in
   1.15); a larger one is not useful since max_pixels is checked besides. */
#define IW_HEIF_MAX_SIDE 32768

static int iw_heif_status(struct heif_error error) {
    /* A libheif without a decoder for the image's codec (from 1.17 the HEVC
       and AV1 decoders are plugins in packages of their own): the data was
       not judged, so it is not the URL's fault (IW_NO_DECODER). */
    if (error.code == heif_error_Unsupported_feature && error.subcode == heif_suberror_Unsupported_codec)
        return IW_NO_DECODER;
    if (error.subcode == heif_suberror_End_of_data) return IW_TRUNCATED;
    if (error.subcode == heif_suberror_Security_limit_exceeded) return IW_TOO_LARGE;
    if (error.code == heif_error_Memory_allocation_error) return IW_NO_MEMORY;
    return IW_CORRUPT;
}

static int iw_heif_fail(struct heif_error error, const char *step, iw_result *out) {
    const char *message = error.message && error.message[0] ? error.message : "libheif error";
    iw_set_reason(out, "%s: %s", step, message);
    /* libheif's messages can end in a newline: drop the blank it leaves. */
    size_t n = strlen(out->reason);
    while (n > 0 && out->reason[n - 1] == ' ') out->reason[--n] = 0;
    return iw_heif_status(error);
}

/* heif_context_read_* refuses an `ispe` over the side limit with
   heif_suberror_Security_limit_exceeded and a message ending in "Image size
   WxH exceeds the maximum image size MxM" (heif_context.cc,
   HeifContext::interpret_heif_file; the error's text is prefixed with its
   code's and subcode's names). Returns 1 with the size filled when that is
   the failure. */
static int iw_heif_size_refusal(struct heif_error error, uint64_t max_pixels, iw_result *out) {
    unsigned w = 0, h = 0;
    const char *size = error.message ? strstr(error.message, "Image size ") : NULL;
    if (error.subcode != heif_suberror_Security_limit_exceeded || !size ||
        sscanf(size, "Image size %ux%u", &w, &h) != 2)
        return 0;
    out->width = w;
    out->height = h;
    if (!iw_exceeds(w, h, max_pixels))
        iw_set_reason(out, "%ux%u is beyond libheif's limit of %u pixels a side", w, h, (unsigned)IW_HEIF_MAX_SIDE);
    return 1;
}

/* The size the HEVC decoder will allocate for: the handle's (its ispe),
   or the coded size in the sequence parameter set of an `hvcC` or a grid
   primary item's canvas when larger (an ispe may understate them:
   libde265 decodes at the SPS's size, libheif 1.15 compares the two only
   after decoding, and allocates a grid's canvas at its ImageGrid output
   size), re-checked against the image's share (iw_over_memory_share). */
static int iw_heif_memory(const uint8_t *data, size_t len, const struct heif_image_handle *handle, int w, int h,
                          uint64_t max_pixels, iw_result *out) {
    uint32_t cw = 0, ch = 0;
    iw_bmff_largest_coded_size(data, len, &cw, &ch);
    /* The coded size is padded to whole coding tree units (up to 64
       pixels a side, cropped by the SPS conformance window): only a coded
       size beyond that says the ispe lied about the pixel limit. */
    if ((uint64_t)cw * ch > ((uint64_t)w + 64) * ((uint64_t)h + 64) && iw_exceeds(cw, ch, max_pixels)) {
        out->width = cw;
        out->height = ch;
        return IW_TOO_LARGE;
    }
    int alpha = heif_image_handle_has_alpha_channel(handle);
    int deep = heif_image_handle_get_luma_bits_per_pixel(handle) > 8;
    if ((uint64_t)cw * ch > (uint64_t)w * (uint64_t)h)
        return iw_over_memory_share(IW_CODEC_HEIF, cw, ch, alpha, deep, "the HEVC parameter sets or the grid", out);
    return iw_over_memory_share(IW_CODEC_HEIF, (uint64_t)w, (uint64_t)h, alpha, deep, "the container", out);
}

static int iw_heif_run(struct heif_context *ctx, const uint8_t *data, size_t len,
                       uint64_t max_pixels, iw_result *out) {
    struct heif_error error = heif_context_read_from_memory_without_copy(ctx, data, len, NULL);
    if (error.code != heif_error_Ok) {
        if (iw_heif_size_refusal(error, max_pixels, out)) return IW_TOO_LARGE;
        if (error.subcode != heif_suberror_End_of_data && iw_bmff_cut_box(data, len, out)) return IW_TRUNCATED;
        return iw_heif_fail(error, "container", out);
    }
    struct heif_image_handle *handle = NULL;
    error = heif_context_get_primary_image_handle(ctx, &handle);
    if (error.code != heif_error_Ok) return iw_heif_fail(error, "primary image", out);
    /* The displayed size (after the file's rotation and crop). */
    int w = heif_image_handle_get_width(handle), h = heif_image_handle_get_height(handle);
    int status = IW_OK;
    out->width = w > 0 ? (uint32_t)w : 0;
    out->height = h > 0 ? (uint32_t)h : 0;
    if (w <= 0 || h <= 0) {
        iw_set_reason(out, "primary image is %dx%d", w, h);
        status = IW_NO_PIXELS;
    } else if (iw_exceeds((uint64_t)w, (uint64_t)h, max_pixels)) {
        status = IW_TOO_LARGE;
    } else if ((status = iw_heif_memory(data, len, handle, w, h, max_pixels, out)) != IW_OK) {
        /* Over the image's share at the size the decoder will decode. */
    } else {
        struct heif_decoding_options *options = heif_decoding_options_alloc();
        if (!options) {
            iw_set_reason(out, "out of memory for the decoding options");
            status = IW_NO_MEMORY;
        } else {
            struct heif_image *image = NULL;
            /* Native colour space and chroma: no conversion to pay for. */
            error = heif_decode_image(handle, &image, heif_colorspace_undefined, heif_chroma_undefined, options);
            heif_decoding_options_free(options);
            if (error.code != heif_error_Ok)
                status = iw_heif_fail(error, "primary image", out);
            else if (!image) {
                iw_set_reason(out, "primary image: the decoder gave no image");
                status = IW_CORRUPT;
            } else {
                out->frames = 1;
            }
            if (image) heif_image_release(image);
        }
    }
    heif_image_handle_release(handle);
    return status;
}

int iw_validate_heif(const uint8_t *data, size_t len, uint64_t max_pixels, iw_result *out) {
    iw_reset(out);
    if (!iw_lazy_heif(out)) return IW_NO_DECODER;
    struct heif_context *ctx = heif_context_alloc();
    if (!ctx) {
        iw_set_reason(out, "out of memory for the context");
        return IW_NO_MEMORY;
    }
    int side = IW_HEIF_MAX_SIDE;
    if (max_pixels < (uint64_t)side) side = max_pixels > 0 ? (int)max_pixels : 1;
    heif_context_set_maximum_image_size_limit(ctx, side);
    /* Tiles (grid images) decoded on this thread: images are validated in
       parallel already. */
    heif_context_set_max_decoding_threads(ctx, 0);
    int status = iw_heif_run(ctx, data, len, max_pixels, out);
    heif_context_free(ctx);
    /* What libheif does not read: the boxes after those it needs, and the
       samples of a sequence's tracks (bmff.h). */
    if (status == IW_OK) {
        uint32_t frames = out->frames;
        status = iw_bmff_sequence_check(data, len, out);
        out->frames = frames;
    }
    return status;
}
