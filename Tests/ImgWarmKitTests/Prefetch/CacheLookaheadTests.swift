import Foundation
import Testing
@testable import ImgWarmSupport
@testable import ImgWarmDecode
@testable import ImgWarmDownload
@testable import ImgWarmCache
@testable import ImgWarmInspect
@testable import ImgWarmReport
@testable import ImgWarmWarm

@Suite struct CacheLookaheadTests {
    /// A plan of `count` URLs, every third one stored in `cache` (half of
    /// those under the bare MD5 name SDWebImage falls back to).
    func planAndCache(count: Int) throws -> (WarmPlan, DiskCache, String) {
        let dir = makeTempDirectory("imgwarm-lookahead")
        let cache = DiskCache(directory: dir)
        try cache.prepare()
        let plan = WarmPlan()
        _ = plan.addManifestPath("m")
        for i in 0..<count {
            let url = "https://img.example/\(i).jpg"
            plan.add(ManifestEntry(url: url, key: url, priority: nil, source: ManifestSource(fileIndex: 0, line: i + 1)))
            if i % 3 == 0 {
                let name = CacheFileName(key: url)
                if i % 2 == 0 {
                    try cache.store(Array(repeating: UInt8(i % 251), count: i % 100 + 1), for: cache.fileName(forKey: url))
                } else {
                    FileManager.default.createFile(atPath: dir + "/" + name.md5, contents: Data([1, 2]))
                }
            }
        }
        plan.finalize()
        return (plan, cache, dir)
    }

    @Test func chunksMatchTheLookupsTheFeederWouldDo() throws {
        let (plan, cache, dir) = try planAndCache(count: 3 * CacheLookahead.chunkSize + 17)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        #expect(cache.holdsEntries())
        let lookahead = CacheLookahead(plan: plan, cache: cache, renewingHits: false, chunksAhead: 2)
        lookahead.start(threads: 3)
        // Time for the workers to fill the window (chunks 0...2): they may
        // not run further ahead than that, so this waits for nothing else.
        Thread.sleep(forTimeInterval: 0.3)
        var fromChunks = 0, found = 0
        var chunk: [CacheLookahead.Lookup]?
        for position in 0..<plan.order.count {
            let within = position % CacheLookahead.chunkSize
            if within == 0 { chunk = lookahead.take(chunk: position / CacheLookahead.chunkSize) }
            let key = plan.key(Int(plan.order[position]))
            let direct = CacheLookahead.lookup(cache.fileName(forKey: key), in: cache, renewingHits: false)
            if let lookup = chunk?[within] {
                fromChunks += 1
                #expect(lookup.name.storedName == direct.name.storedName)
                #expect(lookup.existing?.path == direct.existing?.path)
                #expect(lookup.existing?.size == direct.existing?.size)
            }
            if direct.existing != nil { found += 1 }
        }
        lookahead.stop()
        #expect(found == (plan.order.count + 2) / 3)
        // The window was full when the feeder started: at least those
        // three chunks came from the workers.
        #expect(fromChunks >= 3 * CacheLookahead.chunkSize)
    }

