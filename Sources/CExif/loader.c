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

#define FUNCTION(field) CSYSTEM_SYMBOL(exif_, api, field)
static const struct csystem_symbol symbols[] = {
    FUNCTION(data_new), FUNCTION(data_unref), FUNCTION(data_unset_option), FUNCTION(data_load_data),
    FUNCTION(content_get_entry),
};
static struct csystem_library libexif = CSYSTEM_LIBRARY("libexif.so.12", "libexif12", symbols);

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
