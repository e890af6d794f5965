/// Keeps secrets out of output: `user:password@` in a URL becomes `***@`.
public enum Redaction {
    public static func url(_ url: String) -> String {
        guard let schemeEnd = url.range(of: "://") else { return url }
        let afterScheme = url[schemeEnd.upperBound...]
        let authorityEnd = afterScheme.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? afterScheme.endIndex
        let authority = afterScheme[..<authorityEnd]
        guard let at = authority.lastIndex(of: "@") else { return url }
        return String(url[..<schemeEnd.upperBound]) + "***" + String(url[at...])
    }

    /// Whether a URL carries credentials.
    public static func hasUserInfo(_ url: String) -> Bool { Redaction.url(url) != url }
}
