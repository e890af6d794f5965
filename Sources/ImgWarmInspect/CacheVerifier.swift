#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch
import CFileScan
import ImgWarmSupport
import ImgWarmDecode
import ImgWarmCache

/// A cache entry that is not a usable image, and why.
public struct BrokenCacheEntry: Sendable, Equatable, Codable {
    /// Absolute path of the file.
    public var path: String
    /// One line: `empty file`, `truncated JPEG: premature end of data`, ...
    public var reason: String
    /// An unchecked entry's error class when it is not `no-decoder`:
    /// `too-large` for an image over `--decode-memory`, `too-complex` for
    /// one stopped by `--decode-timeout` (absent from the JSON otherwise).
    public var error: String?
    public init(path: String, reason: String, error: String? = nil) {
        self.path = path
        self.reason = reason
        self.error = error
    }
}

/// A cache entry of no format known here that is not plainly something
/// else (text, HTML, JSON): an app may still show it, so it is kept and
/// listed, and counts as broken only when formats are strict.
public struct UnknownCacheEntry: Sendable, Equatable, Codable {
    public var path: String
    /// `unknown signature 00 01 02 fe`
    public var signature: String
    public init(path: String, signature: String) {
        self.path = path
        self.signature = signature
    }
}

/// What `cache verify` found (and removed, with `delete`).
public struct CacheVerifyReport: Sendable, Equatable, Codable {
    /// Entries checked (hidden files and imgwarm's state excluded): the
    /// files decoded, and the names that hold no regular file.
    public var checked: Int = 0
    /// Sorted by path.
    public var broken: [BrokenCacheEntry] = []
    /// Entries of an unknown format, kept (sorted by path).
    public var unknown: [UnknownCacheEntry] = []
    /// Entries whose format's decoder library cannot be opened here (AVIF,
    /// HEIF, JPEG XL): not checked, never deleted (sorted by path).
    public var unchecked: [BrokenCacheEntry] = []
    /// Temp files of dead runs under `.imgwarm/tmp`, sorted.
    public var strayTempFiles: [String] = []
    /// Whether removal was asked for.
    public var deleted: Bool = false
    /// `PATH: reason` for each file that could not be removed.
    public var deleteErrors: [String] = []
    /// Sub-folders the walk skipped (too deep, unreadable), one line; not
    /// part of the JSON, said on standard error.
    public var skipped: String?

    public init() {}

    /// Nothing broken, nothing stray, and nothing left unchecked (a cache
    /// verified only in part is not vouched for): exit status 0.
    public var isClean: Bool { broken.isEmpty && strayTempFiles.isEmpty && unchecked.isEmpty }

    enum CodingKeys: String, CodingKey {
        case checked, broken, unknown, unchecked, deleted
        case strayTempFiles = "stray_temp_files"
        case deleteErrors = "delete_errors"
    }

    /// The documented shape; `unchecked` only when a decoder library was
    /// missing, `delete_errors` only when a removal failed.
    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(checked, forKey: .checked)
        try c.encode(broken, forKey: .broken)
        try c.encode(unknown, forKey: .unknown)
        if !unchecked.isEmpty { try c.encode(unchecked, forKey: .unchecked) }
        try c.encode(strayTempFiles, forKey: .strayTempFiles)
        try c.encode(deleted, forKey: .deleted)
        if !deleteErrors.isEmpty { try c.encode(deleteErrors, forKey: .deleteErrors) }
    }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        checked = try c.decode(Int.self, forKey: .checked)
        broken = try c.decode([BrokenCacheEntry].self, forKey: .broken)
        unknown = try c.decodeIfPresent([UnknownCacheEntry].self, forKey: .unknown) ?? []
        unchecked = try c.decodeIfPresent([BrokenCacheEntry].self, forKey: .unchecked) ?? []
        strayTempFiles = try c.decode([String].self, forKey: .strayTempFiles)
        deleted = try c.decode(Bool.self, forKey: .deleted)
        deleteErrors = try c.decodeIfPresent([String].self, forKey: .deleteErrors) ?? []
    }
}

/// `imgwarm cache verify`: decodes every entry of a cache folder as the app
/// would, lists the broken ones and the stray temp files of dead runs, and
/// optionally removes them.
public struct CacheVerifier: Sendable {
    public var options: ValidationOptions
    /// Files validated concurrently per batch; the batch bounds memory on
    /// caches of millions of files (paths are not all held at once).
    public var batchSize: Int = 256
    /// Larger files are reported without being read whole into memory.
    public var maxFileBytes: Int64 = 512 << 20

    public init(options: ValidationOptions = ValidationOptions()) {
        self.options = options
    }

    /// One listed file of a batch: opened (without following a link)
    /// during the walk, checked with the batch, removed relative to its
    /// folder only while the name still holds the file that was judged.
    private struct Pending {
        var path: String
        var directoryIndex: Int
        var name: String
        var device: UInt64
        var inode: UInt64
        var file: QuietFile?
        var openError: Int32
    }

