#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ImgWarmSupport

/// A URL as OkHttp's `HttpUrl.toString()` prints it, from a manifest's
/// http(s) URL as written (before imgwarm's RFC 3986 re-encoding, which
/// OkHttp does not do): OkHttp's cache keys and stores entries by that text
/// (`Cache.key`, `Entry.writeTo`), so a manifest URL written another way
/// must still find the app's entry. What `HttpUrl.Builder.parse` and
/// `toString` change of such a URL:
/// - the scheme in lowercase; the host percent-decoded, IDNA-encoded and
///   lowercased, an IPv6 host in its shortest form, an IPv4-mapped one as
///   IPv4 (`canonicalizeHost`);
/// - the port left out when it is the scheme's default (`defaultPort`);
/// - an empty path written `/`, `\` read as `/`, and `.`/`..` segments
///   (also `%2e`) resolved (`resolvePath`, `isDot`, `isDotDot`);
/// - in the path, `PATH_SEGMENT_ENCODE_SET` and non-ASCII percent-encoded;
///   in the query, `QUERY_ENCODE_SET` (`" \"'<>#"`) and non-ASCII; `%` kept
///   as written (`[1]` and `%zz` stay); the fragment as written.
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

    /// `canonicalizeHost`: the host percent-decoded, then an IPv6 literal
    /// as `inet6AddressToAscii` prints it (an IPv4-mapped one as the IPv4
    /// address `InetAddress.getByAddress` makes of it), a name through
    /// `domainToAscii` (IDNA, lowercase).
    static func canonicalHost(_ host: String) -> String {
        if host.hasPrefix("["), host.hasSuffix("]") {
            var address = in6_addr()
            let inner = String(host.dropFirst().dropLast())
            guard inet_pton(AF_INET6, inner, &address) == 1 else { return host.lowercased() }
            let bytes = withUnsafeBytes(of: &address) { Array($0) }
            return ipv6Text(bytes)
        }
        let decoded = percentDecoded(host)
        if decoded.utf8.allSatisfy({ $0 < 0x80 }) { return decoded.lowercased() }
        // Foundation's URL IDNA-encodes a non-ASCII host (as ParsedURL
        // relies on for a raw one).
        guard let absolute = URL(string: "http://" + decoded + "/")?.absoluteString,
              absolute.hasPrefix("http://"), absolute.hasSuffix("/") else { return decoded.lowercased() }
        return String(absolute.dropFirst(7).dropLast()).lowercased()
    }

    /// `inet6AddressToAscii`: lowercase hex groups, the first longest run
    /// of at least two zero groups as `::`; an IPv4-mapped address
    /// (`::ffff:a.b.c.d`) is an `Inet4Address` in Java, printed dotted.
    static func ipv6Text(_ bytes: [UInt8]) -> String {
        guard bytes.count == 16 else { return "" }
        if bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xFF && bytes[11] == 0xFF {
            return bytes[12...].map { String($0) }.joined(separator: ".")
        }
        var longestOffset = -1, longestLength = 0
        var i = 0
        while i < 16 {
            let start = i
            while i < 16 && bytes[i] == 0 && bytes[i + 1] == 0 { i += 2 }
            let length = i - start
            if length > longestLength && length >= 4 { longestOffset = start; longestLength = length }
            i += 2
        }
        var out = "["
        i = 0
        while i < 16 {
            if i == longestOffset {
                out += ":"
                i += longestLength
                if i == 16 { out += ":" }
            } else {
                if i > 0 { out += ":" }
                out += String(Int(bytes[i]) << 8 | Int(bytes[i + 1]), radix: 16)
                i += 2
            }
        }
        return out + "]"
    }

    /// `percentDecode`: `%XX` with two hex digits decoded, anything else kept.
    static func percentDecoded(_ text: String) -> String {
        guard text.contains("%") else { return text }
        let bytes = Array(text.utf8)
        var out: [UInt8] = []
        var i = 0
        while i < bytes.count {
            if bytes[i] == UInt8(ascii: "%"), i + 2 < bytes.count,
               let high = Hex.value(bytes[i + 1]), let low = Hex.value(bytes[i + 2]) {
                out.append(high << 4 | low)
                i += 3
            } else {
                out.append(bytes[i])
                i += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// `canonicalize` with `alreadyEncoded`: the bytes of `encodeSet` and
    /// non-ASCII (as UTF-8) become `%XX`; `%` is kept, valid escape or not.
    static func encoded(_ text: String, _ encodeSet: String) -> String {
        guard text.utf8.contains(where: { $0 >= 0x80 || encodeSet.utf8.contains($0) }) else { return text }
        var out = ""
        for c in text.utf8 {
            if c >= 0x80 || encodeSet.utf8.contains(c) {
                out += "%" + Hex.encode(CollectionOfOne(c), uppercase: true)
            } else {
                out.unicodeScalars.append(Unicode.Scalar(c))
            }
        }
        return out
    }

    /// HttpUrl's PATH_SEGMENT_ENCODE_SET and QUERY_ENCODE_SET (the fragment's is empty).
    static let pathEncodeSet = " \"<>^`{}|"
    static let queryEncodeSet = " \"'<>"

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
        // A backslash in the path is a slash to HttpUrl (`slashCount`, `delimiterOffset(input, pos, limit, "/\\")`).
        out += resolvedPath(encoded(parts.path.replacingOccurrences(of: "\\", with: "/"), pathEncodeSet))
        if let query = parts.query { out += "?" + encoded(query, queryEncodeSet) }
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
