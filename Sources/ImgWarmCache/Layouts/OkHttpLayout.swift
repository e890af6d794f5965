import Crypto
import Foundation
import ImgWarmSupport

/// OkHttp's HTTP cache (`okhttp3.Cache`, the same on disk from 3.x to
/// 5.x), which Picasso, Coil 1 and React Native's `fetch` keep their
/// images in:
/// - a DiskLruCache with app version 201105 and two values per entry
///   (`Cache.VERSION`, `ENTRY_COUNT`): `<key>.0` the response's metadata
///   (`ENTRY_METADATA`), `<key>.1` the body (`ENTRY_BODY`);
/// - key: `Cache.key(url)`, the lowercase hex MD5 of `HttpUrl.toString()`
///   (`OkHttpURL.canonical`);
/// - the metadata as `Cache.Entry.writeTo` writes it (`OkHttpLayout.metadata`).
///
/// The body is stored as libcurl decoded it, so the stored headers carry no
/// `Content-Encoding` and the decoded `Content-Length`; OkHttp's
/// `BridgeInterceptor` gunzips only a body whose headers say gzip.
/// `expiration` (warm's `--expiration`) replaces the response's freshness
/// headers with `Cache-Control: max-age=N`, so that `CacheStrategy` serves
/// the entry without network for that long after the warm.
public struct OkHttpLayout: DiskLruLayout {
    /// The max-age given by `--expiration`, in seconds; nil: the server's
    /// freshness headers as they came.
    public let maxAge: Int64?

    public init(maxAge: Int64? = nil) {
        self.maxAge = maxAge
    }

    public var kind: CacheLayoutKind { .okhttp }

    /// React Native's (`OkHttpClientProvider`: `new File(context.getCacheDir(), "http-cache")`).
    public var defaultFolder: String { "http-cache" }

    /// `Cache.kt` companion: VERSION = 201105, ENTRY_COUNT = 2; OkHttp's
    /// DiskLruCache rebuilds at 2,000 redundant lines and at least as many
    /// as there are entries (`journalRebuildRequired`).
    public static let journal = DiskLruJournal(appVersion: 201105, valueCount: 2)
    /// The smallest of the consumers' defaults: React Native's `http-cache`
    /// (`OkHttpClientProvider`: 10 MB).
    public static let defaultSizeLimit: UInt64 = 10 * 1024 * 1024

    /// `Cache.key`: `url.toString().encodeUtf8().md5().hex()`.
    public static func diskKey(_ url: String) -> String {
        Hex.encode(Insecure.MD5.hash(data: Array(OkHttpURL.canonical(url).utf8)))
    }

    /// `ENTRY_BODY`: the body in `<key>.1`, the metadata in `<key>.0`.
    public static let imageValue = 1
    /// MD5 hex.
    public static let diskKeyLength = 32

    /// React Native's `http-cache` and Picasso's `picasso-cache`
    /// (`Utils.PICASSO_CACHE`); Coil 1's `image_cache` is left to the names
    /// inside, as for Coil 2 and 3.
    public var defaultFolderNames: [String] { ["http-cache", "picasso-cache"] }

    public func makeBackend(folders: CacheFolders, writer: FileWriter) -> any CacheBackend {
        let maxAge = maxAge
        return OkHttpCacheIndex(journalIndex(folders: folders, writer: writer, metadata: { response in
            response.map { Array(Self.metadata($0, maxAge: maxAge).utf8) } ?? []
        }, metadataMode: 0o600))
    }

    /// OkHttp's entry holds the URL its key is made of (`Entry.matches`
    /// compares it with the request's `HttpUrl.toString()`), and every
    /// header and the TLS handshake.
    public func storedURL(url: String, key: String) -> String { key }
    public var keepsResponseDetail: Bool { true }

    public var manifestKeyRule: ManifestKeyRule? {
        ManifestKeyRule(layout: kind.rawValue, why: "OkHttp keys its cache by the request's URL (Cache.key: MD5 of HttpUrl.toString())",
                        key: { OkHttpURL.canonical($0) })
    }

