#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
@testable import ImgWarmSupport
@testable import ImgWarmDecode
@testable import ImgWarmDownload
@testable import ImgWarmCache
@testable import ImgWarmInspect
@testable import ImgWarmReport
@testable import ImgWarmWarm

/// A cache format that exists only in this file: its entries are
/// `toy-<FNV-1a of the key>.bin` files in the cache folder itself, and its
/// prune keeps the most recently modified files under a size limit, down
/// to half of it. Everything a format must say is here; warm, listing and
/// prune go through the engine's one path for every format.
struct ToyLayout: FolderLayout {
    var name: String { "toy" }
    var walksSubfolders: Bool { false }

    func entryName(forKey key: String) -> CacheEntryName {
        let hash = key.utf8.reduce(UInt64(14_695_981_039_346_656_037)) { ($0 ^ UInt64($1)) &* 1_099_511_628_211 }
        return CacheEntryName(storedName: "toy-" + String(hash, radix: 16) + ".bin")
    }

    /// What detection and recognition see of the format: its file names.
    func fitsEntryName(_ name: [UInt8], inFolder folder: String) -> Bool {
        folder.isEmpty && name.starts(with: Array("toy-".utf8))
    }

    func prunePolicy(_ options: PruneOptions, now: Int64) throws -> PrunePolicy {
        if options.maxAge != nil { throw ImgWarmError.usage("--max-age has no meaning under --layout toy") }
        let limit = options.maxSize ?? 100
        return PrunePolicy(expiry: .none, trimDate: .modification, undatedTrimmedFirst: true, size: .logical, limit: limit,
                           trimsAtLimit: false, target: limit / 2, stopsAtTarget: true, walksSubfolders: false)
    }
}

@Suite struct CacheBackendTests {
    /// The toy format, handed to the engine as a layout and nothing else:
    /// warmed (through the prefetcher and the cache's store), listed (the
    /// scanner and `cache stats`), pruned (`CachePrune`, the one path of
    /// `cache prune`) with the one result and JSON of every layout.
    @Test func aFormatDefinedInATestIsWarmedListedAndPruned() throws {
        let dir = makeTempDirectory("imgwarm-toy")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let layout = ToyLayout()
        let cache = DiskCache(directory: dir, layout: layout)

        // Warm six 30-byte bodies.
        let urls = (0..<6).map { "https://toy.example/\($0).png" }
        let plan = WarmPlan(defaultPriority: .normal, order: .fifo)
        _ = plan.addManifestPath("toy.txt")
        for (i, url) in urls.enumerated() {
            plan.add(ManifestEntry(url: url, key: url, priority: nil, source: ManifestSource(fileIndex: 0, line: i + 1)))
        }
        plan.finalize()
        let session = try CacheSession(cache, for: .warm)
        let engine = FakeEngine(concurrency: 2, seed: 7) { _ in 30 }
        let prefetcher = Prefetcher(plan: plan, cache: cache, state: session.state, engine: engine, options: WarmOptions(),
                                    validate: { _, _ in .success(ImageInfo(format: .png, width: 1, height: 1)) })
        prefetcher.run()
        try cache.closeBackend()
        withExtendedLifetime(session) {}
        #expect(prefetcher.ledger.snapshot()[.downloaded] == 6)
        let names = urls.map { layout.entryName(forKey: $0).storedName }
        for (url, name) in zip(urls, names) {
            #expect(cache.existingPath(forKey: url) == dir + "/" + name)
        }

        // Listed: the scanner and stats see the six entries, not `.imgwarm`.
        var listed: [String] = []
        CacheScanner.scan(cache) { listed.append($0.relativePath) }
        #expect(listed.sorted() == names.sorted())
        #expect(try CacheStatistics.collect(cache).files == 6)

        // Oldest first by modification date: entry i is i minutes old... reversed.
        let now = Date()
        for (i, name) in names.enumerated() {
            try FileManager.default.setAttributes([.modificationDate: now.addingTimeInterval(Double(i - 10) * 60)],
                                                  ofItemAtPath: dir + "/" + name)
        }

        // Pruned: 180 bytes over the 100-byte limit, down to 50: the five
        // oldest go, the newest stays.
        let dry = try CachePrune.run(cache, options: PruneOptions(layout: layout, maxSize: 100, dryRun: true))
        #expect(dry.removedFiles == 5 && FileManager.default.fileExists(atPath: dir + "/" + names[0]))
        let result = try CachePrune.run(cache, options: PruneOptions(layout: layout, maxSize: 100))
        #expect(result.removals.map { result.path(of: $0) } == Array(names.prefix(5)))
        #expect(result.trimmed == 5 && result.keptFiles == 1 && result.keptBytes == 30)
        #expect(cache.existingPath(forKey: urls[5]) == dir + "/" + names[5])
        #expect(cache.existingPath(forKey: urls[0]) == nil)
        var json = ""
        PruneReport.json(result, includeFiles: false) { json += $0 }
        #expect(json.contains("\"layout\": \"toy\"") && json.contains("\"removed_files\": 5"), "\(json)")

        // Its own usage errors, through the same path.
        #expect(throws: ImgWarmError.self) {
            try CachePrune.run(cache, options: PruneOptions(layout: layout, maxAge: 60))
        }
    }

    /// Every built-in layout's backend, asked the same questions: a plain
    /// folder's files are all entries; an index's journal, metadata and
    /// database are not.
    @Test(arguments: CacheLayoutKind.allCases)
    func everyLayoutMakesABackend(kind: CacheLayoutKind) throws {
        let backend = kind.layout().makeBackend(directory: "/nonexistent-imgwarm-backend")
        // SDWebImage and Kingfisher list with a recursive enumerator, Nuke
        // only the folder itself; flutter's files are in
        // `libCachedImageData/`, Fresco's in shards; DiskLruCache is flat.
        let walks: Set<CacheLayoutKind> = [.sdwebimage, .kingfisher, .flutter, .fresco]
        #expect(backend.walksSubfolders == walks.contains(kind))
        #expect(backend.isEntryFile(folder: "", name: "journal") == (kind.layout() is any FolderLayout))
        #expect(backend.keepsResponses == !(kind.layout() is any FolderLayout))
    }
}
