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

/// The queue as the server sees it: how many requests are open at once, in
/// which order they arrive, how many reach it at all.
@Suite("Download scheduling", .serialized)
struct DownloaderSchedulingTests {
    @Test func concurrencyLimitHoldsForFiveHundredRequests() throws {
        // 8 connections allowed: -j is the limit under test, not the HTTP/1.1 cap.
        try withServer(testConfiguration { $0.concurrency = 8; $0.hostConnections = 8 }) { server, downloader in
            let collector = ResultCollector()
            for i in 0..<500 { collector.enqueue(downloader, server.url("/slow/10/?i=\(i)")) }
            try collector.wait(timeout: 40)
            let results = collector.results
            #expect(results.count == 500)
            #expect(results.allSatisfy { $0.result.response?.body == Array("ok\n".utf8) })
            #expect(server.totalRequests == 500)
            #expect(server.maxConcurrentRequests <= 8)
            // Not a serial engine either: the slots were used.
            #expect(server.maxConcurrentRequests >= 6, "max open \(server.maxConcurrentRequests)")
            // The count drops after each completion returns: wait for that.
            #expect(downloader.waitUntilIdle(timeout: 5))
            #expect(downloader.outstandingCount == 0)
        }
    }

    @Test func perHostLimitHolds() throws {
        try withServer(testConfiguration { $0.concurrency = 8; $0.perHost = 2 }) { server, downloader in
            let collector = ResultCollector()
            for i in 0..<30 { collector.enqueue(downloader, server.url("/slow/20/?i=\(i)")) }
            try collector.wait()
            #expect(collector.results.allSatisfy { $0.result.response != nil })
            #expect(server.maxConcurrentRequests == 2)
        }
    }

    /// Two engine threads: the limits are split between them and still hold
    /// for the whole run, both threads carry transfers, and identical URLs
    /// still coalesce (they always go to the same thread).
    @Test func twoLoopsKeepTheLimitsAndCoalesce() throws {
        try withServer(testConfiguration { $0.concurrency = 8; $0.perHost = 4; $0.loops = 2 }) { server, downloader in
            #expect(downloader.split.shares.map(\.concurrency) == [4, 4])
            #expect(downloader.split.shares.map(\.perHost) == [2, 2])
            let collector = ResultCollector()
            for i in 0..<200 { collector.enqueue(downloader, server.url("/slow/10/?i=\(i)")) }
            for tag in 0..<6 { collector.enqueue(downloader, server.url("/slow/300/?same"), tag: "same\(tag)") }
            try collector.wait(timeout: 40)
            #expect(collector.results.count == 206)
            #expect(collector.results.allSatisfy { $0.result.response?.body == Array("ok\n".utf8) })
            // 200 distinct URLs, and one request for the six identical ones.
            #expect(server.totalRequests == 201)
            #expect(server.maxConcurrentRequests <= 4)
            // Both loops worked: one alone would hold at most 2 (its share).
            #expect(server.maxConcurrentRequests >= 3, "max open \(server.maxConcurrentRequests)")
            #expect(downloader.waitUntilIdle(timeout: 5))
            #expect(downloader.outstandingCount == 0)
        }
    }

    @Test func twoLoopsCancelEverything() throws {
        try withServer(testConfiguration { $0.concurrency = 4; $0.loops = 2 }) { server, downloader in
            let collector = ResultCollector()
            for i in 0..<100 { collector.enqueue(downloader, server.url("/slow/5000/?i=\(i)")) }
            #expect(server.waitFor { $0.openRequests == 4 }, "open \(server.openRequests) max \(server.maxConcurrentRequests) log \(server.requestLog())")
            #expect(downloader.outstandingCount == 100)
            downloader.cancelAll()
            try collector.wait(timeout: 3)
            #expect(collector.results.allSatisfy { $0.result.failure?.errorClass == .cancelled })
            #expect(downloader.waitUntilIdle(timeout: 5))
            #expect(downloader.outstandingCount == 0)
            #expect(server.waitFor { $0.openRequests == 0 })
        }
    }

    /// A completion on one loop that enqueues on the other: idle means both
    /// idle at one moment, not each idle once.
    @Test func waitUntilIdleSeesWorkHandedBetweenLoops() throws {
        try withServer(testConfiguration { $0.concurrency = 4; $0.loops = 2 }) { server, downloader in
            let hops = 40
            @Sendable func chain(_ n: Int) {
                downloader.enqueue(DownloadRequest(url: server.url("/slow/5/?hop=\(n)"))) { _ in
                    if n < hops { chain(n + 1) }
                }
            }
            chain(0)
            #expect(downloader.waitUntilIdle(timeout: 20))
            #expect(downloader.outstandingCount == 0)
            #expect(server.totalRequests == hops + 1)
        }
    }

    /// Enqueues `blocker` and waits until the server has it, so that every
    /// later request queues behind a full engine (concurrency 1).
    private func saturate(_ server: TestHTTPServer, _ downloader: Downloader, _ collector: ResultCollector) throws {
        collector.enqueue(downloader, server.url("/slow/300/?blocker"), priority: .low, tag: "blocker")
        #expect(server.waitFor { $0.openRequests == 1 })
    }

