#if canImport(Glibc)
import Glibc
#endif
import ImgWarmSupport

/// OkHttp's cache index: a DiskLruCache journal (`DiskLruIndex`) that
/// refuses what OkHttp would never serve, and an https response that
/// lacks a handshake (`CacheStrategy` ignores such an entry).
final class OkHttpCacheIndex: IndexBackend, @unchecked Sendable {
    let lru: DiskLruIndex

    init(_ lru: DiskLruIndex) { self.lru = lru }

    func open(writable: Bool) throws { try lru.open(writable: writable) }
    func existingEntry(for name: CacheEntryName) -> (path: String, size: Int64)? { lru.existingEntry(for: name) }
    func recordHit(_ name: CacheEntryName) { lru.recordHit(name) }
    func isImageFile(_ relativePath: String) -> Bool { lru.isImageFile(relativePath) }
    func removeEntry(imagePath path: String) throws { try lru.removeEntry(imagePath: path) }
    func prune(_ options: PruneOptions) throws -> PruneResult { try lru.prune(options) }
    var directory: String { lru.directory }
    var walksSubfolders: Bool { false }
    func plannedPath(for name: CacheEntryName) -> String { lru.plannedPath(for: name) }
    func close() throws { try lru.close() }

    func store(_ bytes: UnsafeRawBufferPointer, as name: CacheEntryName, response: StoredResponse?, keepExisting: Bool) throws {
        guard var response else {
            throw ImgWarmError.cache(path: lru.plannedPath(for: name), reason: "OkHttp's cache entry needs the response's headers")
        }
        if let reason = OkHttpLayout.neverServed(response) {
            throw ImgWarmError.cache(path: Redaction.url(response.url), reason: "not stored: \(reason)")
        }
        if OkHttpURL.isHTTPS(response.url) && (response.tls == nil || OkHttpLayout.javaTLSVersion(response.tls?.version ?? "") == nil) {
            throw ImgWarmError.cache(path: Redaction.url(response.url),
                             reason: "not stored: the TLS session is unknown (libcurl without OpenSSL?), and OkHttp ignores an https entry without its handshake")
        }
        response.bodyLength = bytes.count
        try lru.store(bytes, as: name, response: response, keepExisting: keepExisting)
    }
}
