/* The frame count bound of the AVIF and JPEG XL validators (not part of
   the module's API); their pixel budget is the shared one of internal.h
   (iw_frames_over_budget). AV1 and JPEG XL pack a frame that repeats its
   predecessor into a few bytes, and each frame costs the codec a fixed
   setup however small it is, so an animation may also have at most
   IW_MAX_FRAMES frames (an hour at 5 fps fits). */
#ifndef IMGWARM_FRAME_BUDGET_H
#define IMGWARM_FRAME_BUDGET_H
#include "internal.h"

#define IW_MAX_FRAMES 20000u

/* IW_OK, or IW_TOO_LARGE with a reason when there are too many frames. */
static inline int iw_check_frame_count(uint64_t frames, iw_result *out) {
    if (frames <= IW_MAX_FRAMES) return IW_OK;
    iw_set_reason(out, "has %llu frames, more than the limit of %u", (unsigned long long)frames, IW_MAX_FRAMES);
    return IW_TOO_LARGE;
}
#endif
