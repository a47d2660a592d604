import AppDataCore

/// What an extraction wrote, per container, and what it did not, with why.
public typealias ExtractReport = BackupExtraction.Report

