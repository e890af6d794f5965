/// What one walk of a cache folder found, compactly enough for millions of
/// files: 24 bytes a file plus its name in a `NameArena`, and nothing at all
/// for pinned files beyond a count and a byte total (they are never removed,
/// they only weigh on the size).
final class CacheInventory {
    /// One removable file.
    struct Record {
        /// The expire type's date in nanoseconds since the epoch, or
        /// `noDate` (sorts after every real date: treated as newest).
        var date: Int64
        var allocatedBytes: Int64
        var nameOffset: UInt32
        var directoryIndex: UInt32
    }

    /// A file whose filesystem records no such date (birth time on some
    /// filesystems): never expired, trimmed last.
    static let noDate = Int64.max

    var records: [Record] = []
    let names = NameArena()
    /// Relative folder paths, "" for the root; `Record.directoryIndex` points here.
    var directories: [String] = [""]

    var pinnedFiles = 0
    var pinnedBytes: UInt64 = 0
    var undatedFiles = 0
    var unreadableDirectories = 0
    var firstDirectoryError: CacheError?

    var totalFiles: Int { records.count + pinnedFiles }

    /// Walks `directory` once. Pinned names match files of the root folder
    /// only: that is where SDWebImage looks a key up.
    static func scan(_ directory: String, expireType: CacheExpireType, pinned: PinnedNames) throws -> CacheInventory {
        let inventory = CacheInventory()
        var walker = DirectoryWalker()
        var arenaFull = false
        let rootError = walker.walk(directory) { entry in
            let bytes = entry.info.allocatedBytes
            if entry.directoryIndex == 0, pinned.contains(entry.name, length: entry.nameLength) {
                inventory.pinnedFiles += 1
                inventory.pinnedBytes += UInt64(max(0, bytes))
                return
            }
            let date = expireType.date(of: entry.info)
            if date == nil { inventory.undatedFiles += 1 }
            guard !arenaFull, let offset = try? inventory.names.append(entry.name, length: entry.nameLength) else {
                arenaFull = true
                return
            }
            inventory.records.append(Record(
                date: date ?? noDate, allocatedBytes: bytes,
                nameOffset: offset, directoryIndex: UInt32(entry.directoryIndex)))
        }
        if let rootError { throw rootError }
        if arenaFull {
            throw CacheError(path: directory, reason: "too many files to prune in one run (more than 4 GiB of file names)")
        }
        inventory.directories = walker.directories
        inventory.unreadableDirectories = walker.unreadableDirectories
        inventory.firstDirectoryError = walker.firstDirectoryError
        return inventory
    }

    /// The record's path relative to the cache folder.
    func relativePath(_ record: Record) -> String {
        let folder = directories[Int(record.directoryIndex)]
        let name = names.string(record.nameOffset)
        return folder.isEmpty ? name : folder + "/" + name
    }

    /// Oldest first; ties (same date) by folder, then by name, so that a
    /// run's order is the same on every machine.
    func olderThan(_ a: Record, _ b: Record) -> Bool {
        if a.date != b.date { return a.date < b.date }
        if a.directoryIndex != b.directoryIndex {
            return directories[Int(a.directoryIndex)] < directories[Int(b.directoryIndex)]
        }
        return strcmp(names.pointer(a.nameOffset), names.pointer(b.nameOffset)) < 0
    }
}

#if canImport(Glibc)
import Glibc
#endif