    @Test func aFeederThatStopsEarlyOrSkipsChunksNeverHangs() throws {
        let (plan, cache, dir) = try planAndCache(count: 10 * CacheLookahead.chunkSize)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        for threads in [1, 2, 4] {
            let lookahead = CacheLookahead(plan: plan, cache: cache, renewingHits: false, chunksAhead: 3)
            lookahead.start(threads: threads)
            _ = lookahead.take(chunk: 0)
            _ = lookahead.take(chunk: 5)   // jumps past chunks a worker may hold
            let later = lookahead.take(chunk: 6)
            if let later { #expect(later.count == CacheLookahead.chunkSize) }
            lookahead.stop()               // with chunks ready and unused
        }
    }

    @Test func aNewCacheHoldsNoEntriesAndHiddenNamesDoNotCount() throws {
        let dir = makeTempDirectory("imgwarm-lookahead-empty")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let cache = DiskCache(directory: dir)
        try cache.prepare()
        FileManager.default.createFile(atPath: dir + "/.DS_Store", contents: Data())
        #expect(!cache.holdsEntries())
        FileManager.default.createFile(atPath: dir + "/0123.png", contents: Data([1]))
        #expect(cache.holdsEntries())
        #expect(!DiskCache(directory: dir + "/missing").holdsEntries())
    }

    /// A cache empty at the start is not looked into per file: a file that
    /// appears later (another run's, or a neighbour's) is not seen by the
    /// lookup, and the store then replaces it: what the report calls
    /// downloaded is what this run wrote.
    @Test func aCacheEmptyAtTheStartIsNotStatPerFileAndAFileAppearingMeanwhileIsReplaced() throws {
        let dir = makeTempDirectory("imgwarm-lookups-empty")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let cache = DiskCache(directory: dir)
        try cache.prepare()
        let plan = WarmPlan()
        _ = plan.addManifestPath("m")
        let urls = (0..<3).map { "https://img.example/\($0).png" }
        for (i, url) in urls.enumerated() {
            plan.add(ManifestEntry(url: url, key: url, priority: nil, source: ManifestSource(fileIndex: 0, line: i + 1)))
        }
        plan.finalize()
        let lookups = CacheLookups(plan: plan, cache: cache, renewingHits: true)
        defer { lookups.stop() }
        // "Another run" stores entry 0 after the listing.
        let theirs = cache.directory + "/" + cache.fileName(forKey: plan.key(Int(plan.order[0]))).storedName
        FileManager.default.createFile(atPath: theirs, contents: Data("theirs".utf8))
        let first = lookups.lookup(at: 0)
        #expect(first.existing == nil && first.unchecked)
        #expect(first.name == cache.fileName(forKey: plan.key(Int(plan.order[0]))))
        // Our copy replaces theirs: the name holds the bytes this run wrote
        // and reports as downloaded; no temp file is left.
        try Data("ours".utf8).withUnsafeBytes {
            try cache.store($0, as: first.name, replacing: nil, likelyNew: first.unchecked)
        }
        #expect(FileManager.default.contents(atPath: theirs) == Data("ours".utf8))
        #expect(try FileManager.default.contentsOfDirectory(atPath: cache.tempDirectory).isEmpty)
        // A name nobody wrote is stored as usual.
        let second = lookups.lookup(at: 1)
        try Data("ours".utf8).withUnsafeBytes {
            try cache.store($0, as: second.name, replacing: nil, likelyNew: second.unchecked)
        }
        #expect(FileManager.default.contents(atPath: cache.directory + "/" + second.name.storedName) == Data("ours".utf8))
        // A checked store (a cache that held files) replaces, as a refresh
        // or an expired entry needs.
        try Data("new".utf8).withUnsafeBytes { try cache.store($0, as: first.name, replacing: nil, likelyNew: false) }
        #expect(FileManager.default.contents(atPath: theirs) == Data("new".utf8))
    }

    /// The names the plan gives (from its own MD5 of each key) are the
    /// layout's names for every layout.
    @Test func planNamesFromItsMD5MatchEveryLayout() throws {
        let plan = WarmPlan()
        _ = plan.addManifestPath("m")
        let keys = ["https://img.example/a.png", "https://img.example/b%20c.JPG?x=1", "https://img.example/d", "k\u{0}tail.gif"]
        for (i, key) in keys.enumerated() {
            plan.add(ManifestEntry(url: "https://img.example/\(i)", key: key, priority: nil, source: ManifestSource(fileIndex: 0, line: i + 1)))
        }
        plan.finalize()
        for kind in CacheLayoutKind.allCases {
            let cache = DiskCache(directory: "/nonexistent", layout: kind.layout())
            for index in 0..<plan.count {
                #expect(plan.entryName(index, in: cache) == cache.fileName(forKey: plan.key(index)), "\(kind) \(plan.key(index))")
            }
        }
    }
}
