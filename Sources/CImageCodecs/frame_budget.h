/* The bounds on animations shared by the AVIF, HEIF and JPEG XL validators
   (not part of the module's API). One frame is bounded by max_pixels like
   a still image; an animation is bounded twice over, because AV1 and JPEG
   XL pack a frame that repeats its predecessor into a few bytes:
   - its frames, each counted at the full canvas, may add up to
     IW_FRAME_PIXEL_BUDGET_FACTOR times max_pixels (GIF uses the same
     factor), and
   - it may have at most IW_MAX_FRAMES frames, since each frame costs the
     codec a fixed setup however small it is (an hour at 5 fps fits). */
#ifndef IMGWARM_FRAME_BUDGET_H
#define IMGWARM_FRAME_BUDGET_H
#include "internal.h"

#define IW_FRAME_PIXEL_BUDGET_FACTOR 10u
#define IW_MAX_FRAMES 20000u

/* Returns IW_OK, or IW_TOO_LARGE with a reason, when an animation of
   `frames` frames of width x height pixels breaks a bound. */
static inline int iw_check_frame_budget(uint64_t frames, uint64_t width, uint64_t height,
                                        uint64_t max_pixels, iw_result *out) {
    if (frames > IW_MAX_FRAMES) {
        iw_set_reason(out, "has %llu frames, more than the limit of %u",
                      (unsigned long long)frames, IW_MAX_FRAMES);
        return IW_TOO_LARGE;
    }
    uint64_t budget = max_pixels > UINT64_MAX / IW_FRAME_PIXEL_BUDGET_FACTOR
                          ? UINT64_MAX : max_pixels * IW_FRAME_PIXEL_BUDGET_FACTOR;
    /* width, height < 2^32: their product fits; dividing the budget keeps
       the frame count out of the multiplication. */
    if (frames > 0 && width * height > budget / frames) {
        iw_set_reason(out, "frames add up to more than %u times the pixel limit of %llu (%llu frames of %llux%llu)",
                      IW_FRAME_PIXEL_BUDGET_FACTOR, (unsigned long long)max_pixels,
                      (unsigned long long)frames, (unsigned long long)width, (unsigned long long)height);
        return IW_TOO_LARGE;
    }
    return IW_OK;
}
#endif
