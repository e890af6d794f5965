import CFileScan

/// SDWebImage's `SDImageCacheConfigExpireType`: which date of a file expiry
/// and trimming go by.
public enum CacheExpireType: String, CaseIterable, Sendable {
    /// Content access time (atime), SDWebImage's default since 5.20.
    case access
    /// Content modification time (mtime), the default before 5.20.
    case modification
    /// Birth time (statx STATX_BTIME); not every filesystem records it.
    case creation
    /// Attribute change time (ctime).
    case change

    /// The file's date in nanoseconds since the epoch, or nil when the
    /// filesystem does not record it (a birth time on some filesystems).
    public func date(of info: imgwarm_stat) -> Int64? {
        switch self {
        case .access: return info.atime_ns
        case .modification: return info.mtime_ns
        case .change: return info.ctime_ns
        case .creation: return info.has_btime != 0 ? info.btime_ns : nil
        }
    }
}

#if canImport(Glibc)
import Glibc
#endif

extension CacheExpireType {
    /// The date of the file at `path` (symlinks not followed), nil when it
    /// has none or cannot be read.
    public func date(ofFileAt path: String) -> Int64? {
        var info = imgwarm_stat()
        guard imgwarm_statat(AT_FDCWD, path, &info) == 0 else { return nil }
        return date(of: info)
    }
}