    /// `--expiration`: whole seconds, at least 1; `never` as the largest
    /// max-age OkHttp reads (`toNonNegativeInt` clamps to Int.MAX_VALUE).
    public static func maxAge(_ expiration: KingfisherLayout.Expiration) -> Int64 {
        switch expiration {
        case .never: return Int64(Int32.max)
        case .seconds(let s): return max(1, min(Int64(Int32.max), Int64(s.rounded(.down))))
        }
    }


    /// Why OkHttp would never serve this response from its cache, or nil:
    /// `Cache.put` stores nothing for `Vary: *` (`hasVaryAll`), and
    /// `CacheStrategy.isCacheable` refuses other statuses than its list
    /// and `no-store` (response's `cacheControl.noStore`).
    public static func neverServed(_ response: StoredResponse) -> String? {
        let cacheable: Set<Int> = [200, 203, 204, 300, 301, 404, 405, 410, 414, 501, 308]
        if !cacheable.contains(response.status) { return "status \(response.status) is never served from OkHttp's cache" }
        let fields = response.headerFields
        for field in fields where field.name.caseInsensitiveCompare("Cache-Control") == .orderedSame
            || field.name.caseInsensitiveCompare("Pragma") == .orderedSame {
            let directives = field.value.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            if field.name.caseInsensitiveCompare("Cache-Control") == .orderedSame,
               directives.contains(where: { $0 == "no-store" || $0.hasPrefix("no-store=") }) {
                return "Cache-Control: no-store: OkHttp never serves such a response from its cache"
            }
        }
        if varyFields(fields).contains("*") { return "Vary: *: OkHttp never stores such a response" }
        return nil
    }

    /// `Headers.varyFields()`: the comma-separated names of every `Vary`
    /// header, trimmed, case-insensitively unique, in a case-insensitive
    /// order (a `TreeSet(String.CASE_INSENSITIVE_ORDER)`).
    static func varyFields(_ fields: [HeaderField]) -> [String] {
        // A set of the lowercased names: a server's Vary of thousands of
        // names stays linear (a search of the list per name took a minute
        // of CPU for 14,000 names).
        var names: [String] = []
        var seen: Set<String> = []
        for field in fields where field.name.caseInsensitiveCompare("Vary") == .orderedSame {
            for name in field.value.split(separator: ",", omittingEmptySubsequences: false) {
                let trimmed = name.trimmingCharacters(in: .whitespaces)
                if seen.insert(trimmed.lowercased()).inserted { names.append(trimmed) }
            }
        }
        return names
    }

    /// The request headers OkHttp's cache sees for a plain GET of `url`:
    /// the cache sits below `BridgeInterceptor`, which adds, in this order,
    /// `Host` (`toHostHeader`), `Connection: Keep-Alive` and
    /// `Accept-Encoding: gzip`. (Its `User-Agent: okhttp/<version>` and an
    /// app's own headers are not known here.)
    static func bridgeRequestHeaders(_ url: String) -> [HeaderField] {
        var headers: [HeaderField] = []
        if let host = OkHttpURL.hostHeader(url) { headers.append(HeaderField("Host", host)) }
        headers.append(HeaderField("Connection", "Keep-Alive"))
        headers.append(HeaderField("Accept-Encoding", "gzip"))
        return headers
    }

    /// `CacheInterceptor.isEndToEnd`'s hop-by-hop headers.
    static let hopByHop: Set<String> = ["connection", "keep-alive", "proxy-authenticate", "proxy-authorization",
                                        "te", "trailers", "transfer-encoding", "upgrade"]
    /// What `--expiration` replaces: the headers `CacheStrategy` computes
    /// freshness and age from besides `Date` and `Last-Modified`.
    static let freshnessHeaders: Set<String> = ["cache-control", "expires", "pragma", "age"]

