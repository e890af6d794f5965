/// Keeps secrets out of output: `user:password@` in a URL becomes `***@`.
public enum Redaction {
    public static func url(_ url: String) -> String {
        // Bytes, not Characters: a combining mark right after "://" or "@"
        // merges with it into one Character, and a Character search then
        // missed the separator and printed the password (found by
        // scripts/fuzz.sh). "://", "@", "/", "?" and "#" are ASCII, so byte
        // offsets are exact.
        let b = Array(url.utf8)
        var i = 0
        var authorityStart: Int?
        while i + 2 < b.count {
            if b[i] == UInt8(ascii: ":") && b[i + 1] == UInt8(ascii: "/") && b[i + 2] == UInt8(ascii: "/") {
                authorityStart = i + 3
                break
            }
            i += 1
        }
        guard let start = authorityStart else { return url }
        var end = start
        while end < b.count && b[end] != UInt8(ascii: "/") && b[end] != UInt8(ascii: "?") && b[end] != UInt8(ascii: "#") { end += 1 }
        guard let at = b[start..<end].lastIndex(of: UInt8(ascii: "@")) else { return url }
        return String(decoding: b[..<start], as: UTF8.self) + "***" + String(decoding: b[at...], as: UTF8.self)
    }

    /// Whether a URL carries credentials.
    public static func hasUserInfo(_ url: String) -> Bool { Redaction.url(url) != url }
}
