/// A backend that is a library's index (a DiskLruCache journal, flutter's
/// database, Fresco's shards): an entry exists once the index says so, and
/// every store, hit and removal is written to it as the library writes it.
/// What `CacheBackend` asks of it, it answers through these.
public protocol IndexBackend: CacheBackend {
    /// The cache folder the index is kept in.
    var directory: String { get }

    /// The entry's image file and its length, when the index holds the
    /// entry readable and its files exist (the library's `get`).
    func existingEntry(for name: CacheEntryName) -> (path: String, size: Int64)?

    /// What the library's read records (a `READ` journal line; flutter's
    /// `touched`).
    func recordHit(_ name: CacheEntryName)

    /// Writes the entry's files and records it in the index.
    /// `keepExisting`: an entry the index holds now is kept.
    func store(_ bytes: UnsafeRawBufferPointer, as name: CacheEntryName, response: StoredResponse?, keepExisting: Bool) throws

    /// Whether a file (relative to the cache folder) holds an entry's image
    /// bytes (not the journal, Coil's metadata files, the database).
    func isImageFile(_ relativePath: String) -> Bool

    /// Removes the entry whose image file is `path`, recording the removal
    /// as the library does.
    func removeEntry(imagePath path: String) throws
}

extension IndexBackend {
    public func lookup(_ name: CacheEntryName) -> CachedEntry? {
        let prefix = directory + "/"
        return existingEntry(for: name).map { found in
            CachedEntry(name: found.path.hasPrefix(prefix) ? String(found.path.dropFirst(prefix.count)) : found.path,
                        path: found.path, size: found.size)
        }
    }

    public func hit(_ name: CacheEntryName, entry: CachedEntry) { recordHit(name) }

    /// The index's own store (journal lines or database rows with the
    /// files); a cache empty at the start (`likelyNew`) keeps an entry
    /// found there meanwhile.
    public func store(_ bytes: UnsafeRawBufferPointer, as name: CacheEntryName, response: StoredResponse?,
                      replacing previous: String?, likelyNew: Bool) throws -> String {
        try store(bytes, as: name, response: response, keepExisting: likelyNew)
        return existingEntry(for: name)?.path ?? plannedPath(for: name)
    }

    public var keepsResponses: Bool { true }

    public func isEntryFile(folder: String, name: String) -> Bool {
        isImageFile(folder.isEmpty ? name : folder + "/" + name)
    }

    /// As the library removes one (a REMOVE line, the row).
    public func remove(_ file: EntryFile) throws { try removeEntry(imagePath: file.path) }
}
