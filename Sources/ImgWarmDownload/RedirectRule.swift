import CCurl
import ImgWarmSupport

/// imgwarm follows redirects itself, one hop at a time, instead of letting
/// libcurl follow them (CURLOPT_FOLLOWLOCATION), for two reasons that
/// libcurl cannot be told:
/// - custom headers (CURLOPT_HTTPHEADER) go to every host of a redirect
///   chain; only `Authorization` and `Cookie` are held back. Each hop gets
///   the headers of its own origin (`RequestHeaderRules`).
/// - an https URL that redirects to http must fail before the cleartext
///   request is made (an iOS app under App Transport Security refuses that
///   load, so the cached copy would never be shown), unless
///   `--allow-http-redirect`.
/// The decision for one response is this pure function; `CurlTransfer`
/// reads the facts and applies it.
enum RedirectRule {
    /// libcurl's default limit, which imgwarm kept.
    static let maxRedirects = 10

    /// The facts of one finished request.
    struct Hop: Equatable {
        var status: Int
        /// The raw `Location` header, if any.
        var location: String?
        /// libcurl's absolute URL for it (CURLINFO_REDIRECT_URL), nil when
        /// it could not make one.
        var resolved: String?
        /// The URL this request went to.
        var current: String
        /// The entry's URL (the first hop).
        var entry: String
        /// Redirects followed so far in this attempt.
        var followed: Int
        var allowHTTPRedirect: Bool
    }

    enum Decision: Equatable {
        case follow(url: String)
        case refuse(DownloadErrorClass, message: String)
    }

    /// The statuses libcurl follows: 301, 302, 303, 307, 308, and 300
    /// with a Location. (304 answers a conditional request; 305 and 306
    /// are obsolete.)
    static func isRedirect(_ status: Int) -> Bool {
        [300, 301, 302, 303, 307, 308].contains(status)
    }

    /// What to do with a response: nil when it is no redirect to follow
    /// (the classifier then decides; a 3xx without a Location fails as
    /// `http-status`).
    static func decide(_ hop: Hop) -> Decision? {
        guard isRedirect(hop.status), let location = hop.location, !location.isEmpty else { return nil }
        let shown = TerminalText.oneLine(Redaction.url(hop.resolved ?? location))
        guard hop.followed < maxRedirects else {
            return .refuse(.httpStatus, message: "too many redirects: more than \(maxRedirects), the last to \(shown)")
        }
        guard let resolved = hop.resolved, case .success(let target) = CurlURL.parse(resolved, lenient: false),
              let scheme = target.part(CURLUPART_SCHEME)?.lowercased() else {
            return .refuse(.invalidURL, message: "HTTP \(hop.status) to a Location that is not a URL: \(shown)")
        }
        guard scheme == "http" || scheme == "https" else {
            return .refuse(.invalidURL, message: "HTTP \(hop.status) to \(TerminalText.oneLine(scheme)): only http and https are allowed: \(shown)")
        }
        if scheme == "http", CurlTransfer.isHTTPS(hop.current), !hop.allowHTTPRedirect {
            return .refuse(.insecureRedirect, message:
                "insecure-redirect: https redirected to http (Location: \(shown)); an app under App Transport Security refuses it (--allow-http-redirect follows it)")
        }
        return .follow(url: withCredentialsPolicy(target, resolved: resolved, entry: hop.entry))
    }

    /// Credentials of the entry URL (`user:password@`) go to its origin
    /// only, as libcurl sends them since 7.83 (CVE-2022-27776): a hop to
    /// the same origin gets them back when its URL lacks them, a hop to
    /// another origin never carries any.
    static func withCredentialsPolicy(_ target: CurlURL, resolved: String, entry: String) -> String {
        let sameOrigin = ParsedURL.hostKey(of: resolved) == ParsedURL.hostKey(of: entry)
        if sameOrigin {
            guard !target.hasCredentials, Redaction.hasUserInfo(entry),
                  case .success(let e) = CurlURL.parse(entry, lenient: false) else { return resolved }
            return target.withUserinfo(user: e.part(CURLUPART_USER), password: e.part(CURLUPART_PASSWORD)) ?? resolved
        }
        guard target.hasCredentials else { return resolved }
        return target.withUserinfo(user: nil, password: nil) ?? resolved
    }
}

extension CurlURL {
    /// The URL with this userinfo (parts as written, percent-encoded), or
    /// none; nil when libcurl refuses.
    func withUserinfo(user: String?, password: String?) -> String? {
        guard curl_url_set(handleForEditing, CURLUPART_USER, user, 0) == CURLUE_OK,
              curl_url_set(handleForEditing, CURLUPART_PASSWORD, password, 0) == CURLUE_OK else { return nil }
        return part(CURLUPART_URL)
    }
}
