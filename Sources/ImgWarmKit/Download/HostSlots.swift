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
        cap(of: hosts[key] ?? make(key))
    }

    private func cap(of h: Host) -> Int {
        var cap = h.limiter?.current ?? Int.max
        if let perHost { cap = min(cap, perHost) }
        if h.http1 { cap = min(cap, connections) }
        return cap
    }

    func inFlight(_ key: String) -> Int { hosts[key]?.inFlight ?? 0 }

    /// One lookup of the host (this runs for every request that comes up).
    func mayStart(_ key: String) -> Bool {
        guard let h = hosts[key] else { return cap(of: make(key)) > 0 }
        return h.inFlight < cap(of: h)
    }

    mutating func started(_ key: String) {
        // In place: one lookup, not a read and a write.
        if (hosts[key]?.inFlight += 1) == nil {
            var h = make(key)
            h.inFlight = 1
            hosts[key] = h
        }
    }

    /// A transfer to `key` ended. `latency`: seconds from request to first
    /// byte, when there was a response; `congestion`: a 429/503 or a
    /// timeout/reset; `http1`: the response's protocol was HTTP/1.x.
    /// Returns the limiter's change, if any.
    mutating func ended(_ key: String, latency: Double?, congestion: ConcurrencyLimiter.Reason?, http1: Bool) -> ConcurrencyLimiter.Change? {
        guard let index = hosts.index(forKey: key) else { return nil }
        // Through the index: one lookup, and the host is changed in place.
        return Self.end(&hosts.values[index], latency: latency, congestion: congestion, http1: http1)
    }

    private static func end(_ h: inout Host, latency: Double?, congestion: ConcurrencyLimiter.Reason?,
                            http1: Bool) -> ConcurrencyLimiter.Change? {
        let inFlightBefore = h.inFlight
        h.inFlight -= 1
        if http1 { h.http1 = true }
        if h.limiter != nil {
            if let congestion { return h.limiter!.congestion(congestion) }
            if let latency { return h.limiter!.sample(latency: latency, inFlight: inFlightBefore) }
        }
        return nil
    }

    mutating func removeAll() {
        for key in hosts.keys { hosts[key]!.inFlight = 0 }
    }
}
