/// How a download run is divided between engine threads, each driving its
/// own curl multi handle.
///
/// One multi handle is one thread: receiving, curl's parsing and the small
/// writes done on it all queue behind each other, and on a many-file run
/// that thread is the bottleneck while the other cores idle (perf: 80% of a
/// `warm --no-validate` run's samples on 20,000 thumbnails were that one
/// thread). wget2 runs a thread per connection for the same reason. Each
/// loop gets a fixed share of `--concurrency` and of `--per-host`, and the
/// shares add up to the limits exactly, so the limits hold for the whole
/// run without any state shared between loops. Identical URLs always go to
/// the same loop (`loop(forURL:)`), so coalescing stays whole.
public struct LoopSplit: Equatable, Sendable {
    /// Per loop: transfers in flight at once, and per host (nil: no limit).
    public struct Share: Equatable, Sendable {
        public var concurrency: Int
        public var perHost: Int?
        /// Connections per host (`--host-connections`), nil when not split.
        public var hostConnections: Int? = nil
    }

    public let shares: [Share]
    /// The sum of the shares' concurrency: `-j`.
    private let totalConcurrency: Int

    /// Transfers a loop should have at least before a second loop pays for
    /// its extra thread and connections.
    static let transfersPerLoop = 8
    /// More loops than this bought nothing measurable (2-core machine; the
    /// kernel's network and file work dominates beyond it).
    static let maxAutomaticLoops = 4

    /// `requested`: the user's `--download-threads`, nil for automatic:
    /// one loop per core, at most one per `transfersPerLoop` transfers, at
    /// most `maxAutomaticLoops`. Either way never more loops than
    /// `concurrency` or `perHost`, so every share is at least 1.
    /// `hostConnections` is divided like `perHost` (each loop has its own
    /// connections).
    public init(concurrency: Int, perHost: Int?, requested: Int?, cores: Int, hostConnections: Int? = nil) {
        let wanted = requested ?? min(max(1, cores), max(1, concurrency / Self.transfersPerLoop), Self.maxAutomaticLoops)
        var loops = max(1, min(wanted, concurrency, perHost ?? Int.max, hostConnections ?? Int.max))
        // Equal per-host shares: URLs of one host spread evenly over the
        // loops, so with shares of 2 and 1 the loop allowed 1 would finish
        // its half last, at 1.5x the time of one loop allowed 3.
        while perHost.map({ $0 % loops != 0 }) ?? false || hostConnections.map({ $0 % loops != 0 }) ?? false {
            loops -= 1
        }
        totalConcurrency = concurrency
        shares = (0..<loops).map { i in
            Share(concurrency: Self.part(concurrency, of: loops, index: i),
                  perHost: perHost.map { Self.part($0, of: loops, index: i) },
                  hostConnections: hostConnections.map { Self.part($0, of: loops, index: i) })
        }
    }

    public var count: Int { shares.count }

    /// `total` divided into `parts` whole shares differing by at most one.
    static func part(_ total: Int, of parts: Int, index: Int) -> Int {
        total / parts + (index < total % parts ? 1 : 0)
    }

    /// The loop that runs requests for `url`: the same within a process,
    /// which is all coalescing needs, and in proportion to the loops'
    /// shares of `-j` (`-j 17`: 9 and 8). Swift's own hash (SipHash): a
    /// hand-rolled FNV-1a sent every URL differing in its last characters
    /// to the same loop, since its multiply barely carries a change in the
    /// last bytes into the bits a modulo keeps.
    public func loop(forURL url: String) -> Int {
        guard shares.count > 1 else { return 0 }
        var slot = Int(UInt(bitPattern: url.hashValue) % UInt(totalConcurrency))
        for (index, share) in shares.enumerated() {
            if slot < share.concurrency { return index }
            slot -= share.concurrency
        }
        return shares.count - 1
    }

}
