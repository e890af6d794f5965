#if canImport(Glibc)
import Glibc
#endif
import CFileScan

/// A cache file opened for reading by a maintenance command (`cache stats`,
/// `cache verify`) without renewing its access time: access date is
/// SDWebImage's default expiry date (5.20+) and imgwarm's, so a daily
/// `stats` that renewed every file would keep everything from expiring.
///
/// `O_NOATIME` where the kernel permits it (the file's owner, or
/// CAP_FOWNER). Where it answers EPERM (another user's cache, read through
/// group or world permissions) the file is opened normally and, if the read
/// moved the access time, it is put back with futimens at close. The kernel
/// allows that to the same users only, so for a file of someone else the
/// read may still renew the access time; nothing else can prevent it (the
/// `relatime` mount default limits such renewals to once a day).
package struct QuietFile {
    package let fd: Int32
    /// The access time before the read, when `O_NOATIME` was refused.
    private let accessTimeBefore: timespec?

    private init(fd: Int32, accessTimeBefore: timespec?) {
        self.fd = fd
        self.accessTimeBefore = accessTimeBefore
    }

    /// Opens `path` read-only without following a link at its last
    /// component, or returns the errno value. `noatime: false`
    /// takes the fallback path at once (tests run as root, where the kernel
    /// never refuses `O_NOATIME`).
    package static func open(_ path: String, noatime: Bool = true) -> Result<QuietFile, Errno> {
        if noatime {
            let fd = imgwarm_open_noatime(path)
            if fd >= 0 { return .success(QuietFile(fd: fd, accessTimeBefore: nil)) }
            guard -fd == EPERM else { return .failure(Errno(-fd)) }
        }
        let plain = Glibc.open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        if plain < 0 { return .failure(Errno(errno)) }
        var st = stat()
        guard fstat(plain, &st) == 0 else {
            let e = errno
            Glibc.close(plain)
            return .failure(Errno(e))
        }
        return .success(QuietFile(fd: plain, accessTimeBefore: st.st_atim))
    }

    /// Opens `name` in the folder `dirfd` read-only and without following a
    /// link (a symbolic link at the name is ELOOP); otherwise as `open`.
    package static func open(in dirfd: Int32, name: UnsafePointer<CChar>, noatime: Bool = true) -> Result<QuietFile, Errno> {
        if noatime {
            let fd = imgwarm_open_file_at(dirfd, name, 1)
            if fd >= 0 { return .success(QuietFile(fd: fd, accessTimeBefore: nil)) }
            guard -fd == EPERM else { return .failure(Errno(-fd)) }
        }
        let plain = imgwarm_open_file_at(dirfd, name, 0)
        if plain < 0 { return .failure(Errno(-plain)) }
        var st = stat()
        guard fstat(plain, &st) == 0 else {
            let e = errno
            Glibc.close(plain)
            return .failure(Errno(e))
        }
        return .success(QuietFile(fd: plain, accessTimeBefore: st.st_atim))
    }

    /// Closes the file, first putting its access time back if the read
    /// moved it.
    package func close() {
        if let before = accessTimeBefore {
            var st = stat()
            if fstat(fd, &st) == 0 && (st.st_atim.tv_sec != before.tv_sec || st.st_atim.tv_nsec != before.tv_nsec) {
                _ = imgwarm_set_atime(fd, Int64(before.tv_sec), Int64(before.tv_nsec))
            }
        }
        Glibc.close(fd)
    }

    /// An errno value.
    package struct Errno: Error {
        package let code: Int32
        init(_ code: Int32) { self.code = code }
    }
}
