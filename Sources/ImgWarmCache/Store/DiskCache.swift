#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// An image library's disk cache folder as the commands see it: the folder
/// and imgwarm's hidden state folder `.imgwarm/` in it (`CacheFolders`,
/// skipped by every library's expiry), and the layout's backend
/// (`CacheBackend`: a plain folder of files, or a library's index), which
/// answers every lookup, store, hit, removal and prune. File names, dates
/// and defaults come from the `layout`.
public final class DiskCache: Sendable {
    public let directory: String
    public let layout: any CacheLayout
    /// The cache folder and `.imgwarm/`, opened once by descriptor.
    public let folders: CacheFolders
    /// Where entries live: chosen by the layout (`CacheLayout.makeBackend`).
    public let backend: any CacheBackend
    public var stateDirectory: String { folders.stateDirectory }
    public var tempDirectory: String { folders.tempDirectory }

    /// Opens (without creating) the cache at `directory`. `writer` copies
    /// the bytes of every store into its file (the kill tests pass a slow
    /// one).
    public init(directory: String, layout: any CacheLayout = SDWebImageLayout(), writer: FileWriter = .direct) {
        self.layout = layout
        folders = CacheFolders(directory: directory)
        self.directory = folders.directory
        entryPathPrefix = folders.directory + "/"
        backend = layout.makeBackend(folders: folders, writer: writer)
    }

    /// `directory + "/"`, built once.
    private let entryPathPrefix: String

    /// Reads what the backend keeps (a journal, a database), and with
    /// `writable` makes or repairs it (warm, prune). Throws `ImgWarmError`
    /// for an index of another library version, which is left as it is.
    public func openBackend(writable: Bool) throws {
        try backend.open(writable: writable)
    }

    /// Writes what the backend still buffers (READ lines, touched dates).
    public func closeBackend() throws {
        try backend.close()
    }

    /// An entry the app has just read (a `cached` hit, a 304).
    public func recordHit(_ name: CacheEntryName, entry: ExistingEntry) {
        backend.hit(name, entry: entry)
    }

    /// See `CacheFolders.prepare`.
    public func prepare() throws { try folders.prepare() }

    /// See `CacheFolders.openExisting`.
    public func openExisting() throws { try folders.openExisting() }

    /// The cache folder, opened by `prepare` or `openExisting`.
    public var rootFolder: FolderHandle? { folders.root }
    /// `.imgwarm`, when it exists and was opened.
    public var stateFolder: FolderHandle? { folders.state }
    /// `.imgwarm/tmp`, when it exists and was opened.
    public var tempFolder: FolderHandle? { folders.temp }

    public func fileName(forKey key: String) -> CacheEntryName { layout.entryName(forKey: key) }

    /// The path imgwarm writes for `key`.
    public func path(forKey key: String) -> String { path(for: fileName(forKey: key)) }

    /// The path imgwarm writes for an entry (flutter: its files folder, the
    /// name being chosen at the store).
    public func path(for name: CacheEntryName) -> String { backend.plannedPath(for: name) }

    /// The path of an existing entry for `key` (SDWebImage: `<md5>.<ext>`
    /// first, then the bare `<md5>` fallback it also reads). Nil when none
    /// exists or the layout says the file no longer counts (expired).
    public func existingPath(forKey key: String) -> String? {
        existingPath(for: fileName(forKey: key))
    }

    public func existingPath(for name: CacheEntryName) -> String? {
        existingEntry(for: name)?.path
    }

    public typealias ExistingEntry = CachedEntry

    /// The entry the app would find for `name` (`CacheBackend.lookup`).
    public func existingEntry(for name: CacheEntryName) -> ExistingEntry? {
        backend.lookup(name)
    }

    /// `recordHit` for the file at `path` (in the cache folder: relative to
    /// its descriptor), without following a link.
    public func renewAccessTime(path: String) {
        let name = path.hasPrefix(entryPathPrefix) ? String(path.dropFirst(entryPathPrefix.count)) : path
        backend.hit(CacheEntryName(storedName: name), entry: ExistingEntry(name: name, path: path, size: 0))
    }

    /// Whether the folder holds anything but hidden names (`.imgwarm`,
    /// `.DS_Store`): stops at the first such entry, so it costs one
    /// getdents call whatever the size of the cache.
    public func holdsEntries() -> Bool {
        let (root, _) = folders.lookupFolder()
        let fd = root == AT_FDCWD ? -1 : openat(root, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0, let dir = fdopendir(fd) else {
            if fd >= 0 { close(fd) }
            return false
        }
        defer { closedir(dir) }
        while let entry = readdir(dir) {
            let first = withUnsafeBytes(of: entry.pointee.d_name) { $0[0] }
            if first != UInt8(ascii: ".") { return true }
        }
        return false
    }

    /// Writes `bytes` as the entry for `name` through the backend, which
    /// makes it appear atomically (`CacheBackend.store`); returns the final
    /// path of the image bytes.
    @discardableResult
    public func store<C: ContiguousBytes>(_ bytes: C, for name: CacheEntryName, replacing previous: String? = nil,
                                          likelyNew: Bool = false, response: StoredResponse? = nil) throws -> String {
        try bytes.withUnsafeBytes {
            try backend.store($0, as: name, response: response, replacing: previous, likelyNew: likelyNew)
        }
    }

    /// See `CacheFolders.cleanStaleTempFiles`.
    @discardableResult
    public func cleanStaleTempFiles() -> Int { folders.cleanStaleTempFiles() }

    /// Temp files a `verify` considers stray: those of dead processes (paths).
    public func staleTempFiles() -> [String] {
        folders.staleTempFileNames().map { tempDirectory + "/" + $0 }
    }

    /// The names in `.imgwarm/tmp` of regular files no live run owns.
    public func staleTempFileNames() -> [String] { folders.staleTempFileNames() }

    /// Removes one stray temp file; 0 or the errno value.
    public func removeTempFile(_ name: String) -> Int32 { folders.removeTempFile(name) }
}
