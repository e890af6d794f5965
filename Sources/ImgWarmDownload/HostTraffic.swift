import Foundation
import ImgWarmSupport

/// What every engine thread must see the same way: each host's request
/// rate (`--rate`, and the rate a 429/503 cut it to), the run's bandwidth bucket (`--limit-rate`), and the
/// per-host figures of the reports. A rate split between the threads would
/// fall short whenever one thread's share of a host's URLs ran out first;
/// one bucket behind a lock holds it exactly. The lock is taken once per
/// request start and end (and per received chunk only with --limit-rate).
final class HostTraffic: @unchecked Sendable {  // all state behind `lock`
    private let lock = NSLock()
    private let rates: RequestRates
    private let loops: Int
    private let initialLimit: Int
    /// The run's host keys; `hosts` is indexed by their ids.
    let keys = HostKeys()
    /// By `HostKey.id`; nil for a host no request went to yet.
    private var hosts: [Host?] = []
    private var bytes: TokenBucket?
    private var inFlightTotal = 0
    private var startedTotal = 0

    private struct Host {
        let key: String
        var userRate: Double?
        var bucket: TokenBucket?
        var throttle = HostThrottle()
        var requests = 0
        var throttledResponses = 0
        var inFlight = 0
        var peakInFlight = 0
        /// Each engine thread's adaptive limit for the host (`-j auto`).
        var limits: [Int]
        var peakLimit = 0
        var loggedLimit = 0
    }

    /// `initialLimit`: each thread's adaptive limit of a new host (0 with `-j N`).
    init(rates: RequestRates, bytesPerSecond: Double?, loops: Int, initialLimit: Int, now: Double) {
        self.rates = rates
        self.loops = loops
        self.initialLimit = initialLimit
        // A byte bucket's burst is at least one read's worth, else a chunk
        // larger than the burst could never be taken.
        bytes = bytesPerSecond.map { TokenBucket(rate: $0, now: now, minimumBurst: 1) }
    }

    /// The host's figures, changed in place (made on first use). Under `lock`.
    private func withHost<T>(_ key: HostKey, _ body: (inout Host) -> T) -> T {
        if key.id >= hosts.count { hosts += [Host?](repeating: nil, count: key.id + 1 - hosts.count) }
        if hosts[key.id] == nil {
            hosts[key.id] = Host(key: key.text, userRate: rates.rate(forHostKey: key.text),
                                 limits: [Int](repeating: initialLimit, count: loops), loggedLimit: initialLimit * loops)
        }
        return body(&hosts[key.id]!)
    }

    /// May a request to `key` start now? nil: yes, and it is counted in
    /// flight. Else the seconds until it may (the rate's next token).
    func admit(_ key: HostKey, now: Double) -> Double? {
        lock.lock()
        defer { lock.unlock() }
        let wait = withHost(key) { h -> Double? in
            if let wait = Self.takeToken(&h, now: now) { return wait }
            h.throttle.started(now: now)
            h.requests += 1
            h.inFlight += 1
            h.peakInFlight = max(h.peakInFlight, h.inFlight)
            return nil
        }
        if wait == nil {
            inFlightTotal += 1
            startedTotal += 1
        }
        return wait
    }

    /// A token of the host's rate (the user's or the throttled one, the
    /// lower), if it has one: nil when taken or unlimited, else the seconds
    /// until the next.
    private static func takeToken(_ h: inout Host, now: Double) -> Double? {
        guard let rate = lower(h.userRate, h.throttle.rate(now: now)) else { return nil }
        if h.bucket == nil {
            h.bucket = TokenBucket(rate: rate, now: now)
        } else if h.bucket!.rate != rate {
            h.bucket!.setRate(rate, now: now)
        }
        return h.bucket!.take(now: now)
    }

    private static func lower(_ a: Double?, _ b: Double?) -> Double? {
        guard let a else { return b }
        guard let b else { return a }
        return min(a, b)
    }

    /// May a redirect hop to `key` be requested now? nil: yes, a token of
    /// the host's rate is taken and the request counted. Else the seconds
    /// until it may. The hop's transfer still holds the slot of the entry's
    /// host (`admit`), so nothing is counted in flight here: the rate is
    /// the rule of the host each request really goes to.
    func admitHop(_ key: HostKey, now: Double) -> Double? {
        lock.lock()
        defer { lock.unlock() }
        return withHost(key) { h -> Double? in
            if let wait = Self.takeToken(&h, now: now) { return wait }
            h.throttle.started(now: now)
            h.requests += 1
            return nil
        }
    }

