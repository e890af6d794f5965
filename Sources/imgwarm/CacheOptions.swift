import ArgumentParser
import ImgWarmKit
import Foundation

extension CacheLayoutKind: ExpressibleByArgument {}
extension CachePreset: ExpressibleByArgument {}

extension CacheLayoutKind {
    /// A `--layout` or IMGWARM_LAYOUT value, in any case; a bad one is one
    /// line listing the valid values.
    static func parse(_ text: String) throws -> CacheLayoutKind {
        guard let kind = CacheLayoutKind(rawValue: text.lowercased()) else {
            throw ValidationError("'\(text)' is not a layout (\(allCases.map(\.rawValue).joined(separator: ", ")))")
        }
        return kind
    }
}

/// The survey of the cache folder, made once per run: detection and
/// recognition read the same facts.
nonisolated(unsafe) private var surveyed: (path: String, survey: CacheFolderSurvey)?

/// `--cache DIR` (env IMGWARM_CACHE) and `--layout` (env IMGWARM_LAYOUT),
/// shared by every command.
struct CacheOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp(
        "The disk cache folder (SDWebImage's diskCachePath, Kingfisher's DiskStorage directoryURL, Nuke's DataCache path, Glide's image_manager_disk_cache, Coil's DiskCache directory; okhttp: the okhttp3.Cache folder, React Native's http-cache, Picasso's picasso-cache, Coil 1's image_cache; flutter: the folder holding libCachedImageData.db and libCachedImageData/). [env: IMGWARM_CACHE; default: ${XDG_CACHE_HOME:-$HOME/.cache}/ and the layout's folder, com.hackemist.SDImageCache/default for sdwebimage]",
        valueName: "dir"), completion: .directory)
    var cache: String?

    @Option(name: .long, help: ArgumentHelp(
        "Whose disk format: sdwebimage, kingfisher (8.x), nuke (12.x DataCache), glide (4.x/5.x data cache), coil (3.x), coil2 (2.x), okhttp (OkHttp's HTTP cache: Picasso, Coil 1, React Native fetch), fresco (React Native's <Image> on Android) or flutter (flutter_cache_manager, cached_network_image), in any case. [env: IMGWARM_LAYOUT; default: detected from the folder, else sdwebimage]",
        valueName: "layout"), transform: CacheLayoutKind.parse)
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
        if let preset { words += ["--preset", preset.rawValue] }
        return words
    }

    @Option(name: .long, help: ArgumentHelp(
        "An app stack's layout, folder name and size limit at once: picasso (okhttp, picasso-cache, 5MB), coil1 (okhttp, image_cache, 10MB), react-native-fetch (okhttp, http-cache, 10MB), react-native-image (fresco, image_cache, 40MB). --layout, --cache and --max-size given explicitly win.",
        valueName: "preset"))
    var preset: CachePreset?

    /// The preset's size limit, for prune's default `--max-size`, when the
    /// preset's layout is the one in use.
    func presetSizeLimit() throws -> UInt64? {
        guard let preset, try layoutKind() == preset.layout else { return nil }
        return preset.sizeLimit
    }

    @Option(name: .customLong("fresco-version"), help: ArgumentHelp(
        "fresco: the app's Fresco version, which names the shard folders (before 3.7: 22; 3.7 and later: 22.0). [default: read from the folder's shard names, else 3.4, what React Native 0.80 ships]",
        valueName: "x.y"))
    var frescoVersion: String?

    /// The kind's layout with the options every command shares.
    func configuredLayout() throws -> any BuiltInLayout {
        // A usage error before anything about the folder (exit 2 before 3).
        if frescoVersion != nil, let asked = try explicitLayoutKind(), asked != .fresco {
            throw ImgWarmError.usage("--fresco-version has no meaning under --layout \(asked.rawValue)")
        }
        let kind = try layoutKind()
        if let frescoVersion {
            guard kind == .fresco else { throw ImgWarmError.usage("--fresco-version has no meaning under --layout \(kind.rawValue)") }
            guard let names = FrescoLayout.shardNames(forVersion: frescoVersion) else {
                throw ImgWarmError.usage("--fresco-version \(frescoVersion): not a version such as 3.4 or 3.7.0")
            }
            return FrescoLayout(shardNames: names)
        }
        return kind.layout()
    }

    /// The layout asked for: `--layout`, else `--preset`'s, else
    /// IMGWARM_LAYOUT, else nil. A bad IMGWARM_LAYOUT is a usage error, as a
    /// bad `--layout` is.
    func explicitLayoutKind(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> CacheLayoutKind? {
        if let layout { return layout }
        if let preset { return preset.layout }
        guard let value = environment["IMGWARM_LAYOUT"], !value.isEmpty else { return nil }
        guard let kind = CacheLayoutKind(rawValue: value.lowercased()) else {
            let names = CacheLayoutKind.allCases.map(\.rawValue).joined(separator: ", ")
            throw ImgWarmError.usage("IMGWARM_LAYOUT=\(value): not a layout (\(names))")
        }
        return kind
    }

    /// The layout of the run. Given (`--layout`, IMGWARM_LAYOUT): the
    /// folder, when it exists, must not hold another layout's cache
    /// (exit 3 naming what it holds). Not given: detected from the folder
    /// when it exists (`LayoutDetection`: exit 2 when two layouts fit
    /// alike), else sdwebimage.
    func layoutKind(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> CacheLayoutKind {
        let explicit = try explicitLayoutKind(environment: environment)
        let path = directory(for: explicit ?? .sdwebimage)
        guard let survey = Self.survey(path) else { return explicit ?? .sdwebimage }
        if let explicit {
            if let (held, reason) = LayoutDetection.contradiction(survey, asked: explicit) {
                throw ImgWarmError.cache(path: path, reason: "holds a \(held.map(\.rawValue).joined(separator: " or ")) cache (detected from \(reason)), "
                    + "not \(explicit.rawValue); imgwarm does not mix two formats in one folder (name the right --layout, or another folder)",
                    errno: EINVAL)
            }
            return explicit
        }
        switch LayoutDetection.detect(survey, path: path) {
        case .detected(let kind, _): return kind
        case .tie(let kinds, let reason):
            throw ImgWarmError.usage("\(path): \(reason) fits \(kinds.map(\.rawValue).joined(separator: " and ")) alike; say which with --layout")
        }
    }

    /// The folder's survey, nil when it cannot be opened (missing: nothing
    /// to detect).
    static func survey(_ path: String) -> CacheFolderSurvey? {
        if let surveyed, surveyed.path == path { return surveyed.survey }
        guard let root = try? FolderHandle.open(path, in: AT_FDCWD, path: path, listing: true) else { return nil }
        let survey = CacheFolderSurvey.survey(root)
        surveyed = (path, survey)
        return survey
    }

    /// Refuses (exit 3) to delete in, or write into, the folder of `cache`
    /// unless it is recognisably a cache of its layout (or `force`), and
    /// always when it is a folder no cache is (`CacheRecognition`). A
    /// missing folder passes: there is nothing in it.
    func requireRecognised(_ cache: DiskCache, force: Bool, purpose: CacheRecognition.Purpose) throws {
        let root: FolderHandle
        do {
            root = try FolderHandle.open(cache.directory, in: AT_FDCWD, path: cache.directory, listing: true)
        } catch let error as ImgWarmError where error.errno == ENOENT {
            return
        }
        guard let kind = cache.layout.builtInKind else {
            throw ImgWarmError.cache(path: cache.directory, reason: "--layout \(cache.layout.name) has no recognition rule; nothing written or removed")
        }
        try CacheRecognition.require(root, layout: kind, force: force, purpose: purpose,
                                     survey: Self.survey(cache.directory))
    }

    func directory(for kind: CacheLayoutKind) -> String {
        if let cache, !cache.isEmpty { return cache }
        if let preset, preset.layout == kind {
            let base = CacheLocation.defaultDirectory(layout: kind)
            // IMGWARM_CACHE names the folder itself; else the preset's name
            // replaces the layout's default one.
            if let explicit = ProcessInfo.processInfo.environment["IMGWARM_CACHE"], !explicit.isEmpty { return explicit }
            return String(base.dropLast(kind.defaultFolder.count)) + preset.folder
        }
        return CacheLocation.defaultDirectory(layout: kind)
    }

    /// The cache as it is, without creating anything (read-only commands);
    /// `layout` replaces the kind's default settings (warm's --expiration).
    /// `writer`: how stores copy bytes (warm's test hook may slow it).
    func existingCache(layout: (any BuiltInLayout)? = nil, writer: FileWriter = .direct) throws -> DiskCache {
        let layout = try layout ?? configuredLayout()
        return DiskCache(directory: directory(for: layout.kind), layout: layout, writer: writer)
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
