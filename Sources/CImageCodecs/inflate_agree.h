/* Whether zlib would inflate a zlib stream exactly as libdeflate just did;
   see inflate_agree.c. Not part of the module's API. */
#ifndef IMGWARM_INFLATE_AGREE_H
#define IMGWARM_INFLATE_AGREE_H
#include <stddef.h>
#include <stdint.h>

/* stream: a zlib stream of `len` bytes (2-byte header, deflate data,
   Adler-32) that libdeflate_zlib_decompress_ex has inflated successfully,
   consuming exactly `len` bytes. 1 when zlib's inflate accepts the same
   stream with the same output; 0 when it might not (the caller then asks
   zlib). */
int iw_zlib_agrees(const uint8_t *stream, size_t len);

#endif
