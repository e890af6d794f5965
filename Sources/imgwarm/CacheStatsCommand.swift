import ArgumentParser
import Foundation
import ImgWarmKit

struct CacheStatsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stats",
        abstract: "Files, logical and allocated bytes, oldest and newest entry, counts per image format, failed URLs."
    )

    @OptionGroup var cacheOptions: CacheOptions

    @Flag(help: "Print JSON instead of text.")
    var json = false

    func run() throws {
        let cache = try cacheOptions.inspectedCache(missing: .isEmpty)
        try cache.openBackend(writable: false)
        let stats = try CacheStatistics.collect(cache)
        if let skipped = stats.skipped { printError(skipped) }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            print(String(decoding: try encoder.encode(stats), as: UTF8.self))
            return
        }
        print("cache:      \(stats.directory)")
        print("files:      \(stats.files)")
        print("bytes:      \(stats.bytes) (\(Units.formatBytes(stats.bytes)))")
        print("allocated:  \(stats.allocatedBytes) (\(Units.formatBytes(stats.allocatedBytes)))")
        if let oldest = stats.oldest, let newest = stats.newest {
            print("oldest:     \(oldest)")
            print("newest:     \(newest)")
        }
        let formats = stats.formats.sorted { $0.value == $1.value ? $0.key < $1.key : $0.value > $1.value }
        if !formats.isEmpty {
            print("formats:    " + formats.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
        }
        print("failed URLs: \(stats.failedURLs)")
    }
}
