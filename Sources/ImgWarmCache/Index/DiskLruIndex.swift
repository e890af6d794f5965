#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ImgWarmSupport

/// A DiskLruCache folder (Glide, Coil) kept as the library keeps it: the
/// journal is parsed and appended to, never rewritten from scratch, and
/// rebuilt (`journal.tmp`, renamed over `journal` with `journal.bkp` in
/// between) when and as the library rebuilds it.
///
/// One entry's store, as `DiskLruCache.edit` then `Editor.commit`:
/// the values are written to temp files first (no lock held), then, under
/// the journal lock, `DIRTY key` is appended, the temp files are renamed to
/// `key.0`, `key.1`..., and `CLEAN key len...` is appended. Each line is
/// appended by one write(2) on an O_APPEND descriptor, so no line of two
/// runs ever interleaves with another. A kill at any moment leaves:
/// - before DIRTY: the old entry, or none (and a temp file under
///   `.imgwarm/tmp`, which the next run removes);
/// - between DIRTY and CLEAN: a DIRTY line without CLEAN; the library's
///   open deletes that key's files and drops it (`processJournal`): a miss,
///   never a wrong or partial file;
/// - a half-written line: impossible from one small write(2) of a regular
///   file, and the library would rebuild over an unterminated tail anyway.
///
/// The journal lock is flock(2) on the cache folder's own descriptor, taken
/// around each DIRTY..CLEAN, each batch of READ lines, each rebuild and a
/// whole prune. Why flock: runs on one folder (two warms, a warm and a
/// prune) must not interleave DIRTY/rename/CLEAN of one key, and a rebuild
/// must not drop another run's lines appended between its read and its
/// rename. The kernel releases a flock when its holder dies, so a run
/// killed with the lock held never locks the folder (a lock *file* created
/// with O_EXCL would outlive it and need a staleness guess), and taking it
/// on the folder adds no file to what ships to the device. Within a run,
/// an NSLock orders the threads; the flock orders the processes.
///
/// After a rebuild by another run our append descriptor points at the
/// replaced file: every append under the lock first checks that `journal`
/// is still the inode it writes to, and reopens it when not.
public final class DiskLruIndex: IndexBackend, LazilyWritableIndex, @unchecked Sendable {
    public let directory: String
    public let journal: DiskLruJournal
    /// Which value holds the image bytes (Glide: 0; Coil: 1, after the
    /// metadata).
    public let imageValue: Int
    /// The library's default size limit, what `prune` trims to without
    /// `--max-size`.
    public let defaultMaxSize: UInt64
    let layoutName: String
    /// The metadata value (Coil's `<key>.0`) for a response.
    let metadata: @Sendable (StoredResponse?) -> [UInt8]
    /// The permissions of the metadata values (OkHttp's hold the URL: 0600).
    let metadataMode: mode_t

    let lock = NSLock()
    // Guarded by `lock`:
    private var contents = DiskLruJournal.Contents()
    private var nextTouch = 1
    private var loaded = false
    private(set) var writable = false
    /// The cache folder's descriptor (O_NOFOLLOW): the journal and every
    /// value file are named relative to it.
    private var folderFD: Int32 = -1
    private var folder: FolderHandle?
    private let folders: IndexFolders
    /// Every unlink and rename in the folder goes through it.
    private let remover: any IndexFileRemover
    private var journalFD: Int32 = -1
    private var pendingReads: [UInt8] = []

    public var walksSubfolders: Bool { false }

    static let journalName = "journal"
    static let tempName = "journal.tmp"
    static let backupName = "journal.bkp"
    /// READ lines are written in batches of about this many bytes (the
    /// library's BufferedWriter holds them too).
    static let readBatchBytes = 32 << 10
    /// The journal is read this many bytes at a time.
    static let readChunkBytes = 64 << 10

    init(directory: String, writer: FileWriter = .direct, journal: DiskLruJournal, imageValue: Int, defaultMaxSize: UInt64, layoutName: String,
         metadata: @escaping @Sendable (StoredResponse?) -> [UInt8] = { _ in [] }, metadataMode: mode_t = 0o644,
         remover: any IndexFileRemover = SystemIndexFileRemover()) {
        self.metadataMode = metadataMode
        self.directory = directory
        self.journal = journal
        self.imageValue = imageValue
        self.defaultMaxSize = defaultMaxSize
        self.layoutName = layoutName
        self.metadata = metadata
        self.remover = remover
        folders = IndexFolders(directory: directory, writer: writer)
    }

