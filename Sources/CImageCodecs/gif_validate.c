/* GIF validation with giflib, record by record: the logical screen and each
   frame rectangle are checked before the frame is decoded, and every frame
   is decoded line by line into one reused line buffer (DGifSlurp would keep
   the rasters of all frames in memory at once). */
#include <gif_lib.h>
#include <stdlib.h>
#include "internal.h"

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
                      iw_result *out, GifPixelType **line) {
    uint32_t sw = (uint32_t)gif->SWidth, sh = (uint32_t)gif->SHeight;
    out->width = sw;
    out->height = sh;
    if (sw == 0 || sh == 0) {
        iw_set_reason(out, "logical screen is %ux%u", sw, sh);
        return IW_NO_PIXELS;
    }
    if (iw_exceeds(sw, sh, max_pixels)) return IW_TOO_LARGE;
    *line = (GifPixelType *)malloc(sw);
    if (!*line) {
        iw_set_reason(out, "out of memory for a line");
        return IW_NO_MEMORY;
    }
    uint32_t frames = 0;
    uint64_t total = 0;  /* the frame budget of internal.h (LZW bombs) */
    GifRecordType record = UNDEFINED_RECORD_TYPE;
    do {
        if (DGifGetRecordType(gif, &record) == GIF_ERROR) return iw_gif_fail(gif, src, out, frames, 0);
        switch (record) {
        case IMAGE_DESC_RECORD_TYPE: {
            /* DGifGetImageHeader, not DGifGetImageDesc: the latter also
               appends every frame (and a copy of its colour map) to
               SavedImages, a realloc per frame and memory that grows with
               the frame count, which nothing here reads. */
            if (DGifGetImageHeader(gif) == GIF_ERROR) return iw_gif_fail(gif, src, out, frames + 1, 1);
            frames++;
            const GifImageDesc *d = &gif->Image;
            /* Left/Top/Width/Height are 16-bit fields: no overflow. */
            uint32_t left = (uint32_t)d->Left, top = (uint32_t)d->Top;
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
            if (left + w > sw || top + h > sh) {
                iw_set_reason(out, "frame %u (%ux%u at %u,%u) lies outside the %ux%u screen",
                              frames, w, h, left, top, sw, sh);
                return IW_CORRUPT;
            }
            if (iw_frames_over_budget(&total, (uint64_t)w * h, max_pixels, frames, out)) return IW_TOO_LARGE;
            for (uint32_t y = 0; y < h; y++) {
                if (DGifGetLine(gif, *line, (int)w) == GIF_ERROR) return iw_gif_fail(gif, src, out, frames, 1);
            }
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

int iw_validate_gif(const uint8_t *data, size_t len, uint64_t max_pixels, iw_result *out) {
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
    GifPixelType *line = NULL;
    int status = iw_gif_run(gif, &src, max_pixels, out, &line);
    free(line);
    DGifCloseFile(gif, &error);
    return status;
}
