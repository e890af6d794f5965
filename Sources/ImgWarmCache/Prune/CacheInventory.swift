#if canImport(Glibc)
import Glibc
#endif
import ImgWarmSupport

/// What one walk of a cache folder found, as a `PrunePolicy` judges it,
/// compactly enough for millions of files: 16 bytes a file plus its name in a
/// `NameArena` (17 bytes for `<md5>.jpg`, 21 for Nuke's SHA-1 names, 33 for
/// Kingfisher's SHA-256 ones), and nothing at all for pinned files beyond a count and a
/// byte total (they are never removed, they only weigh on the size).
final class CacheInventory {
    /// One removable file.
    struct Record {
        /// The policy's date in nanoseconds since the epoch
        /// (`PrunePolicy.recordDate`), or `noDate` (sorts after every real
        /// date: treated as newest).
        var date: Int64
        /// The file's size in `sizeUnit`s (512-byte blocks for allocated
        /// sizes, bytes for logical ones); `UInt32.max` for a file too big
        /// for that, whose size is then in `hugeAllocations`.
        var blocks: UInt32
        /// Also says the folder: the walk stores a folder's names together.
        var nameOffset: UInt32
    }

    /// A file whose filesystem records no such date (birth time on some
    /// filesystems): never expired, trimmed last.
    static let noDate = Int64.max

    /// In walk order until the pruner reorders them (in place).
    var records: UnsafeMutableBufferPointer<Record> { recordStore.buffer }
    private let recordStore = MappedRecords<Record>()
    let names = NameArena()
    /// Per folder: its name in its parent ("" for the root).
    var directoryNames: [String] = [""]
    /// Per folder: its parent's index, and what it was when listed (the
    /// remover checks a folder it opens again is still that one).
    var directoryParents: [Int] = [0]
    var directoryIdentities: [FolderHandle.Identity] = []
    /// Where each folder's names begin in the arena, in arena order, and
    /// which folder that is: the walk visits one folder's files in a row.
    private var folderStarts: [UInt32] = []
    private var folderIndices: [UInt32] = []
    /// Sizes of files too big for `Record.blocks`, by name offset.
    private var hugeAllocations: [UInt32: Int64] = [:]
    /// Bytes a `Record.blocks` unit stands for.
    private var sizeUnit: Int64 = 512

    var pinnedFiles = 0
    var pinnedBytes: UInt64 = 0
    var undatedFiles = 0
    var unreadableDirectories = 0
    var firstDirectoryError: ImgWarmError?

    var totalFiles: Int { records.count + pinnedFiles }

    /// Walks `directory` once (its sub-folders too when the policy says).
    /// Pinned names match files of the root folder only: that is where the
    /// libraries look a key up.
    static func scan(_ root: FolderHandle, policy: PrunePolicy, pinned: PinnedNames) throws -> CacheInventory {
        let directory = root.path
        let inventory = CacheInventory()
        inventory.sizeUnit = policy.size == .allocated ? 512 : 1
        var walker = DirectoryWalker()
        walker.descends = policy.walksSubfolders
        var arenaFull = false
        var recordsFull = false
        let rootError = walker.walk(root) { entry in
            let bytes = policy.bytes(entry.info)
            if entry.directoryIndex == 0, pinned.contains(entry.name, length: entry.nameLength) {
                inventory.pinnedFiles += 1
                inventory.pinnedBytes += UInt64(max(0, bytes))
                return
            }
            if policy.trimDate.date(of: entry.info) == nil { inventory.undatedFiles += 1 }
            guard !arenaFull, !recordsFull, let offset = try? inventory.names.append(entry.name, length: entry.nameLength) else {
                arenaFull = true
                return
            }
            let folder = UInt32(entry.directoryIndex)
            if inventory.folderIndices.last != folder {
                inventory.folderStarts.append(offset)
                inventory.folderIndices.append(folder)
            }
            var blocks = UInt32.max
            let units = bytes / inventory.sizeUnit
            if units >= 0 && units < Int64(UInt32.max) {
                blocks = UInt32(units)
            } else {
                inventory.hugeAllocations[offset] = max(0, bytes)
            }
            do {
                try inventory.recordStore.append(Record(date: policy.recordDate(entry.info), blocks: blocks, nameOffset: offset))
            } catch {
                recordsFull = true
            }
        }
        if let rootError { throw rootError }
        if recordsFull {
            throw ImgWarmError.cache(path: directory, reason: "not enough memory for the list of files to prune")
        }
        if arenaFull {
            throw ImgWarmError.cache(path: directory, reason: "too many files to prune in one run (more than 4 GiB of file names)")
        }
        inventory.directoryNames = walker.names
        inventory.directoryParents = walker.parents
        inventory.directoryIdentities = walker.identities
        inventory.unreadableDirectories = walker.unreadableDirectories
        inventory.firstDirectoryError = walker.firstDirectoryError
        return inventory
    }

    /// The bytes the record weighs against the size limit (allocated or
    /// logical, as the policy measures).
    func bytes(_ record: Record) -> Int64 {
        record.blocks == UInt32.max ? hugeAllocations[record.nameOffset] ?? 0 : Int64(record.blocks) * sizeUnit
    }

    /// Index in `directoryNames` of the record's folder.
    func directoryIndex(_ record: Record) -> UInt32 {
        // The last folder whose names start at or before this one.
        var low = 0
        var high = folderStarts.count
        while low < high {
            let mid = (low + high) / 2
            if folderStarts[mid] <= record.nameOffset { low = mid + 1 } else { high = mid }
        }
        return folderIndices[low - 1]
    }

    /// The record's path relative to the cache folder.
    func relativePath(_ record: Record) -> String {
        let folder = folderPath(Int(directoryIndex(record)))
        let name = names.string(record.nameOffset)
        return folder.isEmpty ? name : folder + "/" + name
    }

    /// The relative path of folder `index` ("" for the root), from the
    /// names of it and its parents.
    func folderPath(_ index: Int) -> String {
        var parts: [String] = []
        var i = index
        while i != 0 {
            parts.append(directoryNames[i])
            i = directoryParents[i]
        }
        return parts.reversed().joined(separator: "/")
    }

    /// Oldest first; ties (same date, rare but for copied or generated
    /// caches) by path bytes, so that the order is the same on every machine.
    func olderThan(_ a: Record, _ b: Record) -> Bool {
        if a.date != b.date { return a.date < b.date }
        return relativePath(a).utf8.lexicographicallyPrecedes(relativePath(b).utf8)
    }
}
