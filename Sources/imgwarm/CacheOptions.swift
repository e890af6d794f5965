import ArgumentParser
import ImgWarmKit
import Foundation

/// `--cache DIR` (env IMGWARM_CACHE), shared by every command.
struct CacheOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp(
        "The disk cache folder (SDWebImage's diskCachePath). [env: IMGWARM_CACHE; default: ${XDG_CACHE_HOME:-$HOME/.cache}/com.hackemist.SDImageCache/default]",
        valueName: "dir"))
    var cache: String?

    var directory: String {
        if let cache, !cache.isEmpty { return cache }
        return DiskCache.defaultDirectory()
    }

    /// The cache, created when missing.
    func openCache() throws -> DiskCache {
        let c = DiskCache(directory: directory)
        try c.prepare()
        return c
    }

    /// The cache as it is, without creating anything (read-only commands).
    func existingCache() -> DiskCache { DiskCache(directory: directory) }
}

/// Transforms for ArgumentParser options, so a bad value names the option
/// and says what was expected.
enum Parse {
    static func size(_ text: String) throws -> UInt64 { try Units.parseSize(text) }
    static func duration(_ text: String) throws -> Double { try Units.parseDuration(text) }
}
