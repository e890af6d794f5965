import Foundation
import Testing
@testable import ImgWarmSupport
@testable import ImgWarmDecode
@testable import ImgWarmDownload
@testable import ImgWarmCache
@testable import ImgWarmInspect
@testable import ImgWarmReport
@testable import ImgWarmWarm
#if canImport(Glibc)
import Glibc
#endif

/// A throwaway cache folder whose files get chosen sizes and times.
final class PruneFixture {
    let directory: String
    /// A fixed "now" (2027-01-15T08:00:00Z) so that times are exact.
    static let now: Int64 = 1_800_000_000 * 1_000_000_000
    static let day: Int64 = 86_400 * 1_000_000_000
    /// File size used by most tests: one 4 KiB block on ext4, xfs, tmpfs.
    static let block = 4096

    init() throws {
        let base = FileManager.default.temporaryDirectory.path + "/imgwarm-prune-\(getpid())-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
        directory = base
    }

    deinit { try? FileManager.default.removeItem(atPath: directory) }

    func path(_ relative: String) -> String { directory + "/" + relative }

    /// Writes `size` bytes at `relative` (folders created) and sets its atime
    /// and mtime in nanoseconds since the epoch.
    @discardableResult
    func file(_ relative: String, size: Int = PruneFixture.block, atime: Int64 = PruneFixture.now,
              mtime: Int64 = PruneFixture.now) throws -> String {
        let p = path(relative)
        try FileManager.default.createDirectory(atPath: (p as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        let data = Data(repeating: 0x5A, count: size)
        #expect(FileManager.default.createFile(atPath: p, contents: data))
        setTimes(relative, atime: atime, mtime: mtime)
        return p
    }

    func setTimes(_ relative: String, atime: Int64, mtime: Int64) {
        var times = [timespec(tv_sec: Int(atime / 1_000_000_000), tv_nsec: Int(atime % 1_000_000_000)),
                     timespec(tv_sec: Int(mtime / 1_000_000_000), tv_nsec: Int(mtime % 1_000_000_000))]
        #expect(utimensat(AT_FDCWD, path(relative), &times, AT_SYMLINK_NOFOLLOW) == 0)
    }

    /// Allocated bytes of a file (what prune sums).
    func allocated(_ relative: String) -> Int64 {
        var st = stat()
        guard lstat(path(relative), &st) == 0 else { return -1 }
        return Int64(st.st_blocks) * 512
    }

    /// Every path under the folder, hidden ones included, relative and
    /// sorted, regular files and symlinks only: what survived.
    func remaining() -> [String] {
        let enumerator = FileManager.default.enumerator(atPath: directory)
        var out: [String] = []
        while let item = enumerator?.nextObject() as? String {
            var st = stat()
            if lstat(path(item), &st) == 0, (st.st_mode & S_IFMT) != S_IFDIR { out.append(item) }
        }
        return out.sorted()
    }

    func prune(_ options: PruneOptions) throws -> PruneResult {
        var o = options
        if o.now == nil { o.now = Self.now }
        return try CachePruner(directory: directory, options: o).run()
    }

    /// Removal paths in order, with their reason and rank, e.g. "trimmed#1 a".
    static func listing(_ r: PruneResult) -> [String] {
        r.removals.map { ($0.reason == .expired ? "expired" : "trimmed#\($0.rank)") + " " + r.path(of: $0) }
    }
}
