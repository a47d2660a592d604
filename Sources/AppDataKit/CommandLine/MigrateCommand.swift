struct MigrateCommand { init(_ p: ParsedArguments) throws(UsageError) {}; func run(io: CommandIO) throws(UsageError) -> ExitCode { io.error("migrate is not implemented yet"); return .usage } }