    deinit {
        if journalFD >= 0 { Glibc.close(journalFD) }
        // folderFD belongs to `folder`, closed with it.
    }

    /// `<key>` of a value file name `<key>.<n>`.
    static func key(ofFileName name: Substring) -> Substring {
        name.lastIndex(of: ".").map { name[..<$0] } ?? name
    }

    func key(of name: CacheEntryName) -> String { String(Self.key(ofFileName: Substring(name.storedName))) }

    // MARK: Opening

    public func open(writable: Bool) throws {
        lock.lock()
        defer { lock.unlock() }
        try openLocked(writable: writable)
    }

    func openLocked(writable: Bool) throws {
        if folder == nil {
            do {
                let handle = try folders.root(create: writable)
                folder = handle
                folderFD = handle.fd
            } catch let error as ImgWarmError where error.errno == ENOENT && !writable {
                loaded = true  // no folder: an empty cache
                return
            }
        }
        // A link at `journal` or `journal.bkp` is refused before anything
        // is read, renamed or appended: by path, the journal's lines would
        // be read from, and appended to, a file anywhere.
        for name in [Self.journalName, Self.backupName] {
            if let reason = IndexFolders.notARegularFile(name, in: folderFD) {
                throw ImgWarmError.cache(path: directory + "/" + name, reason: reason, errno: ELOOP)
            }
        }
        // Another user's journal, backup or rebuild in a folder others may
        // write is refused before anything is read (`IndexTrust`).
        if let folder { try IndexTrust.require([Self.journalName, Self.backupName, Self.tempName], in: folder, directory: directory) }
        if writable {
            try withJournalLock {
                // The journal (or the backup that stands for it) is read
                // whole first: a refused one leaves every file as it was,
                // the backup, journal.tmp and the dead edits' files too.
                let hasJournal = exists(Self.journalName)
                let hasBackup = exists(Self.backupName)
                let read = hasJournal ? try readJournal(Self.journalName) : hasBackup ? try readJournal(Self.backupName) : nil
                // `experimentalOpen`: a backup without a journal is the
                // journal (a rebuild was cut between its two renames);
                // with a journal it is stale.
                if hasBackup {
                    if hasJournal {
                        _ = remover.unlink(Self.backupName, in: folderFD)
                    } else {
                        let e = remover.rename(Self.backupName, in: folderFD, to: Self.journalName, in: folderFD)
                        if e != 0 { throw failure(Self.backupName, "cannot rename to journal", e) }
                    }
                }
                // `processJournal`: a journal.tmp is a rebuild that died.
                _ = remover.unlink(Self.tempName, in: folderFD)
                if let read {
                    contents = read
                    // `readJournal`: a journal ending in a cut line is
                    // rebuilt before anything is appended to it.
                    if contents.unterminatedTail { try rebuildLocked() } else { try openAppend() }
                } else {
                    contents = DiskLruJournal.Contents()
                    try rebuildLocked()  // a new cache: `rebuildJournal` writes the header
                }
            }
            self.writable = true
        } else {
            // Read only (stats, verify, path, dry runs): the journal as the
            // library would find it, changing nothing.
            let name = exists(Self.journalName) ? Self.journalName : exists(Self.backupName) ? Self.backupName : nil
            contents = try name.map { try readJournal($0) } ?? DiskLruJournal.Contents()
        }
        nextTouch = contents.lineCount + 1
        loaded = true
    }

    private func ensureLoaded() {
        if !loaded { try? openLocked(writable: false) }
    }

    private func exists(_ name: String) -> Bool {
        var st = stat()
        return fstatat(folderFD, name, &st, AT_SYMLINK_NOFOLLOW) == 0
    }

    private func failure(_ name: String, _ what: String, _ e: Int32 = errno) -> ImgWarmError {
        ImgWarmError.cache(path: directory + "/" + name, reason: "\(what): \(errnoString(e))", errno: e)
    }

    /// The one-line refusal when a link (or another non-file) took `name`
    /// since the check at open, else `error`.
    private func refusedOr(_ name: String, _ error: ImgWarmError) -> ImgWarmError {
        IndexFolders.notARegularFile(name, in: folderFD).map { ImgWarmError.cache(path: directory + "/" + name, reason: $0, errno: ELOOP) } ?? error
    }

