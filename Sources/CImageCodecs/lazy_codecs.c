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
/* With each soname, the Debian package that ships it, named after the
   soname as Debian Policy 8.1 names shared library packages (libavif.so.15:
   libavif15; libjxl.so.0.7: libjxl0.7): the package scripts/package.sh
   finds with dpkg -S and puts in Depends. A missing library is then
   reported with the package to install (NULL: the build does not know it). */
#if AVIF_VERSION_MAJOR == 0 && AVIF_VERSION_MINOR == 11
#define IW_AVIF_SONAME "libavif.so.15"
#define IW_AVIF_PACKAGE "libavif15"
#else
#define IW_AVIF_SONAME "libavif.so"
#define IW_AVIF_PACKAGE NULL
#endif
/* libheif keeps soname 1 across its 1.x versions. */
#define IW_HEIF_SONAME "libheif.so.1"
#define IW_HEIF_PACKAGE "libheif1"
/* libjxl 0.x: the soname carries the minor version (libjxl.so.0.7). */
#define IW_STR2(x) #x
#define IW_STR(x) IW_STR2(x)
#if JPEGXL_MAJOR_VERSION == 0
#define IW_JXL_SONAME "libjxl.so.0." IW_STR(JPEGXL_MINOR_VERSION)
#define IW_JXL_PACKAGE "libjxl0." IW_STR(JPEGXL_MINOR_VERSION)
#else
#define IW_JXL_SONAME "libjxl.so." IW_STR(JPEGXL_MAJOR_VERSION)
#define IW_JXL_PACKAGE "libjxl" IW_STR(JPEGXL_MAJOR_VERSION)
#endif

typedef struct {
    pthread_once_t once;
    const char *soname;
    const char *package;
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

/* Why the format cannot be validated on this machine, naming the package
   to install: never the image's fault, so the reason must not read like a
   verdict on the data. The hint comes first; the loader's own text (with
   its path) last, where IW_REASON_SIZE may cut it. */
static void iw_lazy_reason(const iw_lazy_lib *lib, iw_result *out) {
    const char *so = strstr(lib->soname, ".so");
    int base = so ? (int)(so - lib->soname) : (int)strlen(lib->soname);
    /* glibc: "libavif.so.15: cannot open shared object file: No such file
       or directory" for the library itself; a missing dependency names
       the dependency instead, and a damaged file says what is wrong. The
       library's own name is not repeated. */
    size_t n = strlen(lib->soname);
    const char *detail = lib->error;
    int own = strncmp(detail, lib->soname, n) == 0 && detail[n] == ':';
    if (own) detail += n + (detail[n + 1] == ' ' ? 2 : 1);
    int absent = own && strstr(detail, "No such file or directory") != NULL;
    if (absent && lib->package) {
        iw_set_reason(out, "cannot validate, %.*s is not installed (apt-get install %s)", base, lib->soname, lib->package);
    } else if (absent) {
        iw_set_reason(out, "cannot validate, %.*s is not installed (%s not found)", base, lib->soname, lib->soname);
    } else if (lib->package) {
        iw_set_reason(out, "cannot validate, %s cannot be loaded (apt-get install --reinstall %s): %s", lib->soname,
                      lib->package, detail);
    } else {
        iw_set_reason(out, "cannot validate, %s cannot be loaded: %s", lib->soname, detail);
    }
}

static int iw_lazy_ready(iw_lazy_lib *lib, void (*open_once)(void), iw_result *out) {
    pthread_once(&lib->once, open_once);
    if (lib->loaded) return 1;
    iw_lazy_reason(lib, out);
    return 0;
}

#define IW_LAZY_NAME(name) #name,
/* The struct holds only function pointers, in the order of the list. */
#define IW_LAZY_LIB(lower, upper, format)                                                          \
    iw_##lower##_functions iw_##lower##_lib;                                                      \
    static const char *const iw_##lower##_names[] = {IW_##upper##_FUNCTIONS(IW_LAZY_NAME)};       \
    static iw_lazy_lib iw_##lower##_state = {PTHREAD_ONCE_INIT, IW_##upper##_SONAME, IW_##upper##_PACKAGE, \
                                             format, iw_##lower##_names, (void **)&iw_##lower##_lib, \
                                             sizeof iw_##lower##_names / sizeof *iw_##lower##_names, 0, {0}}; \
    static void iw_##lower##_open(void) { iw_lazy_open(&iw_##lower##_state); }                   \
    int iw_lazy_##lower(iw_result *out) { return iw_lazy_ready(&iw_##lower##_state, iw_##lower##_open, out); }

IW_LAZY_LIB(avif, AVIF, "AVIF")
IW_LAZY_LIB(heif, HEIF, "HEIF")
IW_LAZY_LIB(jxl, JXL, "JPEG XL")

int iw_codec_open_check(iw_codec_library which, const char *soname, iw_result *out) {
    iw_reset(out);
    const iw_lazy_lib *model = which == IW_CODEC_AVIF ? &iw_avif_state
                               : which == IW_CODEC_HEIF ? &iw_heif_state
                               : which == IW_CODEC_JXL ? &iw_jxl_state : NULL;
    if (model == NULL) {
        iw_set_reason(out, "no such library (%d)", (int)which);
        return IW_NO_DECODER;
    }
    /* A copy with its own slots: the process's own library state, opened
       once, is neither read nor changed. */
    void *slots[16];
    iw_lazy_lib lib = {PTHREAD_ONCE_INIT, soname ? soname : model->soname, model->package, model->format,
                       model->names, slots, model->count, 0, {0}};
    if (lib.count > sizeof slots / sizeof *slots) {
        iw_set_reason(out, "%zu functions, room for %zu", lib.count, sizeof slots / sizeof *slots);
        return IW_NO_DECODER;
    }
    iw_lazy_open(&lib);
    if (lib.loaded) return IW_OK;
    iw_lazy_reason(&lib, out);
    return IW_NO_DECODER;
}

_Static_assert(sizeof(iw_avif_functions) == 8 * sizeof(void *), "one pointer per AVIF function");
_Static_assert(sizeof(iw_heif_functions) == 15 * sizeof(void *), "one pointer per HEIF function");
_Static_assert(sizeof(iw_jxl_functions) == 8 * sizeof(void *), "one pointer per JPEG XL function");
