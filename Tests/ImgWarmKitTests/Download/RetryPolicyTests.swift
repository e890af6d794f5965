import CCurl
import Foundation
import Testing
@testable import ImgWarmSupport
@testable import ImgWarmDecode
@testable import ImgWarmDownload
@testable import ImgWarmCache
@testable import ImgWarmInspect
@testable import ImgWarmReport
@testable import ImgWarmWarm

/// The pure parts of the engine: retry delays, classification, URL text and
/// the queue's ordering, without sockets.
@Suite("Download policy")
struct RetryPolicyTests {
    private func policy(base: Double = 0.5, cap: Double = 30, random: Double) -> RetryPolicy {
        var config = DownloaderConfiguration()
        config.backoffBase = base
        config.maxRetryDelay = cap
        var p = RetryPolicy(configuration: config)
        p.random = { random }
        return p
    }

    @Test func backoffDoublesWithJitterAndCap() {
        let low = policy(random: 0), high = policy(random: 0.999_999)
        // Equal jitter: between half and all of base x 2^(attempt-1).
        #expect(low.delay(afterAttempt: 1, retryAfter: nil) == 0.25)
        #expect(abs(high.delay(afterAttempt: 1, retryAfter: nil) - 0.5) < 1e-5)
        #expect(low.delay(afterAttempt: 3, retryAfter: nil) == 1.0)
        #expect(abs(high.delay(afterAttempt: 3, retryAfter: nil) - 2.0) < 1e-5)
        #expect(high.delay(afterAttempt: 40, retryAfter: nil) <= 30)
        #expect(high.delay(afterAttempt: 100_000, retryAfter: nil) <= 30)
    }

    @Test func retryAfterWinsUpToTheCap() {
        let p = policy(cap: 10, random: 0.5)
        #expect(p.delay(afterAttempt: 1, retryAfter: 3) == 3)
        #expect(p.delay(afterAttempt: 1, retryAfter: 3600) == 10)
        #expect(p.delay(afterAttempt: 1, retryAfter: 0) == 0)
    }

    @Test func retryAfterParsing() {
        let now: time_t = 1_794_000_000
        #expect(RetryPolicy.parseRetryAfter("120", now: now) == 120)
        #expect(RetryPolicy.parseRetryAfter(" 7 ", now: now) == 7)
        // 1_794_000_000 is Fri, 06 Nov 2026 21:20:00 GMT.
        #expect(RetryPolicy.parseRetryAfter("Fri, 06 Nov 2026 21:21:00 GMT", now: now) == 60)
        #expect(RetryPolicy.parseRetryAfter("Friday, 06-Nov-26 21:21:00 GMT", now: now) == 60)
        #expect(RetryPolicy.parseRetryAfter("Fri, 06 Nov 2026 21:00:00 GMT", now: now) == 0)
        #expect(RetryPolicy.parseRetryAfter("soon", now: now) == nil)
        #expect(RetryPolicy.parseRetryAfter("-5", now: now) == nil)
    }

    @Test func retriesAllowedUpToTheConfiguredCount() {
        var config = DownloaderConfiguration()
        config.retries = 2
        let p = RetryPolicy(configuration: config)
        #expect(p.allowsRetry(afterAttempts: 1) && p.allowsRetry(afterAttempts: 2))
        #expect(!p.allowsRetry(afterAttempts: 3))
    }

    @Test func statusClassification() {
        typealias C = AttemptClassifier
        #expect(C.verdict(status: 200, conditional: false) == .success)
        #expect(C.verdict(status: 204, conditional: true) == .success)
        #expect(C.verdict(status: 304, conditional: true) == .notModified)
        #expect(C.verdict(status: 304, conditional: false) == .failure(.httpStatus, transient: false))
        for s in [408, 429, 500, 502, 503, 504, 599] {
            #expect(C.verdict(status: s, conditional: false) == .failure(.httpStatus, transient: true))
        }
        for s in [301, 302, 400, 401, 403, 404, 410, 451] {
            #expect(C.verdict(status: s, conditional: false) == .failure(.httpStatus, transient: false))
        }
    }

