// libarchive (libarchive-dev), the library macOS itself ships: appdata reads archives made on a
// Mac without extracting them. Only Sources/AppDataReaders/Archive/LibArchive.swift calls into it.
#ifndef APPDATA_CLIBARCHIVE_SHIM_H
#define APPDATA_CLIBARCHIVE_SHIM_H
#include <archive.h>
#include <archive_entry.h>
#endif
