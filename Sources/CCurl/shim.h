#ifndef CCURL_SHIM_H
#define CCURL_SHIM_H
#include <curl/curl.h>

/* curl_easy_setopt and curl_easy_getinfo are variadic; Swift calls these typed wrappers. */
static inline CURLcode ccurl_set_long(CURL *h, CURLoption o, long v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode ccurl_set_off(CURL *h, CURLoption o, curl_off_t v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode ccurl_set_string(CURL *h, CURLoption o, const char *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode ccurl_set_pointer(CURL *h, CURLoption o, void *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode ccurl_set_slist(CURL *h, CURLoption o, struct curl_slist *v) { return curl_easy_setopt(h, o, v); }

typedef size_t (*ccurl_data_cb)(char *, size_t, size_t, void *);
typedef int (*ccurl_xferinfo_cb)(void *, curl_off_t, curl_off_t, curl_off_t, curl_off_t);
typedef int (*ccurl_sockopt_cb)(void *, curl_socket_t, curlsocktype);
static inline CURLcode ccurl_set_read(CURL *h, ccurl_data_cb f) { return curl_easy_setopt(h, CURLOPT_READFUNCTION, f); }
static inline CURLcode ccurl_set_write(CURL *h, ccurl_data_cb f) { return curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, f); }
static inline CURLcode ccurl_set_header(CURL *h, ccurl_data_cb f) { return curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, f); }
static inline CURLcode ccurl_set_xferinfo(CURL *h, ccurl_xferinfo_cb f) { return curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, f); }

static inline CURLcode ccurl_get_long(CURL *h, CURLINFO i, long *v) { return curl_easy_getinfo(h, i, v); }
static inline CURLcode ccurl_get_off(CURL *h, CURLINFO i, curl_off_t *v) { return curl_easy_getinfo(h, i, v); }

static inline long ccurl_auth_basic(void) { return (long)CURLAUTH_BASIC; }

/* A share handle: connections, name lookups and TLS sessions kept between easy handles. */
typedef void (*ccurl_lock_cb)(CURL *, curl_lock_data, curl_lock_access, void *);
typedef void (*ccurl_unlock_cb)(CURL *, curl_lock_data, void *);
static inline CURLSHcode ccurl_share_data(CURLSH *s, curl_lock_data d) { return curl_share_setopt(s, CURLSHOPT_SHARE, d); }
static inline CURLSHcode ccurl_share_lock(CURLSH *s, ccurl_lock_cb f) { return curl_share_setopt(s, CURLSHOPT_LOCKFUNC, f); }
static inline CURLSHcode ccurl_share_unlock(CURLSH *s, ccurl_unlock_cb f) { return curl_share_setopt(s, CURLSHOPT_UNLOCKFUNC, f); }

/* Aborting a transfer from a callback. */
static inline size_t ccurl_readfunc_abort(void) { return CURL_READFUNC_ABORT; }
static inline size_t ccurl_readfunc_pause(void) { return CURL_READFUNC_PAUSE; }
#endif