    /// The response headers stored: the server's, hop-by-hop ones dropped,
    /// `Content-Encoding` dropped and `Content-Length` set to the decoded
    /// body's length, freshness replaced under `maxAge`.
    static func storedHeaders(_ response: StoredResponse, bodyLength: Int?, maxAge: Int64?) -> [HeaderField] {
        var out: [HeaderField] = []
        for field in response.headerFields {
            let name = field.name.lowercased()
            if hopByHop.contains(name) || name == "content-encoding" { continue }
            if name == "content-length" { continue }
            if maxAge != nil && freshnessHeaders.contains(name) { continue }
            if field.name.contains(where: { $0 == "\n" || $0 == "\r" }) || field.value.contains(where: { $0 == "\n" || $0 == "\r" }) { continue }
            out.append(field)
        }
        if let bodyLength { out.append(HeaderField("Content-Length", String(bodyLength))) }
        if let maxAge { out.append(HeaderField("Cache-Control", "max-age=\(maxAge)")) }
        return out
    }

    /// `Cache.Entry.writeTo`:
    ///
    ///     <url>                        HttpUrl.toString()
    ///     GET                          request method
    ///     <n>                          varying request headers, then n "Name: value" lines
    ///     HTTP/1.1 200 <message>       StatusLine.toString()
    ///     <m + 2>                      response headers, m "Name: value" lines,
    ///     OkHttp-Sent-Millis: <ms>     then the two synthetic ones
    ///     OkHttp-Received-Millis: <ms>
    ///     (https only:)
    ///                                  blank
    ///     <cipher suite>               Java (IANA) name
    ///     <k>                          peer certificates, k base64 DER lines
    ///     0                            local certificates
    ///     TLSv1.3                      TlsVersion.javaName
    ///
    /// The body length comes from the response's `Content-Length` as
    /// stored (`bodyLength`), set by the index before writing.
    public static func metadata(_ response: StoredResponse, maxAge: Int64?, bodyLength: Int? = nil) -> String {
        let url = OkHttpURL.canonical(response.url)
        let responseHeaders = storedHeaders(response, bodyLength: bodyLength ?? response.bodyLength, maxAge: maxAge)
        // `Response.varyHeaders()`: the request's headers named by Vary, in
        // the request's order.
        let vary = varyFields(response.headerFields)
        let varying = bridgeRequestHeaders(url).filter { h in vary.contains { $0.caseInsensitiveCompare(h.name) == .orderedSame } }
        var text = url + "\nGET\n\(varying.count)\n"
        for h in varying { text += "\(h.name): \(h.value)\n" }
        // StatusLine.toString(): HTTP/1.0 for an HTTP/1.0 response, else
        // HTTP/1.1 (h2 too); libcurl does not hand over the reason phrase,
        // and an HTTP/2 response has none: the message stays empty.
        text += (response.httpVersion == 10 ? "HTTP/1.0" : "HTTP/1.1") + " \(response.status) \n"
        text += "\(responseHeaders.count + 2)\n"
        for h in responseHeaders { text += "\(h.name): \(h.value)\n" }
        text += "OkHttp-Sent-Millis: \(response.requestedAt)\n"
        text += "OkHttp-Received-Millis: \(response.receivedAt)\n"
        if OkHttpURL.isHTTPS(url), let tls = response.tls, let version = javaTLSVersion(tls.version) {
            text += "\n\(tls.cipherSuite)\n\(tls.peerCertificates.count)\n"
            for der in tls.peerCertificates { text += Data(der).base64EncodedString() + "\n" }
            text += "0\n\(version)\n"
        }
        return text
    }

    /// `TlsVersion.forJavaName` knows these; another name would make the
    /// entry unreadable.
    static func javaTLSVersion(_ name: String) -> String? {
        ["TLSv1.3", "TLSv1.2", "TLSv1.1", "TLSv1", "SSLv3"].contains(name) ? name : nil
    }
}
