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

/// `cache prune`'s semantics, each asserted as the exact set of files left.
@Suite struct CachePrunerTests {
    let now = PruneFixture.now
    let day = PruneFixture.day

    /// Ten equal files f0…f9, f0 the oldest by atime (10 days) and f9 the
    /// newest (1 day); mtimes run the other way so that a prune going by the
    /// wrong date would pick other files. Returns the allocated size of one.
    func tenFiles(_ f: PruneFixture) throws -> Int64 {
        for i in 0..<10 {
            try f.file("f\(i).jpg", atime: now - Int64(10 - i) * day, mtime: now - Int64(i + 1) * day)
        }
        let a = f.allocated("f0.jpg")
        try #require(a > 0)
        for i in 0..<10 { try #require(f.allocated("f\(i).jpg") == a, "equal files must take equal space") }
        return a
    }

    @Test func expiryByAccessTimeIsAtOrBeforeTheExpirationDate() throws {
        let f = try PruneFixture()
        let maxAge: Int64 = 10 * day
        try f.file("old.jpg", atime: now - 20 * day, mtime: now)
        try f.file("edge.jpg", atime: now - maxAge, mtime: now)               // exactly at: expired
        try f.file("just-after.jpg", atime: now - maxAge + 1, mtime: now)     // 1 ns later: kept
        try f.file("fresh.jpg", atime: now, mtime: now - 20 * day)
        try f.file("future.jpg", atime: now + day, mtime: now)
        let r = try f.prune(PruneOptions(maxAge: 10 * 86_400))
        #expect(f.remaining() == ["fresh.jpg", "future.jpg", "just-after.jpg"])
        #expect(r.expired == 2 && r.trimmed == 0 && r.removedFiles == 2)
        #expect(r.keptFiles == 3)
        #expect(r.trimTarget == nil)
    }

    @Test func expiryByModificationTimeUsesMtime() throws {
        let f = try PruneFixture()
        try f.file("old-access.jpg", atime: now - 20 * day, mtime: now)
        try f.file("edge.jpg", atime: now, mtime: now - 10 * day)
        try f.file("old-modified.jpg", atime: now, mtime: now - 20 * day)
        try f.file("just-after.jpg", atime: now - 30 * day, mtime: now - 10 * day + 1)
        _ = try f.prune(PruneOptions(maxAge: 10 * 86_400, expireType: .modification))
        #expect(f.remaining() == ["just-after.jpg", "old-access.jpg"])
    }

    @Test func defaultExpireTypeIsAccess() throws {
        let policy = try PruneOptions(maxAge: 1, maxSize: 1000).policy(now: now)
        #expect(policy.expiry == .olderThan(cutoff: now - 1_000_000_000, date: .access))
        #expect(policy.trimDate == .access)
        #expect(policy.target == 500)
    }

    @Test func sizeOnlyTrimsOldestFirstToBelowHalf() throws {
        let f = try PruneFixture()
        let a = try tenFiles(f)
        // 10A > 6A: trim to below 3A, so 2 files stay.
        let r = try f.prune(PruneOptions(maxSize: UInt64(6 * a)))
        #expect(f.remaining() == ["f8.jpg", "f9.jpg"])
        #expect(PruneFixture.listing(r) == (0..<8).map { "trimmed#\($0 + 1) f\($0).jpg" })
        #expect(r.trimmed == 8 && r.expired == 0)
        #expect(r.removedBytes == UInt64(8 * a) && r.keptBytes == UInt64(2 * a))
        #expect(r.trimTarget == UInt64(3 * a) && r.trimTargetReached == true)
    }

    @Test func trimStopsOnlyBelowTheTargetNotAtIt() throws {
        let f = try PruneFixture()
        let a = try tenFiles(f)
        // Target 4A: after 6 removals the size is exactly 4A, not below: one more goes.
        _ = try f.prune(PruneOptions(maxSize: UInt64(8 * a)))
        #expect(f.remaining() == ["f7.jpg", "f8.jpg", "f9.jpg"])
    }

    @Test func noTrimWhenTheSizeIsAtTheLimit() throws {
        let f = try PruneFixture()
        let a = try tenFiles(f)
        let r = try f.prune(PruneOptions(maxSize: UInt64(10 * a)))
        #expect(f.remaining().count == 10)
        #expect(r.removedFiles == 0 && r.trimTarget == nil)
    }

    @Test func maxSizeZeroMeansNoLimit() throws {
        let f = try PruneFixture()
        _ = try tenFiles(f)
        let r = try f.prune(PruneOptions(maxSize: 0))
        #expect(r.removedFiles == 0 && f.remaining().count == 10)
    }

    @Test(arguments: [(1.0, 6, 5), (0.25, 8, 1), (0.75, 4, 2)])
    func trimRatio(ratio: Double, maxFiles: Int64, expectedLeft: Int) throws {
        let f = try PruneFixture()
        let a = try tenFiles(f)
        _ = try f.prune(PruneOptions(maxSize: UInt64(maxFiles * a), trimRatio: ratio))
        // The newest `expectedLeft` files are what stays.
        #expect(f.remaining() == ((10 - expectedLeft)..<10).map { "f\($0).jpg" })
    }

    @Test func expiryThenTrimOnWhatRemains() throws {
        let f = try PruneFixture()
        let a = try tenFiles(f)
        // Ages 10…1 days: f0…f3 are at or before 7 days (f3 exactly). The
        // other six (6A) are above 4A: trim to below 2A, f9 stays.
        let r = try f.prune(PruneOptions(maxAge: 7 * 86_400, maxSize: UInt64(4 * a)))
        #expect(f.remaining() == ["f9.jpg"])
        let listing = PruneFixture.listing(r)
        #expect(Set(listing.prefix(4)) == Set((0..<4).map { "expired f\($0).jpg" }))
        #expect(Array(listing.dropFirst(4)) == (4..<9).map { "trimmed#\($0 - 3) f\($0).jpg" })
        #expect(r.expired == 4 && r.trimmed == 5 && r.keptFiles == 1)
    }

    @Test func sameDateTiesGoInNameOrder() throws {
        let f = try PruneFixture()
        for name in ["c", "a", "d", "b"] { try f.file(name, atime: now - day) }
        let a = f.allocated("a")
        let r = try f.prune(PruneOptions(maxSize: UInt64(3 * a), trimRatio: 1))
        #expect(PruneFixture.listing(r) == ["trimmed#1 a", "trimmed#2 b"])
        #expect(f.remaining() == ["c", "d"])
    }

    @Test func pinnedEntriesStayAndCountTowardTheSize() throws {
        let f = try PruneFixture()
        let pinnedKey = "https://cdn.example.com/img/pinned.jpg"
        let bareKey = "https://cdn.example.com/avatar/42"        // no extension: bare md5
        let extKey = "https://cdn.example.com/img/fallback.png"  // pinned under its bare-md5 fallback
        let pinnedName = CacheFileName(key: pinnedKey).sdName
        let bareName = CacheFileName(key: bareKey).md5
        let fallbackName = CacheFileName(key: extKey).md5
        try f.file(pinnedName, atime: now - 40 * day)
        try f.file(bareName, atime: now - 40 * day)
        try f.file(fallbackName, atime: now - 40 * day)
        // Same name one folder down is not where an app looks: not pinned.
        try f.file("sub/" + pinnedName, atime: now - 40 * day)
        try f.file("expired.jpg", atime: now - 40 * day)
        for i in 0..<6 { try f.file("u\(i).jpg", atime: now - Int64(6 - i) * day) }
        let a = f.allocated("u0.jpg")
        let pinned = PinnedNames(keys: [pinnedKey, bareKey, extKey])
        // Expiry removes expired.jpg and sub/…; remaining 3A pinned + 6A = 9A
        // > 8A: trim to below 4.8A, which takes five unpinned files. Were the
        // pinned files not counted, 6A would be under the limit: no trim.
        let r = try f.prune(PruneOptions(maxAge: 30 * 86_400, maxSize: UInt64(8 * a), trimRatio: 0.6, pinned: pinned))
        #expect(f.remaining() == [bareName, fallbackName, pinnedName, "u5.jpg"].sorted())
        #expect(r.pinnedFiles == 3 && r.pinnedBytes == UInt64(3 * a))
        #expect(r.expired == 2 && r.trimmed == 5)
        #expect(r.keptFiles == 4 && r.keptBytes == UInt64(4 * a))
    }

    @Test func pinnedFilesAloneAboveTheTargetLeaveOnlyThem() throws {
        let f = try PruneFixture()
        let key = "https://cdn.example.com/p.jpg"
        try f.file(CacheFileName(key: key).sdName, atime: now - day)
        try f.file("x.jpg", atime: now)
        let a = f.allocated("x.jpg")
        let r = try f.prune(PruneOptions(maxSize: UInt64(a), pinned: PinnedNames(keys: [key])))
        #expect(f.remaining() == [CacheFileName(key: key).sdName])
        #expect(r.trimTargetReached == false)
        #expect(PruneReport.warnings(r).count == 1)
    }

    @Test func hiddenFilesAndFoldersAreNeitherTouchedNorCounted() throws {
        let f = try PruneFixture()
        let old = now - 100 * day
        try f.file(".hidden", atime: old)
        try f.file(".imgwarm/tmp/123-1.tmp", atime: old)
        try f.file(".imgwarm/state.sqlite", atime: old)
        try f.file(".dir/inside.jpg", atime: old)
        try f.file("sub/.hidden-in-sub", atime: old)
        try f.file("sub/a.jpg", atime: old)
        try f.file("sub/deeper/b.jpg", atime: old)
        try f.file("sub/deeper/c.jpg", atime: now)
        try f.file("top.jpg", atime: now)
        // A symlink is not followed and not removed, even when old.
        #expect(symlink("sub/a.jpg", f.path("link")) == 0)
        let r = try f.prune(PruneOptions(maxAge: 86_400, maxSize: 1_000_000_000))
        #expect(f.remaining() == [".dir/inside.jpg", ".hidden", ".imgwarm/state.sqlite", ".imgwarm/tmp/123-1.tmp",
                                  "link", "sub/.hidden-in-sub", "sub/deeper/c.jpg", "top.jpg"])
        #expect(Set(PruneFixture.listing(r)) == ["expired sub/a.jpg", "expired sub/deeper/b.jpg"])
        #expect(r.scannedFiles == 4 && r.keptFiles == 2)
        #expect(r.keptBytes == UInt64(f.allocated("top.jpg") + f.allocated("sub/deeper/c.jpg")))
        // Folders stay, as SDWebImage leaves them.
        var st = stat()
        #expect(stat(f.path("sub/deeper"), &st) == 0)
    }

    @Test func trimAcrossNestedFolders() throws {
        let f = try PruneFixture()
        try f.file("a/1", atime: now - 5 * day)
        try f.file("b/c/2", atime: now - 4 * day)
        try f.file("3", atime: now - 3 * day)
        try f.file("a/4", atime: now - 2 * day)
        let a = f.allocated("3")
        let r = try f.prune(PruneOptions(maxSize: UInt64(3 * a), trimRatio: 1))
        #expect(PruneFixture.listing(r) == ["trimmed#1 a/1", "trimmed#2 b/c/2"])
        #expect(f.remaining() == ["3", "a/4"])
    }

    @Test func dryRunRemovesNothingAndListsWhatARunWould() throws {
        let f = try PruneFixture()
        let a = try tenFiles(f)
        let options = PruneOptions(maxAge: 7 * 86_400, maxSize: UInt64(4 * a), dryRun: true)
        let dry = try f.prune(options)
        #expect(f.remaining().count == 10)
        #expect(dry.dryRun && dry.expired == 4 && dry.trimmed == 5 && dry.keptFiles == 1)
        let listing = PruneFixture.listing(dry)
        #expect(Array(listing.dropFirst(4)) == (4..<9).map { "trimmed#\($0 - 3) f\($0).jpg" })
        var real = options
        real.dryRun = false
        let run = try f.prune(real)
        #expect(Set(PruneFixture.listing(run)) == Set(listing))
        #expect(f.remaining() == ["f9.jpg"])
    }

    @Test func missingFolderIsAnError() throws {
        let f = try PruneFixture()
        #expect(throws: ImgWarmError.self) {
            try CachePruner(directory: f.path("nope"), options: PruneOptions(maxAge: 1)).run()
        }
    }

    @Test func optionsNeedAnAgeOrASizeAndASaneRatio() {
        #expect(throws: ImgWarmError.self) { try PruneOptions().validate() }
        #expect(throws: ImgWarmError.self) { try PruneOptions(maxSize: 1, trimRatio: 0).validate() }
        #expect(throws: ImgWarmError.self) { try PruneOptions(maxSize: 1, trimRatio: 1.5).validate() }
        #expect(throws: Never.self) { try PruneOptions(maxAge: 0).validate() }
    }

    @Test func hugeMaxAgeExpiresNothing() throws {
        let f = try PruneFixture()
        try f.file("ancient", atime: 0)
        let r = try f.prune(PruneOptions(maxAge: 1e12))
        #expect(r.removedFiles == 0 && f.remaining() == ["ancient"])
    }
}
