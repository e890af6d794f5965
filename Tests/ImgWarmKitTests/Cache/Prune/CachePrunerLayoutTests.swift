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

/// `cache prune --layout kingfisher`: Kingfisher 8's `ImageCache.cleanExpiredDiskCache`
/// (`Sources/Cache/ImageCache.swift`), i.e. `DiskStorage.Backend.removeExpiredValues`
/// then `removeSizeExceededValues` (`Sources/Cache/DiskStorage.swift`),
/// each asserted as the exact set of files left.
@Suite struct PruneKingfisherTests {
    let now = PruneFixture.now
    let day = PruneFixture.day

    func prune(_ f: PruneFixture, maxSize: UInt64? = nil, pinned: PinnedNames = PinnedNames(), dryRun: Bool = false,
               now: Int64 = PruneFixture.now) throws -> PruneResult {
        try f.prune(PruneOptions(layout: KingfisherLayout(), maxSize: maxSize, pinned: pinned, dryRun: dryRun, now: now))
    }

    /// `removeExpiredValues`: `FileMeta.expired(referenceDate:)` on the
    /// modification date (the deadline): at or before now is expired,
    /// whatever the access date says.
    @Test func expiryByDeadlineAtOrBeforeNow() throws {
        let f = try PruneFixture()
        try f.file("past", atime: now, mtime: now - day)
        try f.file("edge", atime: now, mtime: now)                     // at now: expired
        try f.file("just-after", atime: now - 30 * day, mtime: now + 1) // 1 ns later: kept
        try f.file("week", atime: now - 30 * day, mtime: now + 7 * day)
        try f.file("sub/past", atime: now, mtime: now - day)           // the enumerator is recursive
        let r = try prune(f)
        #expect(f.remaining() == ["just-after", "week"])
        #expect(r.expired == 3 && r.trimmed == 0)
        #expect(r.expireType == .modification && r.expirationDate == now)
        #expect(r.trimTarget == nil)
    }

    /// `removeSizeExceededValues`: `size < config.sizeLimit` returns, so at
    /// the limit it trims; it sums `fileSizeKey` (the length, not blocks),
    /// sorts by `FileMeta.lastAccessDate` (the creation date) and pops the
    /// oldest `while size > target` with `target = sizeLimit / 2`.
    /// Birth times cannot be set: the files are created in the order needed.
    @Test(.needs(CacheExpireTypeTests.filesystemHasBirthTime, "the temp folder's filesystem records no birth time: the creation-date test did not run"))
    func trimByCreationDateByLengthDownToHalf() throws {
        let f = try PruneFixture()
        // k5 created first (oldest), k0 last; access and modification dates
        // run the other way, and so do the names.
        for i in stride(from: 5, through: 0, by: -1) {
            try f.file("k\(i)", size: 1000, atime: now - Int64(10 - i) * day, mtime: now + Int64(10 - i) * day)
            CacheExpireTypeTests.pause()
        }
        let born = (0..<6).map { CacheExpireType.creation.date(ofFileAt: f.path("k\($0)"))! }
        try #require(born == born.sorted(by: >), "birth times must follow creation order")

        // 6000 bytes, one under the limit: nothing to do.
        var r = try prune(f, maxSize: 6001)
        #expect(r.trimmed == 0 && f.remaining().count == 6)

        // At the limit: trim to at most 3000 bytes, oldest creation first.
        r = try prune(f, maxSize: 6000, dryRun: true)
        #expect(PruneFixture.listing(r) == ["trimmed#1 k5", "trimmed#2 k4", "trimmed#3 k3"])
        #expect(r.trimTarget == 3000 && r.removedBytes == 3000 && r.sizeMeasure == .logical)
        #expect(r.date(of: r.removals[0]) == born[5])
        r = try prune(f, maxSize: 6000)
        #expect(f.remaining() == ["k0", "k1", "k2"])
        #expect(r.keptBytes == 3000)
    }

    /// Expired files are gone before `totalSize()` is taken for the trim.
    @Test(.needs(CacheExpireTypeTests.filesystemHasBirthTime, "the temp folder's filesystem records no birth time: the creation-date test did not run"))
    func expiredFilesDoNotCountTowardsTheLimit() throws {
        let f = try PruneFixture()
        for name in ["live-old", "dead-1", "live-new", "dead-2"] {
            try f.file(name, size: 1000, mtime: name.hasPrefix("dead") ? now - day : now + day)
            CacheExpireTypeTests.pause()
        }
        // 2000 live bytes: at a limit of 2001 nothing more goes.
        var r = try prune(f, maxSize: 2001, dryRun: true)
        #expect(PruneFixture.listing(r) == ["expired dead-1", "expired dead-2"])
        // At 2000 the older live file goes too.
        r = try prune(f, maxSize: 2000)
        #expect(f.remaining() == ["live-new"])
        #expect(r.expired == 2 && r.trimmed == 1)
    }

    /// Pins are SHA-256 names here.
    @Test func pinnedKeysUseKingfisherNames() throws {
        let f = try PruneFixture()
        let key = "https://example.com/keep.png"
        let name = KingfisherLayout().entryName(forKey: key).storedName
        try f.file(name, mtime: now - day)
        try f.file("other", mtime: now - day)
        let r = try prune(f, pinned: PinnedNames(keys: [key], layout: KingfisherLayout()))
        #expect(f.remaining() == [name])
        #expect(r.pinnedFiles == 1)
    }

