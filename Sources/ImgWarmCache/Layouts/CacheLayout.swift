#if canImport(Glibc)
import Glibc
#endif
import CFileScan

/// One image library's disk cache format: its folder, the file name of a
/// key, the dates a stored file carries, and the rules the library prunes
/// by. Everything that differs between SDWebImage, Kingfisher and Nuke sits
/// behind this protocol (one file per library in this folder) and the
/// backend it makes (`CacheBackend`), so that the prefetcher, the store and
/// the maintenance commands have no per-library conditionals.
///
/// The cache key itself is the same for all three: each library keys a
/// plain URL by its `absoluteString` (SDWebImage `cacheKeyForURL:`,
/// Kingfisher `URL.cacheKey`, Nuke `ImageRequest.imageId` through
/// `makeDataCacheKey`), so the manifest reader computes keys once for all.
public protocol CacheLayout: Sendable {
    /// The `--layout` value that names the format.
    var name: String { get }

    /// The names an app may find `key`'s entry under, the first one being the
    /// name imgwarm writes.
    func entryName(forKey key: String) -> CacheEntryName

    /// `entryName(forKey:)` when the MD5 of the key (of its UTF-8 bytes up
    /// to a NUL, as `CacheFileName.digest(ofKey:)`) is already known: `warm`
    /// computes it once per entry to de-duplicate the manifest, and a
    /// layout that names files by it need not hash again.
    func entryName(forKey key: String, md5: UnsafeRawBufferPointer) -> CacheEntryName

    /// Where the format keeps its entries in the cache folder: a plain
    /// folder of files (`FolderLayout` makes a `FolderBackend`), or the
    /// library's index (a DiskLruCache journal, flutter's database,
    /// Fresco's shards). Lookups, stores, hits, removals and prune go
    /// through it.
    func makeBackend(folders: CacheFolders, writer: FileWriter) -> any CacheBackend

    /// For a library keyed by the URL itself (OkHttp): how a manifest URL
    /// becomes the key, refusing `key=`; nil: keys as the manifest gives.
    var manifestKeyRule: ManifestKeyRule? { get }

    /// Why an entry is refused under this layout before it is fetched
    /// (flutter keeps the URL in its database: not one with credentials),
    /// or nil.
    func refusal(url: String, key: String) -> String?

    /// The URL the backend keeps with an entry (`StoredResponse.url`):
    /// the URL the app requests, unless the library keeps another.
    func storedURL(url: String, key: String) -> String

    /// Whether the backend keeps every response header and the TLS session
    /// (OkHttp's cache entry does): the download then records them.
    var keepsResponseDetail: Bool { get }

    // What the folder looks like, so that detection and recognition know
    // the layout (`LayoutDetection`, `CacheRecognition`).

    /// The index the library keeps beside its files.
    var indexKind: CacheIndexKind { get }

    /// The last path components of the folders the library caches in by
    /// default: `defaultFolder`, and the other names its caches are
    /// commonly found under.
    var defaultFolderNames: [String] { get }

    /// Whether the library keeps its files in sub-folder `folder` (a path
    /// relative to the cache folder, never "").
    func holdsEntries(inFolder folder: String) -> Bool

    /// Whether `name`, a visible file in `folder` ("" for the cache folder
    /// itself, else one `holdsEntries` admits), is a name the library gives
    /// an entry or a value file there (the index's files aside).
    func fitsEntryName(_ name: [UInt8], inFolder folder: String) -> Bool
}

/// A format whose entries are plain files in the cache folder (SDWebImage,
/// Kingfisher, Nuke): the file's dates are the library's, and the library
/// prunes by its expiry and size rules (`CachePruner`).
public protocol FolderLayout: CacheLayout {
    /// Whether an existing file still is the key's entry for the app at
    /// `now` (nanoseconds since the epoch). A Kingfisher file whose
    /// deadline has passed is not: the app treats it as a miss.
    func isLive(_ info: stat, now: Int64) -> Bool

