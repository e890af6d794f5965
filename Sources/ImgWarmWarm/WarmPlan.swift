#if canImport(Glibc)
import Glibc
#endif
import Crypto
import ImgWarmDownload
import ImgWarmCache

/// Every usable manifest entry of a run, stored compactly (URLs and keys
/// front-coded in a byte arena, fixed-size records) so that a manifest of millions of
/// lines fits in a modest amount of memory; then de-duplicated by cache
/// file and put in execution order.
public final class WarmPlan {
    /// 20 bytes an entry.
    struct Record {
        /// Where the URL's stored bytes (the part not shared with its
        /// block's first URL) start in `urls`; the key follows them when it
        /// is stored apart from the URL.
        var offset: ByteArena.Offset
        /// Stored URL bytes: the URL is `shared` bytes of its block's first
        /// URL, then these.
        var suffixLength: UInt16
        /// 0: the key is the URL itself. Else its length, stored after the
        /// URL's bytes, or the URL's first bytes under `keyIsURLPrefix`.
        var keyLength: UInt16
        var line: UInt32
        var file: UInt16
        /// RequestPriority raw value (or `noPriority`) in the low 2 bits,
        /// `reencoded` and `keyIsURLPrefix` above.
        var flags: UInt8
        var shared: UInt8
        /// Index in `hostKeys`, or `noHost`.
        var host: UInt32

        var slot: FrontCodedArena.Slot { .init(offset: offset, shared: shared, suffixLength: suffixLength) }
        var priorityCode: UInt8 { flags & 0x3 }
        var reencoded: Bool { flags & Record.reencodedBit != 0 }
        var keyIsURLPrefix: Bool { flags & Record.keyIsURLPrefixBit != 0 }
        static let reencodedBit: UInt8 = 0x4
        /// The key is the URL's first `keyLength` bytes (`--key-strip-query`):
        /// nothing more is stored for it.
        static let keyIsURLPrefixBit: UInt8 = 0x8
    }
    static let noPriority: UInt8 = 3
    static let noHost = UInt32.max

    /// The distinct per-host keys of the entries: few, so each entry keeps
    /// a 4-byte index instead of a string.
    private var hostKeys: [String] = []
    private var hostIndex: [String: UInt32] = [:]
    /// The host of the entry added last: consecutive lines nearly always
    /// share one, and comparing with it costs a fraction of the table's
    /// hashing (about 530 instructions an entry).
    private var lastHost: (key: String, index: UInt32)?

    /// The manifest paths, indexed by `ManifestSource.fileIndex`.
    public private(set) var manifestPaths: [String] = []
    /// URL and key bytes, front-coded by blocks of consecutive entries.
    private var urls = FrontCodedArena()
    private var records = ChunkedArray<Record>()
    /// Each key's MD5: its first 64 bits (`head`) for de-duplication
    /// (equal heads are confirmed by comparing the keys), and all of it
    /// for the cache file name, so a run hashes each key once. One array
    /// of both: a second one cost an append and an access check an entry.
    private var digests = ChunkedArray<Digest>()
    struct Digest {
        var head: UInt64
        var tail: UInt64
    }
    public private(set) var problems: [ManifestProblem] = []
    /// Entries left out by `--shard`.
    public private(set) var outsideShard = 0

    /// Entry index → the entry it duplicates (duplicates are few: sparse).
    private var duplicateOf: [UInt32: UInt32] = [:]
    /// Unique entries in execution order.
    public private(set) var order: [UInt32] = []

    public let defaultPriority: RequestPriority
    public let executionOrder: ExecutionOrder
    public let shard: Shard?

    /// `--shard K/N`: K in 1...N.
    public struct Shard: Sendable, Equatable {
        public var index: Int
        public var count: Int
        public init(index: Int, count: Int) {
            self.index = index
            self.count = count
        }
        /// A stable hash of the cache key (its MD5, as the file name), so
        /// N jobs split one manifest with no overlap and even sizes.
        func contains(digest: (UInt64, UInt64)) -> Bool {
            Int(digest.0 % UInt64(count)) == index - 1
        }
    }

    public init(defaultPriority: RequestPriority = .normal, order: ExecutionOrder = .fifo, shard: Shard? = nil) {
        self.defaultPriority = defaultPriority
        self.executionOrder = order
        self.shard = shard
    }

    public var count: Int { records.count }
    public var uniqueCount: Int { order.count }
    /// URL and key bytes held for the entries (front-coded).
    var storedURLBytes: Int { urls.storedBytes }

