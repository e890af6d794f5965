#if canImport(Glibc)
import Glibc
#endif

/// What a response said that a layout may keep next to the bytes: Coil 3's
/// metadata file (`CacheNetworkResponse`), flutter_cache_manager's `eTag`,
/// `validTill` and file extension, OkHttp's entry. The plain folders keep
/// none of it (`CacheBackend.keepsResponses`).
public struct StoredResponse: Sendable, Equatable {
    /// The URL the app requests (flutter's `url` column); not the key.
    public var url: String
    public var status: Int = 200
    public var contentType: String?
    public var etag: String?
    public var lastModified: String?
    public var cacheControl: String?
    public var expires: String?
    public var date: String?
    public var age: String?
    /// Milliseconds since 1970: when the request went out (the first
    /// attempt's start) and when the response was complete.
    public var requestedAt: Int64
    public var receivedAt: Int64
    /// Every response header and the TLS session, when the download kept
    /// them (`DownloaderConfiguration.recordsResponseDetail`: OkHttp's
    /// cache stores them all); the HTTP version (10, 11, 2, 3; 0 unknown).
    public var headerFields: [HeaderField] = []
    public var httpVersion = 0
    public var tls: TLSFacts?
    /// The length of the body as stored (set by the index that writes it).
    public var bodyLength: Int?

    public init(url: String, status: Int = 200, contentType: String? = nil, etag: String? = nil,
                lastModified: String? = nil, cacheControl: String? = nil, expires: String? = nil,
                date: String? = nil, age: String? = nil, requestedAt: Int64, receivedAt: Int64) {
        self.url = url
        self.status = status
        self.contentType = contentType
        self.etag = etag
        self.lastModified = lastModified
        self.cacheControl = cacheControl
        self.expires = expires
        self.date = date
        self.age = age
        self.requestedAt = requestedAt
        self.receivedAt = receivedAt
    }

    /// The facts of a response of `url` received now, `elapsed` seconds
    /// after its request went out.
    public static func received(_ response: DownloadResponse, url: String, now: Double) -> StoredResponse {
        let received = Int64((now * 1000).rounded(.down))
        var stored = StoredResponse(url: url, status: response.status, contentType: response.contentType, etag: response.etag,
                                    lastModified: response.lastModified, cacheControl: response.cacheControl,
                                    expires: response.expires, date: response.date, age: response.age,
                                    requestedAt: received - Int64((max(0, response.elapsed) * 1000).rounded()),
                                    receivedAt: received)
        stored.headerFields = response.headerFields
        stored.httpVersion = response.httpVersion
        stored.tls = response.tls
        return stored
    }
}
