import Crypto
import ImgWarmSupport

/// Nuke 12 (`Sources/Nuke/Caching/DataCache.swift`, `DataCache`):
/// - name: `DataCache.filename(for:)`, `key.sha1` (`Internal/Extensions.swift`),
///   lowercase hex SHA-1 of the key's UTF-8 bytes, no extension, directly in
///   the folder (flat: `contents` lists the folder itself only);
/// - dates: a plain `Data.write`; a read (`cachedData(for:)`) sets the
///   content access date;
/// - `performSweep`: when the allocated size (`totalFileAllocatedSizeKey`)
///   is above `sizeLimit` (150 MB = 150 x 1024 x 1024 by default), least
///   recently accessed first while above `sizeLimit x trimRatio` (0.7). No
///   age expiry. Hidden files (`.data-cache-info`, its sweep date) are skipped.
public struct NukeLayout: FolderLayout, BuiltInLayout {
    public init() {}

    public var kind: CacheLayoutKind { .nuke }

    /// `DataCache`'s default folder under `Library/Caches`.
    public var defaultFolder: String { "com.github.kean.Nuke.DataCache" }

    /// Whether the library lists sub-folders of its cache folder (lists only the folder itself).
    public var walksSubfolders: Bool { false }

    /// `DataCache.filename(for:)`: SHA-1 hex.
    public func fitsEntryName(_ name: [UInt8], inFolder folder: String) -> Bool {
        NameRule.hex(name, 40, extension: .word)
    }

    /// `DataCache.sizeLimit`'s default.
    public static let defaultSizeLimit: UInt64 = 1024 * 1024 * 150
    /// `DataCache.trimRatio`'s default.
    public static let defaultTrimRatio = 0.7

    /// Lowercase hex as all three libraries spell digests (`%02x`).
    public func entryName(forKey key: String) -> CacheEntryName {
        CacheEntryName(storedName: Hex.encode(Insecure.SHA1.hash(data: Array(key.utf8))))
    }

    public func prunePolicy(_ options: PruneOptions, now: Int64) throws -> PrunePolicy {
        if options.maxAge != nil {
            throw ImgWarmError.usage("--max-age has no meaning under --layout nuke: Nuke's sweep has no age limit, only --max-size")
        }
        if options.expireType != nil {
            throw ImgWarmError.usage("--expire-type has no meaning under --layout nuke: Nuke's sweep goes by the access date")
        }
        let ratio = options.trimRatio ?? Self.defaultTrimRatio
        if !(ratio > 0 && ratio <= 1) {
            throw ImgWarmError.usage("--trim-ratio must be above 0 and at most 1 (Nuke: 0.7)")
        }
        let limit = options.maxSize ?? Self.defaultSizeLimit
        if limit == 0 {
            throw ImgWarmError.usage("--max-size must be above 0 under --layout nuke (Nuke's default: 150MiB)")
        }
        // `Int(Double(sizeLimit) * trimRatio)`: truncated.
        let target = UInt64((Double(limit) * ratio).rounded(.towardZero))
        return PrunePolicy(expiry: .none, trimDate: .access, undatedTrimmedFirst: true, size: .allocated,
                           limit: limit, trimsAtLimit: false, target: target, stopsAtTarget: true,
                           walksSubfolders: walksSubfolders)
    }
}
