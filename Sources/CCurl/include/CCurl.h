#ifndef CCURL_H
#define CCURL_H
/* libcurl, loaded the first time a request is made rather than when the program starts.
 *
 * libcurl brings some thirty libraries with it (TLS, Kerberos, LDAP, SSH, IDN, HTTP/2),
 * and loading them cost every command 3 ms and 6 MB before it did anything: `--help`,
 * `status` and `queue` make no request at all. The types and constants come from
 * libcurl's own header (libcurl4-openssl-dev); the functions are looked up in
 * libcurl.so.4 (libcurl4) on first use. */
#include <curl/curl.h>

/* Loads libcurl if it is not loaded yet. NULL when it is there; else why not, in words. */
const char *ccurl_load(void);

/* The libcurl calls the program makes. Each loads libcurl first: call ccurl_load() before
 * the first of them and stop if it fails; a call without libcurl returns the type's error
 * value (NULL, CURLE_FAILED_INIT, CURLSHE_NOT_BUILT_IN) or does nothing. */
CURLcode ccurl_global_init(long flags);
CURL *ccurl_easy_init(void);
void ccurl_easy_cleanup(CURL *h);
void ccurl_easy_reset(CURL *h);
CURLcode ccurl_easy_perform(CURL *h);
const char *ccurl_easy_strerror(CURLcode code);
struct curl_slist *ccurl_slist_append(struct curl_slist *list, const char *line);
void ccurl_slist_free_all(struct curl_slist *list);
CURLSH *ccurl_share_init(void);
void ccurl_share_cleanup(CURLSH *s);

/* curl_easy_setopt and curl_easy_getinfo are variadic; Swift calls these typed wrappers. */
CURLcode ccurl_set_long(CURL *h, CURLoption o, long v);
CURLcode ccurl_set_off(CURL *h, CURLoption o, curl_off_t v);
CURLcode ccurl_set_string(CURL *h, CURLoption o, const char *v);
CURLcode ccurl_set_pointer(CURL *h, CURLoption o, void *v);
CURLcode ccurl_set_slist(CURL *h, CURLoption o, struct curl_slist *v);

typedef size_t (*ccurl_data_cb)(char *, size_t, size_t, void *);
typedef int (*ccurl_xferinfo_cb)(void *, curl_off_t, curl_off_t, curl_off_t, curl_off_t);
CURLcode ccurl_set_read(CURL *h, ccurl_data_cb f);
CURLcode ccurl_set_write(CURL *h, ccurl_data_cb f);
CURLcode ccurl_set_header(CURL *h, ccurl_data_cb f);
CURLcode ccurl_set_xferinfo(CURL *h, ccurl_xferinfo_cb f);

CURLcode ccurl_get_long(CURL *h, CURLINFO i, long *v);
CURLcode ccurl_get_off(CURL *h, CURLINFO i, curl_off_t *v);

static inline long ccurl_auth_basic(void) { return (long)CURLAUTH_BASIC; }

/* A share handle: connections, name lookups and TLS sessions kept between easy handles. */
typedef void (*ccurl_lock_cb)(CURL *, curl_lock_data, curl_lock_access, void *);
typedef void (*ccurl_unlock_cb)(CURL *, curl_lock_data, void *);
CURLSHcode ccurl_share_data(CURLSH *s, curl_lock_data d);
CURLSHcode ccurl_share_lock(CURLSH *s, ccurl_lock_cb f);
CURLSHcode ccurl_share_unlock(CURLSH *s, ccurl_unlock_cb f);

/* Aborting a transfer from a callback. */
static inline size_t ccurl_readfunc_abort(void) { return CURL_READFUNC_ABORT; }
#endif
