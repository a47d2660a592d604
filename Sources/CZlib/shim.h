// zlib: the deflate stream inside an `adb backup` file (.ab). Only
// Sources/AppDataReaders/Android/Zlib.swift calls into it, and only through the table below:
// the library is loaded when an .ab is first read (dlopen, see SharedLibrary.swift), not linked.
//
// The stream's fields and the functions are declared here, as zlib.h (1.2 and later, where
// the layout has not changed since 1.0) declares them, so that building needs no zlib header.
// Scripts/check-darwin.sh compiles a check that each field's offset and the size equal
// zlib.h's own.
#ifndef APPDATA_CZLIB_SHIM_H
#define APPDATA_CZLIB_SHIM_H

#pragma clang assume_nonnull begin

typedef struct appdata_z_stream {
  const unsigned char *_Nullable next_in;
  unsigned int avail_in;
  unsigned long total_in;
  unsigned char *_Nullable next_out;
  unsigned int avail_out;
  unsigned long total_out;
  const char *_Nullable msg;
  void *_Nullable state;
  void *_Nullable zalloc;  // alloc_func: NULL for zlib's own
  void *_Nullable zfree;   // free_func: NULL for zlib's own
  void *_Nullable opaque;
  int data_type;
  unsigned long adler;
  unsigned long reserved;
} appdata_z_stream;

// zlib.h's return codes and flush values.
#define APPDATA_Z_OK 0
#define APPDATA_Z_STREAM_END 1
#define APPDATA_Z_NEED_DICT 2
#define APPDATA_Z_BUF_ERROR (-5)
#define APPDATA_Z_NO_FLUSH 0

typedef struct appdata_zlib {
  int (*_Nonnull inflateInit_)(appdata_z_stream *stream, const char *version, int stream_size);
  int (*_Nonnull inflate)(appdata_z_stream *stream, int flush);
  int (*_Nonnull inflateEnd)(appdata_z_stream *stream);
  const char *_Nonnull (*_Nonnull zlibVersion)(void);
} appdata_zlib;

// Fills `table` with `lookup(context, name)` for every function: 0 when one is missing.
static inline int appdata_zlib_bind(appdata_zlib *table, void *_Nullable (*_Nonnull lookup)(void *context, const char *name), void *context) {
  if (!(*(void *_Nullable *)&table->inflateInit_ = lookup(context, "inflateInit_"))) return 0;
  if (!(*(void *_Nullable *)&table->inflate = lookup(context, "inflate"))) return 0;
  if (!(*(void *_Nullable *)&table->inflateEnd = lookup(context, "inflateEnd"))) return 0;
  if (!(*(void *_Nullable *)&table->zlibVersion = lookup(context, "zlibVersion"))) return 0;
  return 1;
}

#pragma clang assume_nonnull end
#endif
