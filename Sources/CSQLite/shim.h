#ifndef CSQLITE_SHIM_H
#define CSQLITE_SHIM_H
#include <sqlite3.h>

/* SQLITE_TRANSIENT is a cast of -1 to a function pointer, which Swift cannot import. */
static inline sqlite3_destructor_type csqlite_transient(void) { return SQLITE_TRANSIENT; }

/* sqlite3_config is variadic, which Swift cannot call. No page-cache memory set aside for
 * each connection as it opens (SQLite's default is 20 pages): pages are allocated as a
 * connection reads them. Must run before SQLite initialises (the first open). */
static inline int csqlite_no_initial_page_cache(void) { return sqlite3_config(SQLITE_CONFIG_PAGECACHE, (void *)0, 0, 0); }
#endif
