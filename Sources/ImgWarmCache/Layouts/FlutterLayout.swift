#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ImgWarmSupport


/// flutter_cache_manager (what `cached_network_image` uses) with its
/// default store `DefaultCacheManager.key = 'libCachedImageData'`:
/// - `DIR/libCachedImageData.db`: the sqflite database of
///   `CacheObjectProvider` (schema version 3: table `cacheObject` with
///   `_id, url, key, relativePath, eTag, validTill, touched, length`, a
///   unique index on `key`); on the device it lives in the app-support
///   folder (`getApplicationSupportDirectory()`);
/// - `DIR/libCachedImageData/<uuid><ext>`: the files (`IOFileSystem`, under
///   `getTemporaryDirectory()` on the device), named by `WebHelper`
///   `_setDataFromHeaders`: `Uuid().v1()` plus the extension of the
///   response's Content-Type (`ContentTypeConverter.fileExtension`);
/// - `validTill`: the time the response arrived plus its Cache-Control
///   max-age, else 7 days (`HttpGetResponse.validTill`); `touched`: now,
///   renewed by every read (`CacheStore._getCacheDataFromDatabase` updates
///   the row); times in milliseconds since 1970.
/// The cache key is the URL unless the app passes another (`key`).
public struct FlutterLayout: BuiltInLayout {
    public init() {}

    public var kind: CacheLayoutKind { .flutter }

    /// The default cache key names both the database and the folder; this
    /// folder holds them.
    public var defaultFolder: String { "flutter_cache_manager" }

    /// `libCachedImageData.db` (table `cacheObject`).
    public var indexKind: CacheIndexKind { .flutterDatabase }

    /// The default cache key names both the database and the folder.
    public var defaultFolderNames: [String] { [defaultFolder, Self.storeKey] }

    /// The files are in `libCachedImageData/`.
    public func holdsEntries(inFolder folder: String) -> Bool { folder == Self.storeKey }

    /// `Uuid().v1()` plus the content type's extension, in
    /// `libCachedImageData/`.
    public func fitsEntryName(_ name: [UInt8], inFolder folder: String) -> Bool {
        !folder.isEmpty && NameRule.uuid(name)
    }

    /// `DefaultCacheManager.key`.
    public static let storeKey = "libCachedImageData"
    /// `Config`: stalePeriod 30 days, maxNrOfCacheObjects 200.
    public static let defaultStalePeriod: Double = 30 * 86_400
    public static let defaultMaxObjects = 200

    /// The row is found by key; there is no file name until the body has
    /// arrived (a new UUID per download), so the name is the key.
    public func entryName(forKey key: String) -> CacheEntryName { CacheEntryName(storedName: key) }

    public func makeBackend(folders: CacheFolders, writer: FileWriter) -> any CacheBackend {
        FlutterCacheIndex(directory: folders.directory, writer: writer)
    }

    public func refusal(url: String, key: String) -> String? { Self.refusal(url: url, key: key) }

    /// The `url` column never holds userinfo (`refusal` lets such an entry
    /// through only with its own key).
    public func storedURL(url: String, key: String) -> String { Self.indexURL(url) ?? key }

    /// Why an entry is refused under this layout, or nil. The database keeps
    /// the app's key (the URL, unless the app passes its own) and the URL
    /// in full: a signed URL's token must be there, since the key is the
    /// URL and the app looks the row up by it, but a password in the
    /// userinfo must not. So a URL with userinfo is refused unless the
    /// manifest line's `key=` gives the app's key (then the `url` column
    /// holds the URL without its userinfo, `indexURL`).
    public static func refusal(url: String, key: String) -> String? {
        guard key == url, Redaction.hasUserInfo(url) else { return nil }
        return "--layout flutter keeps the URL in its database and a URL with credentials (user:password@) would be its key: give the app's key with key=, or put the credentials in a header (--header-for)"
    }

