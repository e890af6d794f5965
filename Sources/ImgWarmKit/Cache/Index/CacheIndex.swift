#if canImport(Glibc)
import Glibc
#endif

/// What a response said that a layout may keep next to the bytes: Coil 3's
/// metadata file (`CacheNetworkResponse`), flutter_cache_manager's `eTag`,
/// `validTill` and file extension. The iOS layouts keep none of it.
public struct StoredResponse: Sendable, Equatable {
    /// The URL the app requests (flutter's `url` column); not the key.
    public var url: String
    public var status: Int = 200
    public var contentType: String?
    public var etag: String?
    public var lastModified: String?
    public var cacheControl: String?
    public var expires: String?
    public var date: String?
    public var age: String?
    /// Milliseconds since 1970: when the request went out (the first
    /// attempt's start) and when the response was complete.
    public var requestedAt: Int64
    public var receivedAt: Int64
    /// Every response header and the TLS session, when the download kept
    /// them (`DownloaderConfiguration.recordsResponseDetail`: OkHttp's
    /// cache stores them all); the HTTP version (10, 11, 2, 3; 0 unknown).
    public var headerFields: [HeaderField] = []
    public var httpVersion = 0
    public var tls: TLSFacts?
    /// The length of the body as stored (set by the index that writes it).
    public var bodyLength: Int?

    public init(url: String, status: Int = 200, contentType: String? = nil, etag: String? = nil,
                lastModified: String? = nil, cacheControl: String? = nil, expires: String? = nil,
                date: String? = nil, age: String? = nil, requestedAt: Int64, receivedAt: Int64) {
        self.url = url
        self.status = status
        self.contentType = contentType
        self.etag = etag
        self.lastModified = lastModified
        self.cacheControl = cacheControl
        self.expires = expires
        self.date = date
        self.age = age
        self.requestedAt = requestedAt
        self.receivedAt = receivedAt
    }
}

/// The index a library keeps beside its files, for the layouts that have
/// one: a DiskLruCache journal (Glide, Coil), flutter_cache_manager's
/// sqlite database. Where an iOS layout's entry is just a file under a
/// name, these entries exist only once the index says so, and every store,
/// hit and removal is written to it as the library writes it. `DiskCache`
/// hands its lookups, stores and hit renewals to the index when its layout
/// has one.
public protocol CacheIndex: AnyObject, Sendable {
    /// Reads the index, and with `writable` makes it when missing and
    /// repairs what the library repairs on open. Throws `ImgWarmError` for an
    /// index the library would not read as this layout's (another app
    /// version or value count, a corrupt journal, another schema): such a
    /// folder is not overwritten.
    func open(writable: Bool) throws

    /// The entry's data file and its length, when the index holds the entry
    /// readable and its files exist (the library's `get`).
    func existingEntry(for name: CacheEntryName) -> (path: String, size: Int64)?

    /// The app has just read the entry: what the library's read records
    /// (a `READ` journal line; flutter's `touched`).
    func recordHit(_ name: CacheEntryName)

    /// Writes the entry's files and records it in the index, so that a
    /// reader (the app, another run, a kill at any moment) sees the old
    /// entry, the whole new one, or none. `write` copies bytes into a temp
    /// file (the kill tests slow it down). `keepExisting`: an entry the
    /// index holds now is kept.
    func store(_ bytes: UnsafeRawBufferPointer, as name: CacheEntryName, response: StoredResponse?, keepExisting: Bool,
               write: (Int32, UnsafeRawBufferPointer) -> Int32) throws

    /// Whether a file (relative to the cache folder) holds an entry's image
    /// bytes: what `stats` and `verify` look at (not the journal, Coil's
    /// metadata files, the database).
    func isImageFile(_ relativePath: String) -> Bool

    /// Removes the entry whose image file is `path` (`verify --delete`),
    /// recording the removal as the library does.
    func removeEntry(imagePath path: String) throws

    /// `cache prune` with the library's eviction.
    func prune(_ options: PruneOptions) throws -> IndexPruneResult

    /// The path `cache path` prints for a key the cache does not hold.
    func plannedPath(for name: CacheEntryName) -> String

    /// Writes what is still buffered (READ lines, touched dates).
    func close() throws
}

/// What `cache prune` did to an indexed cache.
public struct IndexPruneResult: Sendable, Codable {
    public struct Removed: Sendable, Codable {
        public var path: String
        public var bytes: Int64
        public var reason: String
    }
    public var layout: String
    public var entriesBefore = 0
    public var bytesBefore: Int64 = 0
    public var removed: [Removed] = []
    public var entriesAfter = 0
    public var bytesAfter: Int64 = 0
    public var dryRun = false
    /// Whether the journal was rebuilt (`journal.tmp`, renamed over it).
    public var rebuiltJournal = false

    public init(layout: String, dryRun: Bool) {
        self.layout = layout
        self.dryRun = dryRun
    }

    enum CodingKeys: String, CodingKey {
        case layout, removed, dryRun = "dry_run"
        case entriesBefore = "entries_before", bytesBefore = "bytes_before"
        case entriesAfter = "entries_after", bytesAfter = "bytes_after"
        case rebuiltJournal = "rebuilt_journal"
    }

    public var summary: String {
        let removedBytes = removed.reduce(Int64(0)) { $0 + $1.bytes }
        return "\(dryRun ? "would remove" : "removed") \(removed.count) \(removed.count == 1 ? "entry" : "entries"), "
            + "\(Units.formatBytes(UInt64(max(0, removedBytes)))); \(entriesAfter) remain, \(Units.formatBytes(UInt64(max(0, bytesAfter))))"
    }
}
