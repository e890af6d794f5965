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

/// The parts under `cache prune`: the last-moment re-check before unlink,
/// pins from manifests, the walker, the JSON report.
@Suite struct FileRemoverTests {
    @Test func removerReportsVanishedRenewedAndRemoved() throws {
        let f = try PruneFixture()
        try f.file("renewed", atime: PruneFixture.now)
        try f.file("due", atime: PruneFixture.now - PruneFixture.day)
        let remover = try FileRemover(directory: f.directory,
                                      policy: try PruneOptions(maxAge: 0).policy(now: PruneFixture.now), dryRun: false)
        // Removed by a concurrent prune since the walk.
        #expect(remover.remove(name: "gone", directoryIndex: 0, dueDate: PruneFixture.now) == .vanished)
        // Read (or rewritten by a warm) since the walk: its date is past the limit now.
        #expect(remover.remove(name: "renewed", directoryIndex: 0, dueDate: PruneFixture.now - 1) == .renewed)
        #expect(remover.remove(name: "due", directoryIndex: 0, dueDate: PruneFixture.now - PruneFixture.day) == .removed)
        #expect(f.remaining() == ["renewed"])
    }

    @Test func dryRunRemoverTouchesNothing() throws {
        let f = try PruneFixture()
        try f.file("x", atime: 0)
        let remover = try FileRemover(directory: f.directory,
                                      policy: try PruneOptions(maxAge: 0).policy(now: PruneFixture.now), dryRun: true)
        #expect(remover.remove(name: "x", directoryIndex: 0, dueDate: PruneFixture.now) == .removed)
        #expect(f.remaining() == ["x"])
    }

    @Test func pinsFromManifestsUseKeysAndLookupNames() throws {
        let f = try PruneFixture()
        let manifest = f.path("keep.txt")
        try """
        # pinned set
        https://cdn.example.com/a.jpg
        https://cdn.example.com/b.png?sig=1 key=custom-key
        ftp://not-accepted.example.com/c.jpg
        {"url": "https://cdn.example.com/d.gif"}
        """.write(toFile: manifest, atomically: true, encoding: .utf8)
        var problems: [PinnedNames.Problem] = []
        let pins = try PinnedNames.load(manifests: [manifest]) { problems.append($0) }
        let a = CacheFileName(key: "https://cdn.example.com/a.jpg")
        #expect(pins.contains(a.sdName) && pins.contains(a.md5))
        #expect(pins.contains(CacheFileName(key: "custom-key").md5))
        #expect(!pins.contains(CacheFileName(key: "https://cdn.example.com/b.png?sig=1").sdName))
        #expect(pins.contains(CacheFileName(key: "https://cdn.example.com/d.gif").sdName))
        #expect(!pins.contains(CacheFileName(key: "ftp://not-accepted.example.com/c.jpg").sdName))
        #expect(problems.count == 1 && problems.first?.line == 4)
        #expect(throws: ImgWarmError.self) { try PinnedNames.load(manifests: [f.path("none")]) { _ in } }
    }

    @Test func walkerSeesEntriesAsSDWebImageDoes() throws {
        let f = try PruneFixture()
        try f.file("a.jpg", size: 10)
        try f.file("d/e/b", size: 20)
        try f.file(".h", size: 30)
        try f.file(".s/x", size: 40)
        #expect(mkfifo(f.path("fifo"), 0o600) == 0)
        #expect(symlink("a.jpg", f.path("l")) == 0)
        var seen: [String: Int64] = [:]
        CacheScanner.scan(f.directory) { seen[$0.relativePath] = $0.size }
        #expect(seen == ["a.jpg": 10, "d/e/b": 20])
    }

    @Test func walkerHandlesBigFoldersAcrossManyReads() throws {
        // More entries than one 256 KiB getdents buffer holds.
        let f = try PruneFixture()
        let names = (0..<6000).map { String(format: "%032x.jpg", $0 &* 2_654_435_761) }
        for name in names {
            let fd = open(f.path(name), O_WRONLY | O_CREAT | O_EXCL, 0o644)
            #expect(fd >= 0)
            close(fd)
        }
        var seen = Set<String>()
        CacheScanner.scan(f.directory) { seen.insert($0.relativePath) }
        #expect(seen == Set(names))
    }

