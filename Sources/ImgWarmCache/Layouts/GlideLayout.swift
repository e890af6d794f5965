/// Glide 4.x/5.x's data cache (`DiskCacheStrategy.AUTOMATIC` keeps a remote
/// image's original bytes there):
/// - folder: `image_manager_disk_cache` under the app's cache dir, 250 MiB
///   (`DiskCache.Factory.DEFAULT_DISK_CACHE_DIR`, `DEFAULT_DISK_CACHE_SIZE`;
///   `InternalCacheDiskCacheFactory`);
/// - a DiskLruCache with app version 1 and one value per entry
///   (`DiskLruCacheWrapper.APP_VERSION`, `VALUE_COUNT`), the image in
///   `<key>.0`;
/// - key: `SafeKeyGenerator.getSafeKey`, lowercase hex SHA-256 of what
///   `DataCacheKey.updateDiskCacheKey` feeds the digest: the `GlideUrl`'s
///   cache key (the URL string, UTF-8) then the signature's bytes
///   (`EmptySignature` adds none; an `ObjectKey(x)` adds `x.toString()`'s
///   UTF-8 bytes, so manifest `key=<url><signature>` gives that entry).
/// The transformed-resource cache (`ResourceCacheKey`: the decoded,
/// resized, transformed bitmap, keyed by width, height, transformation and
/// options) is not written: its bytes are Glide's own encoding of a
/// bitmap for one view size, which only the app's Glide can produce.
public struct GlideLayout: DiskLruLayout {
    public init() {}

    public var kind: CacheLayoutKind { .glide }

    /// Under the app's cache dir (`Context.getCacheDir()`): Glide's
    /// `DEFAULT_DISK_CACHE_DIR`.
    public var defaultFolder: String { "image_manager_disk_cache" }

    /// `DiskLruCacheWrapper`: APP_VERSION = 1, VALUE_COUNT = 1.
    public static let journal = DiskLruJournal(appVersion: 1, valueCount: 1)
    /// The image in `<key>.0`, the only value.
    public static let imageValue = 0
    /// `DiskCache.Factory.DEFAULT_DISK_CACHE_SIZE`: 250 * 1024 * 1024.
    public static let defaultSizeLimit: UInt64 = 250 * 1024 * 1024
}
