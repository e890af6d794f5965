#include <gif_lib.h>
#include <stdlib.h>
#include "gif_reference.h"

/* Each line of the frame through DGifGetLine into a scratch line, as
   iw_validate_gif did before it checked the codes without pixels. */
static int iwr_giflib_frame(GifFileType *gif, uint32_t width, uint32_t height) {
    GifPixelType *line = (GifPixelType *)malloc(width);
    if (!line) {
        gif->Error = D_GIF_ERR_NOT_ENOUGH_MEM;
        return GIF_ERROR;
    }
    int rc = GIF_OK;
    for (uint32_t y = 0; y < height && rc == GIF_OK; y++) rc = DGifGetLine(gif, line, (int)width);
    free(line);
    return rc;
}

int iwr_validate_gif_giflib(const uint8_t *data, size_t len, uint64_t max_pixels, iw_result *out) {
    return iw_validate_gif_with(data, len, max_pixels, out, iwr_giflib_frame);
}
