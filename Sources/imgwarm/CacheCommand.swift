import ArgumentParser

struct CacheCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cache",
        abstract: "Inspect and maintain a cache folder.",
        subcommands: [CachePathCommand.self, CacheStatsCommand.self, CacheClearCommand.self, CachePruneCommand.self]
    )
}
