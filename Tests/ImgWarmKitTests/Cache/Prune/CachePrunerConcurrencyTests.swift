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

/// A warm (DiskCache.store: temp file under .imgwarm/tmp, then rename) and
/// two prunes on one cache at once: no error, no partial file, and prune
/// never touches the temp files.
@Suite struct CachePrunerConcurrencyTests {
    @Test func warmAndTwoPrunesAtOnce() async throws {
        let f = try PruneFixture()
        let cache = DiskCache(directory: f.directory)
        try cache.prepare()
        let payload = [UInt8](repeating: 0xA5, count: 64 * 1024)
        let writer = Task.detached {
            for i in 0..<400 {
                try cache.store(payload, for: cache.fileName(forKey: "https://cdn.example.com/\(i % 50).jpg"))
            }
        }
        // max-age 0: everything dated at or before now goes, so the prunes
        // race the writer on the very files it renames into place.
        let directory = f.directory
        let pruners = (0..<2).map { _ in
            Task.detached { () throws -> (failed: Int, removed: Int) in
                var failed = 0, removed = 0
                for _ in 0..<40 {
                    let r = try CachePruner(directory: directory, options: PruneOptions(maxAge: 0)).run()
                    failed += r.failed
                    removed += r.removedFiles
                }
                return (failed, removed)
            }
        }
        try await writer.value
        var removed = 0
        for pruner in pruners {
            let outcome = try await pruner.value
            #expect(outcome.failed == 0)
            removed += outcome.removed
        }
        #expect(removed > 0, "the prunes must have raced the writer")
        var st = stat()
        for name in f.remaining() where !name.hasPrefix(".") {
            #expect(stat(f.path(name), &st) == 0 && st.st_size == off_t(payload.count), "partial file \(name)")
        }
        #expect(stat(cache.tempDirectory, &st) == 0)
    }
}
