#if canImport(Glibc)
import Glibc
#endif
import Foundation
import GRDB
import ImgWarmSupport

/// flutter_cache_manager's database and files, written as `WebHelper` and
/// `CacheObjectProvider` write them. A store writes the file to a temp
/// name, then in one write transaction (`BEGIN IMMEDIATE`: sqlite's lock
/// orders concurrent runs, and the kernel drops it with a killed holder)
/// renames the file in and inserts or updates the key's row; a replaced
/// file is removed after the commit. A kill before the commit leaves the
/// old row and at most one file no row names (which flutter never reads,
/// and `prune` removes).
public final class FlutterCacheIndex: IndexBackend, LazilyWritableIndex, @unchecked Sendable {
    public let directory: String
    public var databasePath: String { directory + "/" + FlutterLayout.storeKey + ".db" }
    public var filesDirectory: String { directory + "/" + FlutterLayout.storeKey }

    let lock = NSLock()
    // Guarded by `lock`:
    private var queue: DatabaseQueue?
    private var loaded = false
    private(set) var writable = false
    private var pendingTouches: [String: Int64] = [:]
    private var lastUUIDTime: UInt64 = 0
    private let clockSequence = UInt16.random(in: 0...0x3FFF)
    private let node = UInt64.random(in: 0...0xFFFF_FFFF_FFFF)
    /// The cache folder and `.imgwarm/tmp`, opened with O_NOFOLLOW.
    private let folders: IndexFolders
    /// `libCachedImageData/`, opened relative to the cache folder without
    /// following a link: every file of a row is named relative to it.
    private var filesHandle: FolderHandle?
    private var retiredFiles: [FolderHandle] = []
    /// Every unlink and rename of a row's file goes through it.
    private let remover: any IndexFileRemover

    /// The files are in `libCachedImageData/`.
    public var walksSubfolders: Bool { true }

    static let touchBatch = 256

    init(directory: String, writer: FileWriter = .direct, remover: any IndexFileRemover = SystemIndexFileRemover()) {
        self.directory = directory
        self.remover = remover
        folders = IndexFolders(directory: directory, writer: writer)
    }

    /// `CacheObjectProvider.open`'s `onCreate` (version 3).
    static let createSQL = """
        create table cacheObject (
          _id integer primary key,
          url text,
          key text,
          relativePath text,
          eTag text,
          validTill integer,
          touched integer,
          length integer
          );
          create unique index cacheObjectkey
          ON cacheObject (key);
        """
    static let columns = ["_id", "url", "key", "relativePath", "eTag", "validTill", "touched", "length"]

    public func open(writable: Bool) throws {
        lock.lock()
        defer { lock.unlock() }
        try openLocked(writable: writable)
    }

