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
        var error = writeError
        if close(fd) != 0 && error == 0 { error = errno }
        if error != 0 {
            unlink(temp)
            throw CacheError(path: final, reason: "write failed: \(errnoString(error))", errno: error)
        }
        if keepExisting {
            let e = imgwarm_rename_noreplace(temp, final)
            if e == 0 { return true }
            unlink(temp)
            if e == EEXIST { return false }
            throw CacheError(path: final, reason: "rename failed: \(errnoString(e))", errno: e)
        }
        if rename(temp, final) != 0 {
            let e = errno
            unlink(temp)
            throw CacheError(path: final, reason: "rename failed: \(errnoString(e))", errno: e)
        }
        return true
    }
}
