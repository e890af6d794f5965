import Foundation
import Testing
@testable import ImgWarmSupport
@testable import ImgWarmDecode
@testable import ImgWarmDownload
@testable import ImgWarmCache
@testable import ImgWarmInspect
@testable import ImgWarmReport
@testable import ImgWarmWarm

/// A throwaway cache folder with one of each kind of entry `verify` meets.
private struct TempCache {
    let cache: DiskCache
    let good: String, truncated: String, html: String, empty: String, hidden: String, stale: String

    init() throws {
        let dir = NSTemporaryDirectory() + "imgwarm-verify-\(UUID().uuidString)"
        cache = DiskCache(directory: dir)
        try cache.prepare()
        let jpeg = Fixture.jpeg(40, 30)
        good = try cache.store(Fixture.png(16, 16), for: cache.fileName(forKey: "https://example.com/good.png"))
        truncated = try cache.store(Array(jpeg.prefix(jpeg.count / 2)), for: cache.fileName(forKey: "https://example.com/cut.jpg"))
        html = try cache.store(Array("<!doctype html><html>login</html>".utf8), for: cache.fileName(forKey: "https://example.com/page"))
        empty = try cache.store([UInt8](), for: cache.fileName(forKey: "https://example.com/empty.gif"))
        // Hidden files are not entries for SDWebImage: never judged.
        hidden = dir + "/.DS_Store"
        _ = FileManager.default.createFile(atPath: hidden, contents: Data("junk".utf8))
        // pid 2^22 + 1 is above Linux's pid_max limit: never alive.
        stale = cache.tempDirectory + "/4194305-1.tmp"
        _ = FileManager.default.createFile(atPath: stale, contents: Data([0xFF, 0xD8]))
    }

    func exists(_ path: String) -> Bool { FileManager.default.fileExists(atPath: path) }
    func remove() { try? FileManager.default.removeItem(atPath: cache.directory) }
}

@Suite struct DecodeCacheVerifier {
    /// A batch's files are open descriptors until it is judged: at most a
    /// quarter of those the process may still open, at least one, never
    /// more than asked for.
    @Test func aBatchHoldsAQuarterOfTheDescriptorsLeft() {
        let table: [(requested: Int, limit: Int, open: Int, files: Int)] = [
            (256, 1024, 10, 253),
            (256, 1_048_576, 10, 256),
            (256, Int.max / 2, 10, 256),
            (256, 256, 8, 62),
            (256, 64, 5, 14),
            (256, 16, 5, 2),
            (256, 8, 5, 1),
            (256, 4, 10, 1),
            (10, 1024, 10, 10),
        ]
        for row in table {
            #expect(CacheVerifier.filesAtOnce(requested: row.requested, descriptorLimit: row.limit, open: row.open) == row.files, "\(row)")
        }
        #expect(Descriptors.limit() > 0 && Descriptors.openCount() > 0)
    }

    @Test func listsBrokenEntriesAndStrayTempFiles() throws {
        let t = try TempCache()
        defer { t.remove() }
        let report = try CacheVerifier().verify(t.cache, delete: false)
        #expect(report.checked == 4)
        #expect(report.broken == [
            BrokenCacheEntry(path: t.truncated, reason: "truncated JPEG: premature end of data"),
            BrokenCacheEntry(path: t.html, reason: "not an image (looks like HTML)"),
            BrokenCacheEntry(path: t.empty, reason: "empty file"),
        ].sorted { $0.path < $1.path })
        #expect(report.strayTempFiles == [t.stale])
        #expect(!report.isClean && !report.deleted)
        // Nothing removed without --delete.
        #expect([t.good, t.truncated, t.html, t.empty, t.hidden, t.stale].allSatisfy(t.exists))
    }

    @Test func deleteRemovesExactlyTheBrokenAndStray() throws {
        let t = try TempCache()
        defer { t.remove() }
        let report = try CacheVerifier().verify(t.cache, delete: true)
        #expect(report.deleted && report.broken.count == 3 && report.strayTempFiles.count == 1 && report.deleteErrors.isEmpty)
        #expect(!t.exists(t.truncated) && !t.exists(t.html) && !t.exists(t.empty) && !t.exists(t.stale))
        #expect(t.exists(t.good) && t.exists(t.hidden))
        // A second pass finds a clean cache.
        let again = try CacheVerifier().verify(t.cache, delete: false)
        #expect(again.isClean && again.checked == 1)
    }

    @Test func liveRunsKeepTheirTempFiles() throws {
        let t = try TempCache()
        defer { t.remove() }
        let mine = t.cache.tempDirectory + "/\(getpid())-7.tmp"
        _ = FileManager.default.createFile(atPath: mine, contents: Data())
        let report = try CacheVerifier().verify(t.cache, delete: true)
        #expect(report.strayTempFiles == [t.stale])
        #expect(t.exists(mine))
    }

    @Test func manyEntriesAcrossBatches() throws {
        let dir = NSTemporaryDirectory() + "imgwarm-verify-\(UUID().uuidString)"
        let cache = DiskCache(directory: dir)
        try cache.prepare()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let gif = Fixture.gif(8, 8)
        for i in 0..<50 {
            try cache.store(i % 10 == 0 ? Array(gif.dropLast(1)) : gif, for: cache.fileName(forKey: "https://example.com/\(i).gif"))
        }
        var verifier = CacheVerifier()
        verifier.batchSize = 7  // several partial batches
        let report = try verifier.verify(cache, delete: false)
        #expect(report.checked == 50 && report.broken.count == 5)
        #expect(report.broken.allSatisfy { $0.reason == "truncated GIF: premature end of data after frame 1" })
    }

    @Test func missingCacheIsCleanAndJSONHasTheContractKeys() throws {
        let report = try CacheVerifier().verify(DiskCache(directory: "/nonexistent/imgwarm-\(UUID().uuidString)"), delete: false)
        #expect(report.checked == 0 && report.isClean)
        let json = try JSONSerialization.jsonObject(with: JSONEncoder().encode(report)) as! [String: Any]
        #expect(Set(json.keys).isSuperset(of: ["checked", "broken", "stray_temp_files", "deleted"]))
    }
}
