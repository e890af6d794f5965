#if canImport(Glibc)
import Glibc
#endif

/// The process's file descriptors: how many it may open (`ulimit -n`) and
/// how many are open now.
public enum Descriptors {
    /// The soft limit on open descriptors (`ulimit -n`); 1024 when it
    /// cannot be read.
    public static func limit() -> Int {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 1024 }
        return count(limit.rlim_cur)
    }

    /// Raises the soft limit towards `wanted`, never past the hard limit
    /// (which an unprivileged process may not raise) and never down; the
    /// soft limit after.
    @discardableResult
    public static func raiseLimit(to wanted: Int) -> Int {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 1024 }
        let soft = count(limit.rlim_cur), hard = count(limit.rlim_max)
        guard wanted > soft else { return soft }
        limit.rlim_cur = rlim_t(min(wanted, hard))
        guard setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return soft }
        return Self.limit()
    }

    /// Descriptors open now (the entries of /proc/self/fd, less the one
    /// that lists them); 0 where it cannot be read.
    public static func openCount() -> Int {
        guard let dir = opendir("/proc/self/fd") else { return 0 }
        defer { closedir(dir) }
        var count = 0
        while readdir(dir) != nil { count += 1 }
        return max(0, count - 3)  // ".", ".." and the listing's own
    }

    /// rlim_t.max is RLIM_INFINITY.
    private static func count(_ value: rlim_t) -> Int {
        value == rlim_t.max ? Int.max / 2 : Int(clamping: value)
    }
}
