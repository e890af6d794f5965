import ImgWarmSupport
/// SDWebImage 5.x (`SDDiskCache.m`): `<md5>[.<ext>]` names with the bare
/// `<md5>` read fallback (`CacheFileName`), dates left as the kernel sets
/// them, and `removeExpiredData`'s expiry then trim (docs/cache-formats.md, SDWebImage).
public struct SDWebImageLayout: FolderLayout, BuiltInLayout {
    public init() {}

    public var kind: CacheLayoutKind { .sdwebimage }

    /// `SDImageCache`'s default namespace folder under `Library/Caches`.
    public var defaultFolder: String { "com.hackemist.SDImageCache/default" }

    /// Whether the library lists sub-folders of its cache folder (recursive enumerator (`NSDirectoryEnumerator`)).
    public var walksSubfolders: Bool { true }

    /// A recursive enumerator: files in any sub-folder count.
    public func holdsEntries(inFolder folder: String) -> Bool { true }

    /// `SDDiskCache cachedFileNameForKey:`: MD5 hex, and the URL's
    /// extension when it has one.
    public func fitsEntryName(_ name: [UInt8], inFolder folder: String) -> Bool {
        NameRule.hex(name, 32, extension: .any)
    }

    public func entryName(forKey key: String) -> CacheEntryName {
        entryName(CacheFileName(key: key))
    }

    public func entryName(forKey key: String, md5: UnsafeRawBufferPointer) -> CacheEntryName {
        entryName(CacheFileName(md5Digest: md5, key: key))
    }

    private func entryName(_ name: CacheFileName) -> CacheEntryName {
        let names = name.names
        return CacheEntryName(storedName: names.stored, lookupNames: names.lookup)
    }

    /// `SDImageCacheConfig`: expire type AccessDate (5.20+), trim to half.
    public static let defaultExpireType = CacheExpireType.access
    public static let defaultTrimRatio = 0.5

    public func prunePolicy(_ options: PruneOptions, now: Int64) throws -> PrunePolicy {
        if options.maxAge == nil && options.maxSize == nil {
            throw ImgWarmError.usage("give --max-age, --max-size or both")
        }
        if let maxAge = options.maxAge, !(maxAge >= 0 && maxAge.isFinite) {
            throw ImgWarmError.usage("--max-age must be a duration of zero or more")
        }
        let ratio = options.trimRatio ?? Self.defaultTrimRatio
        if !(ratio > 0 && ratio <= 1) {
            throw ImgWarmError.usage("--trim-ratio must be above 0 and at most 1 (SDWebImage: 0.5)")
        }
        let date = options.expireType ?? Self.defaultExpireType
        let expiry = options.maxAge.map {
            PrunePolicy.Expiry.olderThan(cutoff: PruneResult.expiration(now: now, maxAge: $0), date: date)
        } ?? .none
        let limit = options.maxSize ?? 0
        return PrunePolicy(expiry: expiry, trimDate: date, undatedTrimmedFirst: false, size: .allocated,
                           limit: limit, trimsAtLimit: false,
                           target: UInt64((ratio * Double(limit)).rounded(.down)), stopsAtTarget: false,
                           walksSubfolders: walksSubfolders)
    }
}
