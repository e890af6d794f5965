#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ImgWarmSupport

/// Fresco's `image_cache` folder kept as `DefaultDiskStorage` keeps it: no
/// journal, the entries are the `.cnt` files in the shard folders of
/// `v2.ols100.1`, and their modification time is the eviction order.
/// Every name is opened relative to the folder above it with O_NOFOLLOW
/// (`FolderHandle`); a file is written in `.imgwarm/tmp` and renamed into
/// its shard, so an app (or a kill) sees the old file, the new one or none.
///
/// The version folder is created with the cache: `DefaultDiskStorage`
/// deletes the whole root when it is missing
/// (`recreateDirectoryIfVersionChanges`).
final class FrescoCacheIndex: IndexBackend, @unchecked Sendable {
    let directory: String
    private let folders: IndexFolders
    private let lock = NSLock()
    // Guarded by `lock`:
    private var requested: FrescoLayout.ShardNames?
    private var names: FrescoLayout.ShardNames
    private var versionHandle: FolderHandle?
    private var openedWritable = false

    init(directory: String, writer: FileWriter = .direct, shardNames: FrescoLayout.ShardNames?) {
        self.directory = directory
        requested = shardNames
        names = shardNames ?? FrescoLayout.defaultShardNames
        folders = IndexFolders(directory: directory, writer: writer)
    }

    /// The entries are in the version folder's shards.
    var walksSubfolders: Bool { true }

    private var versionPath: String { directory + "/" + FrescoLayout.versionFolder }

    func open(writable: Bool) throws {
        lock.lock()
        defer { lock.unlock() }
        if writable ? openedWritable : versionHandle != nil { return }
        let root: FolderHandle
        do {
            root = try folders.root(create: writable)
        } catch let error as ImgWarmError where error.errno == ENOENT && !writable {
            return
        }
        if writable {
            versionHandle = try StateFolders.makeFolder(FrescoLayout.versionFolder, in: root.fd, path: versionPath)
            openedWritable = true
        } else {
            versionHandle = try? FolderHandle.open(FrescoLayout.versionFolder, in: root.fd, path: versionPath, listing: true)
        }
        if requested == nil, let detected = detectShardNames() { names = detected }
    }

    /// The shard names the folder already has: "N" (Fresco <= 3.6) or
    /// "N.0" (>= 3.7); nil when it has neither, or both.
    private func detectShardNames() -> FrescoLayout.ShardNames? {
        guard let versionHandle else { return nil }
        var integer = false, decimal = false
        for name in Self.list(versionHandle) {
            if Self.isShard(name, .integer) { integer = true }
            if Self.isShard(name, .decimal) { decimal = true }
        }
        return integer == decimal ? nil : integer ? .integer : .decimal
    }

    static func isShard(_ name: String, _ style: FrescoLayout.ShardNames) -> Bool {
        let digits = style == .integer ? Substring(name) : (name.hasSuffix(".0") ? name.dropLast(2) : "")
        guard let n = Int(digits), n >= 0, n < 100, String(n) == digits else { return false }
        return true
    }

    /// A resource file name: 27 URL-safe Base64 characters and `.cnt`.
    static func isResourceFile(_ name: Substring) -> Bool {
        guard name.hasSuffix(".cnt") else { return false }
        let id = name.dropLast(4)
        return id.utf8.count == 27 && id.utf8.allSatisfy {
            ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2D || $0 == 0x5F
        }
    }

