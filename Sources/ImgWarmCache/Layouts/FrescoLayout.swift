import Crypto
import Foundation

/// Fresco's main disk cache (`DiskStorageCache` over `DefaultDiskStorage`),
/// which React Native's `<Image>` uses on Android:
/// - `--cache` is the `image_cache` folder (`DiskCacheConfig.Builder`:
///   `mBaseDirectoryName = "image_cache"` under the app's cache dir), which
///   holds the version folder `v2.ols100.1` (`getVersionSubdirectoryName`:
///   `"%s.ols%d.%d"` of `v2`, `SHARDING_BUCKET_COUNT` 100 and the storage
///   version 1);
/// - an entry is `v2.ols100.1/<shard>/<resourceId>.cnt` holding the bytes;
/// - resourceId: `SecureHashUtil.makeSHA1HashBase64` of the UTF-8 of the
///   cache key's URI string (`CacheKeyUtil.secureHashKey`;
///   `SimpleCacheKey(uri.toString())`): URL-safe Base64 without padding or
///   wrapping of the SHA-1;
/// - shard: `abs(resourceId.hashCode() % 100)` with Java's String hash;
///   Fresco 3.6.0 and before name the folder `String.valueOf(...)` ("22"),
///   Fresco 3.7.0's Kotlin port `abs(... .toDouble()).toString()` ("22.0").
/// Eviction is by file modification time (a read sets it to now).
public struct FrescoLayout: BuiltInLayout {
    /// How shard folders are named: by Fresco's version.
    public enum ShardNames: String, Sendable, CaseIterable {
        /// Fresco <= 3.6.0 (Java): "22".
        case integer
        /// Fresco >= 3.7.0 (Kotlin): "22.0".
        case decimal
    }

    /// `--fresco-version`, nil: detected from the folder, else the default.
    public let shardNames: ShardNames?

    public init(shardNames: ShardNames? = nil) {
        self.shardNames = shardNames
    }

    /// What React Native ships: 0.76 pins Fresco 3.2.0, 0.80 pins 3.4.0
    /// (`packages/react-native/gradle/libs.versions.toml`), both Java
    /// `DefaultDiskStorage`: integer shard names.
    public static let defaultShardNames = ShardNames.integer

    /// The version folder (`getVersionSubdirectoryName(1)`).
    public static let versionFolder = "v2.ols100.1"
    /// `DiskCacheConfig.Builder.mMaxCacheSize`: 40 MB (`ByteConstants.MB`).
    public static let defaultSizeLimit: UInt64 = 40 * 1024 * 1024
    /// `DiskStorageCache.FUTURE_TIMESTAMP_THRESHOLD_MS`: 2 hours.
    public static let futureThresholdNanoseconds: Int64 = 2 * 3600 * 1_000_000_000

    public var kind: CacheLayoutKind { .fresco }

    /// `DiskCacheConfig.Builder.mBaseDirectoryName`.
    public var defaultFolder: String { "image_cache" }

    /// `v2.ols100.1` and its shard folders (`22`, or `22.0` from Fresco 3.7).
    public func holdsEntries(inFolder folder: String) -> Bool { NameRule.frescoFolder(folder) }

    /// `DefaultDiskStorage.getContentFileFor`: `<resourceId>.cnt` in a
    /// shard folder, the id URL-safe Base64 of a SHA-1 without padding.
    public func fitsEntryName(_ name: [UInt8], inFolder folder: String) -> Bool {
        folder != Self.versionFolder && NameRule.frescoContentFile(name)
    }

    /// `--fresco-version X.Y[.Z]`: before 3.7 integer names, from 3.7 decimal.
    public static func shardNames(forVersion text: String) -> ShardNames? {
        let parts = text.split(separator: ".").map { Int($0) }
        guard parts.count >= 2, parts.count <= 3, let major = parts[0], let minor = parts[1],
              parts.count < 3 || parts[2] != nil else { return nil }
        return (major, minor) >= (3, 7) ? .decimal : .integer
    }

    /// `makeSHA1HashBase64`: `Base64.URL_SAFE | NO_PADDING | NO_WRAP`.
    public static func resourceId(_ key: String) -> String {
        Data(Insecure.SHA1.hash(data: Array(key.utf8))).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// `String.hashCode()`: `s[0]*31^(n-1) + ... + s[n-1]` over UTF-16
    /// code units, in 32-bit arithmetic.
    public static func javaHashCode(_ text: String) -> Int32 {
        text.utf16.reduce(Int32(0)) { $0 &* 31 &+ Int32($1) }
    }

    /// `getSubdirectoryPath`'s folder name.
    public static func shard(_ resourceId: String, _ names: ShardNames) -> String {
        let bucket = abs(Int(javaHashCode(resourceId)) % 100)  // Java's % keeps the dividend's sign
        return names == .integer ? String(bucket) : "\(bucket).0"
    }

    /// The stored name is the file's name; the index puts it in its shard.
    public func entryName(forKey key: String) -> CacheEntryName {
        CacheEntryName(storedName: Self.resourceId(key) + ".cnt")
    }

    public func makeBackend(folders: CacheFolders, writer: FileWriter) -> any CacheBackend {
        FrescoCacheIndex(directory: folders.directory, writer: writer, shardNames: shardNames)
    }
}