    @Test func curlCodeClassification() {
        func verdict(_ code: CURLcode, limit: Bool = false) -> AttemptClassifier.Verdict {
            AttemptClassifier.verdict(.init(code: code, status: 0, bodyLimitHit: limit, errorBodyDropped: false,
                                            conditional: false, maxBodyBytes: 1, detail: ""))
        }
        #expect(verdict(CURLE_OPERATION_TIMEDOUT) == .failure(.timeout, transient: true))
        for code in [CURLE_COULDNT_CONNECT, CURLE_COULDNT_RESOLVE_HOST, CURLE_RECV_ERROR, CURLE_SEND_ERROR,
                     CURLE_GOT_NOTHING, CURLE_PARTIAL_FILE, CURLE_HTTP2, CURLE_HTTP2_STREAM] {
            #expect(verdict(code) == .failure(.network, transient: true))
        }
        #expect(verdict(CURLE_PEER_FAILED_VERIFICATION) == .failure(.tls, transient: false))
        #expect(verdict(CURLE_SSL_CONNECT_ERROR) == .failure(.tls, transient: false))
        #expect(verdict(CURLE_TOO_MANY_REDIRECTS) == .failure(.httpStatus, transient: false))
        #expect(verdict(CURLE_UNSUPPORTED_PROTOCOL) == .failure(.invalidURL, transient: false))
        #expect(verdict(CURLE_URL_MALFORMAT) == .failure(.invalidURL, transient: false))
        #expect(verdict(CURLE_FILESIZE_EXCEEDED) == .failure(.tooLarge, transient: false))
        #expect(verdict(CURLE_WRITE_ERROR, limit: true) == .failure(.tooLarge, transient: false))
        #expect(verdict(CURLE_BAD_CONTENT_ENCODING) == .failure(.network, transient: false))
    }

    /// One redaction rule (`Redaction`): the whole userinfo becomes `***`,
    /// wherever libcurl's URL parser finds it.
    @Test func redactionMasksUserinfoAndHostKeysComeFromCurl() {
        #expect(Redaction.url("https://u:p@host.example/a@b?x=y") == "https://***@host.example/a@b?x=y")
        #expect(Redaction.url("http://user@host:8080/") == "http://***@host:8080/")
        #expect(Redaction.url("http://h/x") == "http://h/x")
        #expect(Redaction.url("https://e.com/a@b.jpg") == "https://e.com/a@b.jpg")
        #expect(Redaction.inText("Failed http://a:b@h/ then\nftp://c:d@e") == "Failed http://***@h/ then ftp://***@e")
        // Text with an "@" that no parser makes sense of is not shown.
        #expect(!Redaction.url("http://a:s3cret@ho st/").contains("s3cret"))
        // The per-host key: libcurl's scheme, host and port (the scheme's
        // default when none is named), in lowercase.
        #expect(ParsedURL.hostKey(of: "HTTPS://u:p@Example.COM:8443/x?y") == "https://example.com:8443")
        #expect(ParsedURL.hostKey(of: "http://h") == "http://h:80")
        #expect(ParsedURL.hostKey(of: "https://h") == "https://h:443")
        #expect(ParsedURL.hostKey(of: "nonsense") == "")
        // Lowercased only when needed, and then as String.lowercased() does.
        #expect(ParsedURL.hostKey(scheme: "https", host: "h.example", port: "443") == "https://h.example:443")
        #expect(ParsedURL.hostKey(scheme: "HTTP", host: "Ex.COM", port: "80") == "http://ex.com:80")
        #expect(ParsedURL.hostKey(scheme: "http", host: "ÄB.example", port: "80") == "http://äb.example:80")
        #expect(ParsedURL.hostKey(of: "http://h.example?x=/y") == "http://h.example:80")
        #expect(ParsedURL.hostKey(of: "http://h.example#/frag") == "http://h.example:80")
        #expect(ParsedURL.hostKey(of: "x://") == "")
        // A manifest line's host key is that of the app's URL: IDNA host.
        #expect(try! ParsedURL.parse("HTTP://BÜCHER.example/ä").get().hostKey == "http://xn--bcher-kva.example:80")
    }

    // MARK: queue

    private let hostKeys = HostKeys()

    private func job(_ url: String, _ priority: RequestPriority = .normal, arrival: UInt64) -> DownloadJob {
        DownloadJob(key: url, request: DownloadRequest(url: url, priority: priority), arrival: arrival,
                    hostKey: hostKeys.intern(ParsedURL.hostKey(of: url)))
    }

    /// Starts and ends every job at once, one at a time.
    private func drain(_ queue: inout RequestQueue) -> [String] {
        var started: [String] = []
        while let j = queue.popStartable(admit: { _ in true }) {
            started.append(j.url)
        }
        return started
    }

    @Test func queueOrdersByPriorityThenArrival() {
        var queue = RequestQueue()
        let jobs = [job("http://h/l1", .low, arrival: 1), job("http://h/n1", arrival: 2), job("http://h/h1", .high, arrival: 3),
                    job("http://h/n2", arrival: 4), job("http://h/l2", .low, arrival: 5), job("http://h/h2", .high, arrival: 6)]
        jobs.forEach { queue.push($0) }
        #expect(drain(&queue) == ["h1", "h2", "n1", "n2", "l1", "l2"].map { "http://h/" + $0 })
    }