    /// A file a concurrent warm rewrote since the walk (a new deadline) is
    /// spared: the remover judges it again by the policy.
    @Test func rewrittenSinceTheWalkIsRenewed() throws {
        let f = try PruneFixture()
        try f.file("k", mtime: now - day)
        let policy = try PruneOptions(layout: KingfisherLayout()).policy(now: now)
        let remover = try FileRemover(directory: f.directory, policy: policy, dryRun: false)
        let due = try #require(policy.expirationCutoff)
        f.setTimes("k", atime: now, mtime: now + day)
        #expect(remover.remove(name: "k", directoryIndex: 0, dueDate: due) == .renewed)
        f.setTimes("k", atime: now, mtime: now)
        #expect(remover.remove(name: "k", directoryIndex: 0, dueDate: due) == .removed)
    }
}

/// `cache prune --layout nuke`: Nuke 12's `DataCache.performSweep`
/// (`Sources/Nuke/Caching/DataCache.swift`), each asserted as the exact
/// set of files left.
@Suite struct PruneNukeTests {
    let now = PruneFixture.now
    let day = PruneFixture.day

    func prune(_ f: PruneFixture, maxSize: UInt64? = nil, trimRatio: Double? = nil,
               pinned: PinnedNames = PinnedNames()) throws -> PruneResult {
        try f.prune(PruneOptions(layout: NukeLayout(), maxSize: maxSize, trimRatio: trimRatio, pinned: pinned))
    }

    /// Ten equal files, n0 least recently accessed; modification dates run
    /// the other way. Returns the allocated size of one.
    func tenFiles(_ f: PruneFixture) throws -> Int64 {
        for i in 0..<10 {
            try f.file("n\(i)", atime: now - Int64(10 - i) * day, mtime: now - Int64(i + 1) * day)
        }
        let a = f.allocated("n0")
        try #require(a > 0)
        return a
    }

    /// No age expiry at all: ancient files under the limit stay.
    @Test func noAgeExpiry() throws {
        let f = try PruneFixture()
        try f.file("ancient", atime: 0, mtime: 0)
        let r = try prune(f)
        #expect(f.remaining() == ["ancient"])
        #expect(r.removedFiles == 0 && r.expirationDate == nil && r.expireType == nil)
    }

    /// `guard size > sizeLimit`: at the limit nothing goes.
    @Test func atTheLimitNothingGoes() throws {
        let f = try PruneFixture()
        let a = try tenFiles(f)
        let r = try prune(f, maxSize: UInt64(10 * a))
        #expect(r.removedFiles == 0 && f.remaining().count == 10)
    }

    /// Above it: least recently accessed first (`contentAccessDateKey`),
    /// allocated sizes (`totalFileAllocatedSizeKey`), `while size >
    /// targetSizeLimit` with `Int(Double(sizeLimit) * 0.7)`.
    @Test func sweepByAccessDateDownTo70Percent() throws {
        let f = try PruneFixture()
        let a = try tenFiles(f)
        // Limit 10A - 1: target floor(0.7 x (10A - 1)) = 7A - 1 (A = 4096):
        // 7 files are one byte too many, so 6 stay.
        let r = try prune(f, maxSize: UInt64(10 * a - 1))
        #expect(f.remaining() == (4..<10).map { "n\($0)" })
        #expect(PruneFixture.listing(r) == (0..<4).map { "trimmed#\($0 + 1) n\($0)" })
        #expect(r.trimTarget == UInt64((Double(10 * a - 1) * 0.7).rounded(.towardZero)))
    }

    /// The loop stops once the size is at (not only below) the target.
    @Test func stopsAtTheTarget() throws {
        let f = try PruneFixture()
        let a = try tenFiles(f)
        _ = try prune(f, maxSize: UInt64(8 * a), trimRatio: 0.5)
        #expect(f.remaining() == (6..<10).map { "n\($0)" })
    }

    /// `contents(keys:)` lists the folder itself with `.skipsHiddenFiles`:
    /// sub-folders are not walked (imgwarm leaves them alone) and
    /// `.data-cache-info` (the sweep date) is neither counted nor removed.
    @Test func flatAndHiddenFilesLeftAlone() throws {
        let f = try PruneFixture()
        let a = try tenFiles(f)
        try f.file(".data-cache-info", size: 10 * Int(a), atime: 0)
        try f.file("sub/old", size: 10 * Int(a), atime: 0)
        _ = try prune(f, maxSize: UInt64(10 * a - 1))
        #expect(f.remaining() == [".data-cache-info"] + (4..<10).map { "n\($0)" } + ["sub/old"])
    }

    /// Pins are SHA-1 names here.
    @Test func pinnedKeysUseNukeNames() throws {
        let f = try PruneFixture()
        let a = try tenFiles(f)
        let key = "http://test.com"
        try f.file("50334ee0b51600df6397ce93ceed4728c37fee4e", atime: 0)
        let r = try prune(f, maxSize: UInt64(10 * a), pinned: PinnedNames(keys: [key], layout: NukeLayout()))
        #expect(r.pinnedFiles == 1)
        #expect(f.remaining().contains("50334ee0b51600df6397ce93ceed4728c37fee4e"))
        #expect(!f.remaining().contains("n0"))
    }
}
