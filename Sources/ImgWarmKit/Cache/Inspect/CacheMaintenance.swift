#if canImport(Glibc)
import Glibc
#endif
import Foundation

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

    enum CodingKeys: String, CodingKey {
        case directory, files, bytes, allocatedBytes = "allocated_bytes", oldest, newest, formats
        case failedURLs = "failed_urls"
    }

    public static func collect(_ cache: DiskCache) throws -> CacheStatistics {
        var stats = CacheStatistics(directory: cache.directory)
        var st = stat()
        guard stat(cache.directory, &st) == 0 else {
            let e = errno
            if e == ENOENT { return stats }
            throw CacheError(path: cache.directory, reason: errnoString(e), errno: e)
        }
        var oldest = Double.infinity
        var newest = -Double.infinity
        CacheScanner.scan(cache) { record in
            stats.files += 1
            stats.bytes += UInt64(max(0, record.size))
            stats.allocatedBytes += UInt64(max(0, record.allocatedSize))
            oldest = min(oldest, record.modificationTime)
            newest = max(newest, record.modificationTime)
            let format = FileSniffer.format(ofFile: cache.directory + "/" + record.relativePath)
            stats.formats[format?.rawValue ?? "unknown", default: 0] += 1
        }
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

/// Reads just enough of a file to sniff its format.
public enum FileSniffer {
    public static func format(ofFile path: String) -> ImageFormat? {
        // `cache stats` reads every file: it must not renew access times.
        guard case .success(let file) = QuietFile.open(path) else { return nil }
        defer { file.close() }
        let fd = file.fd
        var head = [UInt8](repeating: 0, count: 64)  // an ftyp box with its brands
        let n = read(fd, &head, head.count)
        guard n > 0 else { return nil }
        head.removeSubrange(n...)
        if head.first == UInt8(ascii: "<") {
            // SVG is judged by its tail.
            var st = stat()
            guard fstat(fd, &st) == 0 else { return nil }
            let tailLength = min(Int(st.st_size), 100)
            var tail = [UInt8](repeating: 0, count: tailLength)
            let m = pread(fd, &tail, tailLength, off_t(Int(st.st_size) - tailLength))
            guard m == tailLength else { return nil }
            return ImageFormat.sniff([UInt8](head.prefix(1)) + tail)
        }
        return ImageFormat.sniff(head)
    }
}

public enum CacheMaintenance {
    public struct ClearResult: Sendable {
        public var files = 0
        public var bytes: UInt64 = 0
    }

    /// `cache clear`: removes every entry SDWebImage would see (hidden
    /// files and folders are not entries), and with `includingState`
    /// imgwarm's `.imgwarm/` folder. Empty sub-folders left behind are removed.
    public static func clear(_ cache: DiskCache, includingState: Bool) throws -> ClearResult {
        var result = ClearResult()
        var st = stat()
        if stat(cache.directory, &st) != 0 {
            let e = errno
            if e == ENOENT { return result }
            throw CacheError(path: cache.directory, reason: errnoString(e), errno: e)
        }
        var firstError: CacheError?
        var dirs = Set<String>()
        CacheScanner.scan(cache) { record in
            let path = cache.directory + "/" + record.relativePath
            if unlink(path) == 0 {
                result.files += 1
                result.bytes += UInt64(max(0, record.size))
                if let slash = record.relativePath.lastIndex(of: "/") {
                    dirs.insert(String(record.relativePath[..<slash]))
                }
            } else if errno != ENOENT, firstError == nil {
                firstError = CacheError(path: path, reason: "cannot remove: \(errnoString(errno))", errno: errno)
            }
        }
        for dir in dirs.sorted(by: { $0.count > $1.count }) {
            rmdir(cache.directory + "/" + dir)
        }
        if includingState {
            try? FileManager.default.removeItem(atPath: cache.stateDirectory)
        }
        if let firstError { throw firstError }
        return result
    }
}
