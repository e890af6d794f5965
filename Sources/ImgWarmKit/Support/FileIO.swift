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
}