    /// A host that may not start parks its jobs; the others go on in order,
    /// and an unparked host flows again in its own order.
    @Test func refusedHostsParkAndComeBackInOrder() {
        var queue = RequestQueue()
        let a1 = job("http://a/1", arrival: 1), a2 = job("http://a/2", arrival: 2), a3 = job("http://a/3", arrival: 3)
        let b1 = job("http://b/1", arrival: 4), b2 = job("http://b/2", arrival: 5)
        [a1, a2, a3, b1, b2].forEach { queue.push($0) }
        var slots = HostSlots(perHost: 2, connections: 6, adaptive: nil)
        func admit(_ j: DownloadJob) -> Bool {
            guard slots.mayStart(j.hostKey) else { return false }
            slots.started(j.hostKey)
            return true
        }
        var started: [String] = []
        while started.count < 3, let j = queue.popStartable(admit: admit) { started.append(j.url) }
        // a3 waits for a host slot, b1 takes the third.
        #expect(started == ["http://a/1", "http://a/2", "http://b/1"])
        #expect(queue.hasParked(a3.hostKey))
        _ = slots.ended(b1.hostKey, latency: nil, congestion: nil, http1: true)
        queue.unpark(b1.hostKey)
        #expect(queue.popStartable(admit: admit)?.url == "http://b/2")
        // a is still full: nothing else may start.
        #expect(queue.popStartable(admit: admit) == nil)
        _ = slots.ended(a1.hostKey, latency: nil, congestion: nil, http1: true)
        queue.unpark(a1.hostKey)
        #expect(queue.popStartable(admit: admit)?.url == "http://a/3")
        #expect(queue.popStartable(admit: admit) == nil)
    }

    /// Jobs of a full host stay parked: a start brings the host's next job
    /// back only for a slot no job brought back before is waiting for, so
    /// none comes up just to be refused (each refusal is an admission and
    /// two heap moves), and the host still fills every slot that frees.
    @Test func aFullHostsJobsStayParkedUntilASlotFrees() {
        var queue = RequestQueue()
        let a = (1...5).map { job("http://a/\($0)", arrival: UInt64($0)) }
        a.forEach { queue.push($0) }
        var slots = HostSlots(perHost: 2, connections: 6, adaptive: nil)
        var asked = 0
        func admit(_ j: DownloadJob) -> Bool {
            asked += 1
            guard slots.mayStart(j.hostKey) else { return false }
            slots.started(j.hostKey)
            return true
        }
        func pop() -> String? { queue.popStartable(admit: admit, freeSlots: { slots.free($0) })?.url }
        #expect(pop() == "http://a/1")
        #expect(pop() == "http://a/2")
        // a3..a5 come up once each and are parked.
        #expect(pop() == nil)
        #expect(asked == 5)
        // Both transfers end in one pass: two slots, two jobs back.
        for host in [a[0].hostKey, a[1].hostKey] {
            _ = slots.ended(host, latency: nil, congestion: nil, http1: true)
            queue.unpark(host)
        }
        asked = 0
        #expect(pop() == "http://a/3")
        #expect(pop() == "http://a/4")
        // a5 stays parked: the host is full, nothing is asked.
        #expect(pop() == nil)
        #expect(asked == 2)
        #expect(queue.hasParked(a[4].hostKey))
        _ = slots.ended(a[2].hostKey, latency: nil, congestion: nil, http1: true)
        queue.unpark(a[2].hostKey)
        #expect(pop() == "http://a/5")
        #expect(asked == 3)
    }

    /// A host whose limit rose by more than one slot fills them all: each
    /// start brings the next job back while a slot is free for it.
    @Test func aHostKeepsFlowingWhileItHasFreeSlots() {
        var queue = RequestQueue()
        let a = (1...4).map { job("http://a/\($0)", arrival: UInt64($0)) }
        a.forEach { queue.push($0) }
        var cap = 1, running = 0
        func admit(_ j: DownloadJob) -> Bool {
            guard running < cap else { return false }
            running += 1
            return true
        }
        func pop() -> String? { queue.popStartable(admit: admit, freeSlots: { _ in cap - running })?.url }
        #expect(pop() == "http://a/1")
        #expect(pop() == nil)
        cap = 4
        queue.unpark(a[0].hostKey)
        #expect(pop() == "http://a/2")
        #expect(pop() == "http://a/3")
        #expect(pop() == "http://a/4")
        #expect(pop() == nil)
    }

    @Test func raisedJobLeavesAStaleEntryBehind() {
        var queue = RequestQueue()
        let a = job("http://h/a", .low, arrival: 1), b = job("http://h/b", arrival: 2)
        queue.push(a)
        queue.push(b)
        queue.raise(a, to: .high, arrival: 3)
        #expect(drain(&queue) == ["http://h/a", "http://h/b"])
    }
}
