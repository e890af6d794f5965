#ifndef IMGWARM_CODECS_H
#define IMGWARM_CODECS_H
/*
 * Image validation over libpng, libjpeg-turbo, giflib and libwebp, for Swift.
 *
 * Each entry point decodes a whole image held in memory and says whether it
 * is usable. Everything that can longjmp (libpng, libjpeg) does so inside
 * these functions; the caller only sees a status and a filled result.
 * Nothing is ever printed: library warnings and errors land in `reason`.
 *
 * Memory stays small: the header is read first and images over max_pixels
 * are refused before any pixel buffer exists; rows are then decoded one at a
 * time into a single reused row buffer (progressive JPEGs are the exception:
 * libjpeg keeps their coefficients for the whole image; PNG image data of up
 * to 32 MiB is inflated whole, see png_validate.c).
 *
 * Thread-safe: every call owns its decoder; the only global state is the
 * AVIF, HEIF and JPEG XL libraries, opened once on first use.
 */
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    IW_OK = 0,
    /* The data ends before the image does. */
    IW_TRUNCATED = 1,
    /* The data is damaged or not a valid stream of this format. */
    IW_CORRUPT = 2,
    /* width x height (of the image, or of a GIF frame) exceeds max_pixels;
       width and height in the result say how large, reason is empty. With
       a reason: another size limit (the frames of an animation in total). */
    IW_TOO_LARGE = 3,
    /* The image has 0 pixels (0 width or height, or a GIF with no frame). */
    IW_NO_PIXELS = 4,
    /* The decoder could not get memory. */
    IW_NO_MEMORY = 5,
    /* The format's library could not be opened (AVIF, HEIF and JPEG XL
       are opened on first use, see lazy_codecs.h); reason says why. */
    IW_NO_DECODER = 6,
    /* The decode took more CPU time of its thread than iw_set_thread_limits
       allowed and was stopped between scans, rows, frames or tiles; reason
       says where. Not a verdict on the data. */
    IW_TOO_COMPLEX = 7,
    /* The size the decoder reported (an AV1 sequence header, a track, the
       JPEG XL basic info) needs more memory than the image's share of the
       decode memory budget (iw_set_thread_limits): stopped before the
       decoder's large allocations; reason gives the size. */
    IW_OVER_MEMORY = 8,
} iw_status;

enum { IW_REASON_SIZE = 160 };

/* The libraries opened on first use (lazy_codecs.h). */
typedef enum { IW_CODEC_AVIF = 0, IW_CODEC_HEIF = 1, IW_CODEC_JXL = 2 } iw_codec_library;


typedef struct {
    uint32_t width;
    uint32_t height;
    /* 1 for still images; the frames of a GIF, APNG or animated WebP. */
    uint32_t frames;
    /* One line, no format prefix, empty when status is IW_OK, e.g.
       "premature end of data at row 12 of 64". */
    char reason[IW_REASON_SIZE];
} iw_result;

/* Bounds of the decodes that follow on the calling thread, until called
   again (0, 0: none): memory_bytes is the image's share of the decode
   memory budget, against which AVIF, HEIF and JPEG XL re-check the size
   their decoder reports before allocating its planes (IW_OVER_MEMORY);
   cpu_ns is the CPU time of this thread (CLOCK_THREAD_CPUTIME_ID), counted
   from this call, after which a decode stops at its next check
   (IW_TOO_COMPLEX). A thread-local setting rather than a parameter: the
   validators keep one signature, which the fuzzers and tests call. */
void iw_set_thread_limits(uint64_t memory_bytes, uint64_t cpu_ns);

/* What AVIF, HEIF and JPEG XL decoders hold at their peak for an image of
   `pixels` (the planes, their references and borders; measured, see
   DecodeMemory.swift), plus IW_DECODE_MEMORY_BASE, what any image costs.
   The one formula of the estimate made from the header and of the
   re-check made from the decoder's size. */
enum { IW_DECODE_MEMORY_BASE = 256 << 10 };
uint64_t iw_planes_memory(iw_codec_library codec, uint64_t pixels, int alpha, int deep);

/* The one ISO-BMFF box walk (AVIF, HEIF, the JPEG XL container), shared
   by the Swift header reader and the C validators: the box at `pos` of
   data[0, end), its payload and end as offsets into data. IW_BOX_END at
   `end`; the other results say why no box can be there (with the type,
   size and payload offset read so far: a box past the end still has
   them). */
typedef enum {
    IW_BOX_OK = 1,
    IW_BOX_END = 0,
    IW_BOX_HEADER_CUT = -1,    /* fewer than 8 bytes left */
    IW_BOX_LARGESIZE_CUT = -2, /* size 1, but no room for the 64-bit size */
    IW_BOX_TOO_SMALL = -3,     /* a size smaller than the box's header */
    IW_BOX_PAST_END = -4,      /* a size past `end` */
} iw_box_status;
typedef struct {
    char type[4];
    uint64_t size;
    size_t offset, payload, end;
} iw_box;
int iw_bmff_box_at(const uint8_t *data, size_t end, size_t pos, iw_box *box);
/* The largest image an AVIF or HEIF decoder may decode in this file, from
   every place a size is written: the items' `ispe`, the coded size in an
   `hvcC`'s sequence parameter set, a track's `tkhd` and its visual sample
   entries (and their `hvcC`), and a `grid` primary item's output size
   and its tiles laid out (bmff.c). 0x0 when none is found. */
