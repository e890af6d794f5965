import Crypto
import Foundation
import Testing
@testable import ImgWarmSupport
@testable import ImgWarmDecode
@testable import ImgWarmDownload
@testable import ImgWarmCache
@testable import ImgWarmInspect
@testable import ImgWarmReport
@testable import ImgWarmWarm

/// `--layout okhttp`: OkHttp's HTTP cache, from square/okhttp
/// (okhttp/src/commonJvmAndroid/kotlin/okhttp3/Cache.kt and
/// okhttp3/internal/..., cited per constant).
@Suite struct OkHttpLayoutTests {
    /// Cache.kt companion: `VERSION = 201105`, `ENTRY_METADATA = 0`,
    /// `ENTRY_BODY = 1`, `ENTRY_COUNT = 2` (Cache.kt:741-744); the journal
    /// header `libcore.io.DiskLruCache`, `1` (DiskLruCache.kt MAGIC, VERSION_1).
    @Test func journalIsAppVersion201105WithTwoValues() {
        #expect(OkHttpLayout.journal.header == "libcore.io.DiskLruCache\n1\n201105\n2\n\n")
        #expect(OkHttpLayout.journal.rebuildNeedsEntryCount)
        #expect(OkHttpLayout().entryName(forKey: "http://a.b/x.png").storedName.hasSuffix(".1"))
    }

    /// `Headers.varyFields()`: names of every `Vary` header, trimmed and
    /// unique without regard to case; `*` among them means "never stored".
    @Test func varyFieldsAreUniqueWithoutRegardToCase() {
        let fields = [HeaderField("Vary", "Accept-Encoding, accept-encoding ,Origin"), HeaderField("vary", "ORIGIN, *")]
        #expect(OkHttpLayout.varyFields(fields) == ["Accept-Encoding", "Origin", "*"])
    }

    /// A hostile server's Vary of 14,000 names (87 KB) stays linear: it took
    /// a minute of CPU when each name searched the list of those before it.
    @Test func aHugeVaryIsLinear() {
        let names = (0..<14_000).map { "X-Name-\($0)" }
        let fields = [HeaderField("Vary", names.joined(separator: ", ")), HeaderField("Vary", names.map { $0.uppercased() }.joined(separator: ","))]
        let clock = ContinuousClock()
        var count = 0
        let elapsed = clock.measure { count = OkHttpLayout.varyFields(fields).count }
        #expect(count == 14_000)
        #expect(elapsed < .seconds(5), "\(elapsed)")
    }

    /// Cache.key (Cache.kt:747-752): `url.toString().encodeUtf8().md5().hex()`.
    @Test func keyIsMD5HexOfTheCanonicalURL() {
        let url = "https://example.com/img/1.png"
        let md5 = Insecure.MD5.hash(data: Array(url.utf8)).map { String(format: "%02x", $0) }.joined()
        #expect(OkHttpLayout.diskKey(url) == md5)
        #expect(OkHttpLayout.diskKey("HTTPS://Example.COM:443/img/1.png") == md5)
        #expect(DiskLruJournal.isValidKey(Substring(md5)))
    }

