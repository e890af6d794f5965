#if canImport(Glibc)
import Glibc
#endif
import ImgWarmSupport

/// What `cache prune` should do.
public struct PruneOptions: Sendable {
    /// Whose rules: the layout turns these options into a `PrunePolicy`.
    public var layout: any CacheLayout = SDWebImageLayout()
    /// SDWebImage's maxDiskAge in seconds; nil: no expiry.
    public var maxAge: Double?
    /// The size limit in bytes; nil: the layout's default (SDWebImage,
    /// Kingfisher: none; Nuke: 150 MiB). 0: none.
    public var maxSize: UInt64?
    /// SDWebImage's expire type; nil: the layout's default.
    public var expireType: CacheExpireType?
    /// Trim goes down to `trimRatio x maxSize`; nil: the layout's default
    /// (SDWebImage: half; Nuke: 0.7).
    public var trimRatio: Double?
    /// flutter's maxNrOfCacheObjects; nil: the layout's default (200).
    public var maxObjects: Int?
    /// Names never removed (`--keep`).
    public var pinned = PinnedNames()
    public var dryRun = false
    /// "Now" in nanoseconds since the epoch; nil: the clock when the run
    /// starts. Tests pin it to place files exactly on the boundary.
    public var now: Int64?

    public init(layout: any CacheLayout = SDWebImageLayout(), maxAge: Double? = nil, maxSize: UInt64? = nil,
                expireType: CacheExpireType? = nil, trimRatio: Double? = nil, pinned: PinnedNames = PinnedNames(),
                dryRun: Bool = false, now: Int64? = nil) {
        self.layout = layout
        self.maxAge = maxAge
        self.maxSize = maxSize
        self.expireType = expireType
        self.trimRatio = trimRatio
        self.pinned = pinned
        self.dryRun = dryRun
        self.now = now
    }

    /// The usage errors of the product contract (an `ImgWarmError`, exit
    /// status 2): options missing, out of range, or of no meaning to the
    /// layout.
    public func validate() throws {
        _ = try policy(now: now ?? 0)
    }

    /// The plain folder's rules (`FolderLayout.prunePolicy`); a layout
    /// that keeps an index has none (its backend prunes by the library's
    /// eviction).
    public func policy(now: Int64) throws -> PrunePolicy {
        if maxObjects != nil {
            throw ImgWarmError.usage("--max-objects has no meaning under --layout \(layout.name): only flutter_cache_manager counts objects")
        }
        guard let folderLayout = layout as? any FolderLayout else {
            throw ImgWarmError.usage("--layout \(layout.name) keeps an index: its backend prunes it")
        }
        return try folderLayout.prunePolicy(self, now: now)
    }
}

/// `cache prune`: the layout's expiry and size sweep (SDWebImage's
/// `removeExpiredData`, Kingfisher's `cleanExpiredDiskCache`, Nuke's
/// `performSweep`) on a cache folder, in one walk, as its `PrunePolicy` says:
/// 1. expiry: every file the policy judges expired goes;
/// 2. trim: if the size of what remains calls for it, files go oldest first
///    (by the policy's date) until the remainder reaches the target.
/// Pinned files are never removed but count in the remaining size.
public struct CachePruner {
    public let directory: String
    public let options: PruneOptions
    /// The cache folder as opened (with O_NOFOLLOW) by the caller; nil:
    /// opened from `directory` by `run`.
    private let root: FolderHandle?

    public init(directory: String, options: PruneOptions) {
        self.directory = directory
        self.options = options
        root = nil
    }

    /// Prunes the folder `root` was opened on (`DiskCache.openExisting`):
    /// every walk and removal goes relative to it.
    public init(root: FolderHandle, options: PruneOptions) {
        directory = root.path
        self.options = options
        self.root = root
    }

    public func run() throws -> PruneResult {
        let now = options.now ?? Self.clockNow()
        let policy = try options.policy(now: now)
        let root = try self.root ?? FolderHandle.open(directory, in: AT_FDCWD, path: directory, listing: true)
        let inventory = try CacheInventory.scan(root, policy: policy, pinned: options.pinned)
        let remover = FileRemover(root: root, inventory: inventory, policy: policy, dryRun: options.dryRun)
        var result = PruneResult(inventory: inventory, options: options, policy: policy)

        // The records live in the inventory's mapping; this view reorders
        // them in place.
        var records = inventory.records

        // 1. Expiry. Expired records are moved to the front in walk order
        // (folder by folder, as the libraries enumerate).
        var survivorsStart = 0
        if let expiration = policy.expirationCutoff {
            survivorsStart = Self.moveToFront(&records) { $0.date <= expiration }
            for index in 0..<survivorsStart {
                let record = records[index]
                let outcome = remover.remove(nameAt: record.nameOffset, in: inventory.names,
                                             directoryIndex: inventory.directoryIndex(record), dueDate: expiration)
                result.account(outcome, index: index, expired: true)
            }
        }

        // 2. Trim, on what expiry left (renewed or undeletable files were
        // never counted as remaining by the libraries either: they were
        // judged expired).
        var remaining = inventory.pinnedBytes
        for record in records[survivorsStart...] { remaining += UInt64(inventory.bytes(record)) }
        if policy.needsTrim(remaining) {
            let target = policy.target
            result.trimTarget = target
            // Oldest first, taken one at a time in place: no sort buffer
            // (the peak memory of a large prune is here, with every record
            // held), and no order computed for the files that stay.
            let olderThan = { (a: CacheInventory.Record, b: CacheInventory.Record) in inventory.olderThan(a, b) }
            var oldest = IncrementalSort(UnsafeMutableBufferPointer(rebasing: records[survivorsStart...]))
            while let slot = oldest.next(by: olderThan) {
                let index = survivorsStart + slot
                let record = records[index]
                let outcome = remover.remove(nameAt: record.nameOffset, in: inventory.names,
                                             directoryIndex: inventory.directoryIndex(record), dueDate: record.date)
                result.account(outcome, index: index, expired: false)
                if outcome == .removed || outcome == .vanished {
                    remaining -= UInt64(inventory.bytes(record))
                    // The libraries check after each removal, so the last
                    // file removed is the one that reaches the target.
                    if policy.reachedTarget(remaining) { break }
                }
            }
            // An empty cache is as far as trimming goes, even where the
            // target is below one byte (`--max-size 1`: half of it).
            result.trimTargetReached = policy.reachedTarget(remaining) || remaining == 0
        }
        return result
    }

    /// Moves the records that match to the front, keeping their order (the
    /// others end up behind them in any order); returns how many matched.
    /// In place and in one pass: a partition plus a sort of the front would
    /// cost a sort buffer of up to half the records.
    static func moveToFront<C: MutableCollection & RandomAccessCollection>(
        _ records: inout C, where matches: (C.Element) -> Bool
    ) -> Int where C.Index == Int {
        var front = records.startIndex
        for index in records.indices where matches(records[index]) {
            records.swapAt(front, index)
            front += 1
        }
        return front - records.startIndex
    }

    static func clockNow() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
    }
}