    public func addManifestPath(_ path: String) -> Int {
        manifestPaths.append(path)
        return manifestPaths.count - 1
    }

    public func add(_ entry: ManifestEntry) {
        let digest = Self.digest(of: entry.key)
        if let shard, !shard.contains(digest: digest) {
            outsideShard += 1
            return
        }
        var url = entry.url, key = entry.key
        // Lines are at most ManifestReader.maxLineBytes (< 64 KiB).
        guard url.utf8.count <= Int(UInt16.max), key.utf8.count <= Int(UInt16.max) else {
            add(ManifestProblem(source: entry.source, reason: "URL or key longer than 65535 bytes"))
            return
        }
        // Bytes, not String ==: that is canonical equivalence, under which
        // a key with U+212A KELVIN SIGN equals a URL with a "K" (the key's
        // own bytes name the cache file).
        var keyIsURL = false, keyIsURLPrefix = false
        let slot = url.withUTF8 { u in
            key.withUTF8 { k in
                let prefix = Self.isPrefix(k, of: u)
                keyIsURL = prefix && k.count == u.count
                keyIsURLPrefix = prefix && !keyIsURL && !k.isEmpty
                return try? urls.append(url: u, key: keyIsURL || keyIsURLPrefix ? nil : k)
            }
        }
        guard let slot else {
            add(ManifestProblem(source: entry.source, reason: "manifests hold more than 4 GiB of URLs; split them over several runs"))
            return
        }
        var host = Self.noHost
        if let h = entry.hostKey {
            if let last = lastHost, last.key == h {
                host = last.index
            } else {
                if let known = hostIndex[h] {
                    host = known
                } else if hostKeys.count < Int(Self.noHost) {
                    host = UInt32(hostKeys.count)
                    hostIndex[h] = host
                    hostKeys.append(h)
                }
                if host != Self.noHost { lastHost = (h, host) }
            }
        }
        var flags = entry.priority.map { UInt8($0.rawValue) } ?? Self.noPriority
        if entry.reencoded { flags |= Record.reencodedBit }
        if keyIsURLPrefix { flags |= Record.keyIsURLPrefixBit }
        records.append(Record(
            offset: slot.offset, suffixLength: slot.suffixLength, keyLength: keyIsURL ? 0 : UInt16(key.utf8.count),
            line: UInt32(clamping: entry.source.line), file: UInt16(clamping: entry.source.fileIndex),
            flags: flags, shared: slot.shared, host: host))
        digests.append(Digest(head: digest.0, tail: digest.1))
    }

    /// Whether `a`'s bytes start `b`'s (memcmp: this runs for every line).
    static func isPrefix(_ a: UnsafeBufferPointer<UInt8>, of b: UnsafeBufferPointer<UInt8>) -> Bool {
        a.count <= b.count && (a.count == 0 || memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0)
    }

    public func add(_ problem: ManifestProblem) {
        problems.append(problem)
    }

    static func digest(of key: String) -> (UInt64, UInt64) {
        CacheFileName.digestWords(ofKey: key)
    }

    /// De-duplicates by cache file (the highest priority wins, then the
    /// first line) and orders the rest: high, normal, low; FIFO or LIFO
    /// within a priority.
    public func finalize() {
        let n = records.count
        duplicateOf = [:]
        var byDigest = [UInt32](0..<UInt32(n))
        byDigest.sort { a, b in
            let da = digests[Int(a)].head, db = digests[Int(b)].head
            return da != db ? da < db : a < b
        }
        var i = 0
        while i < n {
            var j = i + 1
            while j < n && digests[Int(byDigest[j])].head == digests[Int(byDigest[i])].head { j += 1 }
            if j - i > 1 { resolveDuplicates(byDigest[i..<j]) }
            i = j
        }
        byDigest = []
        var counts = [0, 0, 0]
        for index in 0..<n where duplicateOf[UInt32(index)] == nil { counts[priority(index).rawValue] += 1 }
        var starts = [counts[2] + counts[1], counts[2], 0]  // low, normal, high
        order = [UInt32](repeating: 0, count: counts.reduce(0, +))
        for index in 0..<n where duplicateOf[UInt32(index)] == nil {
            let p = priority(index).rawValue
            order[starts[p]] = UInt32(index)
            starts[p] += 1
        }
        if executionOrder == .lifo {
            var start = 0
            for p in [2, 1, 0] {
                order[start..<(start + counts[p])].reverse()
                start += counts[p]
            }
        }
    }

