/// One engine thread's requests in flight per host, and each host's cap:
/// the smallest of its adaptive limit (`-j auto`), the thread's share of
/// `--per-host`, and, once the host is known to speak HTTP/1.x, the
/// thread's share of `--host-connections` (an HTTP/1.1 connection carries
/// one request at a time, so more would only wait inside curl, where the
/// queue's order and the latency samples are lost). Pure.
struct HostSlots {
    struct Host {
        var inFlight = 0
        var limiter: ConcurrencyLimiter?
        var http1: Bool
    }

    let perHost: Int?
    let connections: Int
    let adaptive: ConcurrencyLimiter.Parameters?
    private(set) var hosts: [String: Host] = [:]

    init(perHost: Int?, connections: Int, adaptive: ConcurrencyLimiter.Parameters?) {
        self.perHost = perHost
        self.connections = connections
        self.adaptive = adaptive
    }

    private func make(_ key: String) -> Host {
        // Plain http never gets HTTP/2 (no h2c): HTTP/1.1 from the start.
        Host(limiter: adaptive.map { ConcurrencyLimiter($0) }, http1: key.hasPrefix("http://"))
    }

    /// How many requests to `key` may be in flight now.
    func cap(_ key: String) -> Int {
        let h = hosts[key] ?? make(key)
        var cap = h.limiter?.current ?? Int.max
        if let perHost { cap = min(cap, perHost) }
        if h.http1 { cap = min(cap, connections) }
        return cap
    }

    func inFlight(_ key: String) -> Int { hosts[key]?.inFlight ?? 0 }

    func mayStart(_ key: String) -> Bool { inFlight(key) < cap(key) }

    mutating func started(_ key: String) {
        var h = hosts[key] ?? make(key)
        h.inFlight += 1
        hosts[key] = h
    }

    /// A transfer to `key` ended. `latency`: seconds from request to first
    /// byte, when there was a response; `congestion`: a 429/503 or a
    /// timeout/reset; `http1`: the response's protocol was HTTP/1.x.
    /// Returns the limiter's change, if any.
    mutating func ended(_ key: String, latency: Double?, congestion: ConcurrencyLimiter.Reason?, http1: Bool) -> ConcurrencyLimiter.Change? {
        guard var h = hosts[key] else { return nil }
        let inFlightBefore = h.inFlight
        h.inFlight -= 1
        if http1 { h.http1 = true }
        var change: ConcurrencyLimiter.Change?
        if h.limiter != nil {
            if let congestion {
                change = h.limiter!.congestion(congestion)
            } else if let latency {
                change = h.limiter!.sample(latency: latency, inFlight: inFlightBefore)
            }
        }
        hosts[key] = h
        return change
    }

    mutating func removeAll() {
        for key in hosts.keys { hosts[key]!.inFlight = 0 }
    }
}
