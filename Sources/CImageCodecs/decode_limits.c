/* The bounds of one decode on a thread (iw_set_thread_limits) and the
   memory formula of the formats decoded to whole planes. */
#include "internal.h"

_Thread_local iw_thread_limits iw_limits_now;

void iw_set_thread_limits(uint64_t memory_bytes, uint64_t cpu_ns) {
    iw_limits_now.memory = memory_bytes;
    iw_limits_now.deadline_ns = cpu_ns ? iw_thread_cpu_ns() + cpu_ns : 0;
    iw_limits_now.calls = 0;
}

/* From the peak RSS measured on generated images of 500x500 and 1500x1500
   pixels (fixed part, then bytes a pixel, rounded up; docs/validation.md):
   - AVIF (libavif + libaom): 3 MiB + 14 B/px, 4 MiB + 28 B/px with alpha;
   - HEIC (libheif + libde265): 1 MiB + 5 B/px, 6.3 B/px with alpha;
   - JPEG XL (libjxl, which works in 32-bit floats): 3.5 MiB + 15 B/px,
     alpha a fourth float channel.
   Samples of more than 8 bits take 16 in the AV1 and HEVC decoders: twice
   the planes. */
uint64_t iw_planes_memory(iw_codec_library codec, uint64_t pixels, int alpha, int deep) {
    uint64_t d = deep ? 2 : 1, planes;
    switch (codec) {
    case IW_CODEC_AVIF: planes = (8u << 20) + pixels * 16 * d * (alpha ? 2 : 1); break;
    case IW_CODEC_HEIF: planes = (2u << 20) + pixels * (alpha ? 8 : 6) * d; break;
    default: planes = (16u << 20) + pixels * 24; break;
    }
    return IW_DECODE_MEMORY_BASE + planes;
}
