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
    /// one line. For curl's error buffer, which may quote a URL.
    static func redactingURLs(in text: String) -> String {
        var out = Substring(text)
        var result = ""
        while let sep = out.range(of: "://") {
            result += out[..<sep.upperBound]
            let rest = out[sep.upperBound...]
            let authorityEnd = rest.firstIndex(where: { "/?#\\ \t\r\n\"'<>".contains($0) }) ?? rest.endIndex
            let authority = rest[..<authorityEnd]
            if let at = authority.lastIndex(of: "@") {
                result += authority[authority.index(after: at)...]
            } else {
                result += authority
            }
            out = rest[authorityEnd...]
        }
        result += out
        return oneLine(result)
    }

    /// Control characters (CR, LF, tabs) become spaces: messages are one line.
    static func oneLine(_ text: String) -> String {
        String(text.unicodeScalars.map { $0.properties.generalCategory == .control ? " " : Character($0) })
            .trimmingCharacters(in: .whitespaces)
    }

    /// `scheme://host:port` lowercased, without userinfo: the key of the
    /// per-host limit. Unparseable URLs share the key "" (curl rejects them
    /// at once, so they never hold a slot for long).
    static func hostKey(_ url: String) -> String {
        guard let sep = url.range(of: "://") else { return "" }
        let scheme = url[..<sep.lowerBound]
        let rest = url[sep.upperBound...]
        let authorityEnd = rest.firstIndex(where: { "/?#".contains($0) }) ?? rest.endIndex
        var authority = rest[..<authorityEnd]
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        return (scheme + "://" + authority).lowercased()
    }
}
