import ArgumentParser
import ImgWarmKit
import Foundation

extension CacheLayoutKind: ExpressibleByArgument {}

/// `--cache DIR` (env IMGWARM_CACHE) and `--layout` (env IMGWARM_LAYOUT),
/// shared by every command.
struct CacheOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp(
        "The disk cache folder (SDWebImage's diskCachePath, Kingfisher's DiskStorage directoryURL, Nuke's DataCache path, Glide's image_manager_disk_cache, Coil's DiskCache directory; flutter: the folder holding libCachedImageData.db and libCachedImageData/). [env: IMGWARM_CACHE; default: ${XDG_CACHE_HOME:-$HOME/.cache}/ and the layout's folder, com.hackemist.SDImageCache/default for sdwebimage]",
        valueName: "dir"), completion: .directory)
    var cache: String?

    @Option(name: .long, help: ArgumentHelp(
        "Whose disk format: sdwebimage, kingfisher (8.x), nuke (12.x DataCache), glide (4.x/5.x data cache), coil (3.x), coil2 (2.x) or flutter (flutter_cache_manager, cached_network_image). [env: IMGWARM_LAYOUT; default: sdwebimage]",
        valueName: "layout"))
    var layout: CacheLayoutKind?

    /// `--cache=~/c` and `--cache "~/c"` reach imgwarm with the `~`
    /// unexpanded (the shell expands it only at the start of a word), and
    /// a folder named `~` would be made in the working folder.
    func validate() throws {
        if let cache, cache.hasPrefix("~") {
            let rest = cache.dropFirst()
            let example = rest.hasPrefix("/") ? "--cache \"$HOME\(rest)\"" : "--cache \"$HOME/...\""
            throw ValidationError("--cache \(cache): the shell did not expand ~ here; write $HOME instead (\(example))")
        }
    }

    /// `--cache` and `--layout` as given on the command line, for a
    /// command line that imgwarm suggests.
    var explicitArguments: [String] {
        var words: [String] = []
        if let cache, !cache.isEmpty { words += ["--cache", cache] }
        if let layout { words += ["--layout", layout.rawValue] }
        return words
    }

    /// The layout asked for: `--layout`, else IMGWARM_LAYOUT, else
    /// sdwebimage. A bad IMGWARM_LAYOUT is a usage error, as a bad
    /// `--layout` is.
    func layoutKind(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> CacheLayoutKind {
        if let layout { return layout }
        guard let value = environment["IMGWARM_LAYOUT"], !value.isEmpty else { return .sdwebimage }
        guard let kind = CacheLayoutKind(rawValue: value.lowercased()) else {
            let names = CacheLayoutKind.allCases.map(\.rawValue).joined(separator: ", ")
            throw Failure.usage("IMGWARM_LAYOUT=\(value): not a layout (\(names))")
        }
        return kind
    }

    func directory(for kind: CacheLayoutKind) -> String {
        if let cache, !cache.isEmpty { return cache }
        return CacheLocation.defaultDirectory(layout: kind)
    }

    /// The cache as it is, without creating anything (read-only commands);
    /// `layout` replaces the kind's default settings (warm's --expiration).
    func existingCache(layout: (any CacheLayout)? = nil) throws -> DiskCache {
        let kind = try layoutKind()
        let layout = layout ?? kind.layout()
        return DiskCache(directory: directory(for: layout.kind), layout: layout)
    }

    /// What a `cache` command makes of a cache folder that does not exist.
    enum MissingFolder {
        /// An error (exit 3): the commands that change the cache or vouch
        /// for it (verify, prune, clear, failed --clear), whose success on
        /// a mistyped --cache would pass for work done on a real cache.
        case fails
        /// The empty cache it is before the first warm creates it (the
        /// contract: the folder is "created when missing"): the commands
        /// that only show what is there (stats, which names the folder;
        /// path, which prints the names an entry would get; failed).
        case isEmpty
    }

    /// The cache for a `cache` subcommand, checked first: a path that is
    /// not a folder, or one that cannot be listed, is a one-line error
    /// naming it and exit 3 (the cache cannot be used); so is a missing
    /// folder, unless `missing` is `.isEmpty`. `listing: false` for a
    /// command that only looks names up (search permission is enough).
    func inspectedCache(missing: MissingFolder, listing: Bool = true) throws -> DiskCache {
        let cache = try existingCache()
        if let problem = CacheFolder.problem(cache.directory, listing: listing),
           !(missing == .isEmpty && problem.errno == ENOENT) {
            throw problem
        }
        return cache
    }
}

/// Transforms for ArgumentParser options, so a bad value names the option
/// and says what was expected.
enum Parse {
    static func size(_ text: String) throws -> UInt64 { try Units.parseSize(text) }
    /// `--limit-rate`: a size a second; the `/s` may be left out.
    static func bandwidth(_ text: String) throws -> UInt64 {
        var t = text.trimmingCharacters(in: .whitespaces)
        if t.lowercased().hasSuffix("/s") { t.removeLast(2) }
        return try Units.parseSize(t)
    }
    static func duration(_ text: String) throws -> Double { try Units.parseDuration(text) }

    /// `warm --expiration`: a duration above zero, or `never`.
    static func expiration(_ text: String) throws -> KingfisherLayout.Expiration {
        if text.lowercased() == "never" { return .never }
        let seconds = try Units.parseDuration(text)
        // Kingfisher does not store an entry whose expiration is already
        // past (`store(value:forKey:expiration:)`: `isExpired`).
        guard seconds > 0 else { throw ValidationError("expiration must be above zero, or never") }
        return .seconds(seconds)
    }
}
