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

/// Access times as SDWebImage keeps them (`SDDiskCache.m`, 5.21.5):
/// `dataForKey:` sets `NSURLContentAccessDateKey` to now after each disk
/// read (the access date only), and access date is the default expire type
/// since 5.20 (`SDImageCacheConfig.m`). So a `cached` hit renews the access
/// time, and maintenance reads (`cache stats`, `cache verify`) must not.
@Suite struct QuietFileTests {
    static let day: Int = 86_400

    /// (atime, mtime) in whole seconds.
    static func times(_ path: String) -> (atime: Int, mtime: Int) { FileTimes.of(path) }
    static func setTimes(_ path: String, atime: Int, mtime: Int) { FileTimes.set(path, atime: atime, mtime: mtime) }

    /// Puts `path` in the state where a plain read renews its access time
    /// even under `relatime` (atime older than mtime), and checks that it
    /// does so on this filesystem by reading a twin file set up the same
    /// way. Returns the atime set. On a `noatime` mount reads never renew
    /// anything, so the assertions that follow could not fail: the test
    /// stops here, skipped on a developer machine and failed under CI
    /// (TestSupport's missing-prerequisite rule).
    static func makeReadRenewAccessTime(_ path: String, now: Int) throws -> Int {
        let atime = now - 10 * day, mtime = now - day
        setTimes(path, atime: atime, mtime: mtime)
        let twin = path + ".control"
        FileManager.default.createFile(atPath: twin, contents: Data([1, 2, 3]))
        defer { unlink(twin) }
        setTimes(twin, atime: atime, mtime: mtime)
        _ = FileManager.default.contents(atPath: twin)
        if times(twin).atime == atime {
            try prerequisiteMissing("this filesystem does not renew access times on read (noatime?): the access-time checks did not run")
        }
        return atime
    }

    func cacheWithImages() throws -> (DiskCache, [String]) {
        let dir = makeTempDirectory("imgwarm-atime")
        let cache = DiskCache(directory: dir)
        try cache.prepare()
        let good = try cache.store(Fixture.png(16, 16), for: cache.fileName(forKey: "https://example.com/good.png"))
        let broken = try cache.store(Array("<html>login</html>".utf8), for: cache.fileName(forKey: "https://example.com/page"))
        return (cache, [good, broken])
    }

    @Test func statsAndVerifyLeaveAccessTimes() throws {
        let (cache, paths) = try cacheWithImages()
        defer { try? FileManager.default.removeItem(atPath: cache.directory) }
        let now = Int(Date().timeIntervalSince1970)
        var before: [String: (atime: Int, mtime: Int)] = [:]
        for p in paths {
            _ = try Self.makeReadRenewAccessTime(p, now: now)
            before[p] = Self.times(p)
        }
        let stats = try CacheStatistics.collect(cache)
        #expect(stats.files == 2)
        let report = try CacheVerifier().verify(cache, delete: false)
        #expect(report.checked == 2 && report.broken.count == 1)
        for p in paths {
            #expect(Self.times(p) == before[p]!, "\(p)")
        }
    }

    /// Where the kernel refuses O_NOATIME (EPERM: not the owner), the file
    /// is read normally and its access time put back at close.
    @Test func theFallbackWithoutNoatimePutsTheAccessTimeBack() throws {
        let (cache, paths) = try cacheWithImages()
        defer { try? FileManager.default.removeItem(atPath: cache.directory) }
        let now = Int(Date().timeIntervalSince1970)
        let path = paths[0]
        let atime = try Self.makeReadRenewAccessTime(path, now: now)
        guard case .success(let file) = QuietFile.open(path, noatime: false) else {
            Issue.record("cannot open \(path)")
            return
        }
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        #expect(read(file.fd, &buffer, buffer.count) > 0)
        let renewedByTheRead = Self.times(path).atime
        file.close()
        #expect(Self.times(path).atime == atime)
        // The read itself did renew it: the fallback path was taken.
        #expect(renewedByTheRead >= now)
    }

    @Test func aHitRenewsTheAccessTimeOnly() throws {
        let (cache, paths) = try cacheWithImages()
        defer { try? FileManager.default.removeItem(atPath: cache.directory) }
        let now = Int(Date().timeIntervalSince1970)
        Self.setTimes(paths[0], atime: now - 40 * Self.day, mtime: now - 50 * Self.day)
        Self.setTimes(paths[1], atime: now - 40 * Self.day, mtime: now - 50 * Self.day)

        // A dry run's lookup touches nothing.
        let quiet = CacheLookahead.lookup(cache.fileName(forKey: "https://example.com/good.png"), in: cache, renewingHits: false)
        #expect(quiet.existing?.path == paths[0])
        #expect(Self.times(paths[0]) == (now - 40 * Self.day, now - 50 * Self.day))

        let hit = CacheLookahead.lookup(cache.fileName(forKey: "https://example.com/good.png"), in: cache, renewingHits: true)
        #expect(hit.existing?.path == paths[0])
        let t = Self.times(paths[0])
        #expect(t.atime >= now && t.atime <= now + 5)
        #expect(t.mtime == now - 50 * Self.day)

        // A miss renews nothing (and creates nothing).
        let miss = CacheLookahead.lookup(cache.fileName(forKey: "https://example.com/absent.png"), in: cache, renewingHits: true)
        #expect(miss.existing == nil)
        #expect(Self.times(paths[1]) == (now - 40 * Self.day, now - 50 * Self.day))

        cache.renewAccessTime(path: paths[1])
        #expect(Self.times(paths[1]).atime >= now && Self.times(paths[1]).mtime == now - 50 * Self.day)
    }
}