    /// The targets the server saw after the blocker, as their `?` query.
    private func queriesAfterBlocker(_ server: TestHTTPServer) -> [String] {
        Array(server.requestLog().dropFirst().compactMap { $0.split(separator: "?").last.map(String.init) })
    }

    @Test func higherPrioritiesStartFirst() throws {
        try withServer(testConfiguration { $0.concurrency = 1 }) { server, downloader in
            let collector = ResultCollector()
            try saturate(server, downloader, collector)
            for i in 0..<4 { collector.enqueue(downloader, server.url("/?low\(i)"), priority: .low) }
            for i in 0..<4 { collector.enqueue(downloader, server.url("/?normal\(i)"), priority: .normal) }
            for i in 0..<4 { collector.enqueue(downloader, server.url("/?high\(i)"), priority: .high) }
            try collector.wait()
            #expect(queriesAfterBlocker(server) == (0..<4).map { "high\($0)" } + (0..<4).map { "normal\($0)" } + (0..<4).map { "low\($0)" })
        }
    }

    /// The engine keeps the order requests reach it in (within a priority):
    /// LIFO is the plan's business (`WarmPlan`), never the engine's.
    @Test func startsInArrivalOrderWithinAPriority() throws {
        try withServer(testConfiguration { $0.concurrency = 1 }) { server, downloader in
            let collector = ResultCollector()
            try saturate(server, downloader, collector)
            for i in 0..<5 { collector.enqueue(downloader, server.url("/?n\(i)")) }
            for i in 0..<2 { collector.enqueue(downloader, server.url("/?h\(i)"), priority: .high) }
            try collector.wait()
            #expect(queriesAfterBlocker(server) == ["h0", "h1", "n0", "n1", "n2", "n3", "n4"])
        }
    }

    @Test func identicalURLsAreCoalesced() throws {
        try withServer { server, downloader in
            server.setFile("/same.png", bytes: sampleBytes(2000))
            let collector = ResultCollector()
            collector.enqueue(downloader, server.url("/slow/200/same.png"), tag: "a")
            collector.enqueue(downloader, server.url("/slow/200/same.png"), tag: "b")
            // Same URL but conditional: a different transfer (it may get a 304).
            collector.enqueue(downloader, DownloadRequest(url: server.url("/slow/200/same.png"),
                                                          validators: HTTPValidators(etag: "\"x\"", lastModified: nil)), tag: "c")
            try collector.wait()
            let results = collector.results
            #expect(results.count == 3)
            #expect(results.allSatisfy { $0.result.response?.body == sampleBytes(2000) })
            #expect(server.requestCount(path: "/slow/200/same.png") == 2)
        }
    }

    @Test func coalescedFailureReachesEveryCaller() throws {
        try withServer(testConfiguration { $0.retries = 1 }) { server, downloader in
            let collector = ResultCollector()
            for tag in ["a", "b", "c"] { collector.enqueue(downloader, server.url("/slow/100/status/500"), tag: tag) }
            try collector.wait()
            #expect(collector.results.count == 3)
            #expect(collector.results.allSatisfy { $0.result.failure?.attempts == 2 && $0.result.failure?.status == 500 })
            #expect(server.requestCount(path: "/slow/100/status/500") == 2)
        }
    }

    @Test func joiningWithHigherPriorityRaisesTheQueuedJob() throws {
        try withServer(testConfiguration { $0.concurrency = 1 }) { server, downloader in
            let collector = ResultCollector()
            try saturate(server, downloader, collector)
            collector.enqueue(downloader, server.url("/?a"), priority: .low)
            collector.enqueue(downloader, server.url("/?b"), priority: .normal)
            collector.enqueue(downloader, server.url("/?a"), priority: .high)
            try collector.wait()
            #expect(queriesAfterBlocker(server) == ["a", "b"])
            #expect(collector.results.count == 4)
        }
    }

