#if canImport(Glibc)
import Glibc
#endif
import ImgWarmSupport

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
}
