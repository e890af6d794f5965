#if canImport(Glibc)
import Glibc
#endif
import CFileScan
import ImgWarmSupport

/// Whether a cache folder can be inspected, for the `cache` commands: one
/// open of the folder rather than a walk that finds nothing, so that a
/// typo in `--cache` is an error naming the path instead of a clean,
/// empty cache.
public enum CacheFolder {
    /// Nil when `path` is a directory this process can list (read; unless
    /// `listing` is false: `cache path` only looks names up) and open the
    /// files of (search); else the one-line reason, with its errno (ENOENT
    /// for a folder that does not exist).
    public static func problem(_ path: String, listing: Bool = true) -> ImgWarmError? {
        // O_PATH (imgwarm_open_folder) needs no read permission on the folder.
        let fd: Int32
        if listing {
            fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            if fd < 0 { return openError(path, errno) }
        } else {
            fd = imgwarm_open_folder(path)
            if fd < 0 { return openError(path, -fd) }
        }
        defer { close(fd) }
        // Listing needs read permission (the open above); opening or
        // stat-ing the files inside needs search permission too.
        if faccessat(fd, ".", X_OK, AT_EACCESS) != 0 { return openError(path, errno) }
        return nil
    }

    /// The reason for an errno of opening the cache folder itself (also
    /// the walk's, so every command words it alike).
    static func openError(_ path: String, _ e: Int32) -> ImgWarmError {
        let reason: String
        switch e {
        case ENOENT: reason = "cache folder does not exist"
        case ENOTDIR: reason = "not a directory"
        default: reason = "cannot open cache folder: \(errnoString(e))"
        }
        return ImgWarmError.cache(path: path, reason: reason, errno: e)
    }
}