    func openLocked(writable: Bool) throws {
        if queue != nil && (self.writable || !writable) { return }
        let root: FolderHandle
        do {
            root = try folders.root(create: writable)
        } catch let error as ImgWarmError where error.errno == ENOENT && !writable {
            loaded = true  // no folder: an empty cache
            return
        }
        // SQLite opens the database (and its rollback journal) by path and
        // follows a link: a link at either name is refused before it does,
        // as the state database refuses one (`StateStore.restrictMode`).
        let dbName = FlutterLayout.storeKey + ".db"
        let sideNames = [dbName, dbName + "-journal", dbName + "-wal", dbName + "-shm"]
        for name in sideNames {
            if let reason = IndexFolders.notARegularFile(name, in: root.fd) {
                throw ImgWarmError.cache(path: directory + "/" + name, reason: reason, errno: ELOOP)
            }
        }
        // Another user's database (or a side file SQLite would replay into
        // it) in a folder others may write is refused (`IndexTrust`).
        try IndexTrust.require(sideNames, in: root, directory: directory)
        if !writable && !StateFolders.exists(dbName, in: root.fd) {
            loaded = true  // no database: an empty cache
            return
        }
        if writable && !StateFolders.exists(dbName, in: root.fd) {
            // Made 0600 before SQLite opens it (it would make it 0644 under
            // umask 022); SQLite gives the rollback journal the database's
            // mode. O_EXCL: a database planted meanwhile is not ours.
            let fd = openat(root.fd, dbName, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
            if fd >= 0 {
                Glibc.close(fd)
            } else if errno != EEXIST {
                throw ImgWarmError.cache(path: databasePath, reason: "cannot create: \(errnoString(errno))", errno: errno)
            } else {
                try IndexTrust.require(sideNames, in: root, directory: directory)
            }
        }
        var config = Configuration()
        config.busyMode = .timeout(30)
        config.readonly = !writable
        // No fsync per store: with one transaction per entry, fsync made a
        // 3,000-image warm on ext4 take 43 s instead of 6. Without it the
        // database still survives a killed run (sqlite: "If the application
        // running SQLite crashes, the data will be safe"; the kill tests),
        // only not a power loss of the build machine, after which the run
        // is repeated. The rollback journal stays the default (DELETE):
        // WAL would be stored in the file and change how the app's sqflite
        // opens it.
        config.prepareDatabase { db in try db.execute(sql: "PRAGMA synchronous = OFF") }
        do {
            let q = try DatabaseQueue(path: databasePath, configuration: config)
            let check: (Database) throws -> Void = { db in
                let version = try Int.fetchOne(db, sql: "PRAGMA user_version") ?? 0
                let tables = try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_master WHERE type = 'table'") ?? 0
                if version == 0 && tables == 0 {
                    guard writable else { return }
                    // A new database, as sqflite's openDatabase(version: 3)
                    // makes it: onCreate, then user_version = 3.
                    try db.execute(sql: Self.createSQL)
                    try db.execute(sql: "PRAGMA user_version = 3")
                    return
                }
                guard version == 3 else {
                    throw ImgWarmError.cache(path: self.databasePath, reason: "database of schema version \(version), not flutter_cache_manager's 3; left as it is")
                }
                let names = try String.fetchAll(db, sql: "SELECT name FROM pragma_table_info('cacheObject')")
                let missing = Self.columns.filter { !names.contains($0) }
                if !missing.isEmpty {
                    throw ImgWarmError.cache(path: self.databasePath, reason: "no cacheObject table with \(missing.joined(separator: ", ")); not flutter_cache_manager's database, left as it is")
                }
                // Every row is checked before any is acted on: a row with a
                // NULL or a path where a file name belongs refuses the
                // database (nothing deleted, nothing written).
                _ = try self.rows(db)
            }
            // One IMMEDIATE transaction for the check and the creation: a
            // second run waits for it and then sees the whole schema, and a
            // kill leaves no table without its version (sqflite, too, runs
            // onCreate and sets the version in one transaction).
            if writable {
                try q.inTransaction(.immediate) { db in
                    try check(db)
                    return .commit
                }
            } else {
                try q.read { try check($0) }
            }
            queue = q
        } catch let error as ImgWarmError {
            throw error
        } catch {
            throw ImgWarmError.cache(path: databasePath, reason: "\(error)")
        }
        if writable {
            filesHandle = try StateFolders.makeFolder(FlutterLayout.storeKey, in: root.fd, path: filesDirectory)
            self.writable = true
        } else if filesHandle == nil, StateFolders.exists(FlutterLayout.storeKey, in: root.fd) {
            filesHandle = try FolderHandle.open(FlutterLayout.storeKey, in: root.fd, path: filesDirectory, listing: true)
        }
        loaded = true
    }

    private func currentFiles() -> FolderHandle? {
        lock.lock()
        defer { lock.unlock() }
        return filesHandle
    }

    /// `libCachedImageData/` made and opened again after it was removed
    /// during the run (`cache clear`).
    private func reopenFiles(replacing old: FolderHandle) throws -> FolderHandle {
        let root = try folders.root(create: true)
        lock.lock()
        defer { lock.unlock() }
        if let current = filesHandle, current !== old { return current }
        let handle = try StateFolders.makeFolder(FlutterLayout.storeKey, in: root.fd, path: filesDirectory)
        retiredFiles.append(old)
        filesHandle = handle
        return handle
    }

    private func currentQueue() -> DatabaseQueue? {
        lock.lock()
        defer { lock.unlock() }
        if !loaded { try? openLocked(writable: false) }
        return queue
    }

    typealias Row = FlutterCacheRow

    /// A row's values as `FlutterCacheRow.validated` takes them.
    private static func values(_ row: GRDB.Row) -> [FlutterColumnValue] {
        (0..<row.count).map { i -> FlutterColumnValue in
            switch (row[i] as DatabaseValue).storage {
            case .null: return .null
            case .int64(let n): return .integer(n)
            case .double(let d): return .real(d)
            case .string(let s): return .text(s)
            case .blob(let data): return .blob([UInt8](data))
            }
        }
    }

    /// `ImgWarmError` naming the database and the row.
    private func refusal(_ refused: FlutterCacheRow.Refused) -> ImgWarmError {
        ImgWarmError.cache(path: databasePath, reason: "\(refused.description); a row imgwarm does not act on: nothing deleted, nothing written",
                   errno: EINVAL)
    }

    private func checked(_ row: GRDB.Row) throws -> Row {
        do { return try FlutterCacheRow.validated(Self.values(row)) } catch let refused as FlutterCacheRow.Refused { throw refusal(refused) }
    }

    /// Every row, checked.
    private func rows(_ db: Database) throws -> [Row] {
        try GRDB.Row.fetchAll(db, sql: "SELECT \(FlutterCacheRow.selectedColumns) FROM cacheObject").map { try checked($0) }
    }

    private func row(_ db: Database, key: String) throws -> Row? {
        try GRDB.Row.fetchOne(db, sql: "SELECT \(FlutterCacheRow.selectedColumns) FROM cacheObject WHERE key = ?", arguments: [key])
            .map { try checked($0) }
    }

    public func existingEntry(for name: CacheEntryName) -> (path: String, size: Int64)? {
        guard let queue = currentQueue(),
              let found = try? queue.read({ try self.row($0, key: name.storedName) }) as Row??, let row = found else { return nil }
        return file(row)
    }

    /// `CacheStore._fileExists`: a row whose file is gone is no entry; nor,
    /// as for the iOS layouts, one whose file does not count under
    /// `FolderBackend.countsAsEntry` (a link, not followed; a neighbour's file
    /// in a folder others may write), nor a relativePath that leaves the
    /// files folder.
    private func file(_ row: Row) -> (path: String, size: Int64)? {
        guard IndexNames.isPlainEntryName(row.relativePath), let files = currentFiles(),
              let size = IndexFolders.entryFileSize(row.relativePath, in: files) else { return nil }
        return (filesDirectory + "/" + row.relativePath, size)
    }

    public func recordHit(_ name: CacheEntryName) {
        lock.lock()
        defer { lock.unlock() }
        guard writable else { return }
        pendingTouches[name.storedName] = Self.nowMilliseconds()
        if pendingTouches.count >= Self.touchBatch { try? flushTouchesLocked() }
    }

    /// `_updateCacheDataInDatabase` on a read: `touched` becomes now.
    private func flushTouchesLocked() throws {
        guard let queue, !pendingTouches.isEmpty else { return }
        let touches = pendingTouches
        pendingTouches.removeAll()
        try queue.write { db in
            for (key, touched) in touches {
                try db.execute(sql: "UPDATE cacheObject SET touched = ? WHERE key = ?", arguments: [touched, key])
            }
        }
    }

    static func nowMilliseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
    }

