import ArgumentParser

struct CacheCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cache",
        abstract: "Inspect and maintain a cache folder.",
        subcommands: [
            CachePruneCommand.self, CacheStatsCommand.self, CachePathCommand.self, CacheVerifyCommand.self,
            CacheFailedCommand.self, CacheClearCommand.self,
        ]
    )
}
