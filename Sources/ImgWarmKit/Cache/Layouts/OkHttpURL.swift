#if canImport(Glibc)
import Glibc
#endif

/// A URL as OkHttp's `HttpUrl.toString()` prints it, from an RFC 3986-valid
/// absolute http(s) URL (`ParsedURL.absolute`): OkHttp's cache keys and
/// stores entries by that text (`Cache.key`, `Entry.writeTo`), so a
/// manifest URL written another way must still find the app's entry.
/// What `HttpUrl.Builder.parse` and `toString` change of such a URL:
/// - the scheme and host in lowercase (an IPv6 host in its shortest form);
/// - the port left out when it is the scheme's default (`defaultPort`);
/// - an empty path written `/`, and `.`/`..` segments (also `%2e`)
///   resolved (`resolvePath`, `isDot`, `isDotDot`);
/// - in the query, `'` percent-encoded (`QUERY_ENCODE_SET` is
///   `" \"'<>#"`; the others cannot appear raw in an RFC 3986 query).
/// Userinfo is not handled: the okhttp layout refuses such URLs.
public enum OkHttpURL {
    struct Parts {
        var scheme: String
        var host: String
        var port: String?
        var path: String
        var query: String?
        var fragment: String?
    }

    static func split(_ url: String) -> Parts? {
        guard let colon = url.range(of: "://") else { return nil }
        let scheme = url[..<colon.lowerBound].lowercased()
        var rest = url[colon.upperBound...]
        var fragment: String?
        if let hash = rest.firstIndex(of: "#") {
            fragment = String(rest[rest.index(after: hash)...])
            rest = rest[..<hash]
        }
        var query: String?
        if let q = rest.firstIndex(of: "?") {
            query = String(rest[rest.index(after: q)...])
            rest = rest[..<q]
        }
        let slash = rest.firstIndex(of: "/") ?? rest.endIndex
        var authority = rest[..<slash]
        let path = String(rest[slash...])
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        var host: Substring
        var port: String?
        if authority.hasPrefix("["), let close = authority.firstIndex(of: "]") {
            host = authority[...close]
            let after = authority[authority.index(after: close)...]
            if after.hasPrefix(":") { port = String(after.dropFirst()) }
        } else if let c = authority.lastIndex(of: ":") {
            host = authority[..<c]
            port = String(authority[authority.index(after: c)...])
        } else {
            host = authority
        }
        return Parts(scheme: scheme, host: canonicalHost(String(host)), port: port, path: path, query: query, fragment: fragment)
    }

    /// Lowercase; an IPv6 literal in the form `inet6AddressToAscii` gives
    /// (lowercase hex, the longest run of zero groups as `::`).
    static func canonicalHost(_ host: String) -> String {
        let lower = host.lowercased()
        guard lower.hasPrefix("["), lower.hasSuffix("]") else { return lower }
        var address = in6_addr()
        let inner = String(lower.dropFirst().dropLast())
        guard inet_pton(AF_INET6, inner, &address) == 1 else { return lower }
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        guard inet_ntop(AF_INET6, &address, &buffer, socklen_t(buffer.count)) != nil else { return lower }
        return "[" + String(cString: buffer) + "]"
    }

    static func defaultPort(_ scheme: String) -> String? {
        scheme == "http" ? "80" : scheme == "https" ? "443" : nil
    }

    /// The port OkHttp prints, nil for the scheme's default.
    static func explicitPort(_ parts: Parts) -> String? {
        guard let port = parts.port, !port.isEmpty else { return nil }
        let trimmed = String(Int(port).map(String.init) ?? port)
        return trimmed == defaultPort(parts.scheme) ? nil : trimmed
    }

    public static func canonical(_ url: String) -> String {
        guard let parts = split(url) else { return url }
        var out = parts.scheme + "://" + parts.host
        if let port = explicitPort(parts) { out += ":" + port }
        out += resolvedPath(parts.path)
        if let query = parts.query { out += "?" + query.replacingOccurrences(of: "'", with: "%27") }
        if let fragment = parts.fragment { out += "#" + fragment }
        return out
    }

    /// `Request.url.toHostHeader()`: the host, and `:port` unless default.
    public static func hostHeader(_ url: String) -> String? {
        guard let parts = split(url) else { return nil }
        return parts.host + (explicitPort(parts).map { ":" + $0 } ?? "")
    }

    public static func isHTTPS(_ url: String) -> Bool { url.lowercased().hasPrefix("https://") }

    /// `resolvePath`/`push`: segments after the first `/`; `.` dropped,
    /// `..` pops the last one (never the root); a trailing `.` or `..`
    /// leaves an empty last segment (a trailing `/`).
    static func resolvedPath(_ path: String) -> String {
        guard !path.isEmpty else { return "/" }
        let raw = path.dropFirst().split(separator: "/", omittingEmptySubsequences: false)
        var segments: [Substring] = []
        for (i, segment) in raw.enumerated() {
            let last = i == raw.count - 1
            let lower = segment.lowercased()
            if lower == "." || lower == "%2e" {
                if last { segments.append("") }
            } else if lower == ".." || lower == "%2e." || lower == ".%2e" || lower == "%2e%2e" {
                if !segments.isEmpty { segments.removeLast() }
                if last || segments.isEmpty { if last { segments.append("") } }
            } else {
                segments.append(segment)
            }
        }
        return "/" + segments.joined(separator: "/")
    }
}
