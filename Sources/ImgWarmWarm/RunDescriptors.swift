/// How many transfers a `warm` run may hold at once within the process's
/// descriptor limit (`ulimit -n`). Pure.
///
/// Apart from its transfers a run held at most 23 descriptors (measured
/// from /proc at `-j 1` to `-j 64`, validating or not: the standard three,
/// the cache folder, its lock and state database, the temp and spill
/// folders, the wakeup pairs of libdispatch and of each download thread,
/// the files being written); `reserve` leaves room above that for the
/// reports. A transfer takes a socket and, while its host name resolves,
/// the pair libcurl's resolver thread answers on. Past the limit an open
/// fails with EMFILE: a transfer then fails, and libdispatch traps when it
/// cannot make its epoll descriptor (`warm` under `ulimit -n 16` died of
/// SIGILL).
public enum RunDescriptors {
    public static let reserve = 32
    public static let perTransfer = 3

    /// The soft limit a run of `concurrency` transfers asks for.
    public static func wanted(concurrency: Int) -> Int {
        reserve + perTransfer * max(1, concurrency)
    }

    /// Transfers at once under `limit`: `concurrency`, or as many as fit;
    /// nil when not even one does.
    public static func transfers(concurrency: Int, limit: Int) -> Int? {
        let fit = (limit - reserve) / perTransfer
        guard fit >= 1 else { return nil }
        return min(max(1, concurrency), fit)
    }
}
