#if canImport(Glibc)
import Glibc
#endif
import CFileScan

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
    /// over `final`; on any error the temp file is removed and nothing of it
    /// shows under `final`. `keepExisting`: a file already at `final` wins
    /// (the temp file is dropped); returns false then.
    @discardableResult
    static func closeAndRename(_ fd: Int32, writeError: Int32, temp: String, final: String,
                               keepExisting: Bool = false) throws -> Bool {
        try closeAndRename(fd, writeError: writeError, temp: (AT_FDCWD, temp), final: (AT_FDCWD, final),
                           finalPath: final, keepExisting: keepExisting)
    }

    /// The same with each name relative to a folder descriptor (AT_FDCWD:
    /// a path), as renameat takes them; `finalPath` names the file in errors.
    static func closeAndRename(_ fd: Int32, writeError: Int32, temp: (dir: Int32, name: String),
                               final: (dir: Int32, name: String), finalPath: @autoclosure () -> String,
                               keepExisting: Bool) throws -> Bool {
        var error = writeError
        if close(fd) != 0 && error == 0 { error = errno }
        if error != 0 {
            unlinkat(temp.dir, temp.name, 0)
            throw CacheError(path: finalPath(), reason: "write failed: \(errnoString(error))", errno: error)
        }
        if keepExisting {
            let e = imgwarm_renameat_noreplace(temp.dir, temp.name, final.dir, final.name)
            if e == 0 { return true }
            unlinkat(temp.dir, temp.name, 0)
            if e == EEXIST { return false }
            throw CacheError(path: finalPath(), reason: "rename failed: \(errnoString(e))", errno: e)
        }
        if renameat(temp.dir, temp.name, final.dir, final.name) != 0 {
            let e = errno
            unlinkat(temp.dir, temp.name, 0)
            throw CacheError(path: finalPath(), reason: "rename failed: \(errnoString(e))", errno: e)
        }
        return true
    }
}
