#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch

/// A cache entry that is not a usable image, and why.
public struct BrokenCacheEntry: Sendable, Equatable, Codable {
    /// Absolute path of the file.
    public var path: String
    /// One line: `empty file`, `truncated JPEG: premature end of data`, ...
    public var reason: String
    public init(path: String, reason: String) {
        self.path = path
        self.reason = reason
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
    /// Entries decoded (hidden files and imgwarm's state excluded).
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

    public func verify(_ cache: DiskCache, delete: Bool) throws -> CacheVerifyReport {
        var report = CacheVerifyReport()
        report.deleted = delete
        var st = stat()
        guard stat(cache.directory, &st) == 0 else {
            let e = errno
            if e == ENOENT { return report }  // nothing cached yet: nothing broken
            throw CacheError(path: cache.directory, reason: errnoString(e), errno: e)
        }
        var batch: [CacheFileRecord] = []
        batch.reserveCapacity(batchSize)
        func flush() {
            report.checked += batch.count
            for (path, verdict) in check(batch, in: cache.directory) {
                switch verdict {
                case .broken(let reason): report.broken.append(BrokenCacheEntry(path: path, reason: reason))
                case .unknown(let signature): report.unknown.append(UnknownCacheEntry(path: path, signature: signature))
                case .unchecked(let reason): report.unchecked.append(BrokenCacheEntry(path: path, reason: reason))
                }
            }
            batch.removeAll(keepingCapacity: true)
        }
        CacheScanner.scan(cache) { record in
            batch.append(record)
            if batch.count >= batchSize { flush() }
        }
        flush()
        report.broken.sort { $0.path < $1.path }
        report.unknown.sort { $0.path < $1.path }
        report.unchecked.sort { $0.path < $1.path }
        report.strayTempFiles = cache.staleTempFiles().sorted()

        if delete {
            // Never the unchecked ones: nothing is known against them.
            for path in report.broken.map(\.path) + report.strayTempFiles {
                if unlink(path) != 0 && errno != ENOENT {
                    report.deleteErrors.append("\(path): \(errnoString(errno))")
                }
            }
        }
        return report
    }

    /// What a file that is not simply a usable image is.
    enum Verdict: Equatable {
        case broken(String)
        /// Kept: of a format unknown here (the signature, for the listing).
        case unknown(String)
        /// Kept: its decoder library cannot be opened here (the reason).
        case unchecked(String)
    }

    /// Validates a batch on several threads; each result slot is written by
    /// exactly one iteration, so the buffer needs no lock.
    private func check(_ records: [CacheFileRecord], in directory: String) -> [(String, Verdict)] {
        var results = [(String, Verdict)?](repeating: nil, count: records.count)
        results.withUnsafeMutableBufferPointer { slots in
            let out = slots
            DispatchQueue.concurrentPerform(iterations: records.count) { i in
                let path = directory + "/" + records[i].relativePath
                out[i] = checkFile(path).map { (path, $0) }
            }
        }
        return results.compactMap { $0 }
    }

    /// Nil when the file is a usable image (or vanished meanwhile: a
    /// concurrent prune may remove entries).
    func checkFile(_ path: String) -> Verdict? {
        switch FileBytes.read(path, limit: maxFileBytes) {
        case .vanished:
            return nil
        case .failed(let reason):
            return .broken(reason)
        case .bytes(let bytes):
            if bytes.isEmpty { return .broken("empty file") }
            switch ImageValidator.validate(bytes, options: options) {
            case .success(let info) where info.format == .unknown:
                return .unknown(bytes.withUnsafeBytes { ContentGuess.signature($0) })
            case .success: return nil
            case .failure(let failure) where failure.kind == .noDecoder: return .unchecked(failure.reason)
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
        case failed(String)
    }

    static func read(_ path: String, limit: Int64) -> Outcome {
        // `cache verify` reads every file: it must not renew access times.
        let file: QuietFile
        switch QuietFile.open(path) {
        case .success(let f): file = f
        case .failure(let e): return e.code == ENOENT ? .vanished : .failed("cannot read: \(errnoString(e.code))")
        }
        defer { file.close() }
        let fd = file.fd
        var st = stat()
        guard fstat(fd, &st) == 0 else { return .failed("cannot read: \(errnoString(errno))") }
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
        if failure != 0 { return .failed("cannot read: \(errnoString(failure))") }
        return .bytes(bytes)
    }
}
