import Collections

/// Jobs waiting for their next attempt, by due time. They hold no transfer
/// slot; the event loop sleeps until the earliest is due.
struct RetryTimers {
    private struct Entry: Comparable {
        let due: UInt64
        let sequence: UInt64
        let job: DownloadJob
        static func < (a: Entry, b: Entry) -> Bool { (a.due, a.sequence) < (b.due, b.sequence) }
        static func == (a: Entry, b: Entry) -> Bool { a.sequence == b.sequence }
    }

    private var heap = Heap<Entry>()
    private var sequence: UInt64 = 0

    var count: Int { heap.count }

    /// Monotonic nanoseconds of the earliest retry, if any.
    var nextDue: UInt64? { heap.min?.due }

    mutating func schedule(_ job: DownloadJob, due: UInt64) {
        sequence += 1
        job.state = .waitingRetry
        heap.insert(Entry(due: due, sequence: sequence, job: job))
    }

    /// Jobs due at `now`, earliest first.
    mutating func popDue(now: UInt64) -> [DownloadJob] {
        var due: [DownloadJob] = []
        while let first = heap.min, first.due <= now {
            _ = heap.popMin()
            if first.job.state == .waitingRetry { due.append(first.job) }
        }
        return due
    }

    mutating func removeAll() { heap = Heap() }
}
