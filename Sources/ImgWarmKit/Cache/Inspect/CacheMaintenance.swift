#if canImport(Glibc)
import Glibc
#endif
import Foundation
import CFileScan

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
        // `.imgwarm` is checked too: the failed-URL count opens the state
        // database in it, and SQLite may create files beside it.
        do {
            try cache.openExisting()
        } catch let error as CacheError where error.errno == ENOENT && error.path == cache.directory {
            return stats
        }
        guard let root = cache.rootFolder else { return stats }
        var oldest = Double.infinity
        var newest = -Double.infinity
        var walker = DirectoryWalker()
        walker.descends = cache.layout.kind.walksSubfolders
        let index = cache.index
        walker.walk(root) { entry in
            // A layout with an index: its image files only.
            if let index {
                let relative = entry.directoryPath.isEmpty ? entry.nameString : entry.directoryPath + "/" + entry.nameString
                guard index.isImageFile(relative) else { return }
            }
            stats.files += 1
            stats.bytes += UInt64(max(0, entry.info.size))
            stats.allocatedBytes += UInt64(max(0, entry.info.allocatedBytes))
            oldest = min(oldest, CacheScanner.seconds(entry.info.mtime_ns))
            newest = max(newest, CacheScanner.seconds(entry.info.mtime_ns))
            let format = FileSniffer.format(in: entry.directoryFd, name: entry.name)
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
    /// The format of `name` in the folder `dirfd`, opened without following
    /// a link.
    static func format(in dirfd: Int32, name: UnsafePointer<CChar>) -> ImageFormat? {
        guard case .success(let file) = QuietFile.open(in: dirfd, name: name) else { return nil }
        defer { file.close() }
        return format(of: file)
    }

    private static func format(of file: QuietFile) -> ImageFormat? {
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
        /// `--all` asked for the state folder's removal and it failed (the
        /// entries were removed all the same): the command's exit status 3.
        public var stateNotRemoved: CacheError?
    }

    /// `cache clear`: removes every entry SDWebImage would see (hidden
    /// files and folders are not entries), and with `includingState`
    /// imgwarm's `.imgwarm/` folder. Empty sub-folders left behind are
    /// removed. Opens the cache with `DiskCache.openExisting` first (a
    /// symbolic link, or a `.imgwarm` of another user, is an error before
    /// anything is removed) and removes every name relative to the
    /// descriptor of the folder the walk listed it in.
    public static func clear(_ cache: DiskCache, includingState: Bool) throws -> ClearResult {
        var result = ClearResult()
        if cache.rootFolder == nil {
            do {
                try cache.openExisting()
            } catch let error as CacheError where error.errno == ENOENT && error.path == cache.directory {
                return result
            }
        }
        guard let root = cache.rootFolder else { return result }
        var firstError: CacheError?
        var emptied = Set<Int>()
        // Every file, the index too: a DiskLruCache's own `delete()` removes
        // the folder's contents, journal included; flutter's database goes
        // with its files.
        var walker = DirectoryWalker()
        walker.descends = cache.layout.kind.walksSubfolders
        walker.onLeaveFolder = { parentFd, name, index, parentIndex in
            guard emptied.contains(index) else { return }
            // Fails (ENOTEMPTY) when something else is still in it, and
            // (ENOTDIR) when a link stands at the name now: both are fine.
            if unlinkat(parentFd, name, AT_REMOVEDIR) == 0 { emptied.insert(parentIndex) }
        }
        let rootError = walker.walk(root) { entry in
            if unlinkat(entry.directoryFd, entry.name, 0) == 0 {
                result.files += 1
                result.bytes += UInt64(max(0, entry.info.size))
                emptied.insert(entry.directoryIndex)
            } else if errno != ENOENT, firstError == nil {
                let path = cache.directory + "/" + (entry.directoryPath.isEmpty ? "" : entry.directoryPath + "/") + entry.nameString
                firstError = CacheError(path: path, reason: "cannot remove: \(errnoString(errno))", errno: errno)
            }
        }
        if let rootError { throw rootError }
        if includingState, let state = cache.stateFolder {
            result.stateNotRemoved = removeStateFolder(state, in: root)
        }
        if let firstError { throw firstError }
        return result
    }

    /// Removes `.imgwarm` and everything in it, relative to descriptors
    /// opened without following links; nil when it is gone, else what kept
    /// it (one line naming the path).
    static func removeStateFolder(_ state: FolderHandle, in root: FolderHandle) -> CacheError? {
        if let error = removeContents(of: state) { return error }
        guard state.isStill(".imgwarm", in: root.fd) else {
            return CacheError(path: state.path, reason: "not removed: replaced while its files were removed", errno: ESTALE)
        }
        if unlinkat(root.fd, ".imgwarm", AT_REMOVEDIR) != 0 && errno != ENOENT {
            let e = errno
            return CacheError(path: state.path, reason: "not removed: \(errnoString(e))", errno: e)
        }
        return nil
    }

    /// Empties `folder` depth first; the first failure, naming its path.
    static func removeContents(of folder: FolderHandle) -> CacheError? {
        var firstError: CacheError?
        for name in DiskCache.listDirectory(folder.fd) {
            let path = folder.path + "/" + name
            var raw = imgwarm_identity_t()
            guard imgwarm_identity_at(folder.fd, name, &raw) == 0 else { continue }
            if raw.mode & UInt32(S_IFMT) == UInt32(S_IFDIR) {
                do {
                    let child = try FolderHandle.open(name, in: folder.fd, path: path, listing: true)
                    if let error = removeContents(of: child) {
                        firstError = firstError ?? error
                        continue
                    }
                } catch let error as CacheError {
                    firstError = firstError ?? error
                    continue
                } catch {
                    continue
                }
                if unlinkat(folder.fd, name, AT_REMOVEDIR) != 0 && errno != ENOENT {
                    firstError = firstError ?? CacheError(path: path, reason: "cannot remove: \(errnoString(errno))", errno: errno)
                }
            } else if unlinkat(folder.fd, name, 0) != 0 && errno != ENOENT {
                firstError = firstError ?? CacheError(path: path, reason: "cannot remove: \(errnoString(errno))", errno: errno)
            }
        }
        return firstError
    }
}
