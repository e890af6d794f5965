import Foundation

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
    private var hosts: [String: Host] = [:]
    private var bytes: TokenBucket?
    private var inFlightTotal = 0
    private var startedTotal = 0

    private struct Host {
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

    private func host(_ key: String) -> Host {
        hosts[key] ?? Host(userRate: rates.rate(forHostKey: key), limits: [Int](repeating: initialLimit, count: loops),
                           loggedLimit: initialLimit * loops)
    }

    /// May a request to `key` start now? nil: yes, and it is counted in
    /// flight. Else the seconds until it may (the rate's next token).
    func admit(_ key: String, now: Double) -> Double? {
        lock.lock()
        defer { lock.unlock() }
        var h = host(key)
        defer { hosts[key] = h }
        let throttled = h.throttle.rate(now: now)
        let rate = [h.userRate, throttled].compactMap { $0 }.min()
        if let rate {
            if h.bucket == nil {
                h.bucket = TokenBucket(rate: rate, now: now)
            } else if h.bucket!.rate != rate {
                h.bucket!.setRate(rate, now: now)
            }
            if let wait = h.bucket!.take(now: now) { return wait }
        }
        h.throttle.started(now: now)
        h.requests += 1
        h.inFlight += 1
        h.peakInFlight = max(h.peakInFlight, h.inFlight)
        inFlightTotal += 1
        startedTotal += 1
        return nil
    }

    /// May a redirect hop to `key` be requested now? nil: yes, a token of
    /// the host's rate is taken and the request counted. Else the seconds
    /// until it may. The hop's transfer still holds the slot of the entry's
    /// host (`admit`), so nothing is counted in flight here: the rate is
    /// the rule of the host each request really goes to.
    func admitHop(_ key: String, now: Double) -> Double? {
        lock.lock()
        defer { lock.unlock() }
        var h = host(key)
        defer { hosts[key] = h }
        let throttled = h.throttle.rate(now: now)
        if let rate = [h.userRate, throttled].compactMap({ $0 }).min() {
            if h.bucket == nil {
                h.bucket = TokenBucket(rate: rate, now: now)
            } else if h.bucket!.rate != rate {
                h.bucket!.setRate(rate, now: now)
            }
            if let wait = h.bucket!.take(now: now) { return wait }
        }
        h.throttle.started(now: now)
        h.requests += 1
        return nil
    }

    /// A redirect hop to `key` (admitted by `admitHop`) was answered with a
    /// 2xx or 304: the successes a 429 of that host is weighed against.
    func hopSucceeded(_ key: String, now: Double) {
        lock.lock()
        defer { lock.unlock() }
        guard var h = hosts[key] else { return }
        h.throttle.succeeded(now: now)
        hosts[key] = h
    }

    /// A request admitted by `admit` ended; `succeeded`: with a 2xx or 304.
    func ended(_ key: String, succeeded: Bool, now: Double) {
        lock.lock()
        defer { lock.unlock() }
        guard var h = hosts[key] else { return }
        h.inFlight -= 1
        inFlightTotal -= 1
        if succeeded { h.throttle.succeeded(now: now) }
        hosts[key] = h
    }

    /// A 429 or 503 from `key` to a request started at `startedAt`. Returns
    /// a line for `-v` when it cut the host's rate. A `Retry-After` delays
    /// the answered request's retry (RetryPolicy), not the host: one URL's
    /// 503 must not stall the others, and the lowered rate already eases
    /// the host.
    func throttled(_ key: String, startedAt: Double, now: Double) -> String? {
        lock.lock()
        defer { lock.unlock() }
        var h = host(key)
        defer { hosts[key] = h }
        h.throttledResponses += 1
        let before = [h.userRate, h.throttle.rate(now: now)].compactMap { $0 }.min()
        guard let cut = h.throttle.throttled(now: now, startedAt: startedAt, current: before),
              before.map({ cut < $0 * 0.99 }) ?? true else { return nil }
        return "\(key): 429/503, rate \(before.map(Self.rateText) ?? "unlimited") -> \(Self.rateText(cut))"
    }

    /// Engine thread `loop` set its adaptive limit for `key`. Returns a line
    /// for `-v` when the total over the threads moved by a quarter or more
    /// since the last line, or shrank because of errors.
    func limitChanged(_ key: String, loop: Int, limit: Int, reason: ConcurrencyLimiter.Reason) -> String? {
        lock.lock()
        defer { lock.unlock() }
        var h = host(key)
        defer { hosts[key] = h }
        h.limits[loop] = limit
        let total = h.limits.reduce(0, +)
        h.peakLimit = max(h.peakLimit, total)
        let moved = abs(total - h.loggedLimit)
        guard moved >= max(2, h.loggedLimit / 4) || reason == .throttled || reason == .failed else { return nil }
        defer { h.loggedLimit = total }
        return "\(key): \(h.loggedLimit) -> \(total) in flight (\(reason.rawValue))"
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
        return hosts.keys.sorted().map { key in
            let h = hosts[key]!
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