    private func newUUID() -> String {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var t = UInt64(now.tv_sec) * 10_000_000 + UInt64(now.tv_nsec) / 100
        lock.lock()
        // Two names in one 100 ns tick: the next tick, as uuid v1 does.
        if t <= lastUUIDTime { t = lastUUIDTime + 1 }
        lastUUIDTime = t
        lock.unlock()
        return FlutterLayout.uuidV1(timestamp100ns: t, clockSequence: clockSequence, node: node)
    }

    public func store(_ bytes: UnsafeRawBufferPointer, as name: CacheEntryName, response: StoredResponse?,
                      keepExisting: Bool) throws {
        let key = name.storedName
        let received = response?.receivedAt ?? Self.nowMilliseconds()
        let relativePath = newUUID() + FlutterLayout.fileExtension(contentType: response?.contentType)
        try lockWritable()
        lock.unlock()
        let (tempFolder, tempName, fd) = try folders.createTemp(tag: "f")
        var e = folders.writer.write(fd, bytes)
        if Glibc.close(fd) != 0 && e == 0 { e = errno }
        defer { _ = remover.unlink(tempName, in: tempFolder.fd) }  // gone once renamed
        if e != 0 { throw ImgWarmError.cache(path: filesDirectory + "/" + relativePath, reason: "write failed: \(errnoString(e))", errno: e) }

        try lockWritable()
        guard let queue = self.queue, var files = filesHandle else {
            lock.unlock()
            throw ImgWarmError.cache(path: databasePath, reason: "the database is not open")
        }
        lock.unlock()
        let final = filesDirectory + "/" + relativePath
        var replaced: String?
        do {
            try queue.inTransaction(.immediate) { db in
                let existing = try self.row(db, key: key)
                if keepExisting, let existing, self.file(existing) != nil { return .commit }
                // Relative to the files folder's descriptor; rename(2)
                // replaces whatever is at the (new, unguessable) name.
                let e = self.remover.rename(tempName, in: tempFolder.fd, to: relativePath, in: files.fd)
                if e != 0 {
                    var failed = e
                    if e == ENOENT {
                        // The files folder went (`cache clear`): made again.
                        files = try self.reopenFiles(replacing: files)
                        failed = self.remover.rename(tempName, in: tempFolder.fd, to: relativePath, in: files.fd)
                        if failed == 0 {
                            return try self.record(db, existing, key, relativePath, bytes.count, response, received, &replaced)
                        }
                    }
                    throw ImgWarmError.cache(path: final, reason: "rename failed: \(errnoString(failed))", errno: failed)
                }
                return try self.record(db, existing, key, relativePath, bytes.count, response, received, &replaced)
            }
        } catch let error as ImgWarmError {
            throw error
        } catch {
            _ = remover.unlink(relativePath, in: files.fd)
            throw ImgWarmError.cache(path: databasePath, reason: "\(error)")
        }
        if let replaced, replaced != relativePath { _ = FlutterCacheRow.removeFile(replaced, in: files.fd, remover: remover) }
    }

