/// What a cache folder holds and how entries get in and out of it, for one
/// library's format (the role of SDWebImage's `SDDiskCache`). The plain
/// folder of files of the iOS layouts (`FolderBackend`) and each library's
/// index (`DiskLruIndex` for Glide, Coil, Coil 2 and OkHttp,
/// `FlutterCacheIndex`, `FrescoCacheIndex`) implement it; `DiskCache`
/// holds the folder's backend and the warm pipeline, `cache stats`,
/// `verify` and `prune` go through it without asking which one it is.
/// A layout (`CacheLayout`) only describes names, dates and defaults and
/// makes its backend (`makeBackend`).
public protocol CacheBackend: AnyObject, Sendable {
    /// Reads what the backend keeps (a journal, a database), and with
    /// `writable` makes it when missing and repairs what the library
    /// repairs on open. Throws `ImgWarmError` for a folder the library would
    /// not read as this layout's (another app version or value count, a
    /// corrupt journal, another schema): such a folder is not overwritten.
    func open(writable: Bool) throws

    /// The entry the app would find for `name` now, and its length (the
    /// library's `get`); nil when there is none or it no longer counts.
    func lookup(_ name: CacheEntryName) -> CachedEntry?

    /// The app has just read the entry (a `cached` hit, a 304): its
    /// recency renewed as the library's read renews it (an access time,
    /// a `READ` journal line, flutter's `touched`).
    func hit(_ name: CacheEntryName, entry: CachedEntry)

    /// Writes the entry so that a reader (the app, another run, a kill at
    /// any moment) sees the old entry, the whole new one, or none; returns
    /// the final path of the image bytes. `response`: what the response
    /// said (kept only where `keepsResponses`). `previous`: the path of the
    /// file the entry had. `likelyNew`: the cache held no entry at the
    /// start, so the name is most likely free (and an index keeps an entry
    /// it finds meanwhile).
    func store(_ bytes: UnsafeRawBufferPointer, as name: CacheEntryName, response: StoredResponse?,
               replacing previous: String?, likelyNew: Bool) throws -> String

    /// Whether `store` keeps what the response said (a Coil or OkHttp
    /// metadata file, flutter's row): the pipeline collects it only then.
    var keepsResponses: Bool { get }

    /// Whether a walked file is one of the entries' image files (what
    /// `stats`, `verify` and `cache scan` list): every file of a plain
    /// folder; not a journal, a metadata file or a database.
    func isEntryFile(folder: String, name: String) -> Bool

    /// Whether the library lists sub-folders of the cache folder.
    var walksSubfolders: Bool { get }

    /// Removes the entry whose image file `file` is (`verify --delete`),
    /// as the library removes one (a REMOVE line, the row): only while the
    /// name still holds the file that was judged.
    func remove(_ file: EntryFile) throws

    /// `cache prune` with the library's expiry and eviction. Throws
    /// an `ImgWarmError` usage error for an option the library has no notion of.
    func prune(_ options: PruneOptions) throws -> PruneResult

    /// The path `cache path` prints for a key the cache does not hold.
    func plannedPath(for name: CacheEntryName) -> String

    /// Writes what is still buffered (READ lines, touched dates).
    func close() throws
}

/// An entry the cache holds: its image file's name relative to the cache
/// folder, its path (for reports) and its length.
public struct CachedEntry: Sendable, Equatable {
    public var name: String
    public var path: String
    public var size: Int64

    public init(name: String, path: String, size: Int64) {
        self.name = name
        self.path = path
        self.size = size
    }
}

/// One image file a walk found, as `verify --delete` removes it: relative
/// to the descriptor of its folder, and only while the name still holds
/// the file of that identity.
public struct EntryFile: Sendable {
    /// The absolute path (messages, an index's own removal).
    public var path: String
    /// The folder the walk found it in, and its name there.
    public var folder: Int32
    public var name: String
    public var device: UInt64
    public var inode: UInt64

    public init(path: String, folder: Int32, name: String, device: UInt64, inode: UInt64) {
        self.path = path
        self.folder = folder
        self.name = name
        self.device = device
        self.inode = inode
    }
}