    /// A redirect hop to `key` (admitted by `admitHop`) was answered with a
    /// 2xx or 304: the successes a 429 of that host is weighed against.
    func hopSucceeded(_ key: HostKey, now: Double) {
        lock.lock()
        defer { lock.unlock() }
        withHost(key) { h in h.throttle.succeeded(now: now) }
    }

    /// A request admitted by `admit` ended; `succeeded`: with a 2xx or 304.
    func ended(_ key: HostKey, succeeded: Bool, now: Double) {
        lock.lock()
        defer { lock.unlock() }
        guard key.id < hosts.count, hosts[key.id] != nil else { return }
        hosts[key.id]!.inFlight -= 1
        inFlightTotal -= 1
        if succeeded { hosts[key.id]!.throttle.succeeded(now: now) }
    }

    /// A 429 or 503 from `key` to a request started at `startedAt`. Returns
    /// a line for `-v` when it cut the host's rate. A `Retry-After` delays
    /// the answered request's retry (RetryPolicy), not the host: one URL's
    /// 503 must not stall the others, and the lowered rate already eases
    /// the host.
    func throttled(_ key: HostKey, startedAt: Double, now: Double) -> String? {
        lock.lock()
        defer { lock.unlock() }
        return withHost(key) { h -> String? in
            h.throttledResponses += 1
            let before = Self.lower(h.userRate, h.throttle.rate(now: now))
            guard let cut = h.throttle.throttled(now: now, startedAt: startedAt, current: before),
                  before.map({ cut < $0 * 0.99 }) ?? true else { return nil }
            return "\(key.text): 429/503, rate \(before.map(Self.rateText) ?? "unlimited") -> \(Self.rateText(cut))"
        }
    }

    /// Engine thread `loop` set its adaptive limit for `key`. Returns a line
    /// for `-v` when the total over the threads moved by a quarter or more
    /// since the last line, or shrank because of errors.
    func limitChanged(_ key: HostKey, loop: Int, limit: Int, reason: ConcurrencyLimiter.Reason) -> String? {
        lock.lock()
        defer { lock.unlock() }
        return withHost(key) { h -> String? in
            h.limits[loop] = limit
            let total = h.limits.reduce(0, +)
            h.peakLimit = max(h.peakLimit, total)
            let moved = abs(total - h.loggedLimit)
            guard moved >= max(2, h.loggedLimit / 4) || reason == .throttled || reason == .failed else { return nil }
            defer { h.loggedLimit = total }
            return "\(key.text): \(h.loggedLimit) -> \(total) in flight (\(reason.rawValue))"
        }
    }

    // MARK: bandwidth

    /// Whether `count` received bytes may be taken now (then they are
    /// spent, possibly into debt); false: pause the transfer.
    func receive(bytes count: Int, now: Double) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        guard bytes != nil else { return true }
        if bytes!.secondsUntilPositive(now: now) > 0 { return false }
        bytes!.spend(Double(count), now: now)
        return true
    }

    /// Seconds until paused transfers may go on; nil without --limit-rate.
    func secondsUntilBytes(now: Double) -> Double? {
        lock.lock()
        defer { lock.unlock() }
        guard bytes != nil else { return nil }
        return bytes!.secondsUntilPositive(now: now)
    }

    var limitsBandwidth: Bool { bytes != nil }

    // MARK: figures

    /// Requests in flight now, and started so far, over all hosts.
    func gauge() -> (inFlight: Int, started: Int) {
        lock.lock()
        defer { lock.unlock() }
        return (inFlightTotal, startedTotal)
    }

    func figures(now: Double) -> [HostFigures] {
        lock.lock()
        defer { lock.unlock() }
        return hosts.compactMap { $0 }.sorted { $0.key < $1.key }.map { h in
            let key = h.key
            let total = h.limits.reduce(0, +)
            return HostFigures(
                host: key, requests: h.requests, throttledResponses: h.throttledResponses,
                rateCuts: h.throttle.cuts, configuredRate: h.userRate,
                throttledRate: h.throttle.rate(now: now).map { min($0, h.userRate ?? .infinity) },
                lowestRate: h.throttle.lowestRate,
                concurrencyLimit: total > 0 ? total : nil, peakConcurrencyLimit: h.peakLimit > 0 ? h.peakLimit : nil,
                peakInFlight: h.peakInFlight)
        }
    }

    static func rateText(_ r: Double) -> String {
        r >= 10 ? String(format: "%.0f/s", r) : String(format: "%.2f/s", r)
    }
}
