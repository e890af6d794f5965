#if canImport(Glibc)
import Glibc
#endif
import CFileScan

/// One pass over a cache folder the way SDWebImage's `removeExpiredData`
/// enumerates it: recursively, skipping hidden (dot) files and folders, and
/// handing over regular files only, never directories, symlinks (not
/// followed) or special files.
///
/// Built for millions of files: directories are read with getdents64 into
/// one reused buffer, files are stat'ed with statx relative to the directory
/// fd, and a file's name reaches the visitor as a pointer into that buffer,
/// so no String or Foundation object is made per file. Only directories get
/// a String (their relative path), kept in `directories`.
public struct DirectoryWalker {
    /// A regular file, valid only during the visit call.
    public struct Entry {
        /// Index in `directories` of the folder that holds the file (0: the root).
        public var directoryIndex: Int
        /// That folder's path relative to the root ("" for the root).
        public var directoryPath: String
        /// NUL-terminated name inside the directory, and its length.
        public var name: UnsafePointer<CChar>
        public var nameLength: Int
        public var info: imgwarm_stat

        public var nameString: String { String(cString: name) }
    }

    /// Relative paths of the folders walked: "" for the root, then `a`, `a/b`…
    public private(set) var directories: [String] = []
    /// Sub-folders that could not be opened or read (permissions, removed
    /// meanwhile); SDWebImage's enumerator skips them too.
    public private(set) var unreadableDirectories = 0
    public private(set) var firstDirectoryError: CacheError?
    /// False: the root folder's files only (Nuke's `DataCache` lists its
    /// folder without descending).
    public var descends = true

    public init() {}

    /// Walks `root`. Returns an error (rather than throwing it, so that the
    /// walk only rethrows the visitor's errors) when the root itself cannot
    /// be read; problems below the root are counted in `unreadableDirectories`.
    @discardableResult
    public mutating func walk(_ root: String, _ visit: (Entry) throws -> Void) rethrows -> CacheError? {
        let rootFd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if rootFd < 0 {
            return CacheFolder.openError(root, errno)
        }
        defer { close(rootFd) }
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: Self.bufferSize, alignment: 8)
        defer { buffer.deallocate() }
        directories = [""]
        unreadableDirectories = 0
        firstDirectoryError = nil
        if let error = try walkDirectory(fd: rootFd, index: 0, buffer: buffer, visit) {
            return CacheError(path: root, reason: "cannot read cache folder: \(errnoString(error))", errno: error)
        }
        return nil
    }

    /// 256 KiB: a few syscalls for a directory of thousands of entries.
    static let bufferSize = 256 * 1024

    /// Reads one directory to its end (visiting its files), then descends into
    /// its sub-folders; the buffer is free again by then, so one buffer
    /// serves the whole walk. Returns an errno when reading failed.
    private mutating func walkDirectory(fd: Int32, index: Int, buffer: UnsafeMutableRawPointer,
                                        _ visit: (Entry) throws -> Void) rethrows -> Int32? {
        var subdirectories: [String] = []
        var info = imgwarm_stat()
        let parentPath = directories[index]
        while true {
            let count = imgwarm_getdents(fd, buffer, UInt(Self.bufferSize))
            if count < 0 { return Int32(-count) }
            if count == 0 { break }
            var offset = 0
            while offset < count {
                let record = buffer + offset
                offset += Int(imgwarm_dirent_reclen(record))
                let name = imgwarm_dirent_name(record)!
                // Hidden entries, "." and "..": SDWebImage's
                // NSDirectoryEnumerationSkipsHiddenFiles.
                if name.pointee == 0x2E { continue }
                let type = Int32(imgwarm_dirent_type(record))
                if type == Int32(IMGWARM_DT_DIR) {
                    subdirectories.append(String(cString: name))
                    continue
                }
                // Only regular files and entries of unknown type (some
                // filesystems leave d_type empty) need a stat.
                guard type == Int32(IMGWARM_DT_REG) || type == Int32(IMGWARM_DT_UNKNOWN) else { continue }
                // Gone since getdents (a concurrent prune): not an entry.
                guard imgwarm_statat(fd, name, &info) == 0 else { continue }
                switch info.mode & UInt32(S_IFMT) {
                case UInt32(S_IFREG):
                    try visit(Entry(directoryIndex: index, directoryPath: parentPath, name: name, nameLength: strlen(name), info: info))
                case UInt32(S_IFDIR):
                    subdirectories.append(String(cString: name))
                default:
                    continue
                }
            }
        }
        if !descends { return nil }
        for name in subdirectories {
            let path = parentPath.isEmpty ? name : parentPath + "/" + name
            // O_NOFOLLOW: a folder swapped for a symlink since getdents is
            // not followed out of the cache.
            let child = openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            if child < 0 {
                noteUnreadable(path, errno)
                continue
            }
            directories.append(path)
            let error = try walkDirectory(fd: child, index: directories.count - 1, buffer: buffer, visit)
            close(child)
            if let error { noteUnreadable(path, error) }
        }
        return nil
    }

    private mutating func noteUnreadable(_ path: String, _ error: Int32) {
        // Removed between getdents and openat: nothing was there to read.
        if error == ENOENT { return }
        unreadableDirectories += 1
        if firstDirectoryError == nil {
            firstDirectoryError = CacheError(path: path, reason: "cannot read folder: \(errnoString(error))", errno: error)
        }
    }
}

extension imgwarm_stat {
    /// Allocated bytes on disk: what SDWebImage sums (NSURLTotalFileAllocatedSizeKey).
    var allocatedBytes: Int64 { blocks * 512 }
}
