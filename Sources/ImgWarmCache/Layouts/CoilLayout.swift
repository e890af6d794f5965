/// Coil 3.x's disk cache (`coil3/disk/RealDiskCache.kt`):
/// - a DiskLruCache (a port of OkHttp's) with app version 3 and two values
///   per entry: `<key>.0` the response metadata (`ENTRY_METADATA`),
///   `<key>.1` the body (`ENTRY_DATA`);
/// - key: `String.hash()`, `encodeUtf8().sha256().hex()`, of the disk cache
///   key, which is `options.diskCacheKey ?: url` (`NetworkFetcher`);
/// - size: 2% of the free space, at least 10 MB and at most 250 MB
///   (`DiskCache.Builder`); prune's default is that 250 MB maximum.
///
/// The metadata written is what Coil writes itself
/// (`CacheNetworkResponse.writeTo`): the status, the request and response
/// times in milliseconds, the number of header lines, then `name:value`
/// lines with the names lowercased (`NetworkHeaders` keys). Why real
/// metadata rather than the empty file Coil also accepts (an empty
/// `<key>.0` is served as a "manually written" hit, `NetworkFetcher.kt`):
/// with the default `CacheStrategy` any metadata Coil can parse is served
/// from disk just the same (`DefaultCacheStrategy.read` returns the cached
/// response), and the response's Content-Type then gives the MIME type
/// (empty metadata leaves Coil guessing from the URL's extension); an app
/// with `CacheControlCacheStrategy` gets the max-age, ETag and
/// Last-Modified it needs to serve fresh entries and revalidate stale ones,
/// as for an entry it had fetched itself.
public struct CoilLayout: DiskLruLayout {
    public init() {}

    public var kind: CacheLayoutKind { .coil }

    /// Coil 3's singleton (`SYSTEM_TEMPORARY_DIRECTORY / "coil3_disk_cache"`).
    public var defaultFolder: String { "coil3_disk_cache" }

    /// `RealDiskCache`: appVersion = 3, valueCount = 2.
    public static let journal = DiskLruJournal(appVersion: 3, valueCount: 2, rebuildNeedsEntryCount: false)
    /// `DiskCache.Builder.maximumMaxSizeBytes`: 250L * 1024 * 1024.
    public static let defaultSizeLimit: UInt64 = 250 * 1024 * 1024
    /// `ENTRY_DATA`: the body in `<key>.1`, the metadata in `<key>.0`.
    public static let imageValue = 1

    /// Apps configure Coil 3's disk cache in `image_cache` too (Coil 2's
    /// `SingletonDiskCache.DIRECTORY`, kept when an app moves to Coil 3),
    /// so that name alone cannot tell them apart.
    public var defaultFolderNames: [String] { ["coil3_disk_cache", "image_cache"] }

    public func makeBackend(folders: CacheFolders, writer: FileWriter) -> any CacheBackend {
        journalIndex(folders: folders, writer: writer, metadata: { Self.metadata($0) })
    }

    /// `CacheNetworkResponse.writeTo`. Header values with a line break
    /// (none from curl) would end the record early: left out.
    public static func metadata(_ response: StoredResponse?) -> [UInt8] {
        guard let response else { return [] }
        let headers: [(String, String?)] = [
            ("content-type", response.contentType), ("etag", response.etag),
            ("last-modified", response.lastModified), ("cache-control", response.cacheControl),
            ("expires", response.expires), ("date", response.date), ("age", response.age),
        ]
        let lines = headers.compactMap { name, value -> String? in
            guard let value, !value.contains("\n"), !value.contains("\r") else { return nil }
            return name + ":" + value + "\n"
        }
        let text = "\(response.status)\n\(response.requestedAt)\n\(response.receivedAt)\n\(lines.count)\n" + lines.joined()
        return Array(text.utf8)
    }
}

/// Coil 2.x (tag 2.7.0, `coil-base/.../coil/disk/RealDiskCache.kt`): the
/// same folder shape as Coil 3 but app version 1, so neither version reads
/// the other's journal. The metadata file is left empty. Why: Coil 2
/// respects cache headers by default (`ImageLoaderOptions.respectCacheHeaders
/// = true`), and with real metadata `HttpUriFetcher` runs OkHttp's cache
/// rules on it (`CacheStrategy.compute`): a response without max-age,
/// Expires or Last-Modified is stale at once and every load goes to the
/// network again. An empty `<key>.0` is what Coil 2 serves unconditionally
/// ("Always return cached images with empty metadata as they were likely
/// added manually", `HttpUriFetcher.kt`), which is what a warmed cache is for.
public struct Coil2Layout: DiskLruLayout {
    public init() {}

    public var kind: CacheLayoutKind { .coil2 }

    /// Coil 2's `SingletonDiskCache.DIRECTORY`, under the app's cache dir.
    public var defaultFolder: String { "image_cache" }

    /// `RealDiskCache` (2.7.0): appVersion = 1, valueCount = 2.
    public static let journal = DiskLruJournal(appVersion: 1, valueCount: 2, rebuildNeedsEntryCount: false)
    public static let imageValue = CoilLayout.imageValue
    public static let defaultSizeLimit = CoilLayout.defaultSizeLimit
}