    /// `HttpUrl.get(s).toString()` as OkHttp 3.13 (Debian's libokhttp-java)
    /// printed each of these (HttpUrl.Builder.parse: scheme and host
    /// lowercased, default port dropped, `resolvePath`, QUERY_ENCODE_SET
    /// `" \"'<>#"`, `inet6AddressToAscii`).
    @Test(arguments: [
        ("HTTP://Example.COM:80", "http://example.com/"),
        ("https://a.b:443/x/./y/../z?q='1'&r=a+b#Frag", "https://a.b/x/z?q=%271%27&r=a+b#Frag"),
        ("http://a.b:8080/%7Euser/a%2fb", "http://a.b:8080/%7Euser/a%2fb"),
        ("http://[0:0:0:0:0:0:0:1]:80/p", "http://[::1]/p"),
        ("http://a.b/x/..", "http://a.b/"),
        ("http://a.b/x/%2E", "http://a.b/x/"),
        ("http://a.b?", "http://a.b/?"),
        // Also printed by OkHttp 3.13's HttpUrl (canonicalizeHost,
        // inet6AddressToAscii, PATH_SEGMENT_ENCODE_SET, QUERY_ENCODE_SET),
        // from the manifest's text as written.
        ("http://[::FFFF:1.2.3.4]/", "http://1.2.3.4/"),
        ("http://[::ffff:1.2.3.4]:8080/p", "http://1.2.3.4:8080/p"),
        ("http://[::1.2.3.4]/", "http://[::102:304]/"),
        ("http://ex%41mple.com/", "http://example.com/"),
        ("http://EX%41MPLE.com/a.png", "http://example.com/a.png"),
        ("http://b%C3%BCcher.de/", "http://xn--bcher-kva.de/"),
        ("http://B%C3%9Ccher.de/x", "http://xn--bcher-kva.de/x"),
        ("http://bücher.de/", "http://xn--bcher-kva.de/"),
        ("http://a.b/?x=[1]", "http://a.b/?x=[1]"),
        ("http://a.b/?a=%zz", "http://a.b/?a=%zz"),
        ("http://a.b/p?a=%zz&b=[x]", "http://a.b/p?a=%zz&b=[x]"),
        ("http://a.b/p%zz", "http://a.b/p%zz"),
        ("http://a.b/[1]", "http://a.b/[1]"),
        ("http://a.b/?a=%5B1%5D", "http://a.b/?a=%5B1%5D"),
        ("http://a.b/{x}|^`?{x}|^`", "http://a.b/%7Bx%7D%7C%5E%60?{x}|^`"),
        ("http://a.b/a b?c d#e f", "http://a.b/a%20b?c%20d#e f"),
        ("http://a.b/ü?ü=ü#ü", "http://a.b/%C3%BC?%C3%BC=%C3%BC#ü"),
        ("http://a.b/a\\b", "http://a.b/a/b"),
        ("http://a.b/\"<>?\"<>", "http://a.b/%22%3C%3E?%22%3C%3E"),
    ])
    func canonicalURLIsHttpUrlToString(_ input: String, _ expected: String) {
        #expect(OkHttpURL.canonical(input) == expected)
        // The layout canonicalises a key again when naming its file.
        #expect(OkHttpURL.canonical(expected) == expected)
    }

    /// `Cache.key(HttpUrl.get(url))` as OkHttp 3.13 printed it.
    @Test(arguments: [
        ("http://[::FFFF:1.2.3.4]/", "464a734bf309ac6fb27bd06f02e1ee3b"),
        ("http://ex%41mple.com/", "a6bf1757fff057f266b697df9cf176fd"),
        ("http://b%C3%BCcher.de/", "d15b9aa75b1a8f5db5743cab74ecd17b"),
        ("http://a.b/?x=[1]", "ea5dd02662ea730615f7418f064c32f1"),
        ("http://a.b/?a=%zz", "fc822de87f9190f3e1f96d98d3ce3540"),
    ])
    func diskKeyIsCacheKey(_ input: String, _ expected: String) {
        #expect(OkHttpLayout.diskKey(input) == expected)
    }

    static func response(_ headers: [(String, String)], url: String = "http://h.test:8080/a.png", status: Int = 200,
                         version: Int = 11) -> StoredResponse {
        var r = StoredResponse(url: url, status: status, requestedAt: 1_000, receivedAt: 1_250)
        r.headerFields = headers.map { HeaderField($0.0, $0.1) }
        r.httpVersion = version
        return r
    }

