// AppDataKit: the façade a program imports. It re-exports the layers below it, and holds the
// jobs that need more than one of them (a job that reads an input and migrates it needs the
// readers and the migration); `appdata`'s command line is built on it alone.
@_exported import AppDataCore
@_exported import AppDataReaders
@_exported import AppDataReports
@_exported import AppDataMigration
