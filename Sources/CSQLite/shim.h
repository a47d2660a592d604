// SQLite (libsqlite3-dev): an iOS device backup's Manifest.db, opened read-only and immutable.
// Only Sources/AppDataReaders/Backup/SQLite.swift calls into it.
#ifndef APPDATA_CSQLITE_SHIM_H
#define APPDATA_CSQLITE_SHIM_H
#include <sqlite3.h>

// sqlite3_db_config is variadic, which Swift cannot call: one integer option at a time.
static inline int appdata_sqlite3_db_config_flag(sqlite3 *db, int option, int value) {
  return sqlite3_db_config(db, option, value, (int *)0);
}
#endif
