import ImgWarmDownload
import ImgWarmCache
// In Warm, not in Cache: the index takes the facts of a response, not
// Download's type; this is where one becomes the other.
extension StoredResponse {
    /// The facts of a response of `url` received now, `elapsed` seconds
    /// after its request went out.
    static func received(_ response: DownloadResponse, url: String, now: Double) -> StoredResponse {
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
