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
    /// By `HostKey.id`; nil for a host this thread has not seen.
    private var hosts: [Host?] = []

    init(perHost: Int?, connections: Int, adaptive: ConcurrencyLimiter.Parameters?) {
        self.perHost = perHost
        self.connections = connections
        self.adaptive = adaptive
    }

    private func make(_ key: HostKey) -> Host {
        // Plain http never gets HTTP/2 (no h2c): HTTP/1.1 from the start.
        Host(limiter: adaptive.map { ConcurrencyLimiter($0) }, http1: key.text.hasPrefix("http://"))
    }

    @inline(__always) private func host(_ key: HostKey) -> Host? { key.id < hosts.count ? hosts[key.id] : nil }

    /// How many requests to `key` may be in flight now.
    func cap(_ key: HostKey) -> Int {
        cap(of: host(key) ?? make(key))
    }

    @inline(__always) private func cap(of h: Host) -> Int {
        var cap = h.limiter?.current ?? Int.max
        if let perHost { cap = min(cap, perHost) }
        if h.http1 { cap = min(cap, connections) }
        return cap
    }

    func inFlight(_ key: HostKey) -> Int { host(key)?.inFlight ?? 0 }

    /// This runs for every request that comes up: inlined, so that the
    /// engine reads one host of its table, not a copy of the table (about
    /// 300 instructions a call).
    @inline(__always) func mayStart(_ key: HostKey) -> Bool {
        guard let h = host(key) else { return cap(of: make(key)) > 0 }
        return h.inFlight < cap(of: h)
    }

    /// How many more requests to `key` may start now.
    @inline(__always) func free(_ key: HostKey) -> Int {
        guard let h = host(key) else { return cap(of: make(key)) }
        return cap(of: h) - h.inFlight
    }

    mutating func started(_ key: HostKey) {
        if key.id >= hosts.count { hosts += [Host?](repeating: nil, count: key.id + 1 - hosts.count) }
        // In place: no copy of the host.
        if (hosts[key.id]?.inFlight += 1) == nil {
            var h = make(key)
            h.inFlight = 1
            hosts[key.id] = h
        }
    }

    /// A transfer to `key` ended. `latency`: seconds from request to first
    /// byte, when there was a response; `congestion`: a 429/503 or a
    /// timeout/reset; `http1`: the response's protocol was HTTP/1.x.
    /// Returns the limiter's change, if any.
    mutating func ended(_ key: HostKey, latency: Double?, congestion: ConcurrencyLimiter.Reason?, http1: Bool) -> ConcurrencyLimiter.Change? {
        guard key.id < hosts.count, hosts[key.id] != nil else { return nil }
        return Self.end(&hosts[key.id]!, latency: latency, congestion: congestion, http1: http1)
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
        for i in hosts.indices { hosts[i]?.inFlight = 0 }
    }
}