    /// Entries whose digest prefixes are equal: the same key (so the same
    /// cache file) unless the 64-bit prefixes collide. Within each group of
    /// equal keys the highest priority wins, then the first line. Linear in
    /// the group: a manifest may repeat one line a million times (the old
    /// pairwise removal took 182 CPU-s for that), so each key is read once
    /// and looked up in a table of the distinct keys seen (almost always one).
    private func resolveDuplicates(_ group: ArraySlice<UInt32>) {
        // `group` is in line order (the sort breaks ties by index), so the
        // first entry of a key that reaches the highest priority wins.
        var distinct: [String: Int] = [:]
        var winners: [UInt32] = []
        var keyOf = [Int](repeating: 0, count: group.count)
        for (position, index) in group.enumerated() {
            let key = self.key(Int(index))
            if let known = distinct[key] {
                keyOf[position] = known
                if priority(Int(index)).rawValue > priority(Int(winners[known])).rawValue { winners[known] = index }
            } else {
                distinct[key] = winners.count
                keyOf[position] = winners.count
                winners.append(index)
            }
        }
        for (position, index) in group.enumerated() where winners[keyOf[position]] != index {
            duplicateOf[index] = winners[keyOf[position]]
        }
    }

    public func priority(_ index: Int) -> RequestPriority {
        let p = records[index].priorityCode
        return p == Self.noPriority ? defaultPriority : RequestPriority(rawValue: Int(p)) ?? defaultPriority
    }

    public func url(_ index: Int) -> String {
        urls.url(records[index].slot, blockFirst: records[FrontCodedArena.blockStart(of: index)].slot)
    }

    /// `key(index)` where the caller already holds `url(index)`: most
    /// entries are keyed by their URL, rebuilt from the arena per call.
    public func key(_ index: Int, url: String) -> String {
        records[index].keyLength == 0 ? url : key(index)
    }

    public func key(_ index: Int) -> String {
        let r = records[index]
        if r.keyLength == 0 { return url(index) }
        if r.keyIsURLPrefix {
            return urls.url(r.slot, blockFirst: records[FrontCodedArena.blockStart(of: index)].slot,
                            prefix: Int(r.keyLength))
        }
        return urls.key(after: r.slot, length: Int(r.keyLength))
    }

    /// Whether the entry's URL was percent- or IDNA-encoded from the
    /// manifest text (`ParsedURL.reencoded`).
    public func reencoded(_ index: Int) -> Bool { records[index].reencoded }

    /// The per-host limit's key of the entry's URL, when its line was parsed.
    public func hostKey(_ index: Int) -> String? {
        let h = records[index].host
        return h == Self.noHost ? nil : hostKeys[Int(h)]
    }

    /// The entry's file names in `cache`, from the MD5 computed when it was
    /// added (the SDWebImage layout names files by it: no second hash).
    public func entryName(_ index: Int, in cache: DiskCache) -> CacheEntryName {
        let d = digests[index]
        var digest = (d.head, d.tail)
        return withUnsafeBytes(of: &digest) { cache.layout.entryName(forKey: key(index), md5: $0) }
    }

    public func source(_ index: Int) -> ManifestSource {
        ManifestSource(fileIndex: Int(records[index].file), line: Int(records[index].line))
    }

    /// The entry that `index` duplicates, or nil.
    public func duplicate(of index: Int) -> Int? {
        duplicateOf[UInt32(index)].map(Int.init)
    }

    public func describe(_ source: ManifestSource) -> String {
        let path = source.fileIndex < manifestPaths.count ? manifestPaths[source.fileIndex] : "?"
        return "\(path == "-" ? "<stdin>" : path):\(source.line)"
    }
}

/// An append-only array in fixed-size chunks: no reallocation copies, so
/// the peak memory of a million records is the records themselves.
struct ChunkedArray<Element> {
    private static var chunkLength: Int { 1 << 16 }
    private var chunks: [[Element]] = []
    private(set) var count = 0

    mutating func append(_ e: Element) {
        if count % Self.chunkLength == 0 {
            var c = [Element]()
            c.reserveCapacity(Self.chunkLength)
            chunks.append(c)
        }
        chunks[chunks.count - 1].append(e)
        count += 1
    }

    subscript(i: Int) -> Element {
        chunks[i / Self.chunkLength][i % Self.chunkLength]
    }
}

/// SDWebImageDownloaderExecutionOrder: within one priority, the oldest
/// entry first (FIFO) or the newest first (LIFO). The plan alone applies
/// it (`WarmPlan.order`); the download engine starts what it is given in
/// the order it arrives.
public enum ExecutionOrder: String, Sendable, CaseIterable {
    case fifo, lifo
}