    @Test func jsonReportParsesAndEscapesNames() throws {
        let f = try PruneFixture()
        try f.file("we\"ird\\name\n.jpg", atime: PruneFixture.now - 2 * PruneFixture.day)
        try f.file("old.jpg", atime: PruneFixture.now - 3 * PruneFixture.day)
        try f.file("new.jpg", atime: PruneFixture.now)
        let a = f.allocated("new.jpg")
        let r = try f.prune(PruneOptions(maxSize: UInt64(2 * a), trimRatio: 1, dryRun: true))
        var text = ""
        PruneReport.json(r, includeFiles: true) { text += $0 + "\n" }
        let object = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        #expect(object["dry_run"] as? Bool == true)
        #expect(object["removed_files"] as? Int == 2 && object["kept_files"] as? Int == 1)
        #expect(object["removed_bytes"] as? Int == Int(2 * a) && object["kept_bytes"] as? Int == Int(a))
        #expect(object["trimmed"] as? Int == 2 && object["expired"] as? Int == 0)
        let files = try #require(object["files"] as? [[String: Any]])
        #expect(files.map { $0["path"] as? String } == ["old.jpg", "we\"ird\\name\n.jpg"])
        #expect(files.map { $0["rank"] as? Int } == [1, 2])
        #expect(files.first?["date"] as? String == "2027-01-12T08:00:00Z")
        var summaryOnly = ""
        PruneReport.json(r, includeFiles: false) { summaryOnly += $0 }
        let summary = try #require(try JSONSerialization.jsonObject(with: Data(summaryOnly.utf8)) as? [String: Any])
        #expect(summary["files"] == nil && summary["removed_files"] as? Int == 2)
    }

    @Test func iso8601Dates() {
        #expect(PruneReport.iso8601(0) == "1970-01-01T00:00:00Z")
        #expect(PruneReport.iso8601(1_500_000_000_123_000_000) == "2017-07-14T02:40:00.123000000Z")
        #expect(PruneReport.iso8601(-1) == "1969-12-31T23:59:59.999999999Z")
    }
}

@Suite struct PruneNameArenaTests {
    @Test func namesComeBackExactlyPackedOrNot() throws {
        let arena = NameArena()
        let long = String(repeating: "x", count: 255)
        let samples = ["b46ca04023feeac3addabe8e574e2211.jpg", "aef7184dae84372263ed9aa2e8a91439",
                       "9D8E97DA97CD4D36364AAD594E287706.JPG", "aef7184dae84372263ed9aa2e8a9143", "aef7184dae84372263ed9aa2e8a91439x",
                       "aef7184dae84372263ed9aa2e8a91439.", "x", "é ünïcode.webp", long,
                       // Extensions the tag byte stands for, and near misses stored as bytes.
                       "0123456789abcdef0123456789abcdef.png", "0123456789abcdef0123456789abcdef.jpeg",
                       "0123456789abcdef0123456789abcdef.gif", "0123456789abcdef0123456789abcdef.webp",
                       "0123456789abcdef0123456789abcdef.avif", "0123456789abcdef0123456789abcdef.heic",
                       "0123456789abcdef0123456789abcdef.jp", "0123456789abcdef0123456789abcdef.jpgx",
                       "0123456789abcdef0123456789abcdef.JPG"]
        var offsets: [(UInt32, String)] = []
        // Enough names to fill several 1 MiB chunks.
        for round in 0..<12_000 {
            for sample in samples where round == 0 || sample.count < 100 {
                var copy = sample
                let offset = try copy.withUTF8 { try $0.withMemoryRebound(to: CChar.self) { try arena.append($0.baseAddress!, length: $0.count) } }
                offsets.append((offset, sample))
            }
        }
        #expect(arena.allocatedBytes > 2 * NameArena.chunkSize)
        for (offset, name) in offsets { #expect(arena.string(offset) == name) }
    }
}

@Suite struct PruneMoveToFrontTests {
    /// (values, which match) -> the matching values first in their order,
    /// then the others in any order.
    @Test(arguments: [
        ([Int](), [Int]()),
        ([1, 2, 3], [Int]()),
        ([1, 2, 3], [1, 2, 3]),
        ([5, 1, 4, 2, 3], [1, 2, 3]),
        ([9, 8, 1, 7, 2, 6, 3], [1, 2, 3]),
        ([1, 9, 2, 8], [1, 2]),
    ])
    func matchesComeFirstInOrder(values: [Int], matching: [Int]) {
        var buffer = values
        let count = CachePruner.moveToFront(&buffer) { matching.contains($0) }
        #expect(count == matching.count)
        #expect(Array(buffer[..<count]) == values.filter { matching.contains($0) })
        #expect(buffer.sorted() == values.sorted())
    }

    @Test func recordsGrowInPlaceAcrossMappings() throws {
        let store = MappedRecords<UInt64>()
        for value in 0..<300_000 { try store.append(UInt64(value) * 3) }
        #expect(store.buffer.count == 300_000)
        #expect(store.buffer.enumerated().allSatisfy { $0.element == UInt64($0.offset) * 3 })
    }
}
