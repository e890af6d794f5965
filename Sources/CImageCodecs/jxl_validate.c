/* JPEG XL validation with libjxl, a bare codestream or the ISO-BMFF
   container (libjxl reads both): the basic info (size, animation) comes
   before any pixel, and an image over the limit is refused there; then
   every frame is decoded, each counted against the animation budget when
   its header arrives, before its pixels.

   Pixels go to a callback that ignores them, a row at a time: the decoder
   keeps its own frame buffers, this shim allocates none. */
#include <jxl/decode.h>
#include <stdlib.h>
#include "frame_budget.h"
#include "lazy_codecs.h"

static void iw_jxl_drop_pixels(void *opaque, size_t x, size_t y, size_t num_pixels, const void *pixels) {
    (void)opaque; (void)x; (void)y; (void)num_pixels; (void)pixels;
}

/* Where the decoder stopped, for the reason: frames counted so far, and
   whether the current one's pixels had started. */
static void iw_jxl_where(char *buf, size_t size, int have_info, uint32_t frames, int in_frame) {
    if (!have_info)
        snprintf(buf, size, "in the header");
    else if (in_frame)
        snprintf(buf, size, "in frame %u", frames);
    else if (frames > 0)
        snprintf(buf, size, "after frame %u", frames);
    else
        snprintf(buf, size, "before the first frame");
}

static int iw_jxl_run(JxlDecoder *dec, const uint8_t *data, size_t len, uint64_t max_pixels, iw_result *out) {
    if (JxlDecoderSubscribeEvents(dec, JXL_DEC_BASIC_INFO | JXL_DEC_FRAME | JXL_DEC_FULL_IMAGE) != JXL_DEC_SUCCESS ||
        JxlDecoderSetInput(dec, data, len) != JXL_DEC_SUCCESS) {
        iw_set_reason(out, "could not set up the decoder");
        return IW_CORRUPT;
    }
    /* All of the data is here, but the input is deliberately left open:
       then data that ends too early gives JXL_DEC_NEED_MORE_INPUT, while
       with JxlDecoderCloseInput Debian's libjxl 0.7 writes "missing
       input" to stderr (decode.cc) and returns a bare JXL_DEC_ERROR. */
    /* RGBA, 8 bits: a format every image converts to. */
    const JxlPixelFormat format = {4, JXL_TYPE_UINT8, JXL_NATIVE_ENDIAN, 0};
    JxlBasicInfo info;
    int have_info = 0, in_frame = 0;
    uint32_t frames = 0;
    uint64_t total = 0;
    char where[48];
    for (;;) {
        JxlDecoderStatus status = JxlDecoderProcessInput(dec);
        switch (status) {
        case JXL_DEC_BASIC_INFO:
            if (JxlDecoderGetBasicInfo(dec, &info) != JXL_DEC_SUCCESS) {
                iw_set_reason(out, "unreadable basic info");
                return IW_CORRUPT;
            }
            have_info = 1;
            /* Displayed size: orientations 5-8 swap the sides. */
            out->width = info.orientation >= 5 ? info.ysize : info.xsize;
            out->height = info.orientation >= 5 ? info.xsize : info.ysize;
            if (info.xsize == 0 || info.ysize == 0) {
                iw_set_reason(out, "header gives %ux%u", out->width, out->height);
                return IW_NO_PIXELS;
            }
            if (iw_exceeds(info.xsize, info.ysize, max_pixels)) return IW_TOO_LARGE;
            /* The size the decoder will allocate its float planes for,
               before the first frame. */
            {
                int over = iw_over_memory_share(IW_CODEC_JXL, info.xsize, info.ysize, info.alpha_bits > 0, 0,
                                                "the basic info", out);
                if (over != IW_OK) return over;
            }
            break;
        case JXL_DEC_FRAME: {
            /* The CPU bound between frames: libjxl 0.7 decodes a frame's
               groups in one JxlDecoderProcessInput call. */
            if (iw_out_of_time()) {
                iw_set_reason(out, "stopped before frame %u", frames + 1);
                return IW_TOO_COMPLEX;
            }
            frames++;
            in_frame = 1;
            /* Coalesced (the default): every frame is the full canvas. */
            if (iw_check_frame_count(frames, out) != IW_OK ||
                iw_frames_over_budget(&total, (uint64_t)info.xsize * info.ysize, max_pixels, frames, out))
                return IW_TOO_LARGE;
            break;
        }
        case JXL_DEC_NEED_IMAGE_OUT_BUFFER:
            if (JxlDecoderSetImageOutCallback(dec, &format, iw_jxl_drop_pixels, NULL) != JXL_DEC_SUCCESS) {
                iw_set_reason(out, "frame %u: could not set the pixel callback", frames);
                return IW_CORRUPT;
            }
            break;
        case JXL_DEC_FULL_IMAGE:
            in_frame = 0;
            break;
        case JXL_DEC_SUCCESS:
            if (frames == 0) {
                iw_set_reason(out, "no frame");
                return IW_NO_PIXELS;
            }
            out->frames = frames;
            return IW_OK;
        case JXL_DEC_NEED_MORE_INPUT:
            iw_jxl_where(where, sizeof where, have_info, frames, in_frame);
            iw_set_reason(out, "premature end of data %s", where);
            return IW_TRUNCATED;
        case JXL_DEC_ERROR:
        default:
            /* libjxl 0.7 has no error message API. */
            iw_jxl_where(where, sizeof where, have_info, frames, in_frame);
            iw_set_reason(out, "libjxl rejected the data %s", where);
            return IW_CORRUPT;
        }
    }
}

int iw_validate_jxl(const uint8_t *data, size_t len, uint64_t max_pixels, iw_result *out) {
    iw_reset(out);
    if (!iw_lazy_jxl(out)) return IW_NO_DECODER;
    /* A signature check first: JxlDecoderProcessInput would wait for more
       input on a prefix of something else. */
    JxlSignature signature = JxlSignatureCheck(data, len);
    if (signature == JXL_SIG_NOT_ENOUGH_BYTES) {
        iw_set_reason(out, "premature end of data in the signature");
        return IW_TRUNCATED;
    }
    if (signature != JXL_SIG_CODESTREAM && signature != JXL_SIG_CONTAINER) {
        iw_set_reason(out, "no JPEG XL signature");
        return IW_CORRUPT;
    }
    /* NULL memory manager: malloc; no parallel runner: this thread only,
       images are validated in parallel already. */
    JxlDecoder *dec = JxlDecoderCreate(NULL);
    if (!dec) {
        iw_set_reason(out, "out of memory for the decoder");
        return IW_NO_MEMORY;
    }
    int status = iw_jxl_run(dec, data, len, max_pixels, out);
    JxlDecoderDestroy(dec);
    return status;
}
