import ArgumentParser
import ImgWarmKit

struct CacheClearCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "clear",
        abstract: "Remove every cache entry (and imgwarm's state too with --all).",
        discussion: "Hidden files and folders other than imgwarm's own state are left alone, as SDWebImage leaves them."
    )

    @OptionGroup var cacheOptions: CacheOptions

    @Flag(help: "Also remove imgwarm's state folder (.imgwarm: failed-URL list, validators).")
    var all = false

    func run() throws {
        let cache = cacheOptions.existingCache()
        let result = try CacheMaintenance.clear(cache, includingState: all)
        print("removed \(result.files) files, \(Units.formatBytes(result.bytes))")
    }
}
