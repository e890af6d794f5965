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

/// Fast retries so retry tests take milliseconds, short timeouts so a hung
/// transfer fails the test instead of stalling the suite.
func testConfiguration(_ modify: (inout DownloaderConfiguration) -> Void = { _ in }) -> DownloaderConfiguration {
    var config = DownloaderConfiguration()
    config.concurrency = 4
    config.retries = 2
    config.backoffBase = 0.01
    config.maxRetryDelay = 2
    config.timeout = 10
    config.connectTimeout = 3
    config.userAgent = "imgwarm-tests/1"
    modify(&config)
    return config
}

struct DownloadTestTimeout: Error, CustomStringConvertible {
    var description: String { "downloads did not complete in time" }
}

/// Collects completions of many requests, tagged, in completion order.
final class ResultCollector: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [(tag: String, result: DownloadResult)] = []
    private let group = DispatchGroup()

    func enqueue(_ downloader: Downloader, _ request: DownloadRequest, tag: String) {
        group.enter()
        downloader.enqueue(request) { result in
            self.lock.lock()
            self.items.append((tag, result))
            self.lock.unlock()
            self.group.leave()
        }
    }

    func enqueue(_ downloader: Downloader, _ url: String, priority: RequestPriority = .normal, tag: String? = nil) {
        enqueue(downloader, DownloadRequest(url: url, priority: priority), tag: tag ?? url)
    }

    /// Waits for every completion; throws after `timeout` seconds.
    func wait(timeout: Double = 20) throws {
        guard group.wait(timeout: .now() + timeout) == .success else { throw DownloadTestTimeout() }
    }

    var results: [(tag: String, result: DownloadResult)] {
        lock.lock()
        defer { lock.unlock() }
        return items
    }
}

/// One request, waited for.
func fetch(_ downloader: Downloader, _ url: String, validators: HTTPValidators? = nil, timeout: Double = 20) throws -> DownloadResult {
    let collector = ResultCollector()
    collector.enqueue(downloader, DownloadRequest(url: url, validators: validators), tag: url)
    try collector.wait(timeout: timeout)
    return try #require(collector.results.first?.result)
}

extension DownloadResult {
    var response: DownloadResponse? {
        if case .success(let r) = self { return r }
        return nil
    }
    var notModifiedResponse: DownloadResponse? {
        if case .notModified(let r) = self { return r }
        return nil
    }
    var failure: DownloadFailure? {
        if case .failure(let f) = self { return f }
        return nil
    }
}

/// A server and a downloader for one test, both shut down at the end.
func withServer<T>(_ config: DownloaderConfiguration = testConfiguration(),
                   _ body: (TestHTTPServer, Downloader) throws -> T) throws -> T {
    let server = try TestHTTPServer.start()
    defer { server.shutdown() }
    let downloader = try Downloader(configuration: config)
    defer { downloader.shutdown() }
    return try body(server, downloader)
}

/// Bytes that are not ASCII text, so a leak into a message would show.
func sampleBytes(_ count: Int, seed: UInt8 = 7) -> [UInt8] {
    (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(seed)) }
}