    /// Opens the cache with `DiskCache.openExisting` (a symbolic link at
    /// the cache folder, or a `.imgwarm` that is a link, another user's or
    /// writable by others, is an error before anything is read or removed),
    /// then walks it relative to folder descriptors.
    public func verify(_ cache: DiskCache, delete: Bool) throws -> CacheVerifyReport {
        var report = CacheVerifyReport()
        report.deleted = delete
        do {
            try cache.openExisting()
        } catch let error as ImgWarmError where error.errno == ENOENT && error.path == cache.directory {
            return report  // nothing cached yet: nothing broken
        }
        // A journal or database of another library version: an error, as
        // for a folder that is not one.
        try cache.openBackend(writable: false)
        let backend = cache.backend
        guard let root = cache.rootFolder else { return report }
        let batchSize = Self.filesAtOnce(requested: batchSize, descriptorLimit: Descriptors.limit(),
                                         open: Descriptors.openCount())
        var batch: [Pending] = []
        batch.reserveCapacity(batchSize)
        // The folders of the batch's files, duplicated from the walk's
        // descriptors: the walk has closed its own by the time the batch
        // is judged.
        var folders: [Int: Int32] = [:]
        func remove(_ name: String, in dirfd: Int32, path: String) {
            if unlinkat(dirfd, name, 0) != 0 && errno != ENOENT {
                report.deleteErrors.append("\(path): \(errnoString(errno))")
            }
        }
        func flush() {
            report.checked += batch.count
            for (i, verdict) in check(batch) {
                let pending = batch[i]
                switch verdict {
                case .broken(let reason):
                    report.broken.append(BrokenCacheEntry(path: pending.path, reason: reason))
                    // Never the unchecked ones: nothing is known against them.
                    // The backend removes it as the library would (a plain
                    // file only while its name still holds the file judged:
                    // a concurrent warm may have stored a good one since).
                    if delete, let dirfd = folders[pending.directoryIndex], dirfd < 0 {
                        report.deleteErrors.append("\(pending.path): cannot hold its folder open: \(errnoString(-dirfd))")
                    } else if delete, let dirfd = folders[pending.directoryIndex] {
                        do {
                            try backend.remove(EntryFile(path: pending.path, folder: dirfd, name: pending.name,
                                                         device: pending.device, inode: pending.inode))
                        } catch {
                            report.deleteErrors.append("\(error)")
                        }
                    }
                case .unknown(let signature): report.unknown.append(UnknownCacheEntry(path: pending.path, signature: signature))
                case .unchecked(let reason, let error):
                    report.unchecked.append(BrokenCacheEntry(path: pending.path, reason: reason, error: error))
                }
            }
            for pending in batch { pending.file?.close() }
            for fd in folders.values where fd >= 0 { close(fd) }
            folders.removeAll(keepingCapacity: true)
            batch.removeAll(keepingCapacity: true)
        }
        func path(_ folder: String, _ name: String) -> String {
            cache.directory + "/" + (folder.isEmpty ? name : folder + "/" + name)
        }
        var walker = DirectoryWalker()
        walker.descends = backend.walksSubfolders
        // A link, FIFO or device at an entry's name is no image: the app
        // would read through a link to wherever it points.
        walker.onOther = { dirfd, folder, name, type in
            let p = path(folder, String(cString: name))
            report.checked += 1
            report.broken.append(BrokenCacheEntry(path: p, reason: "\(DirectoryWalker.describe(type: type)), not a regular file (never followed)"))
            if delete { remove(String(cString: name), in: dirfd, path: p) }
        }
        // Any layout's index file (a journal, flutter's database) is never
        // judged as an image, whichever layout is verified.
        let indexNames = Set(CacheLayoutKind.allCases.flatMap(\.indexFileNames))
        let rootError = walker.walk(root) { entry in
            if entry.directoryIndex == 0, indexNames.contains(entry.nameString) { return }
            // The backend's entries only (an index: its image files, not
            // the journal, Coil's metadata, flutter's database).
            guard backend.isEntryFile(folder: entry.directoryPath, name: entry.nameString) else { return }
            var pending = Pending(path: path(entry.directoryPath, entry.nameString), directoryIndex: entry.directoryIndex,
                                  name: entry.nameString, device: entry.info.device, inode: entry.info.inode,
                                  file: nil, openError: 0)
            switch QuietFile.open(in: entry.directoryFd, name: entry.name) {
            case .success(let file): pending.file = file
            case .failure(let e): pending.openError = e.code
            }
            // -errno when the duplicate could not be made (the descriptor
            // limit): never closed, never deleted in.
            if delete && folders[entry.directoryIndex] == nil {
                let dup = fcntl(entry.directoryFd, F_DUPFD_CLOEXEC, 0)
                folders[entry.directoryIndex] = dup >= 0 ? dup : -errno
            }
            batch.append(pending)
            if batch.count >= batchSize { flush() }
        }
        flush()
        if let rootError { throw rootError }
        report.skipped = walker.skippedSummary
        report.broken.sort { $0.path < $1.path }
        report.unknown.sort { $0.path < $1.path }
        report.unchecked.sort { $0.path < $1.path }
        let stray = cache.staleTempFileNames().sorted()
        report.strayTempFiles = stray.map { cache.tempDirectory + "/" + $0 }
        if delete {
            for name in stray {
                let e = cache.removeTempFile(name)
                if e != 0 && e != ENOENT { report.deleteErrors.append("\(cache.tempDirectory)/\(name): \(errnoString(e))") }
            }
        }
        return report
    }

