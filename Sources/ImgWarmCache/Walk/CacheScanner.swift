#if canImport(Glibc)
import Glibc
#endif

/// One regular file of a cache folder, as SDWebImage's enumeration sees it.
public struct CacheFileRecord: Sendable {
    /// Path relative to the cache folder (`<md5>.jpg`, or `sub/x` in caches
    /// that hold nested folders).
    public var relativePath: String
    /// Logical length in bytes.
    public var size: Int64
    /// Allocated size on disk (st_blocks * 512), what SDWebImage sums.
    public var allocatedSize: Int64
    public var accessTime: Double
    public var modificationTime: Double
    public var changeTime: Double
}

/// The convenient, one-String-per-file view of `DirectoryWalker` for
/// commands that touch each file anyway (`cache stats` reads every file's
/// head, `cache clear` removes it). `cache prune` uses the walker directly.
public enum CacheScanner {
    /// Visits every entry SDWebImage would see: recursive, hidden files and
    /// folders skipped, regular files only. A missing or unreadable folder
    /// yields nothing; callers check the folder first.
    public static func scan(_ directory: String, descends: Bool = true,
                            _ visit: (CacheFileRecord) throws -> Void) rethrows {
        var walker = DirectoryWalker()
        walker.descends = descends
        try walker.walk(directory) { entry in
            let folder = entry.directoryPath
            let name = entry.nameString
            try visit(CacheFileRecord(
                relativePath: folder.isEmpty ? name : folder + "/" + name,
                size: entry.info.size,
                allocatedSize: entry.info.allocatedBytes,
                accessTime: seconds(entry.info.atime_ns),
                modificationTime: seconds(entry.info.mtime_ns),
                changeTime: seconds(entry.info.ctime_ns)))
        }
    }

    /// The entries of `cache` as its backend lists them (Nuke: the folder
    /// itself only; an index: its image files, not the journal, Coil's
    /// metadata, flutter's database).
    public static func scan(_ cache: DiskCache, _ visit: (CacheFileRecord) throws -> Void) rethrows {
        let backend = cache.backend
        var walker = DirectoryWalker()
        walker.descends = backend.walksSubfolders
        try walker.walk(cache.directory) { entry in
            let folder = entry.directoryPath
            let name = entry.nameString
            guard backend.isEntryFile(folder: folder, name: name) else { return }
            try visit(CacheFileRecord(
                relativePath: folder.isEmpty ? name : folder + "/" + name,
                size: entry.info.size,
                allocatedSize: entry.info.allocatedBytes,
                accessTime: seconds(entry.info.atime_ns),
                modificationTime: seconds(entry.info.mtime_ns),
                changeTime: seconds(entry.info.ctime_ns)))
        }
    }

    package static func seconds(_ nanoseconds: Int64) -> Double {
        Double(nanoseconds) / 1e9
    }
}
