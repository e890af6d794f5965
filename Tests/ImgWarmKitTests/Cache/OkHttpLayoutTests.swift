import Crypto
import Foundation
import Testing
@testable import ImgWarmKit

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
    ])
    func canonicalURLIsHttpUrlToString(_ input: String, _ expected: String) {
        #expect(OkHttpURL.canonical(input) == expected)
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
    }
}
