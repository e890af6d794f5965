#ifndef IMGWARM_GIF_REFERENCE_H
#define IMGWARM_GIF_REFERENCE_H
/* The GIF validation as it was before the LZW check (gif_validate.c):
   every frame decoded to pixels by giflib's DGifGetLine, line by line. The
   reference of the differential tests and of the gif-diff fuzz target;
   never linked into imgwarm. */
#include <stddef.h>
#include <stdint.h>
#include "imgwarm_codecs.h"

int iwr_validate_gif_giflib(const uint8_t *data, size_t len, uint64_t max_pixels, iw_result *out);
#endif
