// SQLite (libsqlite3-dev): an iOS device backup's Manifest.db, opened read-only and immutable.
// Only Sources/AppDataKit/Backup/SQLite.swift calls into it.
#ifndef APPDATA_CSQLITE_SHIM_H
#define APPDATA_CSQLITE_SHIM_H
#include <sqlite3.h>
#endif