    /// The access and modification times a file stored or revalidated at
    /// `now` must get, or nil when both are simply "now" (what the kernel
    /// gives a new file).
    func fileTimes(storedAt now: timespec) -> (access: timespec, modification: timespec)?

    /// The library's prune rules with the user's options applied. Throws
    /// an `ImgWarmError` usage error for an option the library has no notion of.
    func prunePolicy(_ options: PruneOptions, now: Int64) throws -> PrunePolicy

    /// Whether the library lists sub-folders of its cache folder.
    var walksSubfolders: Bool { get }
}

/// A layout this tool ships: one of the `--layout` values.
public protocol BuiltInLayout: CacheLayout {
    var kind: CacheLayoutKind { get }
    /// The folder the library caches in by default, relative to the app's
    /// cache folder (`Library/Caches`, `Context.getCacheDir()`).
    var defaultFolder: String { get }
}

extension BuiltInLayout {
    public var name: String { kind.rawValue }
    public var defaultFolderNames: [String] { [defaultFolder] }
}

extension FolderLayout {
    public func makeBackend(folders: CacheFolders, writer: FileWriter) -> any CacheBackend {
        FolderBackend(folders: folders, layout: self, writer: writer)
    }
    public func isLive(_ info: stat, now: Int64) -> Bool { true }
    public func fileTimes(storedAt now: timespec) -> (access: timespec, modification: timespec)? { nil }
}

extension CacheLayout {
    /// The shipped layout this one is, nil for one a test registers.
    public var builtInKind: CacheLayoutKind? { CacheLayoutKind(rawValue: name) }

    /// A backend over a cache folder of its own (tests, `cache path`).
    public func makeBackend(directory: String, writer: FileWriter = .direct) -> any CacheBackend {
        makeBackend(folders: CacheFolders(directory: directory), writer: writer)
    }
}

/// The `--layout` values.
public enum CacheLayoutKind: String, CaseIterable, Sendable {
    case sdwebimage, kingfisher, nuke
    /// Android and Flutter: Glide's data cache, Coil 3, Coil 2,
    /// flutter_cache_manager.
    case glide, coil, coil2, flutter
    /// OkHttp's HTTP cache (Picasso, Coil 1, React Native's fetch).
    case okhttp
    /// Fresco's disk cache (React Native's `<Image>` on Android).
    case fresco

    /// The folder under `${XDG_CACHE_HOME:-$HOME/.cache}` that stands for
    /// the app's cache folder, as the library names it by default.
    public var defaultFolder: String { layout().defaultFolder }

    /// Every layout with its default settings, in `allCases` order: the
    /// order detection asks them in.
    public static let registry: [any BuiltInLayout] = allCases.map { $0.layout() }

    /// The layout with its default settings.
    public func layout() -> any BuiltInLayout {
        switch self {
        case .sdwebimage: return SDWebImageLayout()
        case .kingfisher: return KingfisherLayout()
        case .nuke: return NukeLayout()
        case .glide: return GlideLayout()
        case .coil: return CoilLayout()
        case .coil2: return Coil2Layout()
        case .flutter: return FlutterLayout()
        case .okhttp: return OkHttpLayout()
        case .fresco: return FrescoLayout()
        }
    }
}

/// The file names of one cache key: `storedName` is written, and a lookup
/// tries `lookupNames` in order (it starts with `storedName`).
public struct CacheEntryName: Equatable, Sendable {
    public let storedName: String
    public let lookupNames: [String]

    public init(storedName: String, lookupNames: [String]) {
        self.storedName = storedName
        self.lookupNames = lookupNames
    }

    public init(storedName: String) {
        self.init(storedName: storedName, lookupNames: [storedName])
    }
}

