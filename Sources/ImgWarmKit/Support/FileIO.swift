#if canImport(Glibc)
import Glibc
#endif

/// The write loop every writer needs (short writes, EINTR).
enum FileIO {
    /// Writes all of `raw` to `fd`; returns 0 or the errno that stopped it.
    static func writeAll(_ fd: Int32, _ raw: UnsafeRawBufferPointer) -> Int32 {
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
    static func closeAndRename(_ fd: Int32, writeError: Int32, temp: (dir: Int32, name: String),
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
