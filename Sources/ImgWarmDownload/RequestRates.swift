import ImgWarmSupport
/// `--rate`: requests a second for every host, and per host
/// (`--rate 50/s --rate cdn.example.com=20/s`; a host's own rule wins).
/// Hosts are names as in the URL (any scheme and port), without case.
public struct RequestRates: Sendable, Equatable {
    public var everyHost: Double?
    public var byHost: [String: Double] = [:]

    public init() {}

    public var isEmpty: Bool { everyHost == nil && byHost.isEmpty }

    /// Adds one `--rate` value: `N/s`, `N/min` or `HOST=N/s`.
    public mutating func add(_ text: String) throws(ImgWarmError) {
        if let eq = text.lastIndex(of: "=") {
            let host = text[..<eq].trimmingCharacters(in: .whitespaces).lowercased()
            guard !host.isEmpty, !host.contains("/"), !host.contains(" ") else {
                throw ImgWarmError.usage("--rate: '\(text.prefix(80))' names no host before '='")
            }
            byHost[host] = try Self.perSecond(String(text[text.index(after: eq)...]))
        } else {
            everyHost = try Self.perSecond(text)
        }
    }

    /// `20/s`, `20`, `1200/min`, `0.5/s` as requests a second.
    static func perSecond(_ text: String) throws(ImgWarmError) -> Double {
        let t = text.trimmingCharacters(in: .whitespaces).lowercased()
        var number = Substring(t)
        var divisor = 1.0
        for (suffix, d) in [("/s", 1.0), ("/sec", 1.0), ("/min", 60.0), ("/m", 60.0), ("/h", 3600.0)] where t.hasSuffix(suffix) {
            number = t.dropLast(suffix.count)
            divisor = d
            break
        }
        guard let n = Double(number), n.isFinite, n > 0 else {
            throw ImgWarmError.usage("--rate: '\(text.prefix(80))' is not a rate such as 50/s, 600/min or HOST=20/s")
        }
        return n / divisor
    }

    /// The rate for a per-host key (`scheme://host:port`), if any.
    func rate(forHostKey key: String) -> Double? {
        if !byHost.isEmpty, let r = byHost[Self.hostName(ofKey: key)] { return r }
        return everyHost
    }

    /// `host` of `scheme://host:port` (an IPv6 host keeps its brackets).
    static func hostName(ofKey key: String) -> String {
        var rest = Substring(key)
        if let r = rest.range(of: "://") { rest = rest[r.upperBound...] }
        if let colon = rest.lastIndex(of: ":"), !rest[colon...].contains("]") { rest = rest[..<colon] }
        return String(rest)
    }
}
