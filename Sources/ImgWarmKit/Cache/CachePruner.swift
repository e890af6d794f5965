#if canImport(Glibc)
import Glibc
#endif

/// What `cache prune` should do.
public struct PruneOptions: Sendable {
    /// SDWebImage's maxDiskAge in seconds; nil: no expiry.
    public var maxAge: Double?
    /// SDWebImage's maxDiskSize in bytes; nil or 0: no size limit.
    public var maxSize: UInt64?
    public var expireType: CacheExpireType = .access
    /// Trim goes down to below `trimRatio x maxSize` (SDWebImage: half).
    public var trimRatio: Double = 0.5
    /// Names never removed (`--keep`).
    public var pinned = PinnedNames()
    public var dryRun = false
    /// "Now" in nanoseconds since the epoch; nil: the clock when the run
    /// starts. Tests pin it to place files exactly on the boundary.
    public var now: Int64?

    public init(maxAge: Double? = nil, maxSize: UInt64? = nil, expireType: CacheExpireType = .access,
                trimRatio: Double = 0.5, pinned: PinnedNames = PinnedNames(), dryRun: Bool = false, now: Int64? = nil) {
        self.maxAge = maxAge
        self.maxSize = maxSize
        self.expireType = expireType
        self.trimRatio = trimRatio
        self.pinned = pinned
        self.dryRun = dryRun
        self.now = now
    }

    public struct Invalid: Error, CustomStringConvertible, Sendable {
        public let description: String
    }

    /// The usage errors of the product contract (exit status 2).
    public func validate() throws {
        if maxAge == nil && maxSize == nil {
            throw Invalid(description: "give --max-age, --max-size or both")
        }
        if let maxAge, !(maxAge >= 0 && maxAge.isFinite) {
            throw Invalid(description: "--max-age must be a duration of zero or more")
        }
        if !(trimRatio > 0 && trimRatio <= 1) {
            throw Invalid(description: "--trim-ratio must be above 0 and at most 1 (SDWebImage: 0.5)")
        }
    }
}

/// `cache prune`: SDWebImage's `removeExpiredData` (`SDDiskCache.m`) on a
/// cache folder, in one walk:
/// 1. expiry: every file whose date is at or before `now - maxAge` goes;
///    files without such a date stay;
/// 2. trim: if `maxSize > 0` and the allocated size of what remains is above
///    it, files go oldest first until the remainder is below
///    `trimRatio x maxSize`.
/// Pinned files are never removed but count in the remaining size.
public struct CachePruner {
    public let directory: String
    public let options: PruneOptions

    public init(directory: String, options: PruneOptions) {
        self.directory = directory
        self.options = options
    }

    public func run() throws -> PruneResult {
        try options.validate()
        let now = options.now ?? Self.clockNow()
        let inventory = try CacheInventory.scan(directory, expireType: options.expireType, pinned: options.pinned)
        let remover = try FileRemover(directory: directory, directories: inventory.directories,
                                      expireType: options.expireType, dryRun: options.dryRun)
        var result = PruneResult(inventory: inventory, options: options, now: now)

        // 1. Expiry. Expired records are moved to the front, then taken in
        // walk order (name offsets grow as the walk goes), folder by folder.
        var survivorsStart = 0
        if let expiration = result.expirationDate {
            survivorsStart = inventory.records.partition { $0.date > expiration }
            inventory.records[..<survivorsStart].sort { $0.nameOffset < $1.nameOffset }
            for index in 0..<survivorsStart {
                let record = inventory.records[index]
                let outcome = remover.remove(name: inventory.names.name(record.nameOffset),
                                             directoryIndex: inventory.directoryIndex(record), dueDate: expiration)
                result.account(outcome, index: index, expired: true)
            }
        }

        // 2. Trim, on what expiry left (renewed or undeletable files were
        // never counted as remaining by SDWebImage either: they were judged
        // expired).
        var remaining = inventory.pinnedBytes
        for record in inventory.records[survivorsStart...] { remaining += UInt64(inventory.allocatedBytes(record)) }
        if let maxSize = options.maxSize, maxSize > 0, remaining > maxSize {
            let target = UInt64((options.trimRatio * Double(maxSize)).rounded(.down))
            result.trimTarget = target
            inventory.records[survivorsStart...].sort(by: inventory.olderThan)
            for index in survivorsStart..<inventory.records.count {
                let record = inventory.records[index]
                let outcome = remover.remove(name: inventory.names.name(record.nameOffset),
                                             directoryIndex: inventory.directoryIndex(record), dueDate: record.date)
                result.account(outcome, index: index, expired: false)
                if outcome == .removed || outcome == .vanished {
                    remaining -= UInt64(inventory.allocatedBytes(record))
                    // SDWebImage checks after each removal, so the last file
                    // removed is the one that takes the size below target.
                    if remaining < target { break }
                }
            }
            result.trimTargetReached = remaining < target
        }
        return result
    }

    static func clockNow() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
    }
}