    /// What the `url` column holds for an entry: the URL without its
    /// userinfo (nil when it cannot be taken apart; the caller then keeps
    /// the key there).
    public static func indexURL(_ url: String) -> String? {
        guard Redaction.hasUserInfo(url) else { return url }
        let b = Array(url.utf8)
        guard let start = Redaction.authorityStart(b) else { return nil }
        let authorityEnd = b[start...].firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") } ?? b.count
        guard let at = b[start..<authorityEnd].lastIndex(of: UInt8(ascii: "@")) else { return nil }
        let stripped = String(decoding: b[..<start] + b[(at + 1)...], as: UTF8.self)
        return Redaction.hasUserInfo(stripped) ? nil : stripped
    }

    /// `HttpGetResponse.validTill`: 7 days, unless Cache-Control says
    /// otherwise; each comma-separated setting is trimmed and lowercased,
    /// `no-cache` sets zero, `max-age=N` with N > 0 sets N seconds (later
    /// settings win). Milliseconds since 1970.
    public static func validTill(cacheControl: String?, receivedAt: Int64) -> Int64 {
        var seconds: Int64 = 7 * 86_400
        if let cacheControl {
            for setting in cacheControl.split(separator: ",", omittingEmptySubsequences: false) {
                let sanitized = setting.trimmingCharacters(in: .whitespaces).lowercased()
                if sanitized == "no-cache" { seconds = 0 }
                if sanitized.hasPrefix("max-age=") {
                    // `int.tryParse(sanitizedSetting.split('=')[1]) ?? 0`
                    let value = sanitized.split(separator: "=", omittingEmptySubsequences: false)[1]
                    let valid = Int64(value) ?? 0
                    if valid > 0 { seconds = valid }
                }
            }
        }
        return receivedAt + seconds * 1000
    }

    /// `ContentTypeConverter.fileExtension`: the `mimeTypes` table's entry
    /// for the MIME type, else `.` and the subtype; no Content-Type: none.
    public static func fileExtension(contentType: String?) -> String {
        guard let contentType else { return "" }
        let mime = contentType.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false)[0]
            .trimmingCharacters(in: .whitespaces).lowercased()
        if let known = mimeExtensions[mime] { return known }
        guard let slash = mime.firstIndex(of: "/") else { return "." }
        return "." + mime[mime.index(after: slash)...]
    }

    /// The image rows of `mime_converter.dart`'s `mimeTypes` (and the one
    /// a server's default type gives).
    static let mimeExtensions: [String: String] = [
        "image/bmp": ".bmp", "image/gif": ".gif", "image/jpeg": ".jpg", "image/png": ".png",
        "image/svg+xml": ".svg", "image/tiff": ".tiff", "image/vnd.microsoft.icon": ".ico", "image/webp": ".webp",
        "application/octet-stream": ".bin",
    ]

    /// A version 1 (time-based) UUID as the `uuid` package's `v1()` prints
    /// it: lowercase, 8-4-4-4-12, the node random with its multicast bit
    /// set (RFC 4122 4.5), as that package does without a MAC address.
    static func uuidV1(timestamp100ns: UInt64, clockSequence: UInt16, node: UInt64) -> String {
        let time = timestamp100ns &+ 0x01B2_1DD2_1381_4000  // 1582-10-15 to 1970-01-01
        let timeLow = UInt32(truncatingIfNeeded: time)
        let timeMid = UInt16(truncatingIfNeeded: time >> 32)
        let timeHigh = UInt16(truncatingIfNeeded: time >> 48) & 0x0FFF | 0x1000
        let clock = clockSequence & 0x3FFF | 0x8000
        let nodeBits = (node | 0x0100_0000_0000) & 0xFFFF_FFFF_FFFF
        return [Hex.padded(timeLow, digits: 8), Hex.padded(timeMid, digits: 4), Hex.padded(timeHigh, digits: 4),
                Hex.padded(clock, digits: 4), Hex.padded(nodeBits, digits: 12)].joined(separator: "-")
    }
}
