import CCurl
import Foundation

/// A manifest URL, parsed once, with everything a run needs of it: whether
/// it can be fetched at all, the URL an app requests and keys its cache by,
/// the per-host key, and its text for output with credentials removed.
///
/// Two libraries, each for what only it knows:
/// - Foundation's `URL(string:)` gives the app's URL. On Linux it is
///   swift-foundation's RFC 3986 parser, the code behind `URL` on Apple
///   systems, and apps linked on iOS 17 or later parse the same way: what
///   RFC 3986 does not allow in a component (non-ASCII, `" < > \ ^ ` { | }`
///   and space, a `%` that starts no valid escape) is percent-encoded as
///   UTF-8, the host IDNA-encoded. SDWebImage's key is then that URL's
///   `absoluteString`.
/// - libcurl's URL API (`curl_url`) parses that URL as the transfer will:
///   a URL it refuses could never be fetched, and the host and port it finds
///   are the ones it connects to.
public struct ParsedURL: Sendable, Equatable {
    /// The text as written in the manifest.
    public let text: String
    /// `URL(string: text)!.absoluteString`: the URL requested and the
    /// default cache key.
    public let absolute: String
    /// `scheme://host:port` in lowercase, with the scheme's default port
    /// when the URL names none: the key of the per-host limit.
    public let hostKey: String
    /// Whether the URL carries `user[:password]@`.
    public let hasCredentials: Bool
    /// `absolute` for output: userinfo, fragment and token query values
    /// masked (`Redaction`).
    public var redacted: String { Redaction.url(absolute) }

    /// Whether the app's URL differs from the manifest text (the text had
    /// characters RFC 3986 does not allow raw, or a non-ASCII host).
    public var reencoded: Bool { text != absolute }

    /// Why a text is not a URL imgwarm can fetch: a one-line reason.
    public struct Problem: Error, Equatable, Sendable {
        public let reason: String
    }

