// libarchive (libarchive-dev), the library macOS itself ships: appdata reads archives made on a
// Mac without extracting them. Only Sources/AppDataReaders/Archive/LibArchive.swift calls into it,
// and only through the table below: the library is loaded on first use (dlopen, see
// SharedLibrary.swift), not linked, so a run that reads no archive never maps it.
#ifndef APPDATA_CLIBARCHIVE_SHIM_H
#define APPDATA_CLIBARCHIVE_SHIM_H
#include <archive.h>
#include <archive_entry.h>

// Every libarchive function appdata calls. A field's type is the function's own (typeof), so
// the compiler checks each call against libarchive's header, as if it were linked.
#define APPDATA_LIBARCHIVE_FUNCTIONS(F) \
  F(archive_read_new) F(archive_read_free) F(archive_read_support_filter_all) F(archive_read_support_format_all) \
  F(archive_read_open_filename) F(archive_read_open_memory) F(archive_read_next_header) F(archive_read_data) \
  F(archive_errno) F(archive_error_string) F(archive_filter_bytes) F(archive_filter_code) F(archive_format) \
  F(archive_entry_pathname) F(archive_entry_pathname_utf8) F(archive_entry_hardlink) F(archive_entry_filetype) \
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