    /// The row `WebHelper._manageResponse` then `CacheStore.putFile` leave:
    /// url, key, the new relativePath, eTag, validTill, touched now, length.
    private func record(_ db: Database, _ existing: Row?, _ key: String, _ relativePath: String, _ length: Int,
                        _ response: StoredResponse?, _ received: Int64, _ replaced: inout String?) throws -> Database.TransactionCompletion {
        let validTill = FlutterLayout.validTill(cacheControl: response?.cacheControl, receivedAt: received)
        let arguments: StatementArguments = [response?.url ?? key, key, relativePath, response?.etag, validTill,
                                             Self.nowMilliseconds(), length]
        if let existing {
            try db.execute(sql: """
                UPDATE cacheObject SET url = ?, key = ?, relativePath = ?, eTag = ?, validTill = ?, touched = ?, length = ?
                WHERE _id = ?
                """, arguments: arguments + [existing.id])
            replaced = existing.relativePath
        } else {
            try db.execute(sql: """
                INSERT INTO cacheObject (url, key, relativePath, eTag, validTill, touched, length) VALUES (?, ?, ?, ?, ?, ?, ?)
                """, arguments: arguments)
        }
        return .commit
    }

    public func isImageFile(_ relativePath: String) -> Bool {
        relativePath.hasPrefix(FlutterLayout.storeKey + "/")
    }

    public func removeEntry(imagePath path: String) throws {
        let relativePath = String(path.split(separator: "/").last ?? "")
        try lockWritable()
        guard let queue = self.queue else {
            lock.unlock()
            throw ImgWarmError.cache(path: databasePath, reason: "the database is not open")
        }
        let files = filesHandle
        lock.unlock()
        guard IndexNames.isPlainEntryName(relativePath) else {
            throw ImgWarmError.cache(path: path, reason: "not a flutter_cache_manager file name; left as it is", errno: EINVAL)
        }
        try queue.inTransaction(.immediate) { db in
            try db.execute(sql: "DELETE FROM cacheObject WHERE relativePath = ?", arguments: [relativePath])
            return .commit
        }
        if let files { _ = FlutterCacheRow.removeFile(relativePath, in: files.fd, remover: remover) }
    }

    public func plannedPath(for name: CacheEntryName) -> String { filesDirectory + "/" }

