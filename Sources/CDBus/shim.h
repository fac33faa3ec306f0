#ifndef CDBUS_SHIM_H
#define CDBUS_SHIM_H
#include <dbus/dbus.h>
#include <stdint.h>

/* The type codes are cast macros (`((int) 's')`) that Swift does not import. */
static const int CDBUS_TYPE_BYTE = DBUS_TYPE_BYTE;
static const int CDBUS_TYPE_INT32 = DBUS_TYPE_INT32;
static const int CDBUS_TYPE_UINT32 = DBUS_TYPE_UINT32;
static const int CDBUS_TYPE_STRING = DBUS_TYPE_STRING;
static const int CDBUS_TYPE_ARRAY = DBUS_TYPE_ARRAY;
static const int CDBUS_TYPE_VARIANT = DBUS_TYPE_VARIANT;
static const int CDBUS_TYPE_DICT_ENTRY = DBUS_TYPE_DICT_ENTRY;
static const int CDBUS_TYPE_OBJECT_PATH = DBUS_TYPE_OBJECT_PATH;
static const int CDBUS_TYPE_STRUCT = DBUS_TYPE_STRUCT;
static const int CDBUS_TYPE_INVALID = DBUS_TYPE_INVALID;
static const int CDBUS_TYPE_BOOLEAN = DBUS_TYPE_BOOLEAN;

/* dbus_message_iter_append_basic and _get_basic take `void *` to a value of the type the
 * code names; a wrong pairing is a crash, so Swift only sees these typed versions.
 * Strings must be valid UTF-8 (libdbus aborts otherwise): Swift's String guarantees it. */
static inline dbus_bool_t cdbus_append_string(DBusMessageIter *it, const char *value) {
    return dbus_message_iter_append_basic(it, DBUS_TYPE_STRING, &value);
}
/* The path must be a valid object path (libdbus aborts otherwise): callers pass only
 * paths a service gave them or constants. */
static inline dbus_bool_t cdbus_append_object_path(DBusMessageIter *it, const char *value) {
    return dbus_message_iter_append_basic(it, DBUS_TYPE_OBJECT_PATH, &value);
}
static inline dbus_bool_t cdbus_append_uint32(DBusMessageIter *it, uint32_t value) {
    dbus_uint32_t v = value;
    return dbus_message_iter_append_basic(it, DBUS_TYPE_UINT32, &v);
}
static inline dbus_bool_t cdbus_append_boolean(DBusMessageIter *it, int value) {
    dbus_bool_t v = value ? TRUE : FALSE;
    return dbus_message_iter_append_basic(it, DBUS_TYPE_BOOLEAN, &v);
}
static inline dbus_bool_t cdbus_append_int32(DBusMessageIter *it, int32_t value) {
    dbus_int32_t v = value;
    return dbus_message_iter_append_basic(it, DBUS_TYPE_INT32, &v);
}
static inline dbus_bool_t cdbus_append_byte(DBusMessageIter *it, uint8_t value) {
    unsigned char v = value;
    return dbus_message_iter_append_basic(it, DBUS_TYPE_BYTE, &v);
}

/* Readers: the caller has checked dbus_message_iter_get_arg_type first. Strings and
 * object paths are both read as `const char *`. */
static inline const char *cdbus_get_string(DBusMessageIter *it) {
    const char *value = NULL;
    dbus_message_iter_get_basic(it, &value);
    return value;
}
static inline uint8_t cdbus_get_byte(DBusMessageIter *it) {
    unsigned char value = 0;
    dbus_message_iter_get_basic(it, &value);
    return value;
}
static inline int cdbus_get_boolean(DBusMessageIter *it) {
    dbus_bool_t value = FALSE;
    dbus_message_iter_get_basic(it, &value);
    return value != FALSE;
}
static inline int32_t cdbus_get_int32(DBusMessageIter *it) {
    dbus_int32_t value = 0;
    dbus_message_iter_get_basic(it, &value);
    return value;
}
static inline uint32_t cdbus_get_uint32(DBusMessageIter *it) {
    dbus_uint32_t value = 0;
    dbus_message_iter_get_basic(it, &value);
    return value;
}

/* DBusError's fields sit next to bitfields; read them here. */
static inline const char *cdbus_error_name(const DBusError *e) { return e->name; }
static inline const char *cdbus_error_message(const DBusError *e) { return e->message; }
#endif
