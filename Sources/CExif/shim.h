#ifndef CEXIF_SHIM_H
#define CEXIF_SHIM_H
#include <stddef.h>
#include <libexif/exif-data.h>
#include <libexif/exif-utils.h>

/* The entry for `tag` in one IFD of `data`, or NULL. Swift sees ExifData's IFD array as a
 * tuple; indexing it here keeps that out of Swift, and checks the index. */
static inline ExifEntry *cexif_entry(ExifData *data, ExifIfd ifd, ExifTag tag) {
    if (data == NULL || (int)ifd < 0 || ifd >= EXIF_IFD_COUNT || data->ifd[ifd] == NULL) return NULL;
    return exif_content_get_entry(data->ifd[ifd], tag);
}
#endif
