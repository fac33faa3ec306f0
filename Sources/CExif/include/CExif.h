#ifndef CEXIF_H
#define CEXIF_H
/* libexif, loaded the first time a photo's EXIF date is read rather than when the program
 * starts: only a watch rule that files photos into date folders reads one, and the commands,
 * `share-to` and an agent that never does so need not map it. The types and constants come
 * from libexif's own headers (libexif-dev); the functions are looked up in libexif.so.12
 * (libexif12) on first use. */
#include <stddef.h>
#include <libexif/exif-data.h>

/* Loads libexif if it is not loaded yet. NULL when it is there; else why not, in words. */
const char *cexif_load(void);

/* The libexif calls the program makes. Call cexif_load() before the first of them and stop
 * if it fails; without libexif they return NULL or do nothing. */
ExifData *cexif_data_new(void);
void cexif_data_unref(ExifData *data);
void cexif_data_unset_option(ExifData *data, ExifDataOption option);
void cexif_data_load_data(ExifData *data, const unsigned char *bytes, unsigned int size);

/* The entry for `tag` in one IFD of `data`, or NULL. Swift sees ExifData's IFD array as a
 * tuple; indexing it here keeps that out of Swift, and checks the index. */
ExifEntry *cexif_entry(ExifData *data, ExifIfd ifd, ExifTag tag);
#endif
