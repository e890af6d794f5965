import Foundation
import Testing
@testable import ImgWarmKit

@Suite struct ManifestTests {
    func read(_ text: [UInt8], options: ManifestOptions = ManifestOptions()) throws -> ([ManifestEntry], [ManifestProblem]) {
        let dir = makeTempDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/m.txt"
        FileManager.default.createFile(atPath: path, contents: Data(text))
        var entries: [ManifestEntry] = []
        var problems: [ManifestProblem] = []
        try ManifestReader(options: options).read(path: path, fileIndex: 0, entry: { entries.append($0) }, problem: { problems.append($0) })
        return (entries, problems)
    }

    func read(_ text: String, options: ManifestOptions = ManifestOptions()) throws -> ([ManifestEntry], [ManifestProblem]) {
        try read(Array(text.utf8), options: options)
    }

    @Test func textLinesWithFieldsCommentsBlankCRLFAndBOM() throws {
        let text = "\u{FEFF}# comment\r\nhttps://e.com/a.jpg\r\n\r\n   \nhttp://e.com/b.png priority=high\t key=custom-b\n  # indented comment\nhttps://e.com/c.gif priority=low"
        let (entries, problems) = try read(text)
        #expect(problems.isEmpty)
        #expect(entries.map(\.url) == ["https://e.com/a.jpg", "http://e.com/b.png", "https://e.com/c.gif"])
        #expect(entries.map(\.key) == ["https://e.com/a.jpg", "custom-b", "https://e.com/c.gif"])
        #expect(entries.map(\.priority) == [nil, .high, .low])
        #expect(entries.map(\.source.line) == [2, 5, 7])
    }

    @Test func jsonLines() throws {
        let text = """
        {"url": "https://e.com/a.jpg", "priority": "high", "key": "k1"}
        {"url": "https://e.com/b.jpg"}
        {"url": 5}
        {"url": "https://e.com/c.jpg", "priority": "urgent"}
        {"url": "https://e.com/d.jpg", "extra": 1}
        {not json
        """
        let (entries, problems) = try read(text)
        #expect(entries.map(\.key) == ["k1", "https://e.com/b.jpg"])
        #expect(entries[0].priority == .high)
        #expect(problems.map(\.source.line) == [3, 4, 5, 6])
        #expect(problems[0].reason.contains("url"))
        #expect(problems[1].reason.contains("priority"))
        #expect(problems[2].reason.contains("extra"))
        #expect(problems[3].reason == "invalid JSON object")
    }

    @Test func onlyHTTPAndHTTPSAreAccepted() throws {
        let text = "ftp://e.com/a.jpg\nfile:///etc/passwd\nnot a url\nhttps://\nHTTPS://E.COM/X.JPG\njavascript:alert(1)\n/relative/path.jpg"
        let (entries, problems) = try read(text)
        #expect(entries.map(\.url) == ["HTTPS://E.COM/X.JPG"])
        #expect(problems.count == 6)
        #expect(problems[0].reason.hasPrefix("unsupported scheme 'ftp'"))
        #expect(problems[1].reason.hasPrefix("unsupported scheme 'file'"))
        #expect(problems[3].reason.hasPrefix("URL has no host"))
    }

    @Test func unknownFieldsAndBadPrioritiesAreReported() throws {
        let (entries, problems) = try read("https://e.com/a.jpg priority=urgent\nhttps://e.com/b.jpg color=red\nhttps://e.com/c.jpg stray\n")
        #expect(entries.isEmpty)
        #expect(problems.map(\.source.line) == [1, 2, 3])
        #expect(problems[0].reason.contains("urgent"))
    }

    @Test func credentialsNeverAppearInProblems() throws {
        let (_, problems) = try read("ftp://alice:s3cret@e.com/a.jpg\n")
        #expect(problems.count == 1)
        #expect(!problems[0].reason.contains("s3cret"))
        #expect(Redaction.url("https://alice:s3cret@e.com/a.jpg?x=@y") == "https://***@e.com/a.jpg?x=@y")
        #expect(Redaction.url("https://e.com/a@b.jpg") == "https://e.com/a@b.jpg")
    }