    /// Whether `bytes` start with `scheme:` as RFC 3986 writes it (a
    /// letter, then letters, digits, `+`, `-` or `.`); a host name with a
    /// dot before the colon (`cdn.example.com:8080/a.png`) or a port
    /// after it (`localhost:8080/a.png`) is a URL written without its
    /// scheme, not a scheme of its own.
    static func hasScheme(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let first = bytes.first, (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(first | 0x20) else { return false }
        for (i, c) in bytes.enumerated().dropFirst() {
            if c == UInt8(ascii: ":") {
                return !(i + 1 < bytes.count && (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[i + 1]))
            }
            let lower = c | 0x20
            let isSchemeChar = (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(lower)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(c) || c == UInt8(ascii: "+") || c == UInt8(ascii: "-")
            if !isSchemeChar { return false }
        }
        return false
    }

    /// Whether `scheme` is `http` or `https` in any case (compared as bytes:
    /// building the lowercased string took about 400 instructions a line).
    static func isHTTPScheme(_ b: UnsafeBufferPointer<UInt8>, _ scheme: Range<Int>) -> Bool {
        let s = scheme.lowerBound
        switch scheme.count {
        case 4: break
        case 5 where b[s + 4] | 0x20 == UInt8(ascii: "s"): break
        default: return false
        }
        return b[s] | 0x20 == UInt8(ascii: "h") && b[s + 1] | 0x20 == UInt8(ascii: "t") && b[s + 2] | 0x20 == UInt8(ascii: "t")
            && b[s + 3] | 0x20 == UInt8(ascii: "p")
    }

    /// Parses a manifest URL: http or https, a host, and nothing that
    /// Foundation or libcurl refuses. `previousHostKey`, the host key of
    /// the line before, is returned as this URL's when equal (the same
    /// string, not a new one: most lines of a manifest share their host).
    public static func parse(_ text: String, previousHostKey: String? = nil) -> Result<ParsedURL, Problem> {
        // The checks run on the text's own UTF-8 storage: copying it into
        // an array cost about 230 instructions a line.
        if let result = text.utf8.withContiguousStorageIfAvailable({ parse(text, bytes: $0, previousHostKey: previousHostKey) }) {
            return result
        }
        return Array(text.utf8).withUnsafeBufferPointer { parse(text, bytes: $0, previousHostKey: previousHostKey) }
    }

    /// `parse(text)` with `bytes` the UTF-8 of `text`.
    private static func parse(_ text: String, bytes: UnsafeBufferPointer<UInt8>,
                              previousHostKey: String?) -> Result<ParsedURL, Problem> {
        let syntax = URISyntax.parse(bytes)
        // Control characters would be percent-encoded by URL(string:), but
        // in a manifest they mean a broken line (and are terminal escapes
        // when echoed): refused as before, first. Text `URISyntax` accepts
        // holds none (each of its bytes is one RFC 3986 allows raw), so
        // only the rest is scanned (about 450 instructions a line saved).
        if syntax == nil && bytes.contains(where: { $0 < 0x20 || $0 == 0x7F }) {
            return .failure(Problem(reason: "URL contains a control character"))
        }
        if !hasScheme(bytes) {
            return .failure(Problem(reason: "no scheme (a manifest line starts with the whole URL, e.g. https://cdn.example.com/img/1.png)"))
        }
        let absolute: String
        var plainKey: String?
        if let syntax {
            // Already valid RFC 3986: URL(string:) would give it back as is.
            guard isHTTPScheme(bytes, syntax.scheme) else {
                let scheme = String(decoding: UnsafeBufferPointer(rebasing: bytes[syntax.scheme]), as: UTF8.self).lowercased()
                return .failure(Problem(reason: "unsupported scheme '\(TerminalText.clip(scheme))' (only http and https)"))
            }
            absolute = text
            plainKey = plainHostKey(bytes, syntax, previous: previousHostKey)
        } else {
            guard let url = URL(string: text) else {
                return .failure(Problem(reason: "not a valid URL, even percent-encoded" + (CurlURL.parseError(text, lenient: true).map { " (\($0))" } ?? "")))
            }
            guard let scheme = url.scheme?.lowercased() else { return .failure(Problem(reason: "not a URL")) }
            guard scheme == "http" || scheme == "https" else {
                return .failure(Problem(reason: "unsupported scheme '\(TerminalText.clip(scheme))' (only http and https)"))
            }
            guard let host = url.host, !host.isEmpty else { return .failure(Problem(reason: "URL has no host")) }
            absolute = url.absoluteString
        }
        if let plainKey {
            return .success(ParsedURL(text: text, absolute: absolute, hostKey: plainKey, hasCredentials: false))
        }
        return parsedByCurl(text: text, absolute: absolute)
    }

    /// The libcurl half of `parse`, for every URL `plainHostKey` does not
    /// take (and for the tests, which compare the two on every URL).
    static func parsedByCurl(text: String, absolute: String) -> Result<ParsedURL, Problem> {
        let curl: CurlURL
        switch CurlURL.parse(absolute, lenient: false) {
        case .success(let c): curl = c
        case .failure(let f): return .failure(Problem(reason: "libcurl cannot fetch it: \(f.message)"))
        }
        guard let curlScheme = curl.part(CURLUPART_SCHEME), let curlHost = curl.part(CURLUPART_HOST),
              let port = curl.part(CURLUPART_PORT) else {
            return .failure(Problem(reason: "URL has no host"))
        }
        // No userinfo without an "@" (saves two libcurl calls a line).
        let credentials = Redaction.hasAtSign(absolute) && curl.hasCredentials
        return .success(ParsedURL(
            text: text, absolute: absolute, hostKey: hostKey(scheme: curlScheme, host: curlHost, port: port),
            hasCredentials: credentials))
    }

    /// The host key of RFC 3986-valid http(s) text whose host libcurl
    /// returns exactly as written: a DNS name of letters, digits, `-` and
    /// `_`, in non-empty labels of which at least one is not a number
    /// (libcurl rewrites hosts of numbers only, such as `127.1` or
    /// `0x7f.1`, as IPv4), or an IPv4 address in its canonical dotted form;
    /// no userinfo; no port or a port of 1 to 65535 without leading zeros.
    /// Nil for anything else, which goes to libcurl. Why: asking libcurl
    /// is 14 k instructions a manifest line (parse, then three copied
    /// parts) against about 1 k here, and a plain name is nearly every line
    /// of a real manifest. `ParsedURLTests` compares this with libcurl's
    /// answer on generated URLs, odd hosts included.
    static func plainHostKey(_ bytes: [UInt8], _ syntax: URISyntax) -> String? {
        bytes.withUnsafeBufferPointer { plainHostKey($0, syntax) }
    }

    static func plainHostKey(_ b: UnsafeBufferPointer<UInt8>, _ syntax: URISyntax, previous: String? = nil) -> String? {
        guard b.count <= 8192, isHTTPScheme(b, syntax.scheme) else { return nil }
        let https = syntax.scheme.count == 5
        let end = syntax.authority.upperBound
        var i = syntax.authority.lowerBound
        var labelStart = i
        var allNumeric = true
        var labelNumeric = true
        var labelHex = false
        var labels = 0
        // The host: labels of [A-Za-z0-9_-] split by single dots.
        while true {
            let c: UInt8 = i < end ? b[i] : 0
            if c == UInt8(ascii: ".") || c == UInt8(ascii: ":") || i == end {
                guard i > labelStart else { return nil }
                labels += 1
                if !labelNumeric { allNumeric = false }
                if c != UInt8(ascii: ".") { break }
                i += 1
                labelStart = i
                labelNumeric = true
                labelHex = false
                continue
            }
            let lower = c | 0x20
            if c >= 0x30 && c <= 0x39 {
                // A digit keeps a label a number.
            } else if lower >= 0x61 && lower <= 0x7A {
                // "0x" then hex digits is a number too.
                if lower == UInt8(ascii: "x") && i == labelStart + 1 && b[labelStart] == UInt8(ascii: "0") {
                    labelHex = true
                } else if !(labelHex && lower <= UInt8(ascii: "f")) {
                    labelNumeric = false
                }
            } else if c == UInt8(ascii: "-") || c == UInt8(ascii: "_") {
                labelNumeric = false
            } else {
                return nil  // "@", "~", "%", sub-delims: libcurl decides.
            }
            i += 1
        }
        let hostEnd = i
        guard hostEnd - syntax.authority.lowerBound <= 253 else { return nil }
        if allNumeric && !isCanonicalIPv4(b, syntax.authority.lowerBound..<hostEnd, labels: labels) { return nil }
        var port = https ? 443 : 80
        if hostEnd < end {
            let digits = end - hostEnd - 1
            guard (1...5).contains(digits), b[hostEnd + 1] != UInt8(ascii: "0") else { return nil }
            port = 0
            for k in (hostEnd + 1)..<end {
                guard b[k] >= 0x30 && b[k] <= 0x39 else { return nil }
                port = port * 10 + Int(b[k] - 0x30)
            }
            guard port <= 65535 else { return nil }
        }
        return plainHostKeyText(https: https, host: UnsafeBufferPointer(rebasing: b[syntax.authority.lowerBound..<hostEnd]),
                                port: port, previous: previous)
    }

    /// `hostKey(scheme:host:port:)` for a host of ASCII letters, digits,
    /// `.`, `-` and `_`, written in one pass (lowercase ASCII is what
    /// `lowercased()` gives such a host), and `previous` itself when it
    /// holds the same bytes. Why: the general version, three strings joined
    /// then scanned, cost about 3 k instructions a manifest line; a new
    /// string written here about 800 (most of it the allocation), the
    /// previous one reused about 150.
    static func plainHostKeyText(https: Bool, host: UnsafeBufferPointer<UInt8>, port: Int, previous: String? = nil) -> String {
        // At most "https://" + 253 + ":" + 5 bytes (`plainHostKey`'s limit);
        // a longer host is never passed, but is still written whole.
        let capacity = 8 + host.count + 1 + 5
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: capacity) { out -> String in
            // Byte by byte: iterating a string literal's UTF-8 view cost
            // about 20 instructions a byte.
            out[0] = UInt8(ascii: "h")
            out[1] = UInt8(ascii: "t")
            out[2] = UInt8(ascii: "t")
            out[3] = UInt8(ascii: "p")
            var n = 4
            if https {
                out[n] = UInt8(ascii: "s")
                n += 1
            }
            out[n] = UInt8(ascii: ":")
            out[n + 1] = UInt8(ascii: "/")
            out[n + 2] = UInt8(ascii: "/")
            n += 3
            for c in host {
                out[n] = c >= UInt8(ascii: "A") && c <= UInt8(ascii: "Z") ? c | 0x20 : c
                n += 1
            }
            out[n] = UInt8(ascii: ":")
            n += 1
            var divisor = 10_000
            var rest = port
            var started = false
            while divisor > 0 {
                let digit = rest / divisor
                rest %= divisor
                if digit != 0 || started || divisor == 1 {
                    out[n] = UInt8(ascii: "0") + UInt8(digit)
                    n += 1
                    started = true
                }
                divisor /= 10
            }
            let key = UnsafeBufferPointer(rebasing: out[..<n])
            if let previous, previous.utf8.withContiguousStorageIfAvailable({ p in
                p.count == n && p.baseAddress.map { memcmp($0, key.baseAddress!, n) == 0 } == true
            }) == true {
                return previous
            }
            return String(decoding: key, as: UTF8.self)
        }
    }

    /// Four decimal parts of 0 to 255 without leading zeros.
    private static func isCanonicalIPv4(_ b: UnsafeBufferPointer<UInt8>, _ host: Range<Int>, labels: Int) -> Bool {
        guard labels == 4 else { return false }
        var value = 0
        var digits = 0
        for k in host.lowerBound...host.upperBound {
            if k == host.upperBound || b[k] == UInt8(ascii: ".") {
                guard digits > 0, value <= 255 else { return false }
                value = 0
                digits = 0
                continue
            }
            guard b[k] >= 0x30 && b[k] <= 0x39, !(digits == 1 && value == 0) else { return false }
            value = value * 10 + Int(b[k] - 0x30)
            digits += 1
            if digits > 3 { return false }
        }
        return true
    }

    /// The host key of a URL that did not come through `parse` (callers of
    /// the download engine that name no host key): "" when libcurl cannot
    /// parse it (the transfer then fails at once and holds no slot long).
    public static func hostKey(of url: String) -> String {
        guard case .success(let curl) = CurlURL.parse(url, lenient: false),
              let scheme = curl.part(CURLUPART_SCHEME), let host = curl.part(CURLUPART_HOST),
              let port = curl.part(CURLUPART_PORT) else { return "" }
        return hostKey(scheme: scheme, host: host, port: port)
    }

    /// `scheme://host:port` in lowercase, built in one allocation and
    /// lowercased only when it holds an uppercase or non-ASCII byte.
    static func hostKey(scheme: String, host: String, port: String) -> String {
        var key = ""
        key.reserveCapacity(scheme.utf8.count + host.utf8.count + port.utf8.count + 4)
        key += scheme
        key += "://"
        key += host
        key += ":"
        key += port
        let plain = key.utf8.withContiguousStorageIfAvailable { !$0.contains { ($0 >= 0x41 && $0 <= 0x5A) || $0 >= 0x80 } } ?? false
        return plain ? key : key.lowercased()
    }

    /// The URL without `?query` and `#fragment` (`--key-strip-query`).
    /// `absolute` is RFC 3986-valid, where the first `?` or `#` is where the
    /// query or fragment starts (neither may appear raw before it).
    public var absoluteWithoutQuery: String {
        guard let i = absolute.utf8.firstIndex(where: { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") }) else { return absolute }
        return String(absolute[..<i])
    }
}

/// One `curl_url` handle: a URL as libcurl parses it.
package final class CurlURL {
    private let handle: OpaquePointer

    private init(handle: OpaquePointer) { self.handle = handle }
    /// For the few edits imgwarm makes (userinfo).
    package var handleForEditing: OpaquePointer { handle }
    deinit { curl_url_cleanup(handle) }

    /// `lenient` also accepts other schemes, spaces and raw non-ASCII (for
    /// finding credentials in any text); strict is what a transfer accepts.
    package static func parse(_ text: String, lenient: Bool) -> Result<CurlURL, Failure> {
        guard let h = curl_url() else { return .failure(Failure(message: "out of memory", code: CURLUE_OUT_OF_MEMORY)) }
        let url = CurlURL(handle: h)
        let rc = imgwarm_url_set(h, text, lenient ? 1 : 0)
        guard rc == CURLUE_OK else { return .failure(Failure(message: String(cString: curl_url_strerror(rc)), code: rc)) }
        return .success(url)
    }

    package struct Failure: Error {
        let message: String
        let code: CURLUcode
    }

    static func parseError(_ text: String, lenient: Bool) -> String? {
        if case .failure(let f) = parse(text, lenient: lenient) { return f.message }
        return nil
    }

    /// A part as written in the URL (not decoded), or nil when absent.
    package func part(_ p: CURLUPart) -> String? {
        var out: UnsafeMutablePointer<CChar>?
        guard imgwarm_url_get(handle, p, &out) == CURLUE_OK, let out else { return nil }
        defer { curl_free(out) }
        return String(cString: out)
    }

    package var hasCredentials: Bool { part(CURLUPART_USER) != nil || part(CURLUPART_PASSWORD) != nil }

    /// libcurl's own rendering of the URL with the userinfo replaced by
    /// `***` (used when the userinfo cannot be found in the original text).
    func renderedWithMaskedUserinfo() -> String? {
        guard curl_url_set(handle, CURLUPART_PASSWORD, nil, 0) == CURLUE_OK,
              curl_url_set(handle, CURLUPART_USER, "***", 0) == CURLUE_OK else { return nil }
        return part(CURLUPART_URL)
    }
}
