import Foundation
import Testing
@testable import ImgWarmSupport
@testable import ImgWarmDecode
@testable import ImgWarmDownload
@testable import ImgWarmCache
@testable import ImgWarmInspect
@testable import ImgWarmReport
@testable import ImgWarmWarm

@Suite struct StateStoreTests {
    /// Runs `body` with a prepared cache in a new folder, removed after.
    func withPreparedCache(_ body: (DiskCache) throws -> Void) throws {
        let dir = makeTempDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let cache = DiskCache(directory: dir)
        try cache.prepare()
        try body(cache)
    }

    @Test func failedListAndValidatorsPersist() throws {
        try withPreparedCache { cache in
            do {
                let s = try StateStore(cache: cache)
                try s.apply([
                    .failed(.init(url: "https://e/a", key: "https://e/a", errorClass: "bad-image", status: 200, reason: "truncated", failedAt: 1)),
                    .failed(.init(url: "https://e/b", key: "https://e/b", errorClass: "http-status", status: 404, reason: "404", failedAt: 2)),
                    .succeeded(url: "https://e/c", validators: .init(key: "https://e/c", etag: "\"v1\"", lastModified: nil)),
                ])
            }
            let s = try StateStore(cache: cache)
            #expect(try s.failedURLSet() == ["https://e/a", "https://e/b"])
            #expect(try s.validators(forKey: "https://e/c") == .init(key: "https://e/c", etag: "\"v1\"", lastModified: nil))
            // A later success removes the URL from the list.
            try s.apply([.succeeded(url: "https://e/a", validators: .init(key: "https://e/a", etag: nil, lastModified: nil))])
            #expect(try s.failedURLs().map(\.url) == ["https://e/b"])
            #expect(StateStore.failedCountIfPresent(cache: cache) == 1)
            #expect(try s.clearFailed() == 1)
        }
    }

    /// Every field of a failed entry round-trips through the C bindings
    /// (`StateStore.run`): text, an absent and a present status, a double.
    @Test func failedEntriesKeepEveryField() throws {
        try withPreparedCache { cache in
            let s = try StateStore(cache: cache)
            let a = StateStore.FailedURL(url: "https://e/ä?q=1", key: "k-ä", errorClass: "network", status: nil,
                                         reason: "connection refused", failedAt: 1.5)
            let b = StateStore.FailedURL(url: "https://e/b", key: "https://e/b", errorClass: "http-status", status: 404,
                                         reason: "404 Not Found", failedAt: 2.25)
            try s.apply([.failed(a), .failed(b)])
            let rows = try s.failedURLs()
            // A URL with a query is kept as a digest, shown redacted.
            #expect(rows.map(\.displayURL) == [a.url, b.url])
            #expect(rows.map(\.isDigest) == [true, false])
            #expect(rows.map(\.key) == [a.key, b.key])
            #expect(rows.map(\.errorClass) == [a.errorClass, b.errorClass])
            #expect(rows.map(\.status) == [nil, 404])
            #expect(rows.map(\.reason) == [a.reason, b.reason])
            #expect(rows.map(\.failedAt) == [1.5, 2.25])
            // An upsert replaces the row; validators with only one of the two.
            try s.apply([.failed(.init(url: b.url, key: b.key, errorClass: "timeout", status: nil, reason: "slow", failedAt: 3)),
                         .succeeded(url: "https://e/c", validators: .init(key: "kc", etag: nil, lastModified: "Sun, 22 Nov 2026 22:29:08 GMT"))])
            #expect(try s.failedURLs().last?.errorClass == "timeout")
            #expect(try s.failedURLs().last?.status == nil)
            #expect(try s.validators(forKey: "kc") == .init(key: "kc", etag: nil, lastModified: "Sun, 22 Nov 2026 22:29:08 GMT"))
            // A success without validators removes the stored ones.
            try s.apply([.succeeded(url: "https://e/c", validators: .init(key: "kc", etag: nil, lastModified: nil))])
            #expect(try s.validators(forKey: "kc") == nil)
        }
    }

    /// A success clears its URL from the failed list however the list got
    /// it: earlier in the same batch (the list was empty when the batch
    /// began), or from another run after this one opened the state.
    @Test func successClearsFailuresAddedInTheBatchOrByAnotherRun() throws {
        try withPreparedCache { cache in
            let run = try StateStore(cache: cache)
            let other = try StateStore(cache: cache)
            let fail = { (url: String) in StateStore.Change.failed(.init(url: url, key: url, errorClass: "network", status: nil, reason: "r", failedAt: 0)) }
            let ok = { (url: String) in StateStore.Change.succeeded(url: url, validators: .init(key: url, etag: "\"e\"", lastModified: nil)) }
            try run.apply([ok("https://e/0"), fail("https://e/1"), ok("https://e/1")])
            #expect(try run.failedCount() == 0)
            try other.apply([fail("https://e/2")])
            try run.apply([ok("https://e/2")])
            #expect(try run.failedCount() == 0)
            #expect(try other.validators(forKey: "https://e/2")?.etag == "\"e\"")
        }
    }

    @Test func twoStoresOnOneDatabaseWriteConcurrently() throws {
        try withPreparedCache { cache in
            let a = try StateStore(cache: cache)
            let b = try StateStore(cache: cache)
            DispatchQueue.concurrentPerform(iterations: 2) { i in
                let s = i == 0 ? a : b
                for n in 0..<50 {
                    try! s.apply([.failed(.init(url: "https://e/\(i)/\(n)", key: "k", errorClass: "bad-image", status: nil, reason: "r", failedAt: 0))])
                }
            }
            #expect(try a.failedCount() == 100)
        }
    }
}
