import CFileScan
#if canImport(Glibc)
import Glibc
#endif

/// The file-system calls a body's spill file needs (C in CFileScan).
package enum UnnamedFiles {
    /// A new spill file in the folder `dirfd` (`O_TMPFILE | O_EXCL |
    /// O_RDWR`, mode 0600: no name, never linkable); -1 with errno.
    package static func openSpill(in dirfd: Int32) -> Int32 { imgwarm_open_spill(dirfd) }

    /// `fstatfs`'s f_type of the filesystem holding `fd`; 0 when unknown.
    package static func filesystemType(_ fd: Int32) -> Int { imgwarm_fs_type(fd) }
}
