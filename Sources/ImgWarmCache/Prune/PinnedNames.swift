/// Cache file names that `cache prune --keep MANIFEST` must never remove.
///
/// A manifest can hold millions of keys, so names are kept as sorted 64-bit
/// FNV-1a hashes (8 bytes a name) rather than Strings. A hash collision can
/// only keep a file that could have gone, never remove a pinned one.
public struct PinnedNames: Sendable {
    private var hashes: [UInt64]

    public init() { hashes = [] }

    /// Pins file names as they appear in the cache folder.
    public init<S: Sequence>(fileNames: S) where S.Element == String {
        self.init(hashes: fileNames.map(Self.hash(name:)))
    }

    package init(hashes unsorted: [UInt64]) {
        hashes = Self.unique(unsorted.sorted())
    }

    /// Pins every name an app may find a key's entry under in `layout`
    /// (SDWebImage: `<md5>.<ext>` and the bare `<md5>`).
    public init<S: Sequence>(keys: S, layout: any CacheLayout = SDWebImageLayout()) where S.Element == String {
        self.init(fileNames: keys.lazy.flatMap { layout.entryName(forKey: $0).lookupNames })
    }

    public struct Problem: Sendable {
        package init(path: String, line: Int, reason: String) {
            self.path = path
            self.line = line
            self.reason = reason
        }

        public var path: String
        public var line: Int
        public var reason: String
        public var description: String { "\(path):\(line): \(reason)" }
    }

    public var isEmpty: Bool { hashes.isEmpty }
    /// Distinct names pinned.
    public var count: Int { hashes.count }

    public func contains(_ name: UnsafePointer<CChar>, length: Int) -> Bool {
        guard !hashes.isEmpty else { return false }
        return contains(hash: Self.hash(UnsafeRawPointer(name).assumingMemoryBound(to: UInt8.self), length))
    }

    private func contains(hash h: UInt64) -> Bool {
        var low = 0
        var high = hashes.count
        while low < high {
            let mid = (low + high) / 2
            if hashes[mid] < h { low = mid + 1 } else { high = mid }
        }
        return low < hashes.count && hashes[low] == h
    }

    public func contains(_ name: String) -> Bool {
        contains(hash: Self.hash(name: name))
    }

    package static func hash(name: String) -> UInt64 {
        var h = fnvBasis
        for byte in name.utf8 { h = (h ^ UInt64(byte)) &* fnvPrime }
        return h
    }

    /// FNV-1a, 64 bits: stable, and cheap for 40-byte names.
    package static func hash(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> UInt64 {
        var h = fnvBasis
        for i in 0..<count { h = (h ^ UInt64(bytes[i])) &* fnvPrime }
        return h
    }

    private static let fnvBasis: UInt64 = 0xcbf2_9ce4_8422_2325
    private static let fnvPrime: UInt64 = 0x0000_0100_0000_01B3

    private static func unique(_ sorted: [UInt64]) -> [UInt64] {
        var out: [UInt64] = []
        out.reserveCapacity(sorted.count)
        for h in sorted where out.last != h { out.append(h) }
        return out
    }
}
