/* dlopen/dlsym of the AVIF, HEIF and JPEG XL libraries (lazy_codecs.h says
 * why). Each library is opened once per process (pthread_once: validators
 * run on several threads) and stays open. */
#include <aom/aom_decoder.h>
#include <aom/aomdx.h>
#include <avif/avif.h>
#include <dlfcn.h>
#include <jxl/decode.h>
#include <jxl/version.h>
#include <libheif/heif.h>
#include <pthread.h>
#include "internal.h"
#include "lazy_codecs.h"

/* The file the linker would have recorded (its soname), for the version
   of the headers built against: a library of another ABI version must not
   be opened. Versions not listed here use the development symlink
   (libavif.so), which points at the library of those very headers on the
   machine that builds. */
#if AVIF_VERSION_MAJOR == 0 && AVIF_VERSION_MINOR == 11
#define IW_AVIF_SONAME "libavif.so.15"
#else
#define IW_AVIF_SONAME "libavif.so"
#endif
/* libheif keeps soname 1 across its 1.x versions. */
#define IW_HEIF_SONAME "libheif.so.1"
/* libjxl 0.x: the soname carries the minor version (libjxl.so.0.7). */
#define IW_STR2(x) #x
#define IW_STR(x) IW_STR2(x)
#if JPEGXL_MAJOR_VERSION == 0
#define IW_JXL_SONAME "libjxl.so.0." IW_STR(JPEGXL_MINOR_VERSION)
#else
#define IW_JXL_SONAME "libjxl.so." IW_STR(JPEGXL_MAJOR_VERSION)
#endif

typedef struct {
    pthread_once_t once;
    const char *soname;
    const char *format;
    const char *const *names;
    void **slots;
    size_t count;
    int loaded;
    char error[IW_REASON_SIZE];
} iw_lazy_lib;

/* Opens the library and fills every slot; on any failure none is used. */
static void iw_lazy_open(iw_lazy_lib *lib) {
    void *handle = dlopen(lib->soname, RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL) {
        const char *e = dlerror();
        snprintf(lib->error, sizeof lib->error, "%s", e ? e : lib->soname);
        return;
    }
    for (size_t i = 0; i < lib->count; i++) {
        void *symbol = dlsym(handle, lib->names[i]);
        if (symbol == NULL) {
            snprintf(lib->error, sizeof lib->error, "%s has no %s", lib->soname, lib->names[i]);
            return;
        }
        lib->slots[i] = symbol;
    }
    lib->loaded = 1;
}

static int iw_lazy_ready(iw_lazy_lib *lib, void (*open_once)(void), iw_result *out) {
    pthread_once(&lib->once, open_once);
    if (lib->loaded) return 1;
    iw_set_reason(out, "the %s decoder cannot be loaded: %s", lib->format, lib->error);
    return 0;
}

#define IW_LAZY_NAME(name) #name,
/* The struct holds only function pointers, in the order of the list. */
#define IW_LAZY_LIB(lower, upper, soname, format)                                                   \
    iw_##lower##_functions iw_##lower##_lib;                                                      \
    static const char *const iw_##lower##_names[] = {IW_##upper##_FUNCTIONS(IW_LAZY_NAME)};       \
    static iw_lazy_lib iw_##lower##_state = {PTHREAD_ONCE_INIT, soname, format, iw_##lower##_names, \
                                             (void **)&iw_##lower##_lib,                           \
                                             sizeof iw_##lower##_names / sizeof *iw_##lower##_names, 0, {0}}; \
    static void iw_##lower##_open(void) { iw_lazy_open(&iw_##lower##_state); }                   \
    int iw_lazy_##lower(iw_result *out) { return iw_lazy_ready(&iw_##lower##_state, iw_##lower##_open, out); }

IW_LAZY_LIB(avif, AVIF, IW_AVIF_SONAME, "AVIF")
IW_LAZY_LIB(heif, HEIF, IW_HEIF_SONAME, "HEIF")
IW_LAZY_LIB(jxl, JXL, IW_JXL_SONAME, "JPEG XL")

_Static_assert(sizeof(iw_avif_functions) == 8 * sizeof(void *), "one pointer per AVIF function");
_Static_assert(sizeof(iw_heif_functions) == 13 * sizeof(void *), "one pointer per HEIF function");
_Static_assert(sizeof(iw_jxl_functions) == 8 * sizeof(void *), "one pointer per JPEG XL function");
