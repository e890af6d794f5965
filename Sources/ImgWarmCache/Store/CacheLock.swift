#if canImport(Glibc)
import Glibc
#endif
import ImgWarmSupport

/// `DIR/.imgwarm/lock`: runs that use the cache (warm, prune) hold it
/// shared, so any number of them share a cache; what would pull the state
/// from under them (`cache clear --all`) needs it exclusive and is refused
/// while a run holds it. The kernel drops the lock when a process dies, so
/// a killed run never locks anyone out.
public final class CacheLock {
    public enum Mode { case shared, exclusive }
    private let fd: Int32

    public static func path(for cache: DiskCache) -> String { cache.stateDirectory + "/lock" }

    /// Takes the lock without waiting; throws when another run holds it in
    /// a conflicting mode. The lock file is opened relative to the checked
    /// `.imgwarm` descriptor (`DiskCache.prepare` or `openExisting`), never
    /// through a link planted at its name.
    public convenience init(cache: DiskCache, mode: Mode) throws {
        self.init(lockedDescriptor: try Self.take(cache: cache, mode: mode))
    }

    /// The object exists only once the lock is held: a throwing init of a
    /// fully initialized class runs `deinit`, which would close the
    /// descriptor a second time (by then perhaps another thread's file).
    private init(lockedDescriptor: Int32) { fd = lockedDescriptor }

    private static func take(cache: DiskCache, mode: Mode) throws -> Int32 {
        let path = Self.path(for: cache)
        guard let state = cache.stateFolder else {
            throw ImgWarmError.cache(path: cache.stateDirectory, reason: "cannot lock: the state folder is not open", errno: ENOENT)
        }
        let fd = openat(state.fd, "lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o644)
        if fd < 0 {
            throw ImgWarmError.cache(path: path, reason: "cannot open lock file: \(errnoString(errno))", errno: errno)
        }
        if flock(fd, (mode == .shared ? LOCK_SH : LOCK_EX) | LOCK_NB) != 0 {
            let e = errno
            close(fd)
            if e == EWOULDBLOCK {
                throw ImgWarmError.cache(path: cache.directory, reason: mode == .exclusive
                    ? "in use by another imgwarm run (warm or prune); try again when it ends"
                    : "locked by `imgwarm cache clear --all`; try again when it ends", errno: e)
            }
            throw ImgWarmError.cache(path: path, reason: "cannot lock: \(errnoString(e))", errno: e)
        }
        return fd
    }

    deinit { close(fd) }
}