    /// The names in a folder (not `.`, `..`).
    static func list(_ folder: FolderHandle) -> [String] {
        let fd = openat(folder.fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0, let dir = fdopendir(fd) else {
            if fd >= 0 { Glibc.close(fd) }
            return []
        }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafePointer(to: entry.pointee.d_name) {
                $0.withMemoryRebound(to: CChar.self, capacity: 256) { String(cString: $0) }
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    private func ensureOpen() {
        if versionHandle == nil {
            lock.unlock()
            try? open(writable: false)
            lock.lock()
        }
    }

    private func shardName(of storedName: String) -> String {
        FrescoLayout.shard(String(storedName.dropLast(4)), names)
    }

    func plannedPath(for name: CacheEntryName) -> String {
        lock.lock()
        defer { lock.unlock() }
        return versionPath + "/" + shardName(of: name.storedName) + "/" + name.storedName
    }

    func existingEntry(for name: CacheEntryName) -> (path: String, size: Int64)? {
        lock.lock()
        ensureOpen()
        let shard = shardName(of: name.storedName)
        let version = versionHandle
        lock.unlock()
        guard let version, let folder = try? FolderHandle.open(shard, in: version.fd, path: versionPath + "/" + shard, listing: false),
              let size = IndexFolders.entryFileSize(name.storedName, in: folder) else { return nil }
        return (versionPath + "/" + shard + "/" + name.storedName, size)
    }

    /// `DiskStorageCache.getResource`: a hit touches the file
    /// (`mStorage.touch`: `setLastModified(now)`).
    func recordHit(_ name: CacheEntryName) {
        lock.lock()
        let shard = shardName(of: name.storedName)
        let version = versionHandle
        lock.unlock()
        guard let version, let folder = try? FolderHandle.open(shard, in: version.fd, path: versionPath + "/" + shard, listing: false) else { return }
        utimensat(folder.fd, name.storedName, nil, AT_SYMLINK_NOFOLLOW)
    }

    func store(_ bytes: UnsafeRawBufferPointer, as name: CacheEntryName, response: StoredResponse?, keepExisting: Bool) throws {
        try open(writable: true)
        if keepExisting, existingEntry(for: name) != nil { return }
        let (tempFolder, tempName, fd) = try folders.createTemp(tag: "f")
        var renamed = false
        defer { if !renamed { unlinkat(tempFolder.fd, tempName, 0) } }
        var e = folders.writer.write(fd, bytes)
        if Glibc.close(fd) != 0 && e == 0 { e = errno }
        lock.lock()
        let shard = shardName(of: name.storedName)
        let version = versionHandle
        lock.unlock()
        let target = versionPath + "/" + shard + "/" + name.storedName
        if e != 0 { throw ImgWarmError.cache(path: target, reason: "write failed: \(errnoString(e))", errno: e) }
        guard let version else { throw ImgWarmError.cache(path: versionPath, reason: "the version folder is missing") }
        let folder = try StateFolders.makeFolder(shard, in: version.fd, path: versionPath + "/" + shard)
        if renameat(tempFolder.fd, tempName, folder.fd, name.storedName) != 0 {
            let e = errno
            throw ImgWarmError.cache(path: target, reason: "rename failed: \(errnoString(e))", errno: e)
        }
        renamed = true
    }

    func isImageFile(_ relativePath: String) -> Bool {
        let parts = relativePath.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0] == FrescoLayout.versionFolder,
              Self.isShard(String(parts[1]), .integer) || Self.isShard(String(parts[1]), .decimal) else { return false }
        return Self.isResourceFile(parts[2])
    }

    func removeEntry(imagePath path: String) throws {
        let parts = path.split(separator: "/").suffix(2).map(String.init)
        guard parts.count == 2, Self.isResourceFile(Substring(parts[1])) else { return }
        try open(writable: false)
        lock.lock()
        let version = versionHandle
        lock.unlock()
        guard let version, let folder = try? FolderHandle.open(parts[0], in: version.fd, path: versionPath + "/" + parts[0], listing: false) else { return }
        if unlinkat(folder.fd, parts[1], 0) != 0 && errno != ENOENT {
            throw ImgWarmError.cache(path: path, reason: "cannot remove: \(errnoString(errno))", errno: errno)
        }
    }

    func close() throws {}

    /// One `.cnt` file as `DefaultDiskStorage.getEntries` lists it.
    struct Entry: Equatable, Sendable {
        var shard: String
        var name: String
        var size: Int64
        /// Modification time, nanoseconds since 1970.
        var mtime: Int64
    }

    /// `DiskStorageCache.maybeEvictFilesInCacheDir`: above the limit,
    /// `evictAboveSize(limit * 9 / 10)` removes entries in
    /// `getSortedEntries` order (modification time more than 2 h in the
    /// future first, then oldest first) while the bytes removed so far are
    /// at most the excess. Times are compared in milliseconds, as
    /// `EntryImpl.getTimestamp` (`File.lastModified()`) gives them, and
    /// entries of the same millisecond stay in listing order (the stable
    /// `Collections.sort` over `FileTree.walkFileTree`'s order): `entries`
    /// come in that order.
    static func evictionPlan(_ entries: [Entry], limit: Int64, now: Int64, pinned: (String) -> Bool) -> [Entry] {
        let total = entries.reduce(0) { $0 + $1.size }
        guard total > limit else { return [] }
        func millis(_ nanoseconds: Int64) -> Int64 { nanoseconds / 1_000_000 }
        let threshold = millis(now) + FrescoLayout.futureThresholdNanoseconds / 1_000_000
        let future = entries.filter { millis($0.mtime) > threshold }
        let rest = entries.enumerated().filter { millis($0.element.mtime) <= threshold }
            .sorted { (millis($0.element.mtime), $0.offset) < (millis($1.element.mtime), $1.offset) }
            .map(\.element)
        let deleteSize = total - limit * 9 / 10
        var removed: [Entry] = []
        var sum: Int64 = 0
        for entry in future + rest {
            if sum > deleteSize { break }
            if pinned(entry.name) { continue }
            removed.append(entry)
            sum += entry.size
        }
        return removed
    }

    func prune(_ options: PruneOptions) throws -> PruneResult {
        if options.maxAge != nil || options.expireType != nil || options.trimRatio != nil || options.maxObjects != nil {
            throw ImgWarmError.usage("--max-age, --expire-type, --trim-ratio and --max-objects have no meaning under --layout fresco: DiskStorageCache evicts by size only, oldest modification time first, down to 90% of --max-size")
        }
        let limit = Int64(clamping: options.maxSize ?? FrescoLayout.defaultSizeLimit)
        if limit == 0 { throw ImgWarmError.usage("--max-size must be above 0 under --layout fresco") }
        try open(writable: false)
        lock.lock()
        let version = versionHandle
        let style = names
        lock.unlock()
        var result = PruneResult(layout: "fresco", directory: directory, dryRun: options.dryRun)
        result.maxSize = UInt64(limit)
        result.trimDate = .modification
        guard let version else { return result }
        var entries: [Entry] = []
        var shardHandles: [String: FolderHandle] = [:]
        for shard in Self.list(version) where Self.isShard(shard, .integer) || Self.isShard(shard, .decimal) {
            guard let folder = try? FolderHandle.open(shard, in: version.fd, path: versionPath + "/" + shard, listing: true) else { continue }
            shardHandles[shard] = folder
            // `DefaultDiskStorage.getShardFileInfo`: a `.cnt` file counts
            // only in its own shard folder (of the app's naming); elsewhere
            // it is no entry, neither counted nor removed here.
            for name in Self.list(folder) where Self.isResourceFile(Substring(name))
                && FrescoLayout.shard(String(name.dropLast(4)), style) == shard {
                var st = stat()
                guard fstatat(folder.fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0, st.st_mode & S_IFMT == S_IFREG else { continue }
                entries.append(Entry(shard: shard, name: name, size: Int64(st.st_size),
                                     mtime: Int64(st.st_mtim.tv_sec) * 1_000_000_000 + Int64(st.st_mtim.tv_nsec)))
            }
        }
        let now = options.now ?? Int64(Date().timeIntervalSince1970 * 1e9)
        let plan = Self.evictionPlan(entries, limit: limit, now: now, pinned: { options.pinned.contains($0) })
        result.entriesBefore = entries.count
        result.bytesBefore = entries.reduce(0) { $0 + $1.size }
        for entry in plan {
            let path = versionPath + "/" + entry.shard + "/" + entry.name
            if !options.dryRun, let folder = shardHandles[entry.shard], unlinkat(folder.fd, entry.name, 0) != 0, errno != ENOENT {
                throw ImgWarmError.cache(path: path, reason: "cannot remove: \(errnoString(errno))", errno: errno)
            }
            result.removed.append(.init(path: path, bytes: entry.size, reason: .trimmed))
        }
        result.entriesAfter = entries.count - plan.count
        result.bytesAfter = result.bytesBefore - plan.reduce(0) { $0 + $1.size }
        let pinned = entries.filter { options.pinned.contains($0.name) }
        result.pinnedEntries = pinned.count
        result.pinnedEntryBytes = pinned.reduce(0) { $0 + $1.size }
        return result
    }
}