    private func readJournal(_ name: String) throws -> DiskLruJournal.Contents {
        let fd = openat(folderFD, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else { throw refusedOr(name, failure(name, "cannot read")) }
        defer { Glibc.close(fd) }
        // The file opened is the one judged: a name swapped since the
        // check at open is judged again.
        if let folder { try IndexTrust.require(opened: fd, name: name, in: folder, directory: directory) }
        // Read in pieces as okio reads it: what stays in memory is the
        // entries, not the file (a journal grown by READ lines can be
        // gigabytes). Up to the size it had when opened: lines appended
        // meanwhile (by a run that does not hold the lock: imgwarm's runs
        // append under it) are the next reader's, and a file that keeps
        // growing cannot keep this read going.
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw failure(name, "cannot read") }
        var left = Int(st.st_size)
        var reader = DiskLruJournal.Reader(journal)
        var chunk = [UInt8](repeating: 0, count: Self.readChunkBytes)
        do {
            while left > 0 {
                let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, min($0.count, left)) }
                if n < 0 {
                    if errno == EINTR { continue }
                    throw failure(name, "cannot read")
                }
                if n == 0 { break }  // truncated meanwhile
                left -= n
                try chunk.withUnsafeBytes { try reader.read(UnsafeRawBufferPointer(rebasing: $0[..<n])) }
            }
            return try reader.finish()
        } catch let corrupt as DiskLruJournal.Corrupt {
            throw ImgWarmError.cache(path: directory + "/" + name,
                             reason: "\(corrupt.description); not a journal imgwarm acts on under --layout \(layoutName): "
                                + "nothing deleted, nothing rewritten (the library would delete the whole folder)")
        }
    }

    // MARK: The journal lock and appends

    /// Runs `body` holding the flock on the folder. Caller holds `lock`.
    private func withJournalLock<T>(_ body: () throws -> T) throws -> T {
        while flock(folderFD, LOCK_EX) != 0 {
            if errno != EINTR { throw failure("", "cannot lock the folder") }
        }
        defer { flock(folderFD, LOCK_UN) }
        return try body()
    }

    private func openAppend() throws {
        if journalFD >= 0 { Glibc.close(journalFD) }
        journalFD = openat(folderFD, Self.journalName, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW)
        if journalFD < 0 { throw refusedOr(Self.journalName, failure(Self.journalName, "cannot open for appending")) }
    }

    /// Under the journal lock: our descriptor still writes to `journal`
    /// (another run's rebuild renames a new file over it).
    private func reopenIfReplaced() throws {
        var named = stat()
        var ours = stat()
        if journalFD < 0 || fstatat(folderFD, Self.journalName, &named, AT_SYMLINK_NOFOLLOW) != 0
            || fstat(journalFD, &ours) != 0 || named.st_ino != ours.st_ino || named.st_dev != ours.st_dev {
            if !exists(Self.journalName) {
                // `cache clear` removed it meanwhile: a new journal.
                contents = DiskLruJournal.Contents()
                try rebuildLocked()
                return
            }
            try openAppend()
        }
    }

    /// One write(2) of whole lines. Under the journal lock.
    private func append(_ text: [UInt8]) throws {
        guard !text.isEmpty else { return }
        let e = text.withUnsafeBytes { FileIO.writeAll(journalFD, $0) }
        if e != 0 { throw failure(Self.journalName, "cannot append", e) }
    }

    private func flushReadsLocked() throws {
        guard !pendingReads.isEmpty, writable else { return }
        try withJournalLock {
            try reopenIfReplaced()
            try append(pendingReads)
            pendingReads.removeAll(keepingCapacity: true)
            // `get` schedules the rebuild too when READ lines made it due.
            if try rebuildIfRequiredLocked() { nextTouch = contents.lineCount + 1 }
        }
    }

    // MARK: Rebuild

    /// `rebuildJournal`, under the journal lock: the journal as it is now
    /// on disk (with other runs' lines) is read again, then written
    /// compacted to journal.tmp, and renamed in: journal -> journal.bkp,
    /// journal.tmp -> journal, journal.bkp removed. Edits without CLEAN are
    /// dead (no run is inside DIRTY..CLEAN while we hold the lock): their
    /// files go and their lines are dropped, as `processJournal` does.
    private func rebuildLocked(rereading: Bool = false) throws {
        if rereading, exists(Self.journalName) { contents = try readJournal(Self.journalName) }
        for key in DiskLruJournal.deadEdits(contents) {
            _ = journal.removeValueFiles(of: key, in: folderFD, temps: true, remover: remover)
            contents.entries[key] = nil
        }
        let text = Array(journal.rebuilt(contents).utf8)
        // A new file (O_EXCL): never written through into one planted at
        // the name meanwhile.
        _ = remover.unlink(Self.tempName, in: folderFD)
        let fd = openat(folderFD, Self.tempName, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o644)
        guard fd >= 0 else { throw failure(Self.tempName, "cannot create") }
        var e = text.withUnsafeBytes { FileIO.writeAll(fd, $0) }
        // The new journal is durable before it replaces the old one.
        if e == 0 && fsync(fd) != 0 { e = errno }
        if Glibc.close(fd) != 0 && e == 0 { e = errno }
        if e != 0 {
            _ = remover.unlink(Self.tempName, in: folderFD)
            throw failure(Self.tempName, "cannot write", e)
        }
        if exists(Self.journalName) {
            _ = remover.unlink(Self.backupName, in: folderFD)
            let e = remover.rename(Self.journalName, in: folderFD, to: Self.backupName, in: folderFD)
            if e != 0 { throw failure(Self.journalName, "cannot rename to journal.bkp", e) }
        }
        let renamed = remover.rename(Self.tempName, in: folderFD, to: Self.journalName, in: folderFD)
        if renamed != 0 { throw failure(Self.tempName, "cannot rename to journal", renamed) }
        _ = remover.unlink(Self.backupName, in: folderFD)
        contents.lineCount = contents.entries.count
        contents.unterminatedTail = false
        try openAppend()
    }

    /// After our own lines: a rebuild when the library would do one
    /// (`journalRebuildRequired`), judged on the journal as it is on disk.
    private func rebuildIfRequiredLocked() throws -> Bool {
        guard journal.rebuildRequired(redundantOpCount: contents.redundantOpCount,
                                             entryCount: contents.entries.count) else { return false }
        let onDisk = try readJournal(Self.journalName)
        guard journal.rebuildRequired(redundantOpCount: onDisk.redundantOpCount,
                                             entryCount: onDisk.entries.count) else {
            contents = onDisk
            return false
        }
        contents = onDisk
        try rebuildLocked()
        return true
    }

    // MARK: IndexBackend

    public func existingEntry(for name: CacheEntryName) -> (path: String, size: Int64)? {
        let key = key(of: name)
        lock.lock()
        ensureLoaded()
        let entry = contents.entries[key]
        let folder = self.folder
        lock.unlock()
        guard let entry, entry.readable, !entry.dirty, let folder,
              let size = entryFilesSize(key, in: folder) else { return nil }
        return (directory + "/\(key).\(imageValue)", size)
    }

    /// `get`: every value file must exist ("A file must have been deleted
    /// manually!"); and, as for the iOS layouts, each must count under
    /// `FolderBackend.countsAsEntry` (a regular file, not followed; in a folder
    /// others may write, one of this user): a link planted at `<key>.1` is
    /// no entry, and the next store replaces it. The image value's length.
    private func entryFilesSize(_ key: String, in folder: FolderHandle) -> Int64? {
        var imageSize: Int64 = 0
        for i in 0..<journal.valueCount {
            guard let size = IndexFolders.entryFileSize("\(key).\(i)", in: folder) else { return nil }
            if i == imageValue { imageSize = size }
        }
        return imageSize
    }

    public func recordHit(_ name: CacheEntryName) {
        let key = key(of: name)
        lock.lock()
        defer { lock.unlock() }
        guard writable, var entry = contents.entries[key] else { return }
        entry.touch = nextTouch
        nextTouch += 1
        contents.entries[key] = entry
        contents.lineCount += 1
        pendingReads.append(contentsOf: DiskLruJournal.readLine(key).utf8)
        // Best effort, as the library's: a READ line only orders eviction.
        if pendingReads.count >= Self.readBatchBytes { try? flushReadsLocked() }
    }

    public func store(_ bytes: UnsafeRawBufferPointer, as name: CacheEntryName, response: StoredResponse?,
                      keepExisting: Bool) throws {
        let key = key(of: name)
        guard DiskLruJournal.isValidKey(key) else {
            throw ImgWarmError.cache(path: directory + "/" + name.storedName, reason: "not a DiskLruCache key ([a-z0-9_-]{1,120})", errno: EINVAL)
        }
        let meta = journal.valueCount > 1 ? metadata(response) : []
        // The cache folder is open (and the journal read) before any byte
        // is written: the temp files are renamed relative to it.
        try lockWritable()
        lock.unlock()
        // The values, in temp files first: no lock is held while bytes are
        // copied. Temp names are unpredictable, in imgwarm's private folder.
        var temps: [(folder: FolderHandle, name: String)] = []
        var lengths: [Int64] = []
        defer { for t in temps { _ = remover.unlink(t.name, in: t.folder.fd) } }  // renamed ones are gone already
        for i in 0..<journal.valueCount {
            let (tempFolder, tempName, fd) = try folders.createTemp(tag: "v", mode: i == imageValue ? 0o644 : metadataMode)
            temps.append((tempFolder, tempName))
            var e: Int32
            if i == imageValue {
                e = folders.writer.write(fd, bytes)
                lengths.append(Int64(bytes.count))
            } else {
                e = meta.withUnsafeBytes { FileIO.writeAll(fd, $0) }
                lengths.append(Int64(meta.count))
            }
            if Glibc.close(fd) != 0 && e == 0 { e = errno }
            if e != 0 { throw ImgWarmError.cache(path: directory + "/\(key).\(i)", reason: "write failed: \(errnoString(e))", errno: e) }
        }

        try lockWritable()
        defer { lock.unlock() }
        // DiskLruCacheWrapper.put: "if data was written while we were
        // trying to get the lock, we can simply abort" -- when what the
        // journal says was written is still there as trusted files; a link
        // or a neighbour's file at a value's name is replaced below.
        if keepExisting, let entry = contents.entries[key], entry.readable, !entry.dirty,
           let folder, entryFilesSize(key, in: folder) != nil { return }
        try withJournalLock {
            try reopenIfReplaced()
            // Pending READ lines go first, in the same write.
            try append(pendingReads + Array(DiskLruJournal.dirtyLine(key).utf8))
            pendingReads.removeAll(keepingCapacity: true)
            // rename(2) replaces whatever is at the name (a file, a link:
            // the link itself, never where it points).
            for (i, temp) in temps.enumerated() {
                guard let valueName = DiskLruJournal.valueFileName(key, i) else {
                    throw ImgWarmError.cache(path: directory + "/" + key, reason: "not a DiskLruCache key ([a-z0-9_-]{1,120})", errno: EINVAL)
                }
                let e = remover.rename(temp.name, in: temp.folder.fd, to: valueName, in: folderFD)
                if e != 0 {
                    // `completeEdit(success: false)` of a new entry: REMOVE.
                    _ = journal.removeValueFiles(of: key, in: folderFD, remover: remover)
                    try? append(Array(DiskLruJournal.removeLine(key).utf8))
                    contents.entries[key] = nil
                    if e == EISDIR || e == ENOTEMPTY || e == EEXIST {
                        throw ImgWarmError.cache(path: directory + "/\(key).\(i)", reason: "a folder is at the entry's name; imgwarm does not replace it", errno: e)
                    }
                    throw ImgWarmError.cache(path: directory + "/\(key).\(i)", reason: "rename failed: \(errnoString(e))", errno: e)
                }
            }
            temps.removeAll()
            try append(Array(DiskLruJournal.cleanLine(key, lengths: lengths).utf8))
            contents.entries[key] = DiskLruJournal.Entry(lengths: lengths, readable: true, dirty: false, touch: nextTouch)
            nextTouch += 1
            contents.lineCount += 2
            if try rebuildIfRequiredLocked() { nextTouch = contents.lineCount + 1 }
        }
    }

    public func isImageFile(_ relativePath: String) -> Bool {
        guard !relativePath.contains("/"), relativePath.hasSuffix(".\(imageValue)") else { return false }
        return DiskLruJournal.isValidKey(Self.key(ofFileName: Substring(relativePath)))
    }

    public func removeEntry(imagePath path: String) throws {
        let key = String(Self.key(ofFileName: Substring(path.split(separator: "/").last ?? "")))
        guard DiskLruJournal.isValidKey(key) else {
            throw ImgWarmError.cache(path: path, reason: "not a DiskLruCache value file (<key>.<n>); left as it is", errno: EINVAL)
        }
        try lockWritable()
        defer { lock.unlock() }
        try withJournalLock {
            try reopenIfReplaced()
            _ = journal.removeValueFiles(of: key, in: folderFD, remover: remover)
            // `remove`: a REMOVE line for a key the journal holds.
            if contents.entries[key] != nil {
                try append(pendingReads + Array(DiskLruJournal.removeLine(key).utf8))
                pendingReads.removeAll(keepingCapacity: true)
                contents.entries[key] = nil
                contents.lineCount += 1
            }
        }
    }

    public func plannedPath(for name: CacheEntryName) -> String { directory + "/" + name.storedName }

    public func close() throws {
        lock.lock()
        defer { lock.unlock() }
        try flushReadsLocked()
    }

    /// `trimToSize`: while the entries' total length is above the limit,
    /// the least recently used entry is removed (its files, then a REMOVE
    /// line), then the journal is rebuilt when the library would.
    public func prune(_ options: PruneOptions) throws -> PruneResult {
        let limit = try DiskLruIndex.sizeLimit(options, defaultMaxSize: defaultMaxSize, layout: layoutName)
        lock.lock()
        defer { lock.unlock() }
        var result = PruneResult(layout: layoutName, directory: directory, dryRun: options.dryRun)
        result.maxSize = UInt64(limit)
        result.trimTarget = UInt64(limit)
        try openLocked(writable: !options.dryRun)
        func evict(_ removeFiles: (String) throws -> Void) throws {
            // The journal as it is now, other runs' lines included.
            if !options.dryRun { contents = try readJournal(Self.journalName) }
            var size = contents.size
            result.entriesBefore = contents.entries.values.filter { !$0.dirty }.count
            result.bytesBefore = size
            var lines: [UInt8] = []
            let imageValue = imageValue
            let doomed = DiskLruJournal.evictions(contents, limit: limit) { options.pinned.contains("\($0).\(imageValue)") }
            for (key, bytes) in doomed {
                let imageName = "\(key).\(imageValue)"
                try removeFiles(key)
                size -= bytes
                result.removed.append(.init(path: directory + "/" + imageName, bytes: bytes, reason: .trimmed))
                lines.append(contentsOf: DiskLruJournal.removeLine(key).utf8)
                contents.entries[key] = nil
                contents.lineCount += 1
            }
            result.entriesAfter = contents.entries.values.filter { !$0.dirty }.count
            result.bytesAfter = size
            result.trimTargetReached = size <= limit
            for (key, entry) in contents.entries where !entry.dirty && options.pinned.contains("\(key).\(imageValue)") {
                result.pinnedEntries += 1
                result.pinnedEntryBytes += entry.lengths.reduce(0) { $0.addingReportingOverflow($1).overflow ? .max : $0 + $1 }
            }
            if !options.dryRun {
                try append(lines)
                result.rebuiltJournal = try rebuildIfRequiredLocked()
            }
        }
        if options.dryRun {
            try evict { _ in }
        } else {
            try withJournalLock {
                try reopenIfReplaced()
                try append(pendingReads)
                pendingReads.removeAll(keepingCapacity: true)
                try evict { key in
                    let e = journal.removeValueFiles(of: key, in: folderFD, remover: remover)
                    if e != 0 { throw failure("\(key).*", "cannot remove", e) }
                }
            }
        }
        return result
    }

    /// The limit a prune trims to: `--max-size`, else the library's default.
    static func sizeLimit(_ options: PruneOptions, defaultMaxSize: UInt64, layout: String) throws -> Int64 {
        if options.maxAge != nil {
            throw ImgWarmError.usage("--max-age has no meaning under --layout \(layout): DiskLruCache evicts by size only, least recently used first")
        }
        if options.expireType != nil || options.trimRatio != nil {
            throw ImgWarmError.usage("--expire-type and --trim-ratio have no meaning under --layout \(layout): DiskLruCache trims least recently used entries (journal order) until the size is at most --max-size")
        }
        if options.maxObjects != nil {
            throw ImgWarmError.usage("--max-objects has no meaning under --layout \(layout): DiskLruCache limits the size only")
        }
        let limit = options.maxSize ?? defaultMaxSize
        // `experimentalOpen`: "maxSize <= 0" is refused.
        if limit == 0 { throw ImgWarmError.usage("--max-size must be above 0 under --layout \(layout)") }
        return Int64(clamping: limit)
    }
}
