#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ImgWarmSupport

/// What `warm` and `prune` do to a cache before their work, in one place:
/// open the cache folder and imgwarm's folders (warm: create them) and
/// check them (`DiskCache.prepare` / `openExisting`: no symbolic links, a
/// `.imgwarm` of the running user that nobody else may write), read the
/// layout's index (warm), take the run lock, remove the temp files of dead
/// runs, open the state database.
/// Until this has passed nothing in the cache is changed; when it throws
/// (an `ImgWarmError`, exit status 3) nothing was.
public final class CacheSession {
    public let cache: DiskCache
    /// The state database: always for a warm, when it exists for a dry run,
    /// never for prune (which keeps no state).
    public let state: StateStore?
    /// Temp files of dead runs removed at the start.
    public let removedTempFiles: Int
    /// Held for as long as the session lives (the kernel drops it if the
    /// process dies).
    private let lock: CacheLock?

    public enum Purpose {
        /// Creates what is missing, locks shared, cleans, opens the state.
        case warm
        /// Touches nothing: reads the state only if it is already there.
        case warmDryRun
        /// Creates nothing; locks shared when imgwarm's state folder exists
        /// (a cache no imgwarm run has used gets no lock file).
        case prune
        /// Creates and locks nothing.
        case pruneDryRun
    }

    public init(_ cache: DiskCache, for purpose: Purpose) throws {
        self.cache = cache
        switch purpose {
        case .warm:
            try cache.prepare()
            // The journal or database is read (and made when missing) before
            // the first lookup; one of another version stops the run here.
            try cache.openBackend(writable: true)
            lock = try CacheLock(cache: cache, mode: .shared)
            removedTempFiles = cache.cleanStaleTempFiles()
            state = try Self.openState(cache)
        case .warmDryRun:
            lock = nil
            removedTempFiles = 0
            do {
                try cache.openExisting()
            } catch let error as ImgWarmError where error.errno == ENOENT && error.path == cache.directory {
                // No cache folder yet: every entry would be fetched.
            }
            let exists = cache.stateFolder.map { StateFolders.exists("state.sqlite", in: $0.fd) } ?? false
            state = exists ? try? Self.openState(cache) : nil
            try cache.openBackend(writable: false)
        case .prune, .pruneDryRun:
            try cache.openExisting()
            lock = purpose == .prune && cache.stateFolder != nil ? try CacheLock(cache: cache, mode: .shared) : nil
            removedTempFiles = 0
            state = nil
        }
    }

    /// The state database, opened by path (SQLite opens its files by name,
    /// and its -wal and -shm beside them), between two checks that
    /// `.imgwarm` is still the folder checked at the start: a folder swapped
    /// for a link at that moment is refused rather than written through.
    /// Only someone who may rename names in the cache folder could swap it,
    /// and a sticky cache folder (mode +t, as /tmp) keeps even them out
    /// (docs/security.md).
    static func openState(_ cache: DiskCache) throws -> StateStore {
        guard let root = cache.rootFolder, let state = cache.stateFolder else {
            throw ImgWarmError.cache(path: cache.stateDirectory, reason: "the state folder is not open", errno: ENOENT)
        }
        let replaced = ImgWarmError.cache(path: cache.stateDirectory,
                                  reason: "replaced while the state database was opened; not used", errno: ESTALE)
        guard state.isStill(".imgwarm", in: root.fd) else { throw replaced }
        let store = try StateStore(cache: cache)
        guard state.isStill(".imgwarm", in: root.fd) else { throw replaced }
        return store
    }
}
