/* The AVIF, HEIF and JPEG XL libraries, opened on first use.
 *
 * Why: linked the usual way, libavif, libheif and libjxl bring in about 30
 * shared objects (libaom, dav1d, gav1, rav1e, SVT-AV1, x265, libde265,
 * Highway, Brotli, lcms2, abseil...) that the dynamic loader maps,
 * relocates and initialises at every start, 4 MB of resident memory for a
 * command that never decodes an image (`cache prune` over a million files
 * is measured against a memory budget). Opened with dlopen on the first
 * image of their format instead, they cost nothing to the commands that do
 * not decode them.
 *
 * Include this after the library's own header: each function the validator
 * calls is then a macro for the pointer dlsym found, so the validators call
 * them by their documented names. The validator calls iw_lazy_avif() (or
 * _heif, _jxl) before anything else; 0 means the library could not be
 * opened, with the reason in `out` (IW_NO_DECODER).
 */
#ifndef IMGWARM_LAZY_CODECS_H
#define IMGWARM_LAZY_CODECS_H
#include "imgwarm_codecs.h"

#define IW_LAZY_FIELD(name) __typeof__(name) *name;

#ifdef AVIF_AVIF_H
/* aom_*: libavif's AV1 decoder, found through libavif's handle. */
#define IW_AVIF_FUNCTIONS(X) X(avifDecoderCreate) X(avifDecoderDestroy) X(avifDecoderSetIO) \
    X(avifDecoderParse) X(avifDecoderNextImage) X(avifResultToString) \
    X(aom_codec_av1_dx) X(aom_codec_peek_stream_info)
typedef struct { IW_AVIF_FUNCTIONS(IW_LAZY_FIELD) } iw_avif_functions;
extern iw_avif_functions iw_avif_lib;
int iw_lazy_avif(iw_result *out);
#define avifDecoderCreate (*iw_avif_lib.avifDecoderCreate)
#define avifDecoderDestroy (*iw_avif_lib.avifDecoderDestroy)
#define avifDecoderSetIO (*iw_avif_lib.avifDecoderSetIO)
#define avifDecoderParse (*iw_avif_lib.avifDecoderParse)
#define avifDecoderNextImage (*iw_avif_lib.avifDecoderNextImage)
#define avifResultToString (*iw_avif_lib.avifResultToString)
#define aom_codec_av1_dx (*iw_avif_lib.aom_codec_av1_dx)
#define aom_codec_peek_stream_info (*iw_avif_lib.aom_codec_peek_stream_info)
#endif

#ifdef LIBHEIF_HEIF_H
#define IW_HEIF_FUNCTIONS(X) X(heif_context_alloc) X(heif_context_free) \
    X(heif_context_read_from_memory_without_copy) X(heif_context_set_maximum_image_size_limit) \
    X(heif_context_set_max_decoding_threads) X(heif_context_get_primary_image_handle) \
    X(heif_image_handle_get_width) X(heif_image_handle_get_height) X(heif_image_handle_release) \
    X(heif_decoding_options_alloc) X(heif_decoding_options_free) X(heif_decode_image) X(heif_image_release) \
    X(heif_image_handle_has_alpha_channel) X(heif_image_handle_get_luma_bits_per_pixel)
typedef struct { IW_HEIF_FUNCTIONS(IW_LAZY_FIELD) } iw_heif_functions;
extern iw_heif_functions iw_heif_lib;
int iw_lazy_heif(iw_result *out);
#define heif_context_alloc (*iw_heif_lib.heif_context_alloc)
#define heif_context_free (*iw_heif_lib.heif_context_free)
#define heif_context_read_from_memory_without_copy (*iw_heif_lib.heif_context_read_from_memory_without_copy)
#define heif_context_set_maximum_image_size_limit (*iw_heif_lib.heif_context_set_maximum_image_size_limit)
#define heif_context_set_max_decoding_threads (*iw_heif_lib.heif_context_set_max_decoding_threads)
#define heif_context_get_primary_image_handle (*iw_heif_lib.heif_context_get_primary_image_handle)
#define heif_image_handle_get_width (*iw_heif_lib.heif_image_handle_get_width)
#define heif_image_handle_get_height (*iw_heif_lib.heif_image_handle_get_height)
#define heif_image_handle_release (*iw_heif_lib.heif_image_handle_release)
#define heif_decoding_options_alloc (*iw_heif_lib.heif_decoding_options_alloc)
#define heif_decoding_options_free (*iw_heif_lib.heif_decoding_options_free)
#define heif_decode_image (*iw_heif_lib.heif_decode_image)
#define heif_image_release (*iw_heif_lib.heif_image_release)
#define heif_image_handle_has_alpha_channel (*iw_heif_lib.heif_image_handle_has_alpha_channel)
#define heif_image_handle_get_luma_bits_per_pixel (*iw_heif_lib.heif_image_handle_get_luma_bits_per_pixel)
#endif

#ifdef JXL_DECODE_H_
#define IW_JXL_FUNCTIONS(X) X(JxlSignatureCheck) X(JxlDecoderCreate) X(JxlDecoderDestroy) \
    X(JxlDecoderSubscribeEvents) X(JxlDecoderSetInput) X(JxlDecoderSetImageOutCallback) \
    X(JxlDecoderProcessInput) X(JxlDecoderGetBasicInfo)
typedef struct { IW_JXL_FUNCTIONS(IW_LAZY_FIELD) } iw_jxl_functions;
extern iw_jxl_functions iw_jxl_lib;
int iw_lazy_jxl(iw_result *out);
#define JxlSignatureCheck (*iw_jxl_lib.JxlSignatureCheck)
#define JxlDecoderCreate (*iw_jxl_lib.JxlDecoderCreate)
#define JxlDecoderDestroy (*iw_jxl_lib.JxlDecoderDestroy)
#define JxlDecoderSubscribeEvents (*iw_jxl_lib.JxlDecoderSubscribeEvents)
#define JxlDecoderSetInput (*iw_jxl_lib.JxlDecoderSetInput)
#define JxlDecoderSetImageOutCallback (*iw_jxl_lib.JxlDecoderSetImageOutCallback)
#define JxlDecoderProcessInput (*iw_jxl_lib.JxlDecoderProcessInput)
#define JxlDecoderGetBasicInfo (*iw_jxl_lib.JxlDecoderGetBasicInfo)
#endif
#endif
