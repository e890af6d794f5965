#if canImport(Glibc)
import Glibc
#endif

/// The write loop every writer needs (short writes, EINTR).
package enum FileIO {
    /// Writes all of `raw` to `fd`; returns 0 or the errno that stopped it.
    package static func writeAll(_ fd: Int32, _ raw: UnsafeRawBufferPointer) -> Int32 {
        var offset = 0
        while offset < raw.count {
            let n = write(fd, raw.baseAddress! + offset, raw.count - offset)
            if n < 0 {
                if errno == EINTR { continue }
                return errno
            }
            offset += n
        }
        return 0
    }

    /// The end of every atomic write: close the temp file, then rename it
    /// over `final` (each name relative to a folder descriptor, as renameat
    /// takes them), replacing whatever is there and never writing through
    /// it; on any error the temp file is removed and nothing of it shows
    /// under `final`. `finalPath` names the file in errors.
    package static func closeAndRename(_ fd: Int32, writeError: Int32, temp: (dir: Int32, name: String),
                               final: (dir: Int32, name: String), finalPath: @autoclosure () -> String) throws {
        var error = writeError
        if close(fd) != 0 && error == 0 { error = errno }
        if error != 0 {
            unlinkat(temp.dir, temp.name, 0)
            throw ImgWarmError.cache(path: finalPath(), reason: "write failed: \(errnoString(error))", errno: error)
        }
        if renameat(temp.dir, temp.name, final.dir, final.name) != 0 {
            let e = errno
            unlinkat(temp.dir, temp.name, 0)
            throw ImgWarmError.cache(path: finalPath(), reason: "rename failed: \(errnoString(e))", errno: e)
        }
    }
}

extension FileIO {
    /// Creates a new file under a name from `name` with O_CREAT | O_EXCL |
    /// O_NOFOLLOW relative to `folder`: nothing planted at any name is ever
    /// written through. EEXIST (a leftover of a run with the same pid in
    /// another container) takes the next name, up to `attempts` names.
    /// The descriptor and name, or the errno of the last attempt.
    package static func createExclusive(in folder: Int32, mode: mode_t = 0o644, attempts: Int = 8,
                                name: () -> String) -> (fd: Int32, name: String, error: Int32) {
        var candidate = ""
        var error: Int32 = EEXIST
        for _ in 0..<max(1, attempts) {
            candidate = name()
            let fd = openat(folder, candidate, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode)
            if fd >= 0 { return (fd, candidate, 0) }
            error = errno
            if error != EEXIST { break }
        }
        return (-1, candidate, error)
    }
}
