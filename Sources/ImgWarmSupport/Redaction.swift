import CCurl
#if canImport(Glibc)
import Glibc
#endif

/// Keeps secrets out of output. One rule for everything imgwarm prints or
/// writes (stderr, `-v` lines, the JSON report and its `key` field, JUnit,
/// metrics, `cache failed`, the state database, curl's error text):
///
/// - the whole userinfo becomes `***`: `https://alice:s3cret@host/a.jpg` is
///   written `https://***@host/a.jpg` (the user name goes too: it is often
///   the token itself, `https://TOKEN@host`);
/// - a fragment becomes `#***` (apps and CDNs carry tokens there too);
/// - the value of every query parameter, and of every path parameter
///   (`/a;token=abc/b.png`, RFC 3986 section 3.3), whose name is a token or
///   signature name becomes `***`: `?X-Amz-Signature=abc&w=200` is written
///   `?X-Amz-Signature=***&w=200`. Names compare after percent-decoding,
///   without case, with `-` and `_` alike and without a `[]` suffix
///   (`Access-Token[]` is `access_token`); the list is `defaultQueryNames`
///   plus `--redact-query`.
///
/// The `***` stays visible, because a URL whose secrets were removed cannot
/// be fetched again as written (`--retry-from` refuses such report
/// entries). Cache keys (file names) are computed from the real URL; only
/// their display goes through this rule.
public enum Redaction {
    public static let mask = "***"

    /// Query parameters whose values are credentials, tokens or signatures
    /// (AWS SigV4 and CloudFront, Google Cloud Storage V4, Azure SAS,
    /// Akamai EdgeAuth, OAuth bearer tokens, generic API keys), lowercase.
    /// `key` stays although it is also a manifest field name (`key=` of a
    /// manifest line is parsed before any URL is shown, and its value, the
    /// app's cache key, is masked by this same rule where it is shown).
    public static let defaultQueryNames: [String] = [
        "token", "access_token", "refresh_token", "id_token", "session_token", "auth", "auth_token", "authorization",
        "bearer", "jwt", "key", "api_key", "apikey", "x-api-key", "access_key", "secret", "client_secret",
        "password", "passwd", "sig", "signature", "hmac",
        "x-amz-signature", "x-amz-credential", "x-amz-security-token",
        "x-goog-signature", "x-goog-credential", "x-goog-security-token",
        "policy", "key-pair-id", "hdnts", "hdnea", "__gda__",
    ]

    /// The names in force, normalized (`normalizedName`): the defaults and
    /// those added by `--redact-query` (set once at start, before any
    /// thread reads it).
    public private(set) nonisolated(unsafe) static var queryNames: Set<String> =
        Set(defaultQueryNames.map { normalizedName(Array($0.utf8)) })

    /// Adds names to the list (`--redact-query NAME`), without case.
    public static func addQueryNames<S: Sequence>(_ names: S) where S.Element == String {
        for name in names { queryNames.insert(normalizedName(Array(name.utf8))) }
        longestName = queryNames.reduce(0) { max($0, $1.utf8.count) }
    }

    /// A parameter name as the list compares it: percent-decoded,
    /// lowercase, `-` as `_`, without a trailing `[]` (PHP and Rails
    /// array parameters).
    static func normalizedName(_ raw: [UInt8]) -> String {
        var b = percentDecoded(raw).map { c -> UInt8 in
            if c >= 0x41 && c <= 0x5A { return c | 0x20 }
            return c == UInt8(ascii: "-") ? UInt8(ascii: "_") : c
        }
        if b.count > 2, b[b.count - 2] == UInt8(ascii: "["), b[b.count - 1] == UInt8(ascii: "]") { b.removeLast(2) }
        return String(decoding: b, as: UTF8.self)
    }

    private nonisolated(unsafe) static var longestName = queryNames.reduce(0) { max($0, $1.utf8.count) }

    /// `url` with its userinfo, fragment and token query values masked;
    /// unchanged when it has none. Where the userinfo sits is libcurl's
    /// parse of it (`ParsedURL`). A text with an `@` that libcurl cannot
    /// parse at all is not shown.
    public static func url(_ url: String) -> String {
        // Nothing to mask without "@", "?" or "#": one byte scan, the
        // common case, since this runs for every printed entry.
        let marks = markBytes(url)
        guard marks != 0 else { return url }
        var text = url
        // Userinfo only after a scheme: a cache key such as `a@2x.png`
        // has none.
        if marks & hasAt != 0, url.utf8.count > 3, url.contains("://") {
            guard case .success(let curl) = CurlURL.parse(url, lenient: true) else { return unparseable }
            if curl.hasCredentials {
                text = redact(url, parsedBy: curl)
                if text == unparseable { return text }
            }
        }
        return marks & (hasQuery | hasFragment | hasSemicolon) != 0 ? maskQueryAndFragment(text) : text
    }