    @Test func binaryGarbageInvalidUTF8NulAndHugeLines() throws {
        var bytes = Array("https://e.com/ok.jpg\n".utf8)
        bytes += [0xC3, 0x28, 0x0A]                              // invalid UTF-8
        bytes += Array("https://e.com/a\u{0}.jpg\n".utf8)        // NUL
        bytes += [UInt8](repeating: 0x41, count: 1 << 20) + [0x0A]  // 1 MiB line
        bytes += Array("https://e.com/after.jpg".utf8)           // no final newline
        let (entries, problems) = try read(bytes)
        #expect(entries.map(\.url) == ["https://e.com/ok.jpg", "https://e.com/after.jpg"])
        #expect(problems.map(\.source.line) == [2, 3, 4])
        #expect(problems[0].reason.contains("UTF-8"))
        #expect(problems[1].reason.contains("NUL"))
        #expect(problems[2].reason.contains("longer than"))
    }

    @Test func keyStripQuery() throws {
        var o = ManifestOptions()
        o.stripQueryFromKeys = true
        let (entries, _) = try read("https://e.com/a.jpg?sig=1#f\nhttps://e.com/b.jpg?sig=2 key=explicit\n", options: o)
        #expect(entries.map(\.key) == ["https://e.com/a.jpg", "explicit"])
        #expect(entries[0].url == "https://e.com/a.jpg?sig=1#f")
    }

    @Test func missingFileIsAnUnreadableManifest() {
        let error = #expect(throws: ImgWarmError.self) {
            try ManifestReader().read(path: "/nonexistent/m.txt", fileIndex: 0, entry: { _ in }, problem: { _ in })
        }
        #expect(error?.reason == .manifestUnreadable(path: "/nonexistent/m.txt", why: "cannot open manifest: No such file or directory"))
    }
}

@Suite struct WarmPlanTests {
    func entry(_ url: String, _ p: RequestPriority? = nil, key: String? = nil, line: Int) -> ManifestEntry {
        ManifestEntry(url: url, key: key ?? url, priority: p, source: ManifestSource(fileIndex: 0, line: line))
    }

    @Test func priorityOrderFIFOAndLIFO() {
        for order in ExecutionOrder.allCases {
            let plan = WarmPlan(order: order)
            _ = plan.addManifestPath("m")
            plan.add(entry("https://e/1", .low, line: 1))
            plan.add(entry("https://e/2", line: 2))
            plan.add(entry("https://e/3", .high, line: 3))
            plan.add(entry("https://e/4", .low, line: 4))
            plan.add(entry("https://e/5", .high, line: 5))
            plan.finalize()
            let urls = plan.order.map { plan.url(Int($0)) }
            if order == .fifo {
                #expect(urls == ["https://e/3", "https://e/5", "https://e/2", "https://e/1", "https://e/4"])
            } else {
                #expect(urls == ["https://e/5", "https://e/3", "https://e/2", "https://e/4", "https://e/1"])
            }
        }
    }

    @Test func duplicatesByKeyKeepTheHighestPriority() {
        let plan = WarmPlan()
        plan.add(entry("https://e/a", .low, line: 1))
        plan.add(entry("https://e/b", key: "shared", line: 2))
        plan.add(entry("https://e/a", .high, line: 3))
        plan.add(entry("https://e/c", .high, key: "shared", line: 4))
        plan.add(entry("https://e/a", line: 5))
        plan.finalize()
        #expect(plan.uniqueCount == 2)
        #expect(plan.order.map { Int($0) } == [2, 3])
        #expect(plan.duplicate(of: 0) == 2)
        #expect(plan.duplicate(of: 4) == 2)
        #expect(plan.duplicate(of: 1) == 3)
        #expect(plan.duplicate(of: 2) == nil)
    }

    @Test func shardsCoverEveryEntryExactlyOnceAndEvenly() {
        let urls = (0..<3000).map { "https://e.com/img/\($0).jpg" }
        var seen = [String: Int]()
        var sizes: [Int] = []
        for k in 1...3 {
            let plan = WarmPlan(shard: .init(index: k, count: 3))
            for (i, u) in urls.enumerated() { plan.add(entry(u, line: i + 1)) }
            plan.finalize()
            sizes.append(plan.uniqueCount)
            for i in plan.order { seen[plan.url(Int(i)), default: 0] += 1 }
        }
        #expect(seen.count == urls.count)
        #expect(seen.values.allSatisfy { $0 == 1 })
        #expect(sizes.allSatisfy { abs($0 - 1000) < 100 })
    }

    @Test func keysAndURLsRoundTrip() {
        let plan = WarmPlan()
        plan.add(entry("https://e/ü.jpg", key: "ключ", line: 7))
        plan.finalize()
        #expect(plan.url(0) == "https://e/ü.jpg")
        #expect(plan.key(0) == "ключ")
        #expect(plan.source(0).line == 7)
    }
}

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
