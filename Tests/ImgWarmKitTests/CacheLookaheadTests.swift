import Foundation
import Testing
@testable import ImgWarmKit

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
            let direct = CacheLookahead.lookup(key, in: cache, renewingHits: false)
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
}
