/// SDWebImage 5.x (`SDDiskCache.m`): `<md5>[.<ext>]` names with the bare
/// `<md5>` read fallback (`CacheFileName`), dates left as the kernel sets
/// them, and `removeExpiredData`'s expiry then trim (docs/cache-formats.md, SDWebImage).
public struct SDWebImageLayout: FolderLayout, BuiltInLayout {
    public init() {}

    public var kind: CacheLayoutKind { .sdwebimage }

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
                           walksSubfolders: kind.walksSubfolders)
    }
}
