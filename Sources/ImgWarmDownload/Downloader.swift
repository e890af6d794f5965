import CCurl
import Foundation
import ImgWarmSupport

/// Downloads over HTTP(S) with libcurl's multi interface: engine threads
/// (one per core on a busy run, `LoopSplit`) each driving a multi handle,
/// bounded concurrency (global and per host), priorities, coalescing of
/// identical requests, retries of transient failures, strict size and
/// protocol limits. See docs/download-engine.md.
// @unchecked Sendable: every stored property is a constant; the loops and HostTraffic guard their own state.
public final class Downloader: @unchecked Sendable {
    public let configuration: DownloaderConfiguration
    /// How the limits are divided between the engine threads.
    public let split: LoopSplit
    private let loops: [CurlEventLoop]
    /// Rates, pauses, the bandwidth bucket and per-host figures, shared by the loops.
    private let traffic: HostTraffic

    public init(configuration: DownloaderConfiguration) throws {
        try configuration.validate()
        try CurlGlobal.initialize()
        var configuration = configuration
        if let sink = configuration.onWarning {
            let once = OnceLines()
            configuration.onWarning = { line in if once.first(line) { sink(line) } }
        }
        self.configuration = configuration
        let split = LoopSplit(concurrency: configuration.concurrency, perHost: configuration.perHost,
                              requested: configuration.loops,
                              cores: configuration.cores ?? ProcessInfo.processInfo.activeProcessorCount,
                              hostConnections: configuration.hostConnections)
        self.split = split
        let traffic = HostTraffic(rates: configuration.rates, bytesPerSecond: configuration.bytesPerSecond,
                                  loops: split.count,
                                  initialLimit: configuration.adaptive ? CurlEventLoop.initialLimit(loops: split.count) : 0,
                                  now: CurlEventLoop.seconds())
        self.traffic = traffic
        loops = try split.shares.enumerated().map { index, share in
            var part = configuration
            part.concurrency = share.concurrency
            part.perHost = share.perHost
            part.hostConnections = share.hostConnections ?? configuration.hostConnections
            return try CurlEventLoop(configuration: part, traffic: traffic, index: index, loops: split.count,
                                     name: split.count == 1 ? "imgwarm.download" : "imgwarm.download.\(index)")
        }
        for loop in loops { loop.start() }
    }

    deinit { shutdown() }

    /// Queues a request; `completion` runs exactly once, on an engine
    /// thread (callers hop off it quickly, and never block there waiting for
    /// the engine). After `shutdown` it runs at once on the caller's thread
    /// with `.cancelled`.
    public func enqueue(_ request: DownloadRequest, completion: @escaping @Sendable (DownloadResult) -> Void) {
        let loop = loops[split.loop(forURL: request.url)]
        if !loop.mailbox.submit(.init(request: request, completion: completion)) {
            completion(.failure(CurlEventLoop.cancelledFailure(attempts: 0, elapsed: 0)))
        }
    }

    /// Requests in flight now and attempts started so far (the progress line).
    public func gauge() -> (inFlight: Int, started: Int) { traffic.gauge() }

    /// Each host's requests, throttling and limits so far (reports).
    public func hostFigures() -> [HostFigures] { traffic.figures(now: CurlEventLoop.seconds()) }

    /// Requests queued + waiting for a retry + in flight (callers use it for
    /// backpressure). Each `enqueue` counts until its completion has returned.
    public var outstandingCount: Int { loops.reduce(0) { $0 + $1.mailbox.outstandingCount } }

    /// SIGINT/SIGTERM: stop starting transfers, abort those in flight, and
    /// complete every outstanding request with `.cancelled`. Returns at once;
    /// `waitUntilIdle` waits for the completions. Requests enqueued later are
    /// cancelled too.
    public func cancelAll() {
        for loop in loops { loop.mailbox.requestCancel() }
    }

    /// Blocks until nothing is outstanding. Never call it from a completion.
    public func waitUntilIdle() { _ = waitUntilIdle(deadline: nil) }