extension CacheLayout {
    public func entryName(forKey key: String, md5: UnsafeRawBufferPointer) -> CacheEntryName { entryName(forKey: key) }
    public var manifestKeyRule: ManifestKeyRule? { nil }
    public func refusal(url: String, key: String) -> String? { nil }
    public func storedURL(url: String, key: String) -> String { url }
    public var keepsResponseDetail: Bool { false }
    public var indexKind: CacheIndexKind { .none }
    public var defaultFolderNames: [String] { [] }
    public func holdsEntries(inFolder folder: String) -> Bool { false }
}

/// Which files a prune removes, in what order, and down to what: the
/// decisions of one library's expiry and size sweep, as plain data that
/// `CachePruner` carries out.
public struct PrunePolicy: Sendable {
    public enum Expiry: Sendable, Equatable {
        /// No age expiry (Nuke).
        case none
        /// Files whose `date` is at or before `cutoff` (SDWebImage:
        /// now - maxDiskAge); files without that date stay.
        case olderThan(cutoff: Int64, date: CacheExpireType)
        /// Files whose modification date, the stored deadline, is at or
        /// before now (Kingfisher).
        case deadlinePassed(now: Int64)
    }

    /// Which byte count the size limit is compared with.
    public enum SizeMeasure: String, Sendable {
        /// Blocks on disk (SDWebImage, Nuke).
        case allocated
        /// File length (Kingfisher's `fileSizeKey`).
        case logical
    }

    public var expiry: Expiry
    /// The date trimming goes by, oldest first.
    public var trimDate: CacheExpireType
    /// Files without `trimDate` go first (the library reads a missing date as
    /// `distantPast`: Kingfisher, Nuke) or last (SDWebImage keeps them).
    public var undatedTrimmedFirst: Bool
    public var size: SizeMeasure
    /// The size limit; nil: no trim.
    public var limit: UInt64?
    /// Trim starts at `limit` already (Kingfisher: `size < sizeLimit` returns
    /// early) rather than only above it (SDWebImage, Nuke).
    public var trimsAtLimit: Bool
    /// Trim removes files until the size is below (SDWebImage) or at or
    /// below (Kingfisher, Nuke: `while size > target`) `target`.
    public var target: UInt64
    public var stopsAtTarget: Bool
    /// Sub-folders are entries too (SDWebImage, Kingfisher) or not (Nuke).
    public var walksSubfolders: Bool

    /// The `Record.date` of an expired file under `.deadlinePassed`:
    /// expiry there is decided by one date and trimming ordered by another,
    /// and a record keeps one.
    static let expiredMark = Int64.min
    /// A file without `trimDate` that goes first.
    static let undatedFirst = Int64.min + 1

    /// The one date a file is judged by: expired when at or before
    /// `expirationCutoff`, then trimmed in its order.
    func recordDate(_ info: imgwarm_stat) -> Int64 {
        if case .deadlinePassed(let now) = expiry, info.mtime_ns <= now { return Self.expiredMark }
        if let date = trimDate.date(of: info) { return date }
        return undatedTrimmedFirst ? Self.undatedFirst : CacheInventory.noDate
    }

    /// Records whose date is at or before this are expired; nil: none are.
    var expirationCutoff: Int64? {
        switch expiry {
        case .none: return nil
        case .olderThan(let cutoff, _): return cutoff
        case .deadlinePassed: return Self.expiredMark
        }
    }

    /// Whether `remaining` bytes call for a trim.
    func needsTrim(_ remaining: UInt64) -> Bool {
        guard let limit, limit > 0 else { return false }
        return trimsAtLimit ? remaining >= limit : remaining > limit
    }

    /// Whether trimming has gone far enough.
    func reachedTarget(_ remaining: UInt64) -> Bool {
        stopsAtTarget ? remaining <= target : remaining < target
    }

    /// The bytes a file weighs against the limit.
    func bytes(_ info: imgwarm_stat) -> Int64 {
        size == .allocated ? info.allocatedBytes : info.size
    }
}
