import Foundation
#if canImport(Glibc)
import Glibc
#endif
import ImgWarmSupport

/// The pure decisions of spilling a body to a file.
public enum SpillRule {
    /// Bodies never spill below this: thumbnails and most photos stay in
    /// memory, where they cost no file write and no mapping.
    public static let smallestThreshold = 256 << 10
    /// And always spill above this, whatever the budget.
    public static let largestThreshold = 1 << 20

    /// The size past which a body moves to a file: an eighth of the
    /// bodies' budget, so that at least eight bodies' in-memory parts fit
    /// before transfers pause, within 256 KiB (a thumbnail never spills)
    /// and 1 MiB (beyond it a body's file write costs little against its
    /// transfer, and the budget is kept for the many small ones).
    public static func threshold(bodiesBudget: Int) -> Int {
        min(largestThreshold, max(smallestThreshold, bodiesBudget / 8))
    }

    /// Whether a body of `held` bytes, about to receive `incoming` more,
    /// goes to a file now (`expected`: the Content-Length when the body is
    /// not compressed, so that one known to be large never fills memory).
    public static func spills(held: Int, incoming: Int, expected: Int?, threshold: Int) -> Bool {
        if let expected, expected > threshold { return true }
        return held + incoming > threshold
    }

    /// tmpfs and ramfs (`statfs(2)`'s TMPFS_MAGIC and RAMFS_MAGIC): their
    /// files are memory, so spilled bytes stay charged to `--memory`.
    public static let memoryFilesystems: Set<Int> = [0x0102_1994, 0x8584_58f6]

    /// Whether spilled bytes count against `--memory` on a filesystem of
    /// this type; on a disk they are released once written.
    public static func chargesSpilledBytes(filesystemType: Int) -> Bool {
        memoryFilesystems.contains(filesystemType)
    }
}

/// Where a run's large bodies go (`.imgwarm/tmp`, opened by the cache with
/// O_NOFOLLOW and checked private): unnamed files (`O_TMPFILE | O_EXCL`,
/// mode 0600) that nothing can open by name, never linked anywhere, gone
/// when the run drops them or dies. Counts what spilled, for the report.
public final class BodySpill: @unchecked Sendable {  // counters behind `lock`; the rest immutable
    /// A duplicate of the folder's descriptor, kept open for the run.
    private let folder: Int32
    /// For messages only; never opened by this path.
    public let path: String
    public let threshold: Int
    /// The folder is on tmpfs or ramfs: spilled bytes stay charged.
    public let chargesSpilledBytes: Bool
    private let lock = NSLock()
    private var unsupported = false
    private var bodies = 0
    private var bytes = 0

    /// `folder`: a descriptor of `.imgwarm/tmp` (duplicated here: the
    /// caller's may close); nil when it cannot be duplicated.
    public init?(folder: Int32, path: String, threshold: Int) {
        let fd = fcntl(folder, F_DUPFD_CLOEXEC, 0)
        guard fd >= 0 else { return nil }
        self.folder = fd
        self.path = path
        self.threshold = threshold
        chargesSpilledBytes = SpillRule.chargesSpilledBytes(filesystemType: UnnamedFiles.filesystemType(fd))
    }

    deinit { close(folder) }

    /// How the run spills: "disk", "memory-filesystem" (tmpfs: charged), or
    /// "unsupported" once the filesystem refused O_TMPFILE (bodies then
    /// stay in memory, charged).
    public var mode: String {
        lock.withLock { unsupported ? "unsupported" : chargesSpilledBytes ? "memory-filesystem" : "disk" }
    }

    /// Bodies received whole in a file, and their bytes (an attempt cut
    /// short, past --max-bytes or on a full disk is not counted: its file
    /// was dropped).
    public var figures: (bodies: Int, bytes: Int) { lock.withLock { (bodies, bytes) } }

    /// A new spill file, or nil: the body then stays in memory (the
    /// filesystem has no O_TMPFILE, from then on; or the folder was removed
    /// during the run, or the disk is full, this once).
    func open() -> Int32? {
        if lock.withLock({ unsupported }) { return nil }
        let fd = UnnamedFiles.openSpill(in: folder)
        if fd >= 0 { return fd }
        let e = errno
        if e == EOPNOTSUPP || e == EISDIR || e == EINVAL { lock.withLock { unsupported = true } }
        return nil
    }

    /// A body of `count` bytes received whole in its file.
    func received(_ count: Int) {
        lock.withLock {
            bodies += 1
            bytes += count
        }
    }

    /// Writes all of `buffer` to `fd`; 0 or the errno.
    static func write(_ fd: Int32, _ buffer: UnsafeRawBufferPointer) -> Int32 {
        FileIO.writeAll(fd, buffer)
    }
}

/// A body that was spilled: its file, mapped read-only for the decoders and
/// the store. The mapping is the page cache of the file, not anonymous
/// memory: the kernel may drop its pages and read them again, and a body on
/// tmpfs is mapped without a copy. Unmapped and closed when the last copy
/// of the response goes.
public final class SpilledBody: @unchecked Sendable {  // immutable after init
    public let count: Int
    private let fd: Int32
    private let base: UnsafeMutableRawPointer

    /// Maps `count` bytes of `fd` (taking the descriptor), or the errno
    /// when it cannot be mapped (the descriptor is closed then).
    static func map(fd: Int32, count: Int) -> Result<SpilledBody, MapFailure> {
        guard count > 0 else {
            close(fd)
            return .failure(MapFailure(errno: EINVAL))
        }
        let p = mmap(nil, count, PROT_READ, MAP_SHARED, fd, 0)
        guard let p, p != MAP_FAILED else {
            let e = errno
            close(fd)
            return .failure(MapFailure(errno: e))
        }
        return .success(SpilledBody(fd: fd, base: p, count: count))
    }

    struct MapFailure: Error {
        let errno: Int32
    }

    private init(fd: Int32, base: UnsafeMutableRawPointer, count: Int) {
        self.fd = fd
        self.base = base
        self.count = count
    }

    deinit {
        munmap(base, count)
        close(fd)
    }

    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeRawBufferPointer(start: base, count: count))
    }
}

/// A response's body: in memory, or in its spill file.
public struct BodyBytes: Sendable {
    package init(memory: [UInt8], file: ImgWarmDownload.SpilledBody?) {
        self.memory = memory
        self.file = file
    }

    public let memory: [UInt8]
    public let file: SpilledBody?

    public var count: Int { file?.count ?? memory.count }
    public var isSpilled: Bool { file != nil }

    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        if let file { return try file.withUnsafeBytes(body) }
        return try memory.withUnsafeBytes(body)
    }
}
