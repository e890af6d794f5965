import Foundation

/// URL text for messages and scheduling: secrets removed, host extracted.
/// Plain string scanning on purpose: the input may be malformed (that is what
/// an `invalid-url` failure reports), and Foundation's URL parsers reject or
/// rewrite exactly those inputs.
enum URLText {
    /// `url` without `user:password@`.
    static func redacted(_ url: String) -> String {
        redactingURLs(in: url)
    }

    /// Every `scheme://user:password@host` in `text` without its userinfo, on
    /// one line. For curl's error buffer, which may quote a URL. Works on
    /// bytes: a combining mark after `://` or `@` would merge with it into
    /// one Character and hide it from a Character search (see Redaction).
    static func redactingURLs(in text: String) -> String {
        let b = Array(text.utf8)
        var out: [UInt8] = []
        out.reserveCapacity(b.count)
        var i = 0
        while i < b.count {
            if i + 2 < b.count && b[i] == UInt8(ascii: ":") && b[i + 1] == UInt8(ascii: "/") && b[i + 2] == UInt8(ascii: "/") {
                out += [b[i], b[i + 1], b[i + 2]]
                let start = i + 3
                var end = start
                while end < b.count && !authorityEnds(b[end]) { end += 1 }
                let from = b[start..<end].lastIndex(of: UInt8(ascii: "@")).map { $0 + 1 } ?? start
                out += b[from..<end]
                i = end
            } else {
                out.append(b[i])
                i += 1
            }
        }
        return oneLine(String(decoding: out, as: UTF8.self))
    }

    private static func authorityEnds(_ c: UInt8) -> Bool {
        switch c {
        case UInt8(ascii: "/"), UInt8(ascii: "?"), UInt8(ascii: "#"), UInt8(ascii: "\\"), UInt8(ascii: " "),
             UInt8(ascii: "\t"), UInt8(ascii: "\r"), UInt8(ascii: "\n"), UInt8(ascii: "\""), UInt8(ascii: "'"),
             UInt8(ascii: "<"), UInt8(ascii: ">"):
            return true
        default:
            return false
        }
    }

    /// Control characters (CR, LF, tabs) become spaces: messages are one line.
    static func oneLine(_ text: String) -> String {
        // Fast path: printable ASCII, the common case for URLs.
        if text.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) {
            return text.utf8.first == 0x20 || text.utf8.last == 0x20 ? text.trimmingCharacters(in: .whitespaces) : text
        }
        return String(text.unicodeScalars.map { $0.properties.generalCategory == .control ? " " : Character($0) })
            .trimmingCharacters(in: .whitespaces)
    }

    /// `scheme://host:port` lowercased, without userinfo: the key of the
    /// per-host limit. Unparseable URLs share the key "" (curl rejects them
    /// at once, so they never hold a slot for long).
    static func hostKey(_ url: String) -> String {
        // A byte scan: called once per request, and the Character-level
        // version (grapheme breaking for every byte) was 5% of a warm's
        // user CPU. The delimiters are ASCII, so byte offsets are safe.
        var url = url
        return url.withUTF8 { hostKey($0) }
    }

    private static func hostKey(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        let colon = UInt8(ascii: ":"), slash = UInt8(ascii: "/")
        var sep = 0
        while sep + 2 < bytes.count, !(bytes[sep] == colon && bytes[sep + 1] == slash && bytes[sep + 2] == slash) {
            sep += 1
        }
        guard sep + 2 < bytes.count else { return "" }
        var end = sep + 3
        while end < bytes.count, bytes[end] != slash, bytes[end] != UInt8(ascii: "?"), bytes[end] != UInt8(ascii: "#") {
            end += 1
        }
        var hostStart = sep + 3
        for i in stride(from: end - 1, through: sep + 3, by: -1) where bytes[i] == UInt8(ascii: "@") {
            hostStart = i + 1
            break
        }
        let scheme = String(decoding: UnsafeBufferPointer(rebasing: bytes[0..<sep]), as: UTF8.self)
        let authority = String(decoding: UnsafeBufferPointer(rebasing: bytes[hostStart..<end]), as: UTF8.self)
        return (scheme + "://" + authority).lowercased()
    }
}
