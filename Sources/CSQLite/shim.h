// SQLite (libsqlite3-dev): an iOS device backup's Manifest.db, opened read-only and immutable.
// Only Sources/AppDataReaders/Backup/SQLite.swift calls into it, and only through the table
// below: the library is loaded with the first backup (dlopen, see SharedLibrary.swift), not
// linked, so a run that reads no backup never maps it.
#ifndef APPDATA_CSQLITE_SHIM_H
#define APPDATA_CSQLITE_SHIM_H
#include <sqlite3.h>
#include <stdint.h>

// Every SQLite function appdata calls. A field's type is the function's own (typeof), so the
// compiler checks each call against SQLite's header, as if it were linked.
#define APPDATA_SQLITE_FUNCTIONS(F) \
  F(sqlite3_open_v2) F(sqlite3_close) F(sqlite3_errmsg) F(sqlite3_errstr) F(sqlite3_extended_errcode) \
  F(sqlite3_exec) F(sqlite3_deserialize) F(sqlite3_hard_heap_limit64) F(sqlite3_limit) F(sqlite3_prepare_v2) \
  F(sqlite3_finalize) F(sqlite3_step) F(sqlite3_column_blob) F(sqlite3_column_bytes) \
  F(sqlite3_column_int64) F(sqlite3_bind_text)

#pragma clang assume_nonnull begin

typedef struct appdata_sqlite {
#define APPDATA_SQLITE_FIELD(name) __typeof__(name) *name;
  APPDATA_SQLITE_FUNCTIONS(APPDATA_SQLITE_FIELD)
#undef APPDATA_SQLITE_FIELD
  // sqlite3_db_config, which is variadic: Swift cannot call it (appdata_sqlite3_db_config_flag does).
  // (An address as an integer, so the table stays a plain value Swift can share between threads.)
  uintptr_t db_config;
} appdata_sqlite;

// Fills `table` with `lookup(context, name)` for every function: 0 when one is missing (a
// SQLite older than 3.36, which has no sqlite3_deserialize by default, or another library).
static inline int appdata_sqlite_bind(appdata_sqlite *table, void *_Nullable (*lookup)(void *context, const char *name),
                                      void *context) {
#define APPDATA_SQLITE_BIND(name) \
  if (!(*(void *_Nullable *)&table->name = lookup(context, #name))) return 0;
  APPDATA_SQLITE_FUNCTIONS(APPDATA_SQLITE_BIND)
#undef APPDATA_SQLITE_BIND
  void *_Nullable db_config = lookup(context, "sqlite3_db_config");
  if (!db_config) return 0;
  table->db_config = (uintptr_t)db_config;
  return 1;
}

// sqlite3_db_config is variadic, which Swift cannot call: one integer option at a time.
static inline int appdata_sqlite3_db_config_flag(const appdata_sqlite *table, sqlite3 *db, int option, int value) {
  return ((__typeof__(sqlite3_db_config) *)table->db_config)(db, option, value, (int *_Nullable)0);
}

#pragma clang assume_nonnull end
#endif
