#ifndef COPENSSL_SHIM_H
#define COPENSSL_SHIM_H
/* The low-level SHA-256 API is deprecated in OpenSSL 3 but is the only one whose state
   (SHA256_CTX) is public and can be persisted between chunks. */
#define OPENSSL_SUPPRESS_DEPRECATED 1
#include <openssl/crypto.h>
#include <openssl/sha.h>
#include <openssl/evp.h>
#endif
