#if canImport(Glibc)
import Glibc
#endif
import Foundation
import CFileScan
import ImgWarmSupport
import ImgWarmCache

/// `cache stats`: what a cache folder holds.
public struct CacheStatistics: Codable, Sendable {
    public var directory: String
    public var files: Int = 0
    public var bytes: UInt64 = 0
    public var allocatedBytes: UInt64 = 0
    /// ISO 8601 modification times of the oldest and newest entries.
    public var oldest: String?
    public var newest: String?
    /// Entries per sniffed image format; `unknown` for data that is none.
    public var formats: [String: Int] = [:]
    public var failedURLs: Int = 0
    /// Sub-folders the walk skipped (too deep, unreadable), one line for
    /// standard error; not part of the JSON.
    public var skipped: String?

    enum CodingKeys: String, CodingKey {
        case directory, files, bytes, allocatedBytes = "allocated_bytes", oldest, newest, formats
        case failedURLs = "failed_urls"
    }

    public static func collect(_ cache: DiskCache) throws -> CacheStatistics {
        var stats = CacheStatistics(directory: cache.directory)
        // `.imgwarm` is checked too: the failed-URL count opens the state
        // database in it, and SQLite may create files beside it.
        do {
            try cache.openExisting()
        } catch let error as ImgWarmError where error.errno == ENOENT && error.path == cache.directory {
            return stats
        }
        guard let root = cache.rootFolder else { return stats }
        var oldest = Double.infinity
        var newest = -Double.infinity
        var walker = DirectoryWalker()
        let backend = cache.backend
        walker.descends = backend.walksSubfolders
        walker.walk(root) { entry in
            // The backend's entries only (an index: its image files).
            guard backend.isEntryFile(folder: entry.directoryPath, name: entry.nameString) else { return }
            stats.files += 1
            stats.bytes += UInt64(max(0, entry.info.size))
            stats.allocatedBytes += UInt64(max(0, entry.info.allocatedBytes))
            oldest = min(oldest, CacheScanner.seconds(entry.info.mtime_ns))
            newest = max(newest, CacheScanner.seconds(entry.info.mtime_ns))
            let format = FileSniffer.format(in: entry.directoryFd, name: entry.name)
            stats.formats[format?.rawValue ?? "unknown", default: 0] += 1
        }
        stats.skipped = walker.skippedSummary
        if stats.files > 0 {
            stats.oldest = iso8601(oldest)
            stats.newest = iso8601(newest)
        }
        stats.failedURLs = StateStore.failedCountIfPresent(cache: cache)
        return stats
    }

    static func iso8601(_ t: Double) -> String {
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime]
        return f.string(from: Date(timeIntervalSince1970: t))
    }
}