    /// Cache.Entry.writeTo (Cache.kt:598-637): URL, method, the varying
    /// request headers (BridgeInterceptor.kt:57-70 adds Host, Connection:
    /// Keep-Alive, Accept-Encoding: gzip), the status line (StatusLine.kt:30-39:
    /// HTTP/1.0 or HTTP/1.1, code, a space and the message), the response
    /// headers plus OkHttp-Sent-Millis/OkHttp-Received-Millis (count + 2).
    /// Hop-by-hop headers (CacheInterceptor.kt:275-283 isEndToEnd) and
    /// Content-Encoding are dropped, Content-Length is the decoded length.
    @Test func metadataIsWhatEntryWriteToWrites() {
        let r = Self.response([("Content-Type", "image/png"), ("Content-Encoding", "gzip"), ("Content-Length", "40"),
                               ("Transfer-Encoding", "chunked"), ("Connection", "keep-alive"), ("Vary", "Accept-Encoding, Host"),
                               ("ETag", "\"v1\"")])
        let text = OkHttpLayout.metadata(r, maxAge: nil, bodyLength: 69)
        #expect(text == """
            http://h.test:8080/a.png
            GET
            2
            Host: h.test:8080
            Accept-Encoding: gzip
            HTTP/1.1 200 \("")
            6
            Content-Type: image/png
            Vary: Accept-Encoding, Host
            ETag: "v1"
            Content-Length: 69
            OkHttp-Sent-Millis: 1000
            OkHttp-Received-Millis: 1250

            """)
    }

    /// `--expiration`: Cache-Control, Expires, Pragma and Age (what
    /// CacheStrategy.computeFreshnessLifetime and cacheResponseAge read
    /// besides Date and Last-Modified) give way to `Cache-Control: max-age=N`.
    @Test func expirationReplacesFreshnessHeaders() {
        let r = Self.response([("Cache-Control", "no-cache"), ("Expires", "0"), ("Pragma", "no-cache"), ("Age", "7"),
                               ("Date", "Fri, 27 Nov 2026 05:56:51 GMT")], version: 10)
        let text = OkHttpLayout.metadata(r, maxAge: 86_400, bodyLength: 3)
        #expect(text.contains("HTTP/1.0 200 \n5\nDate: Fri, 27 Nov 2026 05:56:51 GMT\nContent-Length: 3\nCache-Control: max-age=86400\n"))
        #expect(!text.contains("Expires") && !text.contains("Pragma") && !text.contains("Age:") && !text.contains("no-cache"))
        #expect(OkHttpLayout.maxAge(.never) == Int64(Int32.max))
        #expect(OkHttpLayout.maxAge(.seconds(90.7)) == 90)
    }

    /// The handshake block (Cache.kt:631-637, writeCertList at :663): a blank line,
    /// the cipher suite's Java name, the peer certificates (count, base64
    /// DER lines), the local ones (0), TlsVersion.javaName; only for https.
    @Test func httpsEntriesCarryTheHandshake() {
        var r = Self.response([("Content-Type", "image/png")], url: "https://h.test/a.png", version: 2)
        r.tls = TLSFacts(cipherSuite: "TLS_AES_128_GCM_SHA256", version: "TLSv1.3", peerCertificates: [[1, 2, 3], [4]])
        let text = OkHttpLayout.metadata(r, maxAge: nil, bodyLength: 3)
        #expect(text.hasSuffix("OkHttp-Received-Millis: 1250\n\nTLS_AES_128_GCM_SHA256\n2\nAQID\nBA==\n0\nTLSv1.3\n"))
        #expect(text.contains("\nHTTP/1.1 200 \n"))
        r.url = "http://h.test/a.png"
        #expect(OkHttpLayout.metadata(r, maxAge: nil, bodyLength: 3).hasSuffix("OkHttp-Received-Millis: 1250\n"))
        // TlsVersion.forJavaName throws for any other name.
        #expect(OkHttpLayout.javaTLSVersion("TLSv1.2") == "TLSv1.2")
        #expect(OkHttpLayout.javaTLSVersion("TLSv1.4") == nil)
    }

    /// What OkHttp never serves: Cache.put skips `Vary: *` (Cache.kt:237
    /// hasVaryAll); CacheStrategy.isCacheable (CacheStrategy.kt:298-345)
    /// refuses `no-store` and statuses outside its list (201, 206...).
    @Test func neverServedResponsesAreNamed() {
        #expect(OkHttpLayout.neverServed(Self.response([("Cache-Control", "public, no-store")])) != nil)
        #expect(OkHttpLayout.neverServed(Self.response([("Vary", "Accept, *")])) != nil)
        #expect(OkHttpLayout.neverServed(Self.response([], status: 206)) != nil)
        #expect(OkHttpLayout.neverServed(Self.response([("Cache-Control", "max-age=60"), ("Vary", "Accept-Encoding")])) == nil)
        #expect(OkHttpLayout.neverServed(Self.response([], status: 203)) == nil)
    }

    /// `key=` and userinfo are refused; the key is the canonical URL.
    @Test func manifestKeysAreTheURL() {
        var options = ManifestOptions()
        options.urlKeys = OkHttpLayout().manifestKeyRule
        let reader = ManifestReader(options: options)
        let source = ManifestSource(fileIndex: 0, line: 1)
        if case .problem(let p) = reader.parse(line: Array("http://a.b/x.png key=other".utf8), source: source) {
            #expect(p.reason.contains("key= has no meaning under --layout okhttp"))
        } else { Issue.record("key= accepted") }
        if case .problem(let p) = reader.parse(line: Array("http://u:p@a.b/x.png".utf8), source: source) {
            #expect(p.reason.contains("user:password@"))
        } else { Issue.record("userinfo accepted") }
        if case .entry(let e) = reader.parse(line: Array("HTTP://A.B:80/x.png".utf8), source: source) {
            #expect(e.key == "http://a.b/x.png")
        } else { Issue.record("plain URL refused") }
        // The key is made of the text as written: Foundation's re-encoding
        // (`%5B1%5D`, `%25zz`) is not OkHttp's.
        if case .entry(let e) = reader.parse(line: Array("http://a.b/x.png?x=[1]&a=%zz".utf8), source: source) {
            #expect(e.key == "http://a.b/x.png?x=[1]&a=%zz")
            #expect(e.url != e.key)
        } else { Issue.record("query URL refused") }
    }
}