    /// Waits at most `timeout` seconds; true when nothing is outstanding.
    @discardableResult
    public func waitUntilIdle(timeout: Double) -> Bool {
        waitUntilIdle(deadline: Date().addingTimeInterval(timeout))
    }

    /// Idle means every engine idle at one moment. A completion may enqueue
    /// (on any engine) before its own engine's count drops, so one pass
    /// over the engines is not enough: a pass counts only when no request
    /// was submitted anywhere while it looked.
    private func waitUntilIdle(deadline: Date?) -> Bool {
        while true {
            let before = loops.reduce(0) { $0 + $1.mailbox.submittedCount }
            var waited = false
            for loop in loops where loop.mailbox.outstandingCount > 0 {
                waited = true
                if !loop.mailbox.waitUntilIdle(deadline: deadline) { return false }
            }
            if !waited && loops.reduce(0, { $0 + $1.mailbox.submittedCount }) == before { return true }
        }
    }

    /// Stops the engine threads and frees curl handles. Anything still
    /// outstanding is cancelled first. Idempotent.
    public func shutdown() {
        for loop in loops { loop.mailbox.requestShutdown() }
        for loop in loops { loop.join() }
    }
}

/// Lines seen so far, to pass each on once (any thread).
final class OnceLines: @unchecked Sendable {
    private let lock = NSLock()
    private var seen: Set<String> = []

    func first(_ line: String) -> Bool { lock.withLock { seen.insert(line).inserted } }
}

/// curl_global_init is not thread-safe and must run once, before any other
/// libcurl call: a lazily initialized global gives exactly that.
enum CurlGlobal {
    private static let result: CURLcode = {
        // With CURLOPT_NOSIGNAL libcurl stops ignoring SIGPIPE around its
        // calls, and a TLS write to a connection the peer closed would kill
        // the process. A command-line tool wants EPIPE errors instead.
        signal(SIGPIPE, SIG_IGN)
        return imgwarm_global_init()
    }()

    static func initialize() throws {
        guard result == CURLE_OK else {
            throw ImgWarmError(.engineUnavailable("initialization failed: \(String(cString: curl_easy_strerror(result)))"))
        }
    }
}

extension DownloaderConfiguration {
    /// Rejects values curl would misread (0 means "no limit" to curl) and
    /// header lines that could inject other headers. Messages never quote
    /// header values.
    func validate() throws {
        func fail(_ text: String) throws -> Never { throw ImgWarmError.usage(text) }
        if concurrency < 1 { try fail("concurrency must be at least 1") }
        if let perHost, perHost < 1 { try fail("per-host limit must be at least 1") }
        if hostConnections < 1 { try fail("connections per host must be at least 1") }
        if let b = bytesPerSecond, !(b > 0 && b.isFinite) { try fail("bandwidth limit must be a positive number of bytes a second") }
        if !(timeout > 0 && timeout.isFinite) { try fail("timeout must be a positive number of seconds") }
        if !(connectTimeout > 0 && connectTimeout.isFinite) { try fail("connect timeout must be a positive number of seconds") }
        if maxBodyBytes < 0 { try fail("maximum body size must not be negative") }
        if retries < 0 { try fail("retries must not be negative") }
        if !(backoffBase >= 0 && backoffBase.isFinite) { try fail("backoff base must be a non-negative number of seconds") }
        if !(maxRetryDelay >= 0 && maxRetryDelay.isFinite) { try fail("maximum retry delay must be a non-negative number of seconds") }
        if userAgent.unicodeScalars.contains(where: { $0 == "\r" || $0 == "\n" || $0 == "\0" }) { try fail("user agent must be one line") }
        // The rules of RequestHeaderRules, which also read the command line.
        for (index, line) in (headerRules.entryOriginLines + headerRules.scoped.map(\.line)).enumerated()
        where RequestHeaderRules.problem(in: line) != nil {
            try fail("header \(index + 1) is not a single 'Name: value' line")
        }
    }
}