    /// Whether the URL carries anything `url(_:)` masks, whatever its value
    /// (a report's `token=***` counts: its real value is gone).
    public static func hasSecrets(_ text: String) -> Bool {
        let marks = markBytes(text)
        guard marks != 0 else { return false }
        if url(text) != text { return true }
        // Already masked: a masked part is still a secret the text lacks.
        if marks & hasAt != 0, hasUserInfo(text) { return true }
        if let f = text.utf8.firstIndex(of: UInt8(ascii: "#")), text.utf8.index(after: f) != text.utf8.endIndex { return true }
        return marks & (hasQuery | hasSemicolon) != 0
            && queryParameters(text).contains { $0.value != nil && queryNames.contains($0.name) }
    }

    private static let hasAt: UInt8 = 1, hasQuery: UInt8 = 2, hasFragment: UInt8 = 4, hasSemicolon: UInt8 = 8

    /// Which of "@", "?", "#" and ";" the text holds: memchr over a native
    /// string's bytes (a scan of the UTF-8 view took 1,400 instructions a
    /// URL, callgrind).
    package static func markBytes(_ text: String) -> UInt8 {
        func scan(_ p: UnsafeBufferPointer<UInt8>) -> UInt8 {
            guard let base = p.baseAddress, p.count > 0 else { return 0 }
            var m: UInt8 = 0
            if memchr(base, Int32(UInt8(ascii: "@")), p.count) != nil { m |= hasAt }
            if memchr(base, Int32(UInt8(ascii: "?")), p.count) != nil { m |= hasQuery }
            if memchr(base, Int32(UInt8(ascii: "#")), p.count) != nil { m |= hasFragment }
            if memchr(base, Int32(UInt8(ascii: ";")), p.count) != nil { m |= hasSemicolon }
            return m
        }
        if let m = text.utf8.withContiguousStorageIfAvailable(scan) { return m }
        return Array(text.utf8).withUnsafeBufferPointer(scan)
    }

    /// Whether `text` holds an `@`.
    static func hasAtSign(_ text: String) -> Bool { markBytes(text) & hasAt != 0 }

    static let unparseable = "(a URL with '@' that does not parse; not shown)"

    /// The index after the first "://", or nil.
    package static func authorityStart(_ b: [UInt8]) -> Int? {
        var i = 0
        while i + 2 < b.count {
            if b[i] == UInt8(ascii: ":") && b[i + 1] == UInt8(ascii: "/") && b[i + 2] == UInt8(ascii: "/") { return i + 3 }
            i += 1
        }
        return nil
    }

    /// `text` with the userinfo that `curl` found in it masked. The
    /// userinfo, as written, follows the first "://"; when libcurl changed
    /// its spelling (lenient parsing percent-encodes) its own rendering of
    /// the URL is used instead.
    static func redact(_ text: String, parsedBy curl: CurlURL) -> String {
        // Bytes, not Characters: a combining mark after "://" or "@" merges
        // with it into one Character and defeats a Character search (found
        // by scripts/fuzz.sh).
        let b = Array(text.utf8)
        let userinfo = Array(((curl.part(CURLUPART_USER) ?? "") + (curl.part(CURLUPART_PASSWORD).map { ":" + $0 } ?? "") + "@").utf8)
        if let start = authorityStart(b), b.count - start >= userinfo.count, b[start..<(start + userinfo.count)].elementsEqual(userinfo) {
            return String(decoding: b[..<start], as: UTF8.self) + mask + "@" + String(decoding: b[(start + userinfo.count)...], as: UTF8.self)
        }
        return curl.renderedWithMaskedUserinfo() ?? unparseable
    }

    /// The path and query parameters of a text: names normalized
    /// (`normalizedName`), and where each value lies in the text's bytes.
    static func queryParameters(_ text: String) -> [(name: String, value: Range<Int>?)] {
        let b = Array(text.utf8)
        var out: [(String, Range<Int>?)] = []
        forEachParameter(b) { name, eq, end in
            out.append((normalizedName(Array(b[name..<(eq ?? end)])), eq.map { ($0 + 1)..<end }))
        }
        return out
    }

