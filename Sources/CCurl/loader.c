#include "CCurl.h"
#include <CSystem.h>

/* libcurl's functions, looked up once. */
static struct {
    CURLcode (*global_init)(long);
    CURL *(*easy_init)(void);
    void (*easy_cleanup)(CURL *);
    void (*easy_reset)(CURL *);
    CURLcode (*easy_perform)(CURL *);
    const char *(*easy_strerror)(CURLcode);
    CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
    CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
    struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
    void (*slist_free_all)(struct curl_slist *);
    CURLSH *(*share_init)(void);
    CURLSHcode (*share_setopt)(CURLSH *, CURLSHoption, ...);
    CURLSHcode (*share_cleanup)(CURLSH *);
} api;

#define FUNCTION(field) CSYSTEM_SYMBOL(curl_, api, field)
static const struct csystem_symbol symbols[] = {
    FUNCTION(global_init), FUNCTION(easy_init), FUNCTION(easy_cleanup), FUNCTION(easy_reset), FUNCTION(easy_perform),
    FUNCTION(easy_strerror), FUNCTION(easy_setopt), FUNCTION(easy_getinfo), FUNCTION(slist_append),
    FUNCTION(slist_free_all), FUNCTION(share_init), FUNCTION(share_setopt), FUNCTION(share_cleanup),
};
static struct csystem_library libcurl = CSYSTEM_LIBRARY("libcurl.so.4", "libcurl4", symbols);

const char *ccurl_load(void) { return csystem_library_load(&libcurl); }

/* Every call goes through here: loaded, or the call answers its error value. */
#define READY(error_value) if (ccurl_load()) return error_value;
#define READY_VOID if (ccurl_load()) return;

CURLcode ccurl_global_init(long flags) { READY(CURLE_FAILED_INIT) return api.global_init(flags); }
CURL *ccurl_easy_init(void) { READY(NULL) return api.easy_init(); }
void ccurl_easy_cleanup(CURL *h) { READY_VOID api.easy_cleanup(h); }
void ccurl_easy_reset(CURL *h) { READY_VOID api.easy_reset(h); }
CURLcode ccurl_easy_perform(CURL *h) { READY(CURLE_FAILED_INIT) return api.easy_perform(h); }
const char *ccurl_easy_strerror(CURLcode code) { READY("libcurl is not loaded") return api.easy_strerror(code); }
struct curl_slist *ccurl_slist_append(struct curl_slist *list, const char *line) { READY(NULL) return api.slist_append(list, line); }
void ccurl_slist_free_all(struct curl_slist *list) { READY_VOID api.slist_free_all(list); }
CURLSH *ccurl_share_init(void) { READY(NULL) return api.share_init(); }
void ccurl_share_cleanup(CURLSH *s) { READY_VOID api.share_cleanup(s); }

CURLcode ccurl_set_long(CURL *h, CURLoption o, long v) { READY(CURLE_FAILED_INIT) return api.easy_setopt(h, o, v); }
CURLcode ccurl_set_off(CURL *h, CURLoption o, curl_off_t v) { READY(CURLE_FAILED_INIT) return api.easy_setopt(h, o, v); }
CURLcode ccurl_set_string(CURL *h, CURLoption o, const char *v) { READY(CURLE_FAILED_INIT) return api.easy_setopt(h, o, v); }
CURLcode ccurl_set_pointer(CURL *h, CURLoption o, void *v) { READY(CURLE_FAILED_INIT) return api.easy_setopt(h, o, v); }
CURLcode ccurl_set_slist(CURL *h, CURLoption o, struct curl_slist *v) { READY(CURLE_FAILED_INIT) return api.easy_setopt(h, o, v); }
CURLcode ccurl_set_read(CURL *h, ccurl_data_cb f) { READY(CURLE_FAILED_INIT) return api.easy_setopt(h, CURLOPT_READFUNCTION, f); }
CURLcode ccurl_set_write(CURL *h, ccurl_data_cb f) { READY(CURLE_FAILED_INIT) return api.easy_setopt(h, CURLOPT_WRITEFUNCTION, f); }
CURLcode ccurl_set_header(CURL *h, ccurl_data_cb f) { READY(CURLE_FAILED_INIT) return api.easy_setopt(h, CURLOPT_HEADERFUNCTION, f); }
CURLcode ccurl_set_xferinfo(CURL *h, ccurl_xferinfo_cb f) { READY(CURLE_FAILED_INIT) return api.easy_setopt(h, CURLOPT_XFERINFOFUNCTION, f); }
CURLcode ccurl_get_long(CURL *h, CURLINFO i, long *v) { READY(CURLE_FAILED_INIT) return api.easy_getinfo(h, i, v); }
CURLcode ccurl_get_off(CURL *h, CURLINFO i, curl_off_t *v) { READY(CURLE_FAILED_INIT) return api.easy_getinfo(h, i, v); }

CURLSHcode ccurl_share_data(CURLSH *s, curl_lock_data d) { READY(CURLSHE_NOT_BUILT_IN) return api.share_setopt(s, CURLSHOPT_SHARE, d); }
CURLSHcode ccurl_share_lock(CURLSH *s, ccurl_lock_cb f) { READY(CURLSHE_NOT_BUILT_IN) return api.share_setopt(s, CURLSHOPT_LOCKFUNC, f); }
CURLSHcode ccurl_share_unlock(CURLSH *s, ccurl_unlock_cb f) { READY(CURLSHE_NOT_BUILT_IN) return api.share_setopt(s, CURLSHOPT_UNLOCKFUNC, f); }
