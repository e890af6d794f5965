import Foundation
import Testing
@testable import ImgWarmSupport
@testable import ImgWarmDecode
@testable import ImgWarmDownload
@testable import ImgWarmCache
@testable import ImgWarmInspect
@testable import ImgWarmReport
@testable import ImgWarmWarm
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// Birth and change times cannot be set, so these tests create the order
/// they need (files made, or chmod'ed, one after another with short sleeps)
/// and read the real dates back to place "now" exactly.
@Suite struct CacheExpireTypeTests {
    /// Whether the temp folder's filesystem records birth times (ext4, xfs,
    /// btrfs and tmpfs on recent kernels do; overlayfs over old kernels and
    /// some network filesystems do not).
    static let filesystemHasBirthTime: Bool = {
        let path = FileManager.default.temporaryDirectory.path + "/imgwarm-btime-probe-\(getpid())"
        _ = FileManager.default.createFile(atPath: path, contents: Data())
        defer { unlink(path) }
        return CacheExpireType.creation.date(ofFileAt: path) != nil
    }()

    static func pause() { usleep(20_000) }

    @Test(.needs(filesystemHasBirthTime, "the temp folder's filesystem records no birth time: the creation-date test did not run"))
    func creationExpiryAndTrimFollowBirthTime() throws {
        let f = try PruneFixture()
        // Created c0 first … c3 last; atimes and mtimes run the other way, so
        // going by them would pick the opposite files.
        for i in 0..<4 {
            try f.file("c\(i)", atime: PruneFixture.now - Int64(i) * PruneFixture.day,
                       mtime: PruneFixture.now - Int64(i) * PruneFixture.day)
            Self.pause()
        }
        let born = (0..<4).map { CacheExpireType.creation.date(ofFileAt: f.path("c\($0)"))! }
        try #require(born == born.sorted() && Set(born).count == 4, "birth times must follow creation order")
        let a = f.allocated("c0")

        // now - maxAge == birth of c1: c0 and c1 (at the date) expire. Then
        // 2A > 1.5A: trim to below 1.5A removes c2, the older by birth time
        // though the newer by atime.
        let maxAge = 3600.0
        let r = try f.prune(PruneOptions(maxAge: maxAge, maxSize: UInt64(a + a / 2), expireType: .creation,
                                         trimRatio: 1, now: born[1] + Int64(maxAge * 1e9)))
        #expect(f.remaining() == ["c3"])
        #expect(r.expired == 2)
        #expect(PruneFixture.listing(r).last == "trimmed#1 c2")
        #expect(r.undatedFiles == 0)
    }

    @Test func changeExpiryAndTrimFollowCtime() throws {
        let f = try PruneFixture()
        // utimensat itself sets ctime, so times go first and the chmods that
        // order the ctimes last: x2, then x1, then x0.
        for i in 0..<3 {
            try f.file("x\(i)", atime: PruneFixture.now - Int64(10 - i) * PruneFixture.day,
                       mtime: PruneFixture.now - Int64(10 - i) * PruneFixture.day)
        }
        Self.pause()
        for i in [2, 1, 0] {
            #expect(chmod(f.path("x\(i)"), 0o600) == 0)
            Self.pause()
        }
        let changed = (0..<3).map { CacheExpireType.change.date(ofFileAt: f.path("x\($0)"))! }
        try #require(changed[2] < changed[1] && changed[1] < changed[0],
                     "this filesystem's ctime resolution cannot separate chmods 20 ms apart")
        let a = f.allocated("x0")

        // Trim alone: 3A > 2.5A, to below 2.5A: x2 (oldest ctime) goes.
        let trim = try f.prune(PruneOptions(maxSize: UInt64(2 * a + a / 2), expireType: .change, trimRatio: 1,
                                            dryRun: true))
        #expect(PruneFixture.listing(trim) == ["trimmed#1 x2"])

        // Expiry with now - maxAge == ctime of x1: x2 and x1 go.
        let r = try f.prune(PruneOptions(maxAge: 60, expireType: .change, now: changed[1] + 60_000_000_000))
        #expect(f.remaining() == ["x0"])
        #expect(r.expired == 2)
    }
}
