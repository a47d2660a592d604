// libarchive, the library macOS itself ships (/usr/lib/libarchive.2.dylib) and Debian's
// libarchive13: appdata reads archives made on a Mac without extracting them. Only
// Sources/AppDataReaders/Archive/LibArchive.swift calls into it, and only through the table
// below: the library is loaded on first use (dlopen, see SharedLibrary.swift), not linked, so a
// run that reads no archive never maps it.
//
// macOS ships the library but not its header, so this file declares what appdata uses itself,
// copied in meaning from libarchive 3.x's archive.h and archive_entry.h (stable since 3.3):
// building needs no libarchive header on either system. Scripts/check-darwin.sh compiles this
// file after the real headers with -Werror, so a declaration that differs from libarchive's (a
// prototype or a constant) fails `make test`.
#ifndef APPDATA_CLIBARCHIVE_SHIM_H
#define APPDATA_CLIBARCHIVE_SHIM_H
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct archive;
struct archive_entry;

// archive.h: "la_ssize_t should match the type used in 'struct stat'" (ssize_t off Windows);
// la_int64_t is int64_t.
#ifndef __LA_INT64_T_DEFINED
#define __LA_INT64_T_DEFINED
typedef int64_t la_int64_t;
#endif
#ifndef __LA_SSIZE_T_DEFINED
#define __LA_SSIZE_T_DEFINED
typedef ssize_t la_ssize_t;
#endif

// archive.h
struct archive *archive_read_new(void);
int archive_read_free(struct archive *);
int archive_read_support_filter_all(struct archive *);
int archive_read_support_format_all(struct archive *);
int archive_read_open_filename(struct archive *, const char *_filename, size_t _block_size);
int archive_read_open_memory(struct archive *, const void *buff, size_t size);
int archive_read_next_header(struct archive *, struct archive_entry **);
la_ssize_t archive_read_data(struct archive *, void *, size_t);
int archive_errno(struct archive *);
const char *archive_error_string(struct archive *);
la_int64_t archive_filter_bytes(struct archive *, int);
int archive_filter_code(struct archive *, int);
int archive_format(struct archive *);

// archive_entry.h (__LA_MODE_T is mode_t off Windows)
const char *archive_entry_pathname(struct archive_entry *);
const char *archive_entry_pathname_utf8(struct archive_entry *);
const char *archive_entry_hardlink(struct archive_entry *);
const char *archive_entry_symlink(struct archive_entry *);
mode_t archive_entry_filetype(struct archive_entry *);
la_int64_t archive_entry_size(struct archive_entry *);
int archive_entry_is_encrypted(struct archive_entry *);
int archive_entry_xattr_reset(struct archive_entry *);
int archive_entry_xattr_next(struct archive_entry *, const char ** /* name */, const void ** /* value */, size_t *);

// The constants, spelled as the headers spell them (a redefinition with other tokens is a
// warning, made an error by the check).
#define ARCHIVE_EOF 1
#define ARCHIVE_OK 0
#define ARCHIVE_WARN (-20)
#define ARCHIVE_FILTER_NONE 0
#define ARCHIVE_FORMAT_BASE_MASK 0xff0000
#define ARCHIVE_FORMAT_TAR 0x30000
#define ARCHIVE_FORMAT_MTREE 0x80000
#ifndef __LA_MODE_T
#define __LA_MODE_T mode_t
#endif
#define AE_IFREG ((__LA_MODE_T)0100000)
#define AE_IFLNK ((__LA_MODE_T)0120000)
#define AE_IFDIR ((__LA_MODE_T)0040000)

// Every libarchive function appdata calls. A field's type is the function's own (typeof), so
// the compiler checks each call against the declarations above, as if it were linked.
#define APPDATA_LIBARCHIVE_FUNCTIONS(F) \
  F(archive_read_new) F(archive_read_free) F(archive_read_support_filter_all) F(archive_read_support_format_all) \
  F(archive_read_open_filename) F(archive_read_open_memory) F(archive_read_next_header) F(archive_read_data) \
  F(archive_errno) F(archive_error_string) F(archive_filter_bytes) F(archive_filter_code) F(archive_format) \
  F(archive_entry_pathname) F(archive_entry_pathname_utf8) F(archive_entry_hardlink) F(archive_entry_symlink) F(archive_entry_filetype) \
  F(archive_entry_size) F(archive_entry_is_encrypted) F(archive_entry_xattr_reset) F(archive_entry_xattr_next)

#pragma clang assume_nonnull begin

typedef struct appdata_libarchive {
#define APPDATA_LIBARCHIVE_FIELD(name) __typeof__(name) *name;
  APPDATA_LIBARCHIVE_FUNCTIONS(APPDATA_LIBARCHIVE_FIELD)
#undef APPDATA_LIBARCHIVE_FIELD
} appdata_libarchive;

// Fills `table` with `lookup(context, name)` for every function: 0 when one is missing (a
// libarchive older than 3.3, or another library under its name).
static inline int appdata_libarchive_bind(appdata_libarchive *table, void *_Nullable (*lookup)(void *context, const char *name),
                                          void *context) {
#define APPDATA_LIBARCHIVE_BIND(name) \
  if (!(*(void *_Nullable *)&table->name = lookup(context, #name))) return 0;
  APPDATA_LIBARCHIVE_FUNCTIONS(APPDATA_LIBARCHIVE_BIND)
#undef APPDATA_LIBARCHIVE_BIND
  return 1;
}

#pragma clang assume_nonnull end
#endif