void iw_bmff_largest_coded_size(const uint8_t *data, size_t len, uint32_t *width, uint32_t *height);
/* The tiles (rows x columns) of a `grid` primary item; 0 when the primary
   item is no grid. libavif 0.11 decodes every tile with a decoder of its
   own, all alive until the canvas is filled: IW_AVIF_TILE_MEMORY each on
   top of the planes (measured: 1.4 MiB a 4:2:0 8-bit tile of libaom,
   from 4 to 64 tiles). */
uint32_t iw_bmff_grid_tiles(const uint8_t *data, size_t len);
enum { IW_AVIF_TILE_MEMORY = 2 << 20 };
/* What libavif 0.11's avifDecoderParse reads into memory before any
   pixel (src/read.c): an avifDecoderItem for every item ID that `iinf`,
   `iloc`, `ipma` or `iref` names (avifMetaFindItem, with 16 properties
   of 72 bytes reserved each), and an avifExtent of 16 bytes for every
   extent `iloc` lists, even one whose fields are 0 bytes wide (4,096
   items of 65,535 such extents, a 33 KB file, took 4.2 GB). `items`
   counts every mention (a bound on the distinct IDs). */
void iw_bmff_item_counts(const uint8_t *data, size_t len, uint64_t *items, uint64_t *extents);
/* Bytes charged an item mention and an extent (an array that doubles
   holds up to twice what it uses). */
enum { IW_AVIF_ITEM_MEMORY = 4096, IW_AVIF_EXTENT_MEMORY = 32 };
/* avifMetaFindItem looks each mention up in a list of the items so far:
   quadratic in the items (500,000 in a 5 MB file ran for minutes, with
   no place to stop it). More mentions than this fail as too complex
   before libavif parses the file. */
enum { IW_AVIF_MAX_ITEM_MENTIONS = 16384 };

int iw_validate_png(const uint8_t *data, size_t len, uint64_t max_pixels, iw_result *out);
/* How PNG and APNG image data is inflated. FAST (what iw_validate_png
   does): libdeflate inflates each zlib stream in one call and decides when
   it succeeds; anything else goes to ZLIB: zlib row by row as libpng reads
   the data, the reference path, whose verdict and reason FAST must equal
   on every input (the tests and the differential fuzzer compare them). */
typedef enum { IW_PNG_INFLATE_FAST = 0, IW_PNG_INFLATE_ZLIB = 1 } iw_png_inflater;
int iw_validate_png_using(const uint8_t *data, size_t len, uint64_t max_pixels, iw_png_inflater path,
                          iw_result *out);
int iw_validate_jpeg(const uint8_t *data, size_t len, uint64_t max_pixels, iw_result *out);
int iw_validate_gif(const uint8_t *data, size_t len, uint64_t max_pixels, iw_result *out);
/* iw_validate_gif with another decoder of each frame's image data, called
   after giflib's DGifGetImageHeader with the frame's size: GIF_OK (1), or
   GIF_ERROR (0) with the GifFileType's Error set. iw_validate_gif checks
   the LZW codes without producing pixels; the tests and the gif-diff fuzz
   target pass giflib's own DGifGetLine loop to compare the verdicts. */
struct GifFileType;
typedef int (*iw_gif_frame_fn)(struct GifFileType *gif, uint32_t width, uint32_t height);
int iw_validate_gif_with(const uint8_t *data, size_t len, uint64_t max_pixels, iw_result *out,
                         iw_gif_frame_fn decode_frame);
/* Still (lossy, lossless, alpha) and animated WebP, every frame. */
int iw_validate_webp(const uint8_t *data, size_t len, uint64_t max_pixels, iw_result *out);

/* AVIF (libavif + dav1d), HEIC/HEIF (libheif) and JPEG XL (libjxl): the
   container or codestream header gives the size (and the frame count) and
   the limits are checked there, before any pixel is decoded; then every
   frame is decoded (the primary image for HEIF, see heif_validate.c).
   Animations are bounded in total pixels, as GIF's, and in frames
   (frame_budget.h): IW_TOO_LARGE with a reason. `frames` is 1 for still images. */
int iw_validate_avif(const uint8_t *data, size_t len, uint64_t max_pixels, iw_result *out);
int iw_validate_heif(const uint8_t *data, size_t len, uint64_t max_pixels, iw_result *out);
int iw_validate_jxl(const uint8_t *data, size_t len, uint64_t max_pixels, iw_result *out);

/* TIFF (libtiff): every strip or tile of the first image decoded. Not the
   validator of every TIFF (TIFF passes on its header, ImageHeader.tiff):
   the header walk calls it where the header alone cannot tell a cut file
   from an overstated StripByteCounts (tiff_validate.c). */
int iw_validate_tiff_data(const uint8_t *data, size_t len, uint64_t max_pixels, iw_result *out);

/* The libraries opened on first use (lazy_codecs.h). When one cannot be
   opened, its validator returns IW_NO_DECODER with a reason that names the
   package to install: the data was not judged at all. */
/* Opens `soname` (NULL: the one this build opens for `which`) exactly as
   the first image of the format opens its library, same symbols, same
   reason on failure, without using it or touching the process's own copy:
   IW_OK, or IW_NO_DECODER with the reason a validator gives. The tests
   call it with names that cannot be opened, since the process's own
   library, once opened, stays. */
int iw_codec_open_check(iw_codec_library which, const char *soname, iw_result *out);

#ifdef __cplusplus
}
#endif
#endif