    public func close() throws {
        lock.lock()
        defer { lock.unlock() }
        try flushTouchesLocked()
    }

    /// `CacheStore._cleanupCache` run until nothing is left to remove (the
    /// library removes at most 100 of each kind per run, a run at most every
    /// 10 s while the app loads images): the rows beyond the `capacity`
    /// most recently touched among those touched more than a day ago
    /// (`getObjectsOverCapacity`), then those touched before now - stale
    /// period (`getOldObjects`); each row's file goes, then the rows. Files
    /// under `libCachedImageData/` that no row names (a killed run's) go too.
    public func prune(_ options: PruneOptions) throws -> PruneResult {
        if options.maxSize != nil {
            throw ImgWarmError.usage("--max-size has no meaning under --layout flutter: flutter_cache_manager limits the number of objects (--max-objects) and their age (--max-age)")
        }
        if options.expireType != nil || options.trimRatio != nil {
            throw ImgWarmError.usage("--expire-type and --trim-ratio have no meaning under --layout flutter: it goes by each row's touched date")
        }
        let stale = options.maxAge ?? FlutterLayout.defaultStalePeriod
        if !(stale >= 0 && stale.isFinite) { throw ImgWarmError.usage("--max-age must be a duration of zero or more") }
        let capacity = options.maxObjects ?? FlutterLayout.defaultMaxObjects
        if capacity < 0 { throw ImgWarmError.usage("--max-objects must be 0 or more") }
        let now = (options.now ?? CachePruner.clockNow()) / 1_000_000
        var result = PruneResult(layout: "flutter", directory: directory, dryRun: options.dryRun)
        result.expirationDate = PruneResult.expiration(now: now * 1_000_000, maxAge: stale)
        try open(writable: !options.dryRun)
        try close()
        guard let queue = currentQueue() else { return result }
        let files = currentFiles()
        let work: (Database) throws -> Void = { db in
            let rows = try self.rows(db)
            result.entriesBefore = rows.count
            result.bytesBefore = FlutterCacheRow.totalLength(rows)
            let staleMilliseconds = stale * 1000 >= 9.2e18 ? Int64.max : Int64(stale * 1000)
            let doomed = FlutterCacheRow.doomed(rows, now: now, staleMilliseconds: staleMilliseconds,
                                                capacity: capacity, keep: { options.pinned.contains($0) })
            var removedIDs = Set<Int64>()
            for (row, reason) in doomed {
                let path = self.filesDirectory + "/" + row.relativePath
                if !options.dryRun, let files { _ = FlutterCacheRow.removeFile(row.relativePath, in: files.fd, remover: self.remover) }
                removedIDs.insert(row.id)
                result.removed.append(.init(path: path, bytes: row.length ?? 0, reason: reason))
            }
            if !options.dryRun && !removedIDs.isEmpty {
                try db.execute(sql: "DELETE FROM cacheObject WHERE _id IN (\(removedIDs.sorted().map(String.init).joined(separator: ",")))")
            }
            let remaining = rows.filter { !removedIDs.contains($0.id) }
            let kept = Set(remaining.map(\.relativePath))
            // Orphans: no concurrent store is between its rename and its
            // commit while this transaction holds the write lock.
            let names = files.map { StateFolders.listDirectory($0.fd) } ?? []
            for name in names where IndexNames.isPlainEntryName(name) && !kept.contains(name) {
                let path = self.filesDirectory + "/" + name
                var st = stat()
                guard let files, fstatat(files.fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0, (st.st_mode & S_IFMT) == S_IFREG else { continue }
                if !options.dryRun { _ = FlutterCacheRow.removeFile(name, in: files.fd, remover: self.remover) }
                result.removed.append(.init(path: path, bytes: Int64(st.st_size), reason: .unindexed))
            }
            result.entriesAfter = remaining.count
            result.bytesAfter = FlutterCacheRow.totalLength(remaining)
            let pinned = rows.filter { options.pinned.contains($0.key) }
            result.pinnedEntries = pinned.count
            result.pinnedEntryBytes = FlutterCacheRow.totalLength(pinned)
        }
        if options.dryRun {
            try queue.read(work)
        } else {
            try queue.inTransaction(.immediate) { db in
                try work(db)
                return .commit
            }
        }
        return result
    }
}
