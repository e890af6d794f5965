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

@Suite struct StateBatchTests {
    static func failed(_ url: String) -> StateStore.Change {
        .failed(.init(url: url, key: url, errorClass: "http-status", status: 404, reason: "404", failedAt: 1))
    }

    @Test func drainTakesEverythingOnceFromManyThreads() {
        let batch = StateBatch()
        DispatchQueue.concurrentPerform(iterations: 8) { t in
            for i in 0..<250 { batch.add([Self.failed("https://x/\(t)/\(i)")]) }
        }
        #expect(batch.drain().count == 2000)
        #expect(batch.drain().isEmpty)
    }

    /// The recorder commits what the stages add, in one transaction at
    /// stop at the latest, to a real state store.
    @Test func recorderCommitsChangesToTheStateStore() throws {
        let cache = PrefetcherTests.emptyCache()
        defer { try? FileManager.default.removeItem(atPath: cache.directory) }
        try cache.prepare()
        let state = try StateStore(cache: cache)
        var errors: [String] = []
        let recorder = StateRecorder(state: state) { errors.append($0) }
        recorder.start(every: 3600)
        recorder.batch.add([Self.failed("https://x/1"), Self.failed("https://x/2")])
        recorder.batch.add([.succeeded(url: "https://x/1", validators: .init(key: "https://x/1", etag: "\"e\"", lastModified: nil))])
        #expect(try state.failedURLSet().isEmpty)  // not yet committed
        recorder.stop()
        #expect(try state.failedURLSet() == ["https://x/2"])
        #expect(try state.validators(forKey: "https://x/1")?.etag == "\"e\"")
        #expect(errors.isEmpty)
    }
}
