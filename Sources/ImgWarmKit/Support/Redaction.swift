import CCurl
#if canImport(Glibc)
import Glibc
#endif

/// Keeps secrets out of output. One rule everywhere (stderr, reports,
/// JUnit, the failed-URL list, curl's error text): the whole userinfo of a
/// URL becomes `***`, so `https://alice:s3cret@host/a.jpg` is written
/// `https://***@host/a.jpg`. The user name goes too: it is often the token
/// itself (`https://TOKEN@host`). The `***` stays visible, because a URL
/// whose credentials were removed cannot be fetched again as written
/// (`--retry-from` refuses such report entries).
public enum Redaction {
    public static let mask = "***"

    /// `url` with its userinfo masked; unchanged when it has none. Where
    /// the userinfo sits is libcurl's parse of it (`ParsedURL`). A text
    /// with an `@` that libcurl cannot parse at all is not shown.
    public static func url(_ url: String) -> String {
        // No userinfo without an "@": the common case costs one byte scan.
        guard hasAtSign(url) else { return url }
        guard case .success(let curl) = CurlURL.parse(url, lenient: true) else { return unparseable }
        return curl.hasCredentials ? redact(url, parsedBy: curl) : url
    }

    /// Whether `text` holds an `@`: memchr over a native string's bytes,
    /// since this runs for every response, and a scan of the UTF-8 view
    /// took 1,400 instructions a URL (callgrind).
    static func hasAtSign(_ text: String) -> Bool {
        text.utf8.withContiguousStorageIfAvailable { $0.count > 0 && memchr($0.baseAddress!, Int32(UInt8(ascii: "@")), $0.count) != nil }
            ?? text.utf8.contains(UInt8(ascii: "@"))
    }

    static let unparseable = "(a URL with '@' that does not parse; not shown)"

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
        var i = 0
        while i + 2 < b.count && !(b[i] == UInt8(ascii: ":") && b[i + 1] == UInt8(ascii: "/") && b[i + 2] == UInt8(ascii: "/")) { i += 1 }
        let start = i + 3
        if i + 2 < b.count, b.count - start >= userinfo.count, b[start..<(start + userinfo.count)].elementsEqual(userinfo) {
            return String(decoding: b[..<start], as: UTF8.self) + mask + "@" + String(decoding: b[(start + userinfo.count)...], as: UTF8.self)
        }
        return curl.renderedWithMaskedUserinfo() ?? unparseable
    }

    /// Whether a URL carries credentials.
    public static func hasUserInfo(_ url: String) -> Bool { Redaction.url(url) != url }

    /// Free text (curl's error buffer) with the userinfo of every URL in
    /// it masked, on one line. A URL in such text runs from its scheme to
    /// the next space or quote.
    static func inText(_ text: String) -> String {
        guard text.utf8.contains(UInt8(ascii: "@")) else { return URLText.oneLine(text) }
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
        return URLText.oneLine(out)
    }
}