    /// Calls `body(nameStart, equalsSign, end)` for each parameter: the
    /// path's `;name=value` (up to the next `;`, `/`, `?` or `#`), then the
    /// query's `name=value` (split at `&` and `;`, up to the `#`).
    static func forEachParameter(_ b: [UInt8], _ body: (Int, Int?, Int) -> Void) {
        let fragment = b.firstIndex(of: UInt8(ascii: "#")) ?? b.count
        let query = b[..<fragment].firstIndex(of: UInt8(ascii: "?")) ?? fragment
        var i = 0
        while let semicolon = b[i..<query].firstIndex(of: UInt8(ascii: ";")) {
            let start = semicolon + 1
            var end = start
            var eq: Int?
            while end < query, b[end] != UInt8(ascii: ";"), b[end] != UInt8(ascii: "/") {
                if eq == nil, b[end] == UInt8(ascii: "=") { eq = end }
                end += 1
            }
            body(start, eq, end)
            i = end
        }
        guard query < fragment else { return }
        i = query + 1
        while i < fragment {
            var next = i
            var eq: Int?
            while next < fragment, b[next] != UInt8(ascii: "&"), b[next] != UInt8(ascii: ";") {
                if eq == nil, b[next] == UInt8(ascii: "=") { eq = next }
                next += 1
            }
            body(i, eq, next)
            i = next + 1
        }
    }

    /// The path and query values of listed names, and the fragment,
    /// masked. The query starts at the first "?", the fragment at the first
    /// "#" (in a URL neither may appear raw before). A name is looked up
    /// only when no longer than the longest listed one (names up to 15
    /// bytes are Swift small strings: no allocation).
    static func maskQueryAndFragment(_ text: String) -> String {
        let b = Array(text.utf8)
        let fragment = b.firstIndex(of: UInt8(ascii: "#")) ?? b.count
        var out: [UInt8] = []
        var copied = 0
        func mask(_ range: Range<Int>) {
            if out.isEmpty { out.reserveCapacity(b.count) }
            out += b[copied..<range.lowerBound]
            out += Redaction.mask.utf8
            copied = range.upperBound
        }
        let longest = longestQueryName
        forEachParameter(b) { name, eq, end in
            // name=value with a value, and a name short enough to be listed
            // (percent-encoding at most triples a name's length; `[]` adds 6).
            guard let eq, eq > name, eq + 1 < end, eq - name <= 3 * longest + 6 else { return }
            if queryNames.contains(normalizedName(Array(b[name..<eq]))) { mask((eq + 1)..<end) }
        }
        if fragment + 1 < b.count { mask((fragment + 1)..<b.count) }
        guard copied > 0 else { return text }
        out += b[copied...]
        return String(decoding: out, as: UTF8.self)
    }

    private static var longestQueryName: Int { longestName }

    static func percentDecoded(_ b: [UInt8]) -> [UInt8] {
        guard b.contains(UInt8(ascii: "%")) || b.contains(UInt8(ascii: "+")) else { return b }
        var out: [UInt8] = []
        var i = 0
        while i < b.count {
            if b[i] == UInt8(ascii: "%"), i + 2 < b.count, let h = Hex.value(b[i + 1]), let l = Hex.value(b[i + 2]) {
                out.append(h << 4 | l)
                i += 3
            } else {
                out.append(b[i] == UInt8(ascii: "+") ? UInt8(ascii: " ") : b[i])
                i += 1
            }
        }
        return out
    }

    static func lowercasedASCII(_ b: [UInt8]) -> String {
        String(decoding: b.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }, as: UTF8.self)
    }

    /// A word of a manifest line that a message would quote (a bad
    /// `priority=` value, an unknown field name, stray text after a URL):
    /// shown only when it is short and plain (at most `plainWordLimit`
    /// letters, digits, `.`, `_`, `-`) and not a listed name, so that a
    /// misplaced token or signature is never echoed; else its length only.
    public static func manifestWord(_ word: String) -> String {
        let b = Array(word.utf8)
        let plain = !b.isEmpty && b.count <= plainWordLimit && b.allSatisfy {
            ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A)
                || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-")
        }
        if plain && !queryNames.contains(normalizedName(b)) { return "'" + word + "'" }
        return "(\(b.count) bytes, not shown: it may be a secret)"
    }

    /// Longer words are more likely a token than a typo of a field name.
    static let plainWordLimit = 16

    /// Whether a URL carries credentials.
    public static func hasUserInfo(_ url: String) -> Bool {
        guard hasAtSign(url), case .success(let curl) = CurlURL.parse(url, lenient: true) else { return false }
        return curl.hasCredentials
    }

    /// Free text (curl's error buffer, a server's message) with every URL
    /// in it redacted, on one line, escaped for a terminal. A URL in such
    /// text runs from its scheme to the next space or quote.
    package static func inText(_ text: String) -> String {
        guard markBytes(text) != 0 else { return TerminalText.oneLine(text) }
        var out = ""
        var token = ""
        func flush() {
            out += token.contains("://") ? url(token) : token
            token = ""
        }
        for scalar in text.unicodeScalars {
            if scalar == " " || scalar == "\t" || scalar == "\n" || scalar == "\r" || scalar == "\"" || scalar == "'"
                || scalar == "<" || scalar == ">" {
                flush()
                out.unicodeScalars.append(scalar)
            } else {
                token.unicodeScalars.append(scalar)
            }
        }
        flush()
        return TerminalText.oneLine(out)
    }
}
