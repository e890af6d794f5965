/* WebP validation with libwebp: lossy (VP8), lossless (VP8L) and alpha
   (ALPH) bitstreams of still images through WebPDecode, and every frame of
   an animation through the demuxer (WebPDemux), which also checks the RIFF
   chunk structure and that every frame lies inside the canvas.

   Sizes are checked from the headers before any pixel memory exists: the
   canvas against max_pixels, and the frames of an animation against the
   frame budget of internal.h, all before the first frame is decoded.

   Every bitstream is decoded to its end, into a small scaled-down output
   (an eighth of each side): libwebp still reads every macroblock or
   lossless symbol and every alpha row, so truncated or corrupt data fails
   as it would at full size, but the output buffer and the colour
   conversion stay small. The in-loop deblocking filter and the fancy
   chroma upsampler are skipped: they only smooth pixels that were already
   decoded and cannot fail. Frames are decoded on their own rather than
   composited onto the canvas (WebPAnimDecoder): blending cannot make a
   valid frame invalid. libwebp prints nothing. */
#include <webp/decode.h>
#include <webp/demux.h>
#include "internal.h"

/* Maps a libwebp status to ours, with a reason naming where it happened
   (`where` is empty for a still image, "frame 3: " for a frame). */
static int iw_webp_status(VP8StatusCode st, const char *where, iw_result *out) {
    switch (st) {
    case VP8_STATUS_OK:
        return IW_OK;
    case VP8_STATUS_NOT_ENOUGH_DATA:
    case VP8_STATUS_SUSPENDED:
        iw_set_reason(out, "%spremature end of data", where);
        return IW_TRUNCATED;
    case VP8_STATUS_OUT_OF_MEMORY:
        iw_set_reason(out, "%sout of memory", where);
        return IW_NO_MEMORY;
    case VP8_STATUS_UNSUPPORTED_FEATURE:
        iw_set_reason(out, "%sunsupported bitstream feature", where);
        return IW_CORRUPT;
    case VP8_STATUS_INVALID_PARAM:
        iw_set_reason(out, "%sinvalid bitstream parameters", where);
        return IW_CORRUPT;
    case VP8_STATUS_BITSTREAM_ERROR:
    default:
        iw_set_reason(out, "%sbitstream error", where);
        return IW_CORRUPT;
    }
}

/* Decodes one bitstream (a whole file, or a frame's ALPH + VP8/VP8L
   chunks) of the given size to its end. */
static VP8StatusCode iw_webp_decode(const uint8_t *data, size_t len, int width, int height) {
    WebPDecoderConfig config;
    if (!WebPInitDecoderConfig(&config)) return VP8_STATUS_INVALID_PARAM;
    config.options.bypass_filtering = 1;
    config.options.no_fancy_upsampling = 1;
    config.options.use_scaling = 1;
    config.options.scaled_width = width / 8 > 0 ? width / 8 : 1;
    config.options.scaled_height = height / 8 > 0 ? height / 8 : 1;
    /* RGBA, so the alpha plane is decoded and emitted too. */
    config.output.colorspace = MODE_RGBA;
    VP8StatusCode st = WebPDecode(data, len, &config);
    WebPFreeDecBuffer(&config.output);
    return st;
}

static int iw_webp_animation(const uint8_t *data, size_t len, uint64_t max_pixels, iw_result *out) {
    WebPData whole = {data, len};
    WebPDemuxState state = WEBP_DEMUX_PARSING_HEADER;
    WebPDemuxer *demux = WebPDemuxPartial(&whole, &state);
    if (!demux || state != WEBP_DEMUX_DONE) {
        WebPDemuxDelete(demux);
        if (state == WEBP_DEMUX_PARSE_ERROR || state == WEBP_DEMUX_DONE) {
            iw_set_reason(out, "invalid animation: chunks or frame rectangles do not fit the canvas");
            return IW_CORRUPT;
        }
        iw_set_reason(out, "premature end of data in the animation's chunks");
        return IW_TRUNCATED;
    }
    uint32_t frames = WebPDemuxGetI(demux, WEBP_FF_FRAME_COUNT);
    out->frames = frames;
    if (frames == 0) {
        WebPDemuxDelete(demux);
        iw_set_reason(out, "the animation has no frame");
        return IW_NO_PIXELS;
    }
    /* Every frame's size first: a bomb is refused before any decoding. */
    WebPIterator it;
    uint64_t total = 0;
    int status = IW_OK;
    if (WebPDemuxGetFrame(demux, 1, &it)) {
        do {
            if (iw_frames_over_budget(&total, (uint64_t)it.width * (uint64_t)it.height, max_pixels,
                                      (uint32_t)it.frame_num, out)) {
                status = IW_TOO_LARGE;
                break;
            }
        } while (WebPDemuxNextFrame(&it));
        WebPDemuxReleaseIterator(&it);
    }
    if (status == IW_OK && WebPDemuxGetFrame(demux, 1, &it)) {
        do {
            /* The CPU bound between frames; one frame is one WebPDecode. */
            if (iw_out_of_time()) {
                iw_set_reason(out, "stopped before frame %d of %u", it.frame_num, frames);
                status = IW_TOO_COMPLEX;
                break;
            }
            VP8StatusCode st = iw_webp_decode(it.fragment.bytes, it.fragment.size, it.width, it.height);
            if (st != VP8_STATUS_OK) {
                char where[32];
                snprintf(where, sizeof where, "frame %d: ", it.frame_num);
                status = iw_webp_status(st, where, out);
                break;
            }
        } while (WebPDemuxNextFrame(&it));
        WebPDemuxReleaseIterator(&it);
    }
    WebPDemuxDelete(demux);
    return status;
}

int iw_validate_webp(const uint8_t *data, size_t len, uint64_t max_pixels, iw_result *out) {
    iw_reset(out);
    WebPBitstreamFeatures features;
    VP8StatusCode st = WebPGetFeatures(data, len, &features);
    if (st != VP8_STATUS_OK) {
        int status = iw_webp_status(st, "", out);
        if (status == IW_TRUNCATED) iw_set_reason(out, "premature end of data in the header");
        return status;
    }
    out->width = (uint32_t)features.width;
    out->height = (uint32_t)features.height;
    out->frames = 1;
    if (out->width == 0 || out->height == 0) {
        iw_set_reason(out, "header gives %ux%u", out->width, out->height);
        return IW_NO_PIXELS;
    }
    if (iw_exceeds(out->width, out->height, max_pixels)) return IW_TOO_LARGE;
    if (features.has_animation) return iw_webp_animation(data, len, max_pixels, out);
    /* WebPDecode reads the RIFF header with all data present, so a RIFF
       size past the end of the data is a truncation. */
    return iw_webp_status(iw_webp_decode(data, len, features.width, features.height), "", out);
}
