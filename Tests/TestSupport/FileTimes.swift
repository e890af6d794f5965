import Foundation

/// Access and modification times of a file, in whole seconds, for the
/// tests of access-time handling.
public enum FileTimes {
    public static func of(_ path: String) -> (atime: Int, mtime: Int) {
        var st = stat()
        precondition(stat(path, &st) == 0, "stat \(path)")
        return (Int(st.st_atim.tv_sec), Int(st.st_mtim.tv_sec))
    }

    public static func set(_ path: String, atime: Int, mtime: Int) {
        let t = [timespec(tv_sec: atime, tv_nsec: 0), timespec(tv_sec: mtime, tv_nsec: 0)]
        precondition(utimensat(AT_FDCWD, path, t, 0) == 0, "utimensat \(path)")
    }
}