    @Test func waitingRetriesDoNotHoldASlot() throws {
        try withServer(testConfiguration { $0.concurrency = 1; $0.maxRetryDelay = 5 }) { server, downloader in
            let collector = ResultCollector()
            collector.enqueue(downloader, server.url("/retry-after/1/1/"), tag: "retried")
            #expect(server.waitFor { $0.requestCount(path: "/retry-after/1/1/") == 1 })
            let start = Date()
            collector.enqueue(downloader, server.url("/?other"), tag: "other")
            #expect(server.waitFor(timeout: 0.8) { $0.requestCount(path: "/") == 1 },
                    "the second request waited for the first one's retry")
            #expect(Date().timeIntervalSince(start) < 0.8)
            try collector.wait()
            #expect(collector.results.map(\.tag) == ["other", "retried"])
        }
    }

    @Test func cancelAllCompletesEverythingPromptly() throws {
        try withServer(testConfiguration { $0.concurrency = 4; $0.maxRetryDelay = 30 }) { server, downloader in
            let collector = ResultCollector()
            collector.enqueue(downloader, server.url("/retry-after/20/1/"), tag: "waiting-retry")
            for i in 0..<200 { collector.enqueue(downloader, server.url("/slow/5000/?i=\(i)")) }
            #expect(server.waitFor { $0.openRequests == 4 })
            #expect(downloader.outstandingCount == 201)
            let start = Date()
            downloader.cancelAll()
            try collector.wait(timeout: 3)
            #expect(Date().timeIntervalSince(start) < 1)
            let results = collector.results
            #expect(results.count == 201)
            #expect(results.allSatisfy { $0.result.failure?.errorClass == .cancelled && $0.result.failure?.isTransient == true })
            // The count drops after each completion returns: wait for that.
            #expect(downloader.waitUntilIdle(timeout: 5))
            #expect(downloader.outstandingCount == 0)
            // Transfers in flight were aborted: the server sees them close.
            #expect(server.waitFor { $0.openRequests == 0 })
            #expect(server.totalRequests <= 5)
            // Later requests are cancelled too, on the engine thread.
            #expect(try fetch(downloader, server.url("/")).failure?.errorClass == .cancelled)
        }
    }

    @Test func shutdownCancelsOutstandingAndLaterRequests() throws {
        let server = try TestHTTPServer.start()
        defer { server.shutdown() }
        let downloader = try Downloader(configuration: testConfiguration { $0.concurrency = 2 })
        let collector = ResultCollector()
        for i in 0..<20 { collector.enqueue(downloader, server.url("/slow/5000/?i=\(i)")) }
        #expect(server.waitFor { $0.openRequests == 2 }, "open \(server.openRequests) total \(server.totalRequests) log \(server.requestLog())")
        downloader.shutdown()
        try collector.wait(timeout: 2)
        #expect(collector.results.allSatisfy { $0.result.failure?.errorClass == .cancelled })
        #expect(try fetch(downloader, server.url("/"), timeout: 1).failure?.errorClass == .cancelled)
        downloader.shutdown()
    }

    @Test func completionsMayEnqueueMore() throws {
        try withServer { server, downloader in
            let collector = ResultCollector()
            let done = DispatchSemaphore(value: 0)
            downloader.enqueue(DownloadRequest(url: server.url("/?first"))) { _ in
                collector.enqueue(downloader, server.url("/?second"))
                done.signal()
            }
            #expect(done.wait(timeout: .now() + 10) == .success)
            try collector.wait()
            #expect(collector.results.first?.result.response != nil)
            // The count drops after each completion returns: wait for that.
            #expect(downloader.waitUntilIdle(timeout: 5))
            #expect(downloader.outstandingCount == 0)
        }
    }

    @Test func tenThousandQueuedRequestsAreCheap() throws {
        try withServer(testConfiguration { $0.concurrency = 1 }) { server, downloader in
            let collector = ResultCollector()
            try saturate(server, downloader, collector)
            let start = Date()
            let rssBefore = residentBytes()
            for i in 0..<10_000 { collector.enqueue(downloader, server.url("/?q\(i)")) }
            #expect(downloader.outstandingCount == 10_001)
            // Let the engine take them from the mailbox into its queue.
            usleep(200_000)
            let grown = residentBytes() - rssBefore
            print("download queue: 10,000 queued requests grew the process by \(grown / 1024) KiB")
            // Generous: other suites run in parallel in this process.
            #expect(grown < 64 << 20)
            downloader.cancelAll()
            try collector.wait(timeout: 10)
            let seconds = Date().timeIntervalSince(start)
            #expect(seconds < 5, "queueing and cancelling 10k requests took \(seconds) s")
            // Every queued request is cancelled; the one saturating the only
            // slot may have finished first when the machine is busy.
            let cancelled = collector.results.filter { $0.result.failure?.errorClass == .cancelled }.count
            #expect(cancelled == 10_000 || cancelled == 10_001)
            #expect(collector.results.count == 10_001)
        }
    }

    @Test func throughputAgainstLoopback() throws {
        try withServer(testConfiguration { $0.concurrency = 16 }) { server, downloader in
            server.setFile("/t.jpg", bytes: sampleBytes(20_000), contentType: "image/jpeg")
            let count = 2000
            let collector = ResultCollector()
            let start = Date()
            for i in 0..<count { collector.enqueue(downloader, server.url("/t.jpg?i=\(i)")) }
            try collector.wait(timeout: 40)
            let seconds = Date().timeIntervalSince(start)
            #expect(collector.results.allSatisfy { $0.result.response?.body.count == 20_000 })
            print("download throughput: \(count) requests of 20 kB in \(String(format: "%.2f", seconds)) s = \(Int(Double(count) / seconds)) requests/s (debug build, concurrency 16)")
        }
    }
}

/// The process's resident memory (Linux), for coarse memory checks.
func residentBytes() -> Int {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
          let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
          let kb = Int(line.split(separator: " ").dropFirst().first ?? "")
    else { return 0 }
    return kb * 1024
}
