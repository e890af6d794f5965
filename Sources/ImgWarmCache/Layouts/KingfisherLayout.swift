#if canImport(Glibc)
import Glibc
#endif
import Crypto
import ImgWarmSupport

/// Kingfisher 8 (`Sources/Cache/DiskStorage.swift`, `DiskStorage.Backend`)
/// with its default `DiskStorage.Config`:
/// - name: `cacheFileName(forKey:)` with `usesHashedFileName` and no
///   extension, i.e. `key.kf.sha256` (`String+SHA256.swift`), lowercase hex
///   SHA-256 of the key's UTF-8 bytes;
/// - dates: `store(value:forKey:expiration:)` sets the modification date to
///   the expiry deadline (now + `config.expiration`, 7 days by default) and
///   the creation date to now, the last access; both rounded up to whole
///   seconds (`Date.fileAttributeDate`, `ceil`);
/// - a read (`value(forKey:referenceDate:...)`) treats a file whose
///   modification date is at or before now as missing (`FileMeta.expired`);
/// - cleaning (`ImageCache.cleanExpiredDiskCache`): `removeExpiredValues`,
///   then `removeSizeExceededValues`: when the total logical size is at or
///   above `sizeLimit` (0: none), oldest creation date first while above
///   `sizeLimit / 2`.
/// Kingfisher 7 hashed with MD5 (`kf.md5`) instead: not this layout.
public struct KingfisherLayout: FolderLayout, BuiltInLayout {
    /// `StorageExpiration` as `warm --expiration` gives it.
    public enum Expiration: Equatable, Sendable {
        case seconds(Double)
        /// `.never`: the deadline is `Date.distantFuture`.
        case never
    }

    /// `DiskStorage.Config.expiration`'s default, `.days(7)`.
    public static let defaultExpiration = Expiration.seconds(7 * 86_400)
    /// `Date.distantFuture` (4001-01-01T00:00:00Z) in seconds since 1970.
    public static let distantFuture = 64_092_211_200

    public let expiration: Expiration

    public init(expiration: Expiration = KingfisherLayout.defaultExpiration) {
        self.expiration = expiration
    }

    public var kind: CacheLayoutKind { .kingfisher }

    /// `ImageCache.default`'s folder under `Library/Caches`.
    public var defaultFolder: String { "com.onevcat.Kingfisher.ImageCache.default" }

    /// Whether the library lists sub-folders of its cache folder (recursive enumerator).
    public var walksSubfolders: Bool { true }

    /// A recursive enumerator: files in any sub-folder count.
    public func holdsEntries(inFolder folder: String) -> Bool { true }

    /// `DiskStorage.cacheFileName`: SHA-256 hex (`kf.sha256`), and
    /// `pathExtension` when the app sets one.
    public func fitsEntryName(_ name: [UInt8], inFolder folder: String) -> Bool {
        NameRule.hex(name, 64, extension: .word)
    }

    /// Lowercase hex as all three libraries spell digests (`%02x`).
    public func entryName(forKey key: String) -> CacheEntryName {
        CacheEntryName(storedName: Hex.encode(SHA256.hash(data: Array(key.utf8))))
    }

    /// `FileMeta.expired(referenceDate:)`: `isPast` is `<= 0` seconds away.
    public func isLive(_ info: stat, now: Int64) -> Bool {
        Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec) > now
    }

    /// Access: now. Modification: the deadline, `ceil(now + expiration)`
    /// in whole seconds as `fileAttributeDate` rounds it. The creation date
    /// (Kingfisher's last access) cannot be set on Linux: the kernel sets
    /// the birth time when the file is created, which is the store.
    public func fileTimes(storedAt now: timespec) -> (access: timespec, modification: timespec)? {
        (now, timespec(tv_sec: deadline(storedAt: now), tv_nsec: 0))
    }

    func deadline(storedAt now: timespec) -> Int {
        switch expiration {
        case .never:
            return Self.distantFuture
        case .seconds(let seconds):
            // An expiration that reaches past distantFuture is distantFuture.
            // Whole seconds and the nanosecond part are added apart, so no
            // expiration can overflow an Int64 of nanoseconds.
            if seconds >= Double(Self.distantFuture - Int(now.tv_sec)) { return Self.distantFuture }
            let whole = seconds.rounded(.down)
            let nanoseconds = Int(now.tv_nsec) + Int(((seconds - whole) * 1e9).rounded())
            let (carry, rest) = nanoseconds.quotientAndRemainder(dividingBy: 1_000_000_000)
            return min(Int(now.tv_sec) + Int(whole) + carry + (rest > 0 ? 1 : 0), Self.distantFuture)
        }
    }

    public func prunePolicy(_ options: PruneOptions, now: Int64) throws -> PrunePolicy {
        if options.maxAge != nil {
            throw ImgWarmError.usage("--max-age has no meaning under --layout kingfisher: each file carries its own deadline (its modification date, set by warm --expiration)")
        }
        if options.expireType != nil {
            throw ImgWarmError.usage("--expire-type has no meaning under --layout kingfisher: expiry goes by the deadline (modification date), trimming by the last access (creation date)")
        }
        if options.trimRatio != nil {
            throw ImgWarmError.usage("--trim-ratio has no meaning under --layout kingfisher: Kingfisher trims to half of --max-size")
        }
        let limit = options.maxSize ?? 0
        return PrunePolicy(expiry: .deadlinePassed(now: now), trimDate: .creation, undatedTrimmedFirst: true,
                           size: .logical, limit: limit, trimsAtLimit: true, target: limit / 2, stopsAtTarget: true,
                           walksSubfolders: walksSubfolders)
    }
}
