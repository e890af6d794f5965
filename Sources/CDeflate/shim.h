/* libdeflate (whole-buffer DEFLATE/zlib decompression), through pkg-config:
   CImageCodecs inflates PNG image data with it first (png_validate.c). */
#include <libdeflate.h>