    /// Files of a batch held open at once. Each is a descriptor until its
    /// batch is judged, and with `--delete` its folder may be one more: at
    /// most a quarter of the descriptors the process may still open
    /// (`ulimit -n` less those open now), at least one. The rest stays for
    /// the walk's folders and for the threads that judge the batch (past
    /// the limit, libdispatch traps when it cannot make its eventfd, and a
    /// file that cannot be opened would be listed as broken).
    static func filesAtOnce(requested: Int, descriptorLimit: Int, open: Int) -> Int {
        max(1, min(requested, (descriptorLimit - open) / 4))
    }

    /// What a file that is not simply a usable image is.
    enum Verdict: Equatable {
        case broken(String)
        /// Kept: of a format unknown here (the signature, for the listing).
        case unknown(String)
        /// Kept: its decoder library cannot be opened here, or it needs
        /// more than the whole decode memory budget (the reason, and
        /// `too-large` for the latter).
        case unchecked(String, error: String? = nil)
    }

    /// Validates a batch on several threads; each result slot is written by
    /// exactly one iteration, so the buffer needs no lock. Returns the
    /// indices of the files that are not simply usable images.
    private func check(_ batch: [Pending]) -> [(Int, Verdict)] {
        var results = [Verdict?](repeating: nil, count: batch.count)
        results.withUnsafeMutableBufferPointer { slots in
            nonisolated(unsafe) let out = slots
            DispatchQueue.concurrentPerform(iterations: batch.count) { i in
                let pending = batch[i]
                if let file = pending.file {
                    out[i] = check(FileBytes.read(file.fd, limit: maxFileBytes))
                } else if pending.openError != ENOENT {
                    // EACCES, EMFILE, EIO, or ELOOP (a link now stands
                    // where the walk saw a file): nothing is known of its
                    // bytes, so it is not called broken, and never deleted.
                    out[i] = .unchecked("cannot read: \(errnoString(pending.openError))", error: EntryError.disk.name)
                }
            }
        }
        return results.enumerated().compactMap { i, v in v.map { (i, $0) } }
    }

    /// Nil when the file is a usable image (or vanished meanwhile: a
    /// concurrent prune may remove entries).
    private func check(_ outcome: FileBytes.Outcome) -> Verdict? {
        switch outcome {
        case .vanished:
            return nil
        case .unreadable(let reason):
            return .unchecked(reason, error: EntryError.disk.name)
        case .failed(let reason):
            return .broken(reason)
        case .bytes(let bytes):
            if bytes.isEmpty { return .broken("empty file") }
            switch ImageValidator.validate(bytes, options: options) {
            case .success(let info) where info.format == .unknown:
                return .unknown(bytes.withUnsafeBytes { ContentGuess.signature($0) })
            case .success: return nil
            case .failure(let failure) where failure.kind == .noDecoder: return .unchecked(failure.reason)
            case .failure(let failure) where failure.kind == .overDecodeMemory:
                return .unchecked(failure.reason, error: EntryError.tooLarge.name)
            case .failure(let failure) where failure.kind == .tooComplex:
                return .unchecked(failure.reason, error: EntryError.tooComplex.name)
            case .failure(let failure): return .broken(failure.reason)
            }
        }
    }
}

#if canImport(Glibc)
private let systemRead = Glibc.read
#else
private let systemRead = Darwin.read
#endif

/// Reads a whole file with POSIX calls (Foundation's readers would turn
/// errno into less precise errors and copy more).
enum FileBytes {
    enum Outcome {
        case bytes([UInt8])
        case vanished
        /// Too large to be an image this tool accepts.
        case failed(String)
        /// fstat or read failed (EIO, ...): the bytes are unknown.
        case unreadable(String)
    }

    /// Reads the open file `fd` (a `QuietFile`: `cache verify` reads every
    /// file and must not renew access times).
    static func read(_ fd: Int32, limit: Int64) -> Outcome {
        var st = stat()
        guard fstat(fd, &st) == 0 else { return .unreadable("cannot read: \(errnoString(errno))") }
        let size = Int64(st.st_size)
        if size > limit { return .failed("\(size) bytes: larger than any image this tool accepts (\(limit))") }
        var failure: Int32 = 0
        let bytes = [UInt8](unsafeUninitializedCapacity: Int(size)) { buffer, count in
            while count < buffer.count {
                let n = systemRead(fd, buffer.baseAddress! + count, buffer.count - count)
                if n < 0 {
                    if errno == EINTR { continue }
                    failure = errno
                    return
                }
                if n == 0 { break }  // shrank while reading: judge what is there
                count += n
            }
        }
        if failure != 0 { return .unreadable("cannot read: \(errnoString(failure))") }
        return .bytes(bytes)
    }
}
