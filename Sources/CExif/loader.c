#include "CExif.h"
#include <CSystem.h>
#include <pthread.h>

/* libexif's functions, looked up once. */
static struct {
    ExifData *(*data_new)(void);
    void (*data_unref)(ExifData *);
    void (*data_unset_option)(ExifData *, ExifDataOption);
    void (*data_load_data)(ExifData *, const unsigned char *, unsigned int);
    ExifEntry *(*content_get_entry)(ExifContent *, ExifTag);
} api;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static const char *failure;
static char failure_text[512];

static void load(void) {
    static const char *const names[] = {
        "exif_data_new", "exif_data_unref", "exif_data_unset_option", "exif_data_load_data", "exif_content_get_entry",
    };
    void **const slots[] = {
        (void **)&api.data_new, (void **)&api.data_unref, (void **)&api.data_unset_option, (void **)&api.data_load_data,
        (void **)&api.content_get_entry,
    };
    _Static_assert(sizeof names / sizeof *names == sizeof slots / sizeof *slots, "a name for each function");
    failure = csystem_load_library("libexif.so.12", "libexif12", names, slots, sizeof names / sizeof *names,
                                   failure_text, sizeof failure_text);
}

const char *cexif_load(void) {
    pthread_once(&once, load);
    return failure;
}

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
