#include "CExif.h"
#include <CSystem.h>

/* libexif's functions, looked up once. */
static struct {
    ExifData *(*data_new)(void);
    void (*data_unref)(ExifData *);
    void (*data_unset_option)(ExifData *, ExifDataOption);
    void (*data_load_data)(ExifData *, const unsigned char *, unsigned int);
    ExifEntry *(*content_get_entry)(ExifContent *, ExifTag);
} api;

static const struct csystem_symbol symbols[] = {
    {"exif_data_new", (void **)&api.data_new},
    {"exif_data_unref", (void **)&api.data_unref},
    {"exif_data_unset_option", (void **)&api.data_unset_option},
    {"exif_data_load_data", (void **)&api.data_load_data},
    {"exif_content_get_entry", (void **)&api.content_get_entry},
};

static struct csystem_library libexif = {
    .soname = "libexif.so.12", .package = "libexif12", .symbols = symbols, .count = sizeof symbols / sizeof *symbols,
    .lock = PTHREAD_MUTEX_INITIALIZER,
};

const char *cexif_load(void) { return csystem_library_load(&libexif); }

ExifData *cexif_data_new(void) {
    return cexif_load() ? NULL : api.data_new();
}

void cexif_data_unref(ExifData *data) {
    if (!cexif_load() && data) api.data_unref(data);
}

void cexif_data_unset_option(ExifData *data, ExifDataOption option) {
    if (!cexif_load() && data) api.data_unset_option(data, option);
}

void cexif_data_load_data(ExifData *data, const unsigned char *bytes, unsigned int size) {
    if (!cexif_load() && data) api.data_load_data(data, bytes, size);
}

ExifEntry *cexif_entry(ExifData *data, ExifIfd ifd, ExifTag tag) {
    if (cexif_load() || data == NULL || (int)ifd < 0 || ifd >= EXIF_IFD_COUNT || data->ifd[ifd] == NULL) return NULL;
    return api.content_get_entry(data->ifd[ifd], tag);
}
